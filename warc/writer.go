package warc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/klauspost/compress/gzip"
	gowarc "github.com/nlnwa/gowarc/v3"
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
	// (see Recover).
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

func nextSerial(dir, prefix string) (int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("warc: open: %w", err)
	}
	next := 0
	for _, e := range ents {
		m := fileName.FindStringSubmatch(e.Name())
		if m == nil || m[1] != prefix {
			continue
		}
		if n, err := strconv.Atoi(m[3]); err == nil && n >= next {
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

// WriteExchangeUnsynced is WriteExchange without the fsync: it returns
// once the records are written to the file. Sync makes them durable.
func (w *Writer) WriteExchangeUnsynced(ctx context.Context, ex Exchange) (Written, error) {
	out, _, err := w.writeExchange(ctx, &ex)
	return out, err
}

// Sync returns once every exchange written so far is on disk: one fsync
// when some are not, none when they are.
func (w *Writer) Sync() error {
	w.mu.Lock()
	seq := w.seq
	w.mu.Unlock()
	return w.syncTo(seq)
}

var bufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// uuidMu serialises what touches google/uuid's globals: gowarc's record
// builder switches its random pool on (a global write) each time one is
// made, which races with uuid.New in other goroutines.
var uuidMu sync.Mutex

// newBuilder is gowarc.NewRecordBuilder under uuidMu.
func newBuilder(t gowarc.RecordType) gowarc.WarcRecordBuilder {
	uuidMu.Lock()
	defer uuidMu.Unlock()
	return gowarc.NewRecordBuilder(t, recordOptions...)
}

// build marshals ex's two records into buf, one gzip member each.
func (w *Writer) build(buf *bytes.Buffer, ex *Exchange, out *Written) error {
	if ex.URL == "" {
		return fmt.Errorf("%w: no URL", ErrBadExchange)
	}
	hdrEnd := bytes.Index(ex.Response, []byte("\r\n\r\n"))
	if !bytes.HasPrefix(ex.Response, []byte("HTTP/")) || hdrEnd < 0 {
		return fmt.Errorf("%w: %s: the response is not an HTTP message", ErrBadExchange, ex.URL)
	}
	date := ex.Date
	if date.IsZero() {
		date = w.opts.Now()
	}
	reqID, respID := newID(), newID()
	out.PayloadDigest = digest(ex.Response[hdrEnd+4:])
	out.ResponseID = respID
	req, resp, direct := exchangeRecords(ex, reqID, respID, date, out.PayloadDigest)
	scratch := bufs.Get().(*bytes.Buffer)
	defer bufs.Put(scratch)
	for _, r := range []*record{&req, &resp} {
		if err := w.compress(buf, func(zw io.Writer) error { return r.write(zw, direct, scratch) }); err != nil {
			return fmt.Errorf("warc: %s: %w", ex.URL, err)
		}
	}
	return nil
}

// The WARC 1.1 fields gowarc (3.1) does not define. Its builder takes any
// field, but writes the name of one it does not know canonicalised as an
// HTTP header name ("Warc-Protocol"). Field names are case-insensitive in
// WARC, yet some readers look them up as written (warcio.js when it keeps
// the case, grep), so spelled puts the spelling back after the build.
const (
	fieldProtocol    = "WARC-Protocol"
	fieldCipherSuite = "WARC-Cipher-Suite"
)

var spelled = map[string]string{
	http.CanonicalHeaderKey(fieldProtocol):    fieldProtocol,
	http.CanonicalHeaderKey(fieldCipherSuite): fieldCipherSuite,
}

// oneLine folds line breaks into spaces: a field value is one line.
func oneLine(v string) string { return strings.NewReplacer("\r", " ", "\n", " ").Replace(v) }

// recordOptions make the builder compute Content-Length and sha1 base32
// block and payload digests.
var recordOptions = []gowarc.WarcRecordOption{
	gowarc.WithDefaultDigestAlgorithm("sha1"),
	gowarc.WithAddMissingDigest(true),
	gowarc.WithAddMissingContentLength(true),
	gowarc.WithBufferMaxMemBytes(64 << 20),
}

func newID() string {
	uuidMu.Lock()
	defer uuidMu.Unlock()
	return "<" + uuid.New().URN() + ">"
}

// marshal builds b's record and appends it to buf as one gzip member.
func (w *Writer) marshal(buf *bytes.Buffer, b gowarc.WarcRecordBuilder) error {
	return w.compress(buf, func(zw io.Writer) error { return marshalTo(zw, b) })
}

// compress appends to buf one gzip member of what write writes.
func (w *Writer) compress(buf *bytes.Buffer, write func(io.Writer) error) error {
	zw := w.gzipWriter(buf)
	defer w.putGzip(zw)
	if err := write(zw); err != nil {
		return err
	}
	return zw.Close()
}

// marshalTo builds b's record and writes it to dst.
func marshalTo(dst io.Writer, b gowarc.WarcRecordBuilder) error {
	rec, _, err := b.Build()
	if err != nil {
		return err
	}
	defer rec.Close()
	for _, f := range *rec.WarcHeader() {
		if name, ok := spelled[f.Name]; ok {
			f.Name = name
		}
	}
	_, _, err = marshaler.Marshal(dst, rec, 0)
	return err
}

var marshaler = gowarc.NewMarshaler()

// gzips holds gzip writers by level; a Writer uses one level.
var gzips sync.Map // level → *sync.Pool

func (w *Writer) gzipWriter(buf *bytes.Buffer) *gzip.Writer {
	p, _ := gzips.LoadOrStore(w.opts.GzipLevel, &sync.Pool{})
	if zw, ok := p.(*sync.Pool).Get().(*gzip.Writer); ok {
		zw.Reset(buf)
		return zw
	}
	zw, err := gzip.NewWriterLevel(buf, w.opts.GzipLevel)
	if err != nil { // a bad level: the default
		zw = gzip.NewWriter(buf)
	}
	return zw
}

func (w *Writer) putGzip(zw *gzip.Writer) {
	p, _ := gzips.Load(w.opts.GzipLevel)
	p.(*sync.Pool).Put(zw)
}

// append writes data (records whole gzip members) to the current file,
// rotating first when it would pass MaxSize, and returns the write's seq.
func (w *Writer) append(data []byte, records int64, out *Written) (uint64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, ErrClosed
	}
	if w.f != nil && w.size+int64(len(data)) > w.opts.MaxSize {
		if err := w.rotateLocked(); err != nil {
			return 0, err
		}
	}
	if w.f == nil {
		if err := w.createLocked(); err != nil {
			return 0, err
		}
	}
	out.File = strings.TrimSuffix(filepath.Base(w.path), openSuffix)
	out.Offset = w.size
	out.Bytes = int64(len(data))
	if err := w.writeLocked(data); err != nil {
		return 0, err
	}
	w.records.Add(records)
	return w.seq, nil
}

// writeLocked appends data at the end of f. A failed write is cut back so
// the file still ends with a whole record; if even that fails, the file
// is closed and left for Recover.
func (w *Writer) writeLocked(data []byte) error {
	n, err := w.f.WriteAt(data, w.size)
	if err != nil {
		if terr := w.f.Truncate(w.size); terr != nil {
			w.f.Close()
			w.f = nil
			return fmt.Errorf("warc: write %s: %w (and cutting the torn record failed: %v; the next Open repairs it)", w.path, err, terr)
		}
		return fmt.Errorf("warc: write %s: %w", w.path, err)
	}
	w.size += int64(n)
	w.seq++
	w.bytes.Add(int64(n))
	return nil
}

const openSuffix = ".open"

// createLocked creates the next file and writes its warcinfo record.
func (w *Writer) createLocked() error {
	now := w.opts.Now().UTC()
	for {
		name := fmt.Sprintf("%s-%s-%05d.warc.gz", w.opts.Prefix, now.Format("20060102150405"), w.serial)
		w.serial++
		path := filepath.Join(w.opts.Dir, name+openSuffix)
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("warc: create: %w", err)
		}
		w.f, w.path, w.size = f, path, 0
		break
	}
	w.files.Add(1)
	var buf bytes.Buffer
	if err := w.marshal(&buf, w.warcinfo(strings.TrimSuffix(filepath.Base(w.path), openSuffix), now)); err != nil {
		return fmt.Errorf("warc: warcinfo: %w", err)
	}
	if err := w.writeLocked(buf.Bytes()); err != nil {
		return err
	}
	w.info = int64(buf.Len())
	w.records.Add(1)
	if w.opts.NoSync {
		return nil
	}
	return syncDir(w.opts.Dir)
}

// warcinfo describes the file: the software, the crawl's settings, the
// robots policy.
func (w *Writer) warcinfo(name string, now time.Time) gowarc.WarcRecordBuilder {
	b := newBuilder(gowarc.Warcinfo)
	b.AddWarcHeader(gowarc.WarcRecordID, newID())
	b.AddWarcHeaderTime(gowarc.WarcDate, now)
	b.AddWarcHeader(gowarc.WarcFilename, name)
	b.AddWarcHeader(gowarc.ContentType, gowarc.ApplicationWarcFields)
	var body strings.Builder
	field := func(k, v string) {
		body.WriteString(k + ": " + oneLine(v) + "\r\n")
	}
	field("software", w.opts.Software)
	field("format", "WARC File Format 1.1")
	field("conformsTo", "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/")
	if w.opts.Robots != "" {
		field("robots", w.opts.Robots)
	}
	if host, err := os.Hostname(); err == nil {
		field("hostname", host)
	}
	keys := make([]string, 0, len(w.opts.Settings))
	for k := range w.opts.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		field(k, w.opts.Settings[k])
	}
	b.WriteString(body.String())
	return b
}

// rotateLocked makes the current file durable, closes it and renames it
// to its final name.
func (w *Writer) rotateLocked() error {
	if w.f == nil {
		return nil
	}
	f, path := w.f, w.path
	w.f = nil
	if !w.opts.NoSync {
		if err := f.Sync(); err != nil {
			f.Close()
			return fmt.Errorf("warc: sync %s: %w", path, err)
		}
	}
	w.markSynced(w.seq)
	if err := f.Close(); err != nil {
		return fmt.Errorf("warc: close %s: %w", path, err)
	}
	if err := os.Rename(path, strings.TrimSuffix(path, openSuffix)); err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	if w.opts.NoSync {
		return nil
	}
	return syncDir(w.opts.Dir)
}

func (w *Writer) markSynced(seq uint64) {
	for {
		cur := w.synced.Load()
		if cur >= seq || w.synced.CompareAndSwap(cur, seq) {
			return
		}
	}
}

// syncTo returns once the write numbered seq is on disk. Callers queue on
// syncMu; the fsync of the first covers every write made before it, so
// the others find their seq covered and return without one.
func (w *Writer) syncTo(seq uint64) error {
	if w.opts.NoSync || w.synced.Load() >= seq {
		return nil
	}
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	if w.synced.Load() >= seq {
		return nil
	}
	w.mu.Lock()
	f, upto := w.f, w.seq
	w.mu.Unlock()
	if f == nil { // rotated (and so synced) or closed by a failure
		if w.synced.Load() >= seq {
			return nil
		}
		return fmt.Errorf("warc: sync: the file was closed after a failed write")
	}
	if err := f.Sync(); err != nil {
		if w.synced.Load() >= seq { // a rotation synced and closed it meanwhile
			return nil
		}
		return fmt.Errorf("warc: sync: %w", err)
	}
	w.markSynced(upto)
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("warc: sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("warc: sync %s: %w", dir, err)
	}
	return nil
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
