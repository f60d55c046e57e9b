package kv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/weaver-crawler/weaver/outfile"
)

// Options configure Open. The zero value is what the crawler uses.
type Options struct {
	// Timeout bounds the wait for another process's lock on the file.
	// Zero means one second.
	Timeout time.Duration
	// ReadOnly opens an existing store with a shared lock and never writes.
	ReadOnly bool
	// NoSync skips fsync on commit. Only for benchmarks that want to see
	// what fsync costs: a crash may then lose or corrupt recent work.
	NoSync bool
	// PageSize is the bbolt page size of a NEW file; zero means the OS page
	// size. An existing file keeps the page size it was created with.
	PageSize int
	// MaxBatch caps how many Commit functions share one transaction.
	// Zero means 1024.
	MaxBatch int
	// Linger is how long the writer waits for more Commit functions when a
	// group is small, so that many pages share one fsync. Callers that do
	// not wait on Commit's channel never feel it. Zero means 2 ms; a
	// negative value turns it off.
	Linger time.Duration
	// Now gives the creation time recorded in a new store; nil means time.Now.
	Now func() time.Time
	// Unverified skips the walk of the file's pages that Open makes
	// before bbolt reads any (verify.go). Only for a quick look whose
	// failure the caller ignores, followed by an Open that verifies: a
	// damaged page then fails the read with a CorruptError, but a read
	// that misses it is answered from a damaged file.
	Unverified bool
	// MapAhead is the least size of bbolt's memory map of the file: a
	// writer that grows the store by much (an import) maps it once, ahead
	// of its growth. bbolt maps the file again each time it outgrows the
	// map (doubling it, up to 1 GiB), and each time copies every key and
	// value a write transaction has touched out of the old map: 5 % of
	// the CPU of an import of a web being discovered. Zero means bbolt's
	// default (the file's size). It is address space, not memory: pages
	// past the file's end are never touched.
	MapAhead int
}

// Store is an open weaver store: one bbolt file.
type Store struct {
	// dbMu guards db: every transaction holds it for reading, and reopen
	// for writing while it swaps the handle.
	dbMu sync.RWMutex
	// txMu makes write transactions one at a time from their begin to
	// what their resources are told (Committed, Abort), which bbolt's own
	// lock, released inside Commit, does not cover.
	txMu    sync.Mutex
	db      *bbolt.DB // nil after a reopen that failed (lost says why)
	lost    error
	path    string
	opts    Options
	created time.Time // the creation time in the meta bucket, read by Open

	mu     sync.RWMutex // guards closed against concurrent Commit and Close
	closed bool

	reqs       chan request  // Commit requests for the writer goroutine
	writerDone chan struct{} // closed when the writer goroutine has returned

	groups  atomic.Uint64 // group transactions committed
	fns     atomic.Uint64 // Commit functions committed
	reopens atomic.Uint64 // times the file was reopened after a failed commit

	waiter atomic.Pointer[waiterBox] // how the group writer waits out a full disk; nil: it does not (SetWaiter)
	held   atomic.Pointer[error]     // while a group waits for space: the error it failed with
}

// Open opens the store at path, creating it (with all buckets and the meta
// record) when no file exists. It never modifies a file it refuses: it
// returns an error wrapping ErrInUse when another process holds the file
// (after Options.Timeout), ErrEmptyFile, ErrNotStore, ErrTruncated,
// ErrNewerSchema or ErrCorrupt when the file is not a usable store, and
// os.ErrNotExist when a ReadOnly open finds no file.
//
// Before bbolt reads a page, Open walks the file's page structure
// (verify.go; Options.Unverified skips it): a store with a damaged page
// in use, or a damaged meta page, is refused with a *CorruptError, read
// only or not, so that nothing is written into it.
func Open(path string, opts Options) (*Store, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = time.Second
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 1024
	}
	if opts.Linger == 0 {
		opts.Linger = 2 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist) && !opts.ReadOnly:
		if err := create(path, opts); err != nil {
			return nil, err
		}
		if fi, err = os.Stat(path); err != nil {
			return nil, pathError(path, err)
		}
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%s: no such store: %w", path, os.ErrNotExist)
	case err != nil:
		return nil, pathError(path, err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory: %w", path, ErrNotStore)
	}
	if fi.Size() == 0 {
		return nil, fmt.Errorf("%s %w", path, ErrEmptyFile)
	}
	meta, err := sniff(path, fi.Size())
	if err != nil {
		return nil, err
	}
	db, err := openBolt(path, opts)
	if err != nil {
		switch {
		case errors.Is(err, berrors.ErrTimeout):
			return nil, fmt.Errorf("%s %w", path, ErrInUse)
		case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrVersionMismatch):
			return nil, fmt.Errorf("%s %w (%v)", path, ErrNotStore, err)
		case errors.Is(err, berrors.ErrChecksum):
			return nil, corruptf(path, "%v", err)
		case errors.As(err, new(*CorruptError)):
			return nil, err
		}
		return nil, fmt.Errorf("%s: open: %w", path, err)
	}
	// bbolt holds the file's lock now: no other process writes while its
	// pages are walked.
	if !opts.Unverified {
		if err := verify(path, meta); err != nil {
			db.Close()
			return nil, err
		}
	}
	s := &Store{db: db, path: path, opts: opts}
	if err := s.validate(fi.Size()); err != nil {
		db.Close()
		return nil, err
	}
	if s.created, err = s.readCreated(); err != nil {
		db.Close()
		return nil, err
	}
	if !opts.ReadOnly {
		if err := s.upgrade(); err != nil {
			db.Close()
			return nil, err
		}
		s.reqs = make(chan request, 4*opts.MaxBatch)
		s.writerDone = make(chan struct{})
		go s.writer()
	}
	return s, nil
}

// validate checks, before any data page is touched, that the file holds
// every page its meta page claims (a truncated file would otherwise fault
// on access), then that it is a weaver store of a schema this build reads.
func (s *Store) validate(size int64) (err error) {
	defer s.guard(&err)
	defer debug.SetPanicOnFault(onFault())
	return s.db.View(func(btx *bbolt.Tx) error {
		if need := btx.Size(); size < need {
			return fmt.Errorf("%s %w: %d bytes, its pages need %d", s.path, ErrTruncated, size, need)
		}
		meta := btx.Bucket(BucketMeta)
		if meta == nil || string(meta.Get([]byte(metaMagic))) != magic {
			return fmt.Errorf("%s %w (a bbolt file without weaver's meta bucket)", s.path, ErrNotStore)
		}
		v, err := strconv.Atoi(string(meta.Get([]byte(metaSchema))))
		if err != nil {
			return corruptf(s.path, "bad schema version")
		}
		if v > SchemaVersion {
			return fmt.Errorf("%s %w: file has %d, this weaver reads up to %d", s.path, ErrNewerSchema, v, SchemaVersion)
		}
		for _, name := range allBuckets {
			if btx.Bucket(name) == nil && !isLater(name) {
				return corruptf(s.path, "bucket %q missing", name)
			}
		}
		return nil
	})
}

// upgrade brings an older file up to SchemaVersion, in one transaction,
// and only when it is older (a read of the root otherwise): it creates
// the buckets the file lacks and records the version. Every older schema
// is a valid form of the current one (see SchemaVersion); what differs
// is rewritten by the packages that own it as they write.
func (s *Store) upgrade() (err error) {
	defer s.guard(&err)
	defer debug.SetPanicOnFault(onFault())
	old := false
	err = s.db.View(func(btx *bbolt.Tx) error {
		for _, name := range laterBuckets {
			old = old || btx.Bucket(name) == nil
		}
		v, _ := strconv.Atoi(string(btx.Bucket(BucketMeta).Get([]byte(metaSchema))))
		old = old || v < SchemaVersion
		return nil
	})
	if err != nil || !old {
		return err
	}
	err = s.db.Update(func(btx *bbolt.Tx) error {
		for _, name := range laterBuckets {
			if _, err := btx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return btx.Bucket(BucketMeta).Put([]byte(metaSchema), []byte(strconv.Itoa(SchemaVersion)))
	})
	if err != nil {
		return fmt.Errorf("%s: upgrading to schema %d: %w", s.path, SchemaVersion, err)
	}
	return nil
}

// openBolt opens the file with bbolt, turning a panic on damaged pages
// into ErrCorrupt: a damaged file must give an error, not a crash.
func openBolt(path string, opts Options) (db *bbolt.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, corruptf(path, "%v", r)
		}
	}()
	defer debug.SetPanicOnFault(onFault())
	db, err = bbolt.Open(path, 0o600, boltOptions(opts))
	if err == nil {
		db.AllocSize = allocSize
	}
	return db, err
}

// allocSize is how far ahead of its pages bbolt grows the file (its
// default is 16 MiB). Below 1 GiB bbolt otherwise sizes the file as its
// memory map, which doubles: a store of 8.5 MiB of pages was a 16 MiB file,
// and a crawl's growth read off the file's size was bbolt's steps, not
// what the crawl wrote (issue 43); past it, the 16 MiB tail is a hole on
// most file systems, but ls, quotas and copies count it. Each step costs a
// truncate and an fsync of the file's metadata, in a commit that fsyncs
// anyway: a few more in a long crawl than before, nothing a crawl can
// measure.
const allocSize = 1 << 20

// boltOptions: the hashmap freelist allocates in constant time. The
// freelist is written on every commit: without it bbolt rebuilds the
// freelist on open by reading every page of the file, which costs seconds
// and a resident size equal to the file on a large store.
func boltOptions(opts Options) *bbolt.Options {
	return &bbolt.Options{
		Timeout: opts.Timeout, ReadOnly: opts.ReadOnly, NoSync: opts.NoSync, PageSize: opts.PageSize,
		FreelistType: bbolt.FreelistMapType, InitialMmapSize: opts.MapAhead,
	}
}

// create writes a new, fully initialised store beside path and links it
// into place, so that a crash during creation never leaves a half store
// and two processes creating the same path do not overwrite each other.
func create(path string, opts Options) error {
	// A dangling symbolic link names where the store goes: it is created
	// there and the link kept, as an output file's link is (outfile).
	dest := path
	if t, err := outfile.Resolve(path); err == nil && t.Kind == outfile.Missing {
		dest = t.Path
	}
	tmp, err := os.CreateTemp(filepath.Dir(dest), filepath.Base(dest)+".new-*")
	if err != nil {
		return fmt.Errorf("%s: create: %w", path, err)
	}
	tmpName := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpName)
	if err := os.Remove(tmpName); err != nil { // bbolt must see no file to initialise one
		return fmt.Errorf("%s: create: %w", path, err)
	}
	db, err := bbolt.Open(tmpName, 0o600, boltOptions(opts))
	if err != nil {
		return fmt.Errorf("%s: create: %w", path, err)
	}
	err = db.Update(func(btx *bbolt.Tx) error {
		for _, name := range allBuckets {
			if _, err := btx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		meta := btx.Bucket(BucketMeta)
		if err := meta.Put([]byte(metaMagic), []byte(magic)); err != nil {
			return err
		}
		if err := meta.Put([]byte(metaSchema), []byte(strconv.Itoa(SchemaVersion))); err != nil {
			return err
		}
		return meta.Put([]byte(metaCreated), []byte(opts.Now().UTC().Format(time.RFC3339Nano)))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: create: %w", path, err)
	}
	if err := os.Link(tmpName, dest); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s: create: %w", path, err)
	}
	return nil
}

// Path returns the file name the store was opened with.
func (s *Store) Path() string { return s.path }

// ReadOnly reports whether the store was opened read-only.
func (s *Store) ReadOnly() bool { return s.opts.ReadOnly }

// Created returns the creation time recorded in the meta bucket, read
// when the store was opened (zero for a store that records none).
func (s *Store) Created() time.Time { return s.created }

// readCreated reads the creation time recorded in the meta bucket.
func (s *Store) readCreated() (t time.Time, err error) {
	err = s.View(func(tx *Tx) error {
		// A store of an older weaver may record none, or another form:
		// the time is for people, so it is then zero.
		t, _ = time.Parse(time.RFC3339Nano, string(tx.GetRaw(BucketMeta, []byte(metaCreated))))
		return nil
	})
	return t, err
}

// View runs fn in a read-only transaction: a consistent snapshot that
// concurrent commits do not change. It returns fn's error.
//
// A damaged page met on the way, which bbolt answers with a panic or a
// fault, ends the transaction with a CorruptError instead (see guard).
func (s *Store) View(fn func(*Tx) error) (err error) {
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	if s.db == nil {
		return s.lostError()
	}
	defer s.guard(&err)
	defer debug.SetPanicOnFault(onFault())
	return s.db.View(func(btx *bbolt.Tx) error { return fn(&Tx{btx: btx}) })
}

// Update runs fn in its own read-write transaction and commits it with an
// fsync before returning. It returns fn's error (nothing is written then),
// a commit error, or ErrClosed. While the group writer waits for space
// (SetWaiter) it writes nothing and returns the error the writer waits
// on (IsFull): the group must commit first, as it would have.
func (s *Store) Update(fn func(*Tx) error) (err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	if h := s.held.Load(); h != nil {
		return fmt.Errorf("kv: a commit waits for space: %w", *h)
	}
	return s.write(func(tx *Tx) error { return runTx(tx, fn) })
}

// runTx runs fn in a writable transaction and stores its counters.
func runTx(tx *Tx, fn func(*Tx) error) error {
	if err := fn(tx); err != nil {
		return err
	}
	return tx.flush()
}

// Close waits for queued Commit functions to be committed, then closes the
// file. It is safe to call more than once.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	if s.reqs != nil {
		close(s.reqs)
	}
	s.mu.Unlock()
	if s.writerDone != nil {
		<-s.writerDone
	}
	s.dbMu.Lock()
	defer s.dbMu.Unlock()
	if s.db == nil {
		return nil
	}
	return s.db.Close()
}

// Check runs bbolt's consistency check over the whole file in a read
// transaction and returns every problem it finds, wrapped in ErrCorrupt.
func (s *Store) Check() (err error) {
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	if s.db == nil {
		return s.lostError()
	}
	defer s.guard(&err)
	defer debug.SetPanicOnFault(onFault())
	return s.db.View(func(btx *bbolt.Tx) error {
		var errs []error
		for err := range btx.Check() { // drained to the end: Check's goroutine must finish
			if len(errs) < 20 {
				errs = append(errs, err)
			}
		}
		if len(errs) > 0 {
			return fmt.Errorf("%s %w: %w", s.path, ErrCorrupt, errors.Join(errs...))
		}
		return nil
	})
}
