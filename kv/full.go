package kv

import (
	"errors"
	"fmt"
	"runtime/debug"
	"syscall"

	"go.etcd.io/bbolt"
)

// IsFull reports whether err says a file system has no room for a write:
// no space left on the device (ENOSPC), or the user's quota used up
// (EDQUOT). A crawl pauses on such an error instead of ending.
func IsFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// Waiter is how a store's group writer waits out a full file system
// (SetWaiter). Full blocks; the store writes nothing meanwhile.
type Waiter interface {
	// Full is told that a group's commit failed for want of room (IsFull:
	// the store, or a Resource the group enlisted, such as a WARC file),
	// after the store was reopened. It returns when the group should be
	// tried again (true), or given up (false: its functions get err). It
	// must return false once its owner stops: Close waits for it.
	Full(err error) (retry bool)
	// Resumed is told that a group that waited has committed.
	Resumed()
}

type waiterBox struct{ w Waiter }

// SetWaiter makes the group writer wait out a full file system with w:
// the group whose commit failed for want of room is kept, and run again
// whole when w says so — the same functions, in the same order, on the
// store as it was before the group — so that nothing is lost or written
// twice, and the groups queued behind it wait. While it waits, Update
// fails at once with the error it waits on. nil: a failed commit's error
// goes to the group's functions, as without a waiter.
func (s *Store) SetWaiter(w Waiter) {
	if w == nil {
		s.waiter.Store(nil)
		return
	}
	s.waiter.Store(&waiterBox{w})
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

// writeWaiting is write for the group writer: while the commit fails for
// want of room and the waiter says to try again, fn runs again on the
// reopened file.
func (s *Store) writeWaiting(fn func(*Tx) error) error {
	waited := false
	for {
		err := s.write(fn)
		box := s.waiter.Load()
		if err == nil || box == nil || !IsFull(err) {
			if waited {
				s.held.Store(nil)
				if err == nil && box != nil {
					box.w.Resumed()
				}
			}
			return err
		}
		s.held.Store(&err)
		if !box.w.Full(err) {
			s.held.Store(nil)
			return err
		}
		waited = true
	}
}

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
