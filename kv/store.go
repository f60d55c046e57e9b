package kv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/weaver-crawler/weaver/internal/outfile"
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
}

// Store is an open weaver store: one bbolt file.
type Store struct {
	db   *bbolt.DB
	path string
	opts Options

	mu     sync.RWMutex // guards closed against concurrent Commit and Close
	closed bool

	reqs       chan request  // Commit requests for the writer goroutine
	writerDone chan struct{} // closed when the writer goroutine has returned

	groups atomic.Uint64 // group transactions committed
	fns    atomic.Uint64 // Commit functions committed
}

type request struct {
	fn      func(*Tx) error
	done    chan error
	applied chan error // nil, or told once: nil when fn's group has run and is being committed, else fn's error
	urgent  bool       // someone waits on it: the group starts without lingering
}

// apply tells a CommitApplied caller that fn's writes are in the group
// being committed.
func (r *request) apply() {
	if r.applied != nil {
		r.applied <- nil
		r.applied = nil
	}
}

// finish reports the outcome; a caller not yet told applied learns it too.
func (r *request) finish(err error) {
	if r.applied != nil {
		r.applied <- err
		r.applied = nil
	}
	r.done <- err
}

// bbolt's meta page: a 16-byte page header, then the magic number.
const (
	bboltMagic      = 0xED0CDAED
	bboltMagicAt    = 16
	bboltPageSizeAt = 24
)

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
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%s: no such store: %w", path, os.ErrNotExist)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
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
	if !opts.ReadOnly {
		if err := s.addLaterBuckets(); err != nil {
			db.Close()
			return nil, err
		}
		s.reqs = make(chan request, 4*opts.MaxBatch)
		s.writerDone = make(chan struct{})
		go s.writer()
	}
	return s, nil
}

// sniff checks the file without bbolt, so that a file that is not bbolt at
// all (SQLite, random bytes) or a truncated one is refused before bbolt
// opens it: bbolt itself faults reading pages past the end of a file. It
// reads both meta pages, keeps the valid one with the newest transaction,
// and requires the file to hold every page up to its high-water mark.
func sniff(path string, size int64) (meta metaPage, err error) {
	f, err := os.Open(path)
	if err != nil {
		return meta, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	var hdr [metaEnd]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return meta, fmt.Errorf("%s %w (only %d bytes)", path, ErrNotStore, size)
	}
	// A first page without bbolt's magic is another kind of file, unless
	// the second meta page is valid: bbolt keeps two so that one damaged
	// meta page costs only the last transaction, and opens with the other.
	notBolt := binary.LittleEndian.Uint32(hdr[bboltMagicAt:]) != bboltMagic
	best, ok := parseMeta(hdr[:])
	candidates := []int{4096, 8192, 16384, 32768, 65536}
	if ok {
		candidates = append([]int{best.pageSize}, candidates...)
	}
	ok0, ok1 := ok, false
	for _, ps := range candidates {
		var m1 [metaEnd]byte
		if _, err := f.ReadAt(m1[:], int64(ps)); err != nil {
			continue
		}
		if m, valid := parseMeta(m1[:]); valid && m.pageSize == ps && (!ok0 || ps == best.pageSize) {
			if !ok || m.txid > best.txid {
				best = m
			}
			ok, ok1 = true, true
			break
		}
	}
	switch {
	case !ok && notBolt && bytes.HasPrefix(hdr[:], []byte("SQLite format 3\x00")):
		return meta, fmt.Errorf("%s %w: it is a SQLite database (did you mean an export?)", path, ErrNotStore)
	case !ok && notBolt:
		return meta, fmt.Errorf("%s %w", path, ErrNotStore)
	case !ok:
		return meta, corruptf(path, "no valid meta page")
	case !ok1 && size < 2*int64(best.pageSize):
		return meta, fmt.Errorf("%s %w: %d bytes, its pages need %d", path, ErrTruncated, size, int64(best.hwm)*int64(best.pageSize))
	case !ok0 || !ok1:
		// bbolt would open it with the other one, as of the transaction
		// before the last, and weaver check reports it: a damaged page
		// like any other, for check --repair.
		damaged := 0
		if ok0 {
			damaged = 1
		}
		return meta, corruptf(path, "meta page %d is damaged (the other one is valid)", damaged)
	}
	if need := int64(best.hwm) * int64(best.pageSize); size < need {
		return meta, fmt.Errorf("%s %w: %d bytes, its pages need %d", path, ErrTruncated, size, need)
	}
	return best, nil
}

// bbolt's meta page layout: a 16-byte page header, then magic, version,
// page size, flags (4 bytes each), the root bucket (16), the freelist page
// id, the high-water mark page id and the transaction id (8 each), and an
// FNV-64a checksum of everything from magic to txid.
const (
	metaStart = 16
	metaSum   = 72
	metaEnd   = 80
)

type metaPage struct {
	pageSize int
	root     uint64 // the root bucket's page
	freelist uint64 // the page of the list of free pages
	hwm      uint64
	txid     uint64
}

func parseMeta(b []byte) (metaPage, bool) {
	if len(b) < metaEnd || binary.LittleEndian.Uint32(b[bboltMagicAt:]) != bboltMagic {
		return metaPage{}, false
	}
	h := fnv.New64a()
	h.Write(b[metaStart:metaSum])
	if h.Sum64() != binary.LittleEndian.Uint64(b[metaSum:]) {
		return metaPage{}, false
	}
	m := metaPage{
		pageSize: int(binary.LittleEndian.Uint32(b[bboltPageSizeAt:])),
		root:     binary.LittleEndian.Uint64(b[32:]),
		freelist: binary.LittleEndian.Uint64(b[48:]),
		hwm:      binary.LittleEndian.Uint64(b[56:]),
		txid:     binary.LittleEndian.Uint64(b[64:]),
	}
	if m.pageSize < 512 || m.pageSize > 1<<20 || m.pageSize&(m.pageSize-1) != 0 || m.hwm < 4 {
		return metaPage{}, false
	}
	return m, true
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

// addLaterBuckets creates the buckets an older file lacks, in one
// transaction, and only when one is missing (a read of the root otherwise).
func (s *Store) addLaterBuckets() (err error) {
	defer s.guard(&err)
	defer debug.SetPanicOnFault(onFault())
	missing := false
	_ = s.db.View(func(btx *bbolt.Tx) error {
		for _, name := range laterBuckets {
			missing = missing || btx.Bucket(name) == nil
		}
		return nil
	})
	if !missing {
		return nil
	}
	err = s.db.Update(func(btx *bbolt.Tx) error {
		for _, name := range laterBuckets {
			if _, err := btx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: adding buckets: %w", s.path, err)
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

// allocSize is how far ahead of its pages bbolt grows the file once it is
// past that size (bbolt's default: 16 MiB). The tail is a hole on most
// file systems, but ls, quotas and copies count it: a 10,000-page crawl's
// 70 MB store was 85 MB long. A grow is a truncate and an fsync of the
// file's metadata, in a commit that fsyncs anyway: four times as many
// cost nothing a crawl can measure.
const allocSize = 4 << 20

// boltOptions: the hashmap freelist allocates in constant time. The
// freelist is written on every commit: without it bbolt rebuilds the
// freelist on open by reading every page of the file, which costs seconds
// and a resident size equal to the file on a large store.
func boltOptions(opts Options) *bbolt.Options {
	return &bbolt.Options{
		Timeout: opts.Timeout, ReadOnly: opts.ReadOnly, NoSync: opts.NoSync, PageSize: opts.PageSize,
		FreelistType: bbolt.FreelistMapType,
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

// Created returns the creation time recorded in the meta bucket.
func (s *Store) Created() time.Time {
	var t time.Time
	_ = s.View(func(tx *Tx) error {
		t, _ = time.Parse(time.RFC3339Nano, string(tx.GetRaw(BucketMeta, []byte(metaCreated))))
		return nil
	})
	return t
}

// View runs fn in a read-only transaction: a consistent snapshot that
// concurrent commits do not change. It returns fn's error.
//
// A damaged page met on the way, which bbolt answers with a panic or a
// fault, ends the transaction with a CorruptError instead (see guard).
func (s *Store) View(fn func(*Tx) error) (err error) {
	defer s.guard(&err)
	defer debug.SetPanicOnFault(onFault())
	return s.db.View(func(btx *bbolt.Tx) error { return fn(&Tx{btx: btx}) })
}

// Update runs fn in its own read-write transaction and commits it with an
// fsync before returning. It returns fn's error (nothing is written then),
// a commit error, or ErrClosed.
func (s *Store) Update(fn func(*Tx) error) (err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	// bbolt rolls the transaction back when a panic leaves it, so a
	// damaged page costs this transaction only.
	defer s.guard(&err)
	defer debug.SetPanicOnFault(onFault())
	return s.db.Update(func(btx *bbolt.Tx) error { return runTx(btx, fn) })
}

// runTx runs fn in a writable transaction and stores its counters.
func runTx(btx *bbolt.Tx, fn func(*Tx) error) error {
	tx := &Tx{btx: btx}
	if err := fn(tx); err != nil {
		return err
	}
	return tx.flush()
}

// Commit queues fn to run in the next group transaction and returns a
// channel that receives, once, nil when fn's writes are durably committed
// or the error that prevented it (fn's own error, a commit error such as a
// full disk, or ErrClosed). fn must make all its checks before it writes or
// return an error before writing: when fn fails, the group is rolled back
// and rerun without it, and fn is run once more on its own to report its
// error. The caller need not wait on the channel before doing other work.
func (s *Store) Commit(fn func(*Tx) error) <-chan error {
	return s.commit(fn, false)
}

// CommitUrgent is Commit for a function whose caller waits for it: the
// group it joins starts at once instead of lingering for more members.
func (s *Store) CommitUrgent(fn func(*Tx) error) <-chan error {
	return s.commit(fn, true)
}

// CommitApplied is CommitUrgent for a caller that may act on fn's writes
// before they are durable: applied receives nil once fn and every other
// member of its group have run without error, just before the group's
// commit and fsync, or the error that kept fn's writes out (fn's own, a
// closed store); done then reports the commit as Commit's channel does.
// Waiting on applied alone is enough to know whether to act.
//
// Acting early is safe when every later write that builds on fn's writes
// checks, in its own transaction, that they are there: bbolt commits one
// transaction after another, so a later one can be durable only if fn's
// is, and when fn's group fails to commit, a later transaction finds fn's
// writes missing and must fail. A crawl hands out the leases of a claim
// this way (a page commits only while its lease exists), so that workers
// do not wait for the claim's fsync.
func (s *Store) CommitApplied(fn func(*Tx) error) (applied, done <-chan error) {
	a := make(chan error, 1)
	d := make(chan error, 1)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed || s.reqs == nil {
		a <- ErrClosed
		d <- ErrClosed
		return a, d
	}
	s.reqs <- request{fn: fn, done: d, applied: a, urgent: true}
	return a, d
}

func (s *Store) commit(fn func(*Tx) error, urgent bool) <-chan error {
	done := make(chan error, 1)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed || s.reqs == nil {
		done <- ErrClosed
		return done
	}
	s.reqs <- request{fn: fn, done: done, urgent: urgent}
	return done
}

// CommitStats returns how many group transactions and Commit functions the
// writer has committed since Open.
func (s *Store) CommitStats() (groups, fns uint64) { return s.groups.Load(), s.fns.Load() }

var errFnFailed = errors.New("kv: a group member failed")

// writer is the one goroutine that runs Commit functions. It takes every
// request waiting when it starts a group, so while one group is being
// fsynced the next one gathers: the batch grows with the load and costs
// no added delay when the load is light.
func (s *Store) writer() {
	defer close(s.writerDone)
	batch := make([]request, 0, s.opts.MaxBatch)
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	small := max(s.opts.MaxBatch/16, 1)
	for first := range s.reqs {
		batch = append(batch[:0], first)
		lingering, urgent := false, first.urgent
	drain:
		for len(batch) < s.opts.MaxBatch {
			select {
			case r, ok := <-s.reqs:
				if !ok {
					break drain
				}
				batch = append(batch, r)
				urgent = urgent || r.urgent
				continue
			default:
			}
			if lingering || urgent || s.opts.Linger < 0 || len(batch) >= small {
				break
			}
			// A small group: give concurrent producers a moment to join.
			lingering = true
			linger.Reset(s.opts.Linger)
			select {
			case r, ok := <-s.reqs:
				linger.Stop()
				if !ok {
					break drain
				}
				batch = append(batch, r)
				lingering, urgent = false, urgent || r.urgent
			case <-linger.C:
			}
		}
		s.runGroup(batch)
	}
}

// update is db.Update for the writer goroutine, inside guard: a damaged
// page fails the transaction (rolled back by bbolt) instead of the
// process, which no caller of Commit could recover.
func (s *Store) update(fn func(*bbolt.Tx) error) (err error) {
	defer s.guard(&err)
	defer debug.SetPanicOnFault(onFault())
	return s.db.Update(fn)
}

func (s *Store) runGroup(batch []request) {
	for len(batch) > 0 {
		failed := -1
		var ferr error
		err := s.update(func(btx *bbolt.Tx) error {
			tx := &Tx{btx: btx}
			for i, r := range batch {
				if err := r.fn(tx); err != nil {
					failed, ferr = i, err
					return errFnFailed
				}
			}
			if err := tx.flush(); err != nil {
				return err
			}
			for i := range batch {
				batch[i].apply()
			}
			return nil
		})
		if failed < 0 {
			if err == nil {
				s.groups.Add(1)
				s.fns.Add(uint64(len(batch)))
			}
			for i := range batch {
				batch[i].finish(err)
			}
			return
		}
		// Run the failed function alone so that its error (or success, when
		// the failure came from an earlier member's writes) is its own.
		bad := batch[failed]
		batch = append(batch[:failed:failed], batch[failed+1:]...)
		alone := s.update(func(btx *bbolt.Tx) error {
			if err := runTx(btx, bad.fn); err != nil {
				return err
			}
			bad.apply()
			return nil
		})
		if alone == nil {
			s.groups.Add(1)
			s.fns.Add(1)
		} else if errors.Is(ferr, alone) || alone.Error() == ferr.Error() {
			alone = ferr
		}
		bad.finish(alone)
	}
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
	return s.db.Close()
}

// Check runs bbolt's consistency check over the whole file in a read
// transaction and returns every problem it finds, wrapped in ErrCorrupt.
func (s *Store) Check() (err error) {
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
