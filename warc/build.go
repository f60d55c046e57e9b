// Building an exchange's records before the file is locked: each record
// marshalled and gzipped into its own member, so that callers compress
// in parallel (record.go writes the records themselves).

package warc

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/klauspost/compress/gzip"
	gowarc "github.com/nlnwa/gowarc/v3"
)

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
