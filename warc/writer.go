package warc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"
)

// Exchange is one HTTP request and its answer, as the crawl saw them.
type Exchange struct {
	URL      string    // the request's absolute URL: WARC-Target-URI
	Request  []byte    // the request as sent: request line, headers, blank line, body
	Response []byte    // the answer as received: status line, headers, blank line, body (cut at the cap when Truncated)
	RemoteIP string    // the peer's address, without port: WARC-IP-Address ("" when unknown)
	Date     time.Time // when the request was sent: WARC-Date (zero: now)
	// Truncated says the body was cut at the crawl's body cap: the
	// response (or revisit) record says WARC-Truncated: length.
	Truncated bool
	// Protocols are the exchange's protocols, one WARC-Protocol field
	// each on the request and the response (or revisit) record, in the
	// form of WARC 1.1's annotations (IIPC proposal 42): the application
	// protocol first ("h2", "http/1.1"), then the security layer's
	// ("tls/1.3"). The HTTP messages themselves are written in HTTP/1.1
	// form whatever the protocol, as readers expect. Empty: no field.
	Protocols []string
	// CipherSuite is the TLS cipher suite by its IANA name
	// ("TLS_AES_128_GCM_SHA256"): WARC-Cipher-Suite on both records; ""
	// (plain HTTP): no field.
	CipherSuite string
	// Revisit, when set, says that the payload equals the one recorded for
	// Revisit.URL at Revisit.Date: a revisit record (identical-payload-digest
	// profile) holding only the status line and headers replaces the
	// response record.
	Revisit *Original
}

// Original is the earlier capture a revisit record refers to.
type Original struct {
	URL      string    // WARC-Refers-To-Target-URI
	Date     time.Time // WARC-Refers-To-Date
	RecordID string    // WARC-Refers-To, when known ("<urn:uuid:…>")
	// NotModified makes the revisit record's profile server-not-modified
	// (the server answered 304 to a conditional request) instead of
	// identical-payload-digest: the record has no payload digest.
	NotModified bool
}

// Written says where an exchange's records went.
type Written struct {
	File          string // base name of the file
	Offset        int64  // of the request record; the response follows it
	Bytes         int64  // compressed bytes of both records
	ResponseID    string // WARC-Record-ID of the response (or revisit) record
	PayloadDigest string // "sha1:BASE32" of the response body: compare it to decide a later revisit
}

// Options configure a Writer. Only Dir is required.
type Options struct {
	Dir      string            // where the files go; created if missing
	Prefix   string            // the crawl's name, first part of each file name (default "weaver")
	MaxSize  int64             // a file is closed before it would pass this many bytes (default 1 GB)
	Software string            // warcinfo software ("weaver")
	Settings map[string]string // warcinfo fields: the crawl's settings, written sorted by key
	Robots   string            // warcinfo robots policy: "obey" or "ignore"
	// GzipLevel is the gzip level of each record (default
	// gzip.BestSpeed: klauspost/compress's level 1 deflates a 30 KB page
	// 1.8× as fast as its default level 5, into 11 % more bytes; gzip is
	// most of what --warc costs a crawl).
	GzipLevel int
	// NoSync skips fsync: only for benchmarks that want to see its cost.
	NoSync bool
	// Committed, when set, is the position a crawl's store recorded with
	// its last commit (Position): Open cuts what the files hold past it
	// (see Recover). The zero Position says no commit referred to a
	// record yet: Open removes the prefix's open files.
	Committed *Position
	Now       func() time.Time // the clock; nil: time.Now
}

// DefaultMaxSize is Options.MaxSize when zero: 1 GB.
const DefaultMaxSize = 1 << 30

// Stats are what a Writer has written since Open.
type Stats struct {
	Files   int64 `json:"files"`   // files created
	Bytes   int64 `json:"bytes"`   // compressed bytes written, warcinfo records included
	Records int64 `json:"records"` // records written, warcinfo records included
}

// Writer appends exchanges to rotating WARC files in one directory. It is
// safe for concurrent use.
type Writer struct {
	opts Options

	mu     sync.Mutex // guards the fields below, and serialises writes to f
	f      *os.File   // the open file; nil before the first write and after a rotation
	path   string     // f's path (NAME.open)
	size   int64      // bytes in f
	serial int        // serial of the next file
	seq    uint64     // bumped by each write: what a sync must cover
	closed bool
	info   int64 // bytes of f's warcinfo record

	staged  []*stagedFile // what Stage queued for the transaction under way, by file
	dirty   bool          // f may hold bytes past size: an Abort failed to cut them
	lateErr error         // a file that could not be closed after its commit: Close returns it

	synced atomic.Uint64 // highest seq known to be on disk
	syncMu sync.Mutex    // one fsync at a time; waiters behind it find their seq covered

	files, bytes, records atomic.Int64
}

// Open prepares a writer on opts.Dir. It first finishes the files a killed
// writer of the same prefix left open there (see Recover) and returns what it found, for the
// caller to log. The first file is created by the first WriteExchange. It
// returns an error when the directory cannot be created or read, or a
// left-over file cannot be repaired.
func Open(opts Options) (*Writer, []Recovered, error) {
	if opts.Dir == "" {
		return nil, nil, errors.New("warc: open: no directory")
	}
	if opts.Prefix == "" {
		opts.Prefix = "weaver"
	}
	if opts.MaxSize <= 0 {
		opts.MaxSize = DefaultMaxSize
	}
	if opts.Software == "" {
		opts.Software = "weaver"
	}
	if opts.GzipLevel == 0 {
		opts.GzipLevel = gzip.BestSpeed
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("warc: open: %w", err)
	}
	rec, err := Recover(opts.Dir, opts.Prefix, opts.Committed)
	if err != nil {
		return nil, rec, err
	}
	serial, err := nextSerial(opts.Dir, opts.Prefix)
	if err != nil {
		return nil, rec, err
	}
	if opts.Committed != nil {
		// Serials grow across directories too: a file this writer starts
		// in another directory comes after the last commit's, so that a
		// kill before its first commit leaves it to be removed.
		if n, ok := serialOf(opts.Committed.File, opts.Prefix); ok && n >= serial {
			serial = n + 1
		}
	}
	return &Writer{opts: opts, serial: serial}, rec, nil
}

// fileName matches the files a Writer names, finished or open.
var fileName = regexp.MustCompile(`^(.+)-(\d{14})-(\d+)\.warc\.gz(\.open)?$`)

// ParseName takes apart the name of a file a Writer names: its prefix,
// its serial, and whether it is still open (NAME.open); ok is false for
// any other name.
func ParseName(name string) (prefix string, serial int, open, ok bool) {
	m := fileName.FindStringSubmatch(name)
	if m == nil {
		return "", 0, false, false
	}
	n, err := strconv.Atoi(m[3])
	return m[1], n, m[4] != "", err == nil
}

func nextSerial(dir, prefix string) (int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("warc: open: %w", err)
	}
	next := 0
	for _, e := range ents {
		if n, ok := serialOf(e.Name(), prefix); ok && n >= next { // prefix is never "" here (Open)
			next = n + 1
		}
	}
	return next, nil
}

// WriteExchange writes ex as a request record and a response (or revisit)
// record, each its own gzip member, and returns once both are on disk
// (fsynced), so that what the caller commits next may rely on them. The
// records are built and compressed before the file is locked, so callers
// compress in parallel. It returns ErrBadExchange (wrapped) for an
// exchange it cannot record, ErrClosed after Close, ctx's error if ctx is
// done before the write, and the file system's error otherwise; after a
// failed write the file is cut back to its last whole record.
func (w *Writer) WriteExchange(ctx context.Context, ex Exchange) (Written, error) {
	out, seq, err := w.writeExchange(ctx, &ex)
	if err != nil {
		return Written{}, err
	}
	if err := w.syncTo(seq); err != nil {
		return Written{}, err
	}
	return out, nil
}

// writeExchange builds ex's records and appends them to the file, without
// the fsync; it returns the append's sequence number for syncTo.
func (w *Writer) writeExchange(ctx context.Context, ex *Exchange) (Written, uint64, error) {
	if err := ctx.Err(); err != nil {
		return Written{}, 0, err
	}
	var out Written
	buf := bufs.Get().(*bytes.Buffer)
	defer bufs.Put(buf)
	buf.Reset()
	if err := w.build(buf, ex, &out); err != nil {
		return Written{}, 0, err
	}
	if err := ctx.Err(); err != nil {
		return Written{}, 0, err
	}
	seq, err := w.append(buf.Bytes(), 2, &out)
	if err != nil {
		return Written{}, 0, err
	}
	return out, seq, nil
}

// Rotate closes the current file (the next write starts a new one). It
// returns the file system's error.
func (w *Writer) Rotate() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rotateLocked()
}

// Close makes everything written durable, closes and renames the current
// file. Later writes return ErrClosed. It returns the file system's error.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	w.abortLocked() // nothing staged is committed
	if w.dirty && w.f != nil {
		if err := w.f.Truncate(w.size); err != nil {
			return fmt.Errorf("warc: close %s: %w", w.path, err)
		}
	}
	if err := w.rotateLocked(); err != nil {
		return err
	}
	return w.lateErr
}

// Stats returns what the writer has written since Open.
func (w *Writer) Stats() Stats {
	return Stats{Files: w.files.Load(), Bytes: w.bytes.Load(), Records: w.records.Load()}
}

// CheckDir reports, without creating anything, whether Open could make
// and write dir: dir is a directory, or does not exist and its nearest
// existing parent is a directory this process can create files in. A
// crawl refuses a bad --warc before it creates its store.
func CheckDir(dir string) error {
	if dir == "" {
		return errors.New("warc: no directory")
	}
	p := filepath.Clean(dir)
	for {
		fi, err := os.Stat(p)
		switch {
		case err == nil && !fi.IsDir():
			return fmt.Errorf("warc: %s is not a directory", p)
		case err == nil:
			// A file made and removed at once: the only portable test of
			// permission to create one.
			f, err := os.CreateTemp(p, ".weaver-check-*")
			if err != nil {
				return fmt.Errorf("warc: cannot create files in %s: %w", p, errors.Unwrap(err))
			}
			f.Close()
			return os.Remove(f.Name())
		case !errors.Is(err, os.ErrNotExist):
			return fmt.Errorf("warc: %w", err)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return fmt.Errorf("warc: %s: no existing parent directory", dir)
		}
		p = parent
	}
}
