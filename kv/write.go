// One write transaction's commit: fn's writes, then what the resources
// it enlisted staged (a WARC file's records), then bbolt's commit; and
// after a failed commit, the file opened again before anything more is
// written.

package kv

import (
	"errors"
	"fmt"
	"runtime/debug"

	"go.etcd.io/bbolt"
)

// Resource is a file written beside the store that the store's records
// refer to (a crawl's WARC file). A transaction that refers to what it
// stages in the file enlists it (Tx.Enlist); the store then writes and
// fsyncs what was staged before its own commit (Prepare), and has it
// undone when the transaction does not commit (Abort), so that a commit
// never refers to what the file lacks, and the file holds what no commit
// refers to only until the next Abort or recovery cuts it. Each method is
// called from the goroutine that runs the transaction.
type Resource interface {
	// Prepare makes what the transaction staged durable; an error fails
	// the transaction (Abort follows).
	Prepare() error
	// Abort forgets what the transaction staged, prepared or not: it
	// did not commit.
	Abort()
	// Committed says the transaction committed.
	Committed()
}

// Enlist makes r take part in the commit of tx, a writable transaction
// of Update or Commit (see Resource). Enlisting r again does nothing.
func (tx *Tx) Enlist(r Resource) {
	for _, x := range tx.resources {
		if x == r {
			return
		}
	}
	tx.resources = append(tx.resources, r)
}

func (tx *Tx) prepare() error {
	for _, r := range tx.resources {
		if err := r.Prepare(); err != nil {
			return err
		}
	}
	return nil
}

func (tx *Tx) abort() {
	for _, r := range tx.resources {
		r.Abort()
	}
	tx.resources = nil
}

func (tx *Tx) committed() {
	for _, r := range tx.resources {
		r.Committed()
	}
	tx.resources = nil
}

// ErrCommitUnknown means a commit failed but the file, read again, holds
// it: the kernel kept the pages bbolt wrote while telling it the write or
// fsync failed, so whether they are on the disk is unknown. The store is
// not written again by this process; its next Open reads what the disk
// holds.
var ErrCommitUnknown = errors.New("kv: a failed commit is in the file after all (its fsync cannot be trusted)")

// Reopens returns how many times the file was closed and opened again
// after a failed commit since Open.
func (s *Store) Reopens() uint64 { return s.reopens.Load() }

// errLost is the error of a store whose reopen after a failed commit
// failed: nothing can be read or written through it any more.
var errLost = errors.New("kv: the store could not be opened again after a failed commit")

func (s *Store) lostError() error { return fmt.Errorf("%s: %w: %w", s.path, errLost, s.lost) }

// write runs fn in a writable transaction and commits it: fn's writes,
// then what the transaction's resources staged (Resource.Prepare), then
// bbolt's commit; each resource is told the outcome. A damaged page met
// on the way fails the transaction (rolled back) instead of the process
// (guard). When bbolt's commit fails, the file is closed and opened
// again before the error is returned (reopen).
func (s *Store) write(fn func(*Tx) error) error {
	s.dbMu.RLock()
	if s.db == nil {
		s.dbMu.RUnlock()
		return s.lostError()
	}
	failedTx, err := s.commitTx(fn)
	s.dbMu.RUnlock()
	if failedTx == 0 {
		return err
	}
	switch rerr := s.reopen(failedTx); {
	case errors.Is(rerr, ErrCommitUnknown):
		return fmt.Errorf("%s: %w: %v", s.path, ErrCommitUnknown, err)
	case rerr != nil:
		return fmt.Errorf("%w; %w", err, rerr)
	}
	return err
}

// commitTx is write's transaction; failedTx is the id of a transaction
// whose bbolt commit failed (0: none did).
func (s *Store) commitTx(fn func(*Tx) error) (failedTx int, err error) {
	s.txMu.Lock()
	defer s.txMu.Unlock() // last: after the resources are told
	defer s.guard(&err)
	defer debug.SetPanicOnFault(onFault())
	btx, err := s.db.Begin(true)
	if err != nil {
		return 0, err
	}
	tx := &Tx{btx: btx}
	done := false
	defer func() {
		if !done { // fn failed, a resource failed, the commit failed, or a panic
			_ = btx.Rollback() // ErrTxClosed after a failed Commit: bbolt rolled it back
			tx.abort()
		}
	}()
	if err := fn(tx); err != nil {
		return 0, err
	}
	if err := tx.prepare(); err != nil {
		return 0, err
	}
	id := btx.ID()
	if err := btx.Commit(); err != nil {
		return id, err
	}
	done = true
	tx.committed()
	return 0, nil
}

// reopen closes the file and opens it again after a failed commit. bbolt's
// state in memory (its list of free pages, its map of the file) may no
// longer match the file, and the kernel may have dropped pages whose write
// failed while keeping them marked clean: nothing more is written through
// the old handle. It returns ErrCommitUnknown when the file, read again,
// holds the transaction whose commit failed (failedTx): retrying it would
// then apply it twice.
func (s *Store) reopen(failedTx int) error {
	s.dbMu.Lock()
	defer s.dbMu.Unlock()
	if s.db == nil {
		return s.lostError()
	}
	_ = s.db.Close() // its error says nothing the failed commit did not
	s.db = nil
	db, err := openBolt(s.path, s.opts)
	if err != nil {
		s.lost = err
		return s.lostError()
	}
	s.db = db
	s.reopens.Add(1)
	last := 0
	err = func() (err error) {
		defer s.guard(&err)
		defer debug.SetPanicOnFault(onFault())
		return db.View(func(btx *bbolt.Tx) error { last = btx.ID(); return nil })
	}()
	if err != nil {
		return err
	}
	if last >= failedTx {
		return ErrCommitUnknown
	}
	return nil
}
