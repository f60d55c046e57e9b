package ingest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/weaver-crawler/weaver/crawl/extract"
	"github.com/weaver-crawler/weaver/crawl/robots"
	"github.com/weaver-crawler/weaver/warc"
)

// Import runs in three stages (issue 28): one goroutine reads the file's
// records in order (gunzipping each record's member: that cannot be
// split); Options.Workers goroutines parse them (the WARC record itself
// and its digests since issue 43, HTTP decoding, HTML tokenising, link
// selection, WAT JSON); and the caller's goroutine applies the pages in
// the records' order and commits, exactly as a serial import would: the
// same node ids, the same store, the same offsets saved for a resume.
// Records travel in chunks, so that handing them over costs little.

// raw is a record detached from its reader, with what parsing needs of
// it: its block can be read after the reader has moved on.
type raw struct {
	Offset, End int64
	Type        string
	ContentType string
	TargetURI   string
	Date        time.Time
	Truncated   string // WARC-Truncated: "length" is a cap, any other a failed fetch
	ua          string // a request's User-Agent, for a robots.txt request

	status    int
	hasStatus bool
	header    http.Header
	payload   []byte // nil when parsing does not read it
	readErr   error  // of reading the payload: after its bytes, as the reader met it
}

func (r *raw) HTTPStatus() (int, bool) { return r.status, r.hasStatus }
func (r *raw) HTTPHeader() http.Header { return r.header }
func (r *raw) Payload() (io.Reader, error) {
	if r.payload == nil && r.readErr != nil {
		return nil, r.readErr
	}
	return &errAfter{r: bytes.NewReader(r.payload), err: r.readErr}, nil
}

// errAfter reads r, then returns err (io.EOF when nil): the payload as
// the record's reader gave it, its error included.
type errAfter struct {
	r   *bytes.Reader
	err error
}

func (e *errAfter) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if errors.Is(err, io.EOF) && e.err != nil {
		return n, e.err
	}
	return n, err
}

// maxRawPayload caps the bytes of a payload read for parsing when it is
// chunked or content-encoded (its decoded size is capped by MaxBodyBytes
// as it is parsed) and of a WAT record's JSON.
const maxRawPayload = 64 << 20

// detach copies what parsing needs out of rec, reading its payload when
// parsing will: an HTML answer below 300, or a WAT record's JSON.
func detach(rec *warc.Record, maxBody int64) *raw {
	r := &raw{Offset: rec.Offset, End: rec.End, Type: rec.Type, ContentType: rec.ContentType, TargetURI: rec.TargetURI, Date: rec.Date, Truncated: rec.Truncated}
	limit := int64(-1)
	robotsTxt := strings.HasSuffix(rec.TargetURI, "/robots.txt")
	switch rec.Type {
	case "request":
		if robotsTxt {
			if h := rec.HTTPHeader(); h != nil {
				r.ua = h.Get("User-Agent")
			}
		}
	case "response":
		r.status, r.hasStatus = rec.HTTPStatus()
		if !r.hasStatus {
			return r
		}
		r.header = rec.HTTPHeader()
		if robotsTxt && r.status >= 200 && r.status < 300 {
			limit = robots.MaxBodyBytes
			break
		}
		if r.status >= 200 && r.status < 300 && (extract.IsHTML(r.header.Get("Content-Type")) || isHome(rec.TargetURI)) {
			limit = maxRawPayload
			if r.header.Get("Content-Encoding") == "" && !strings.Contains(strings.ToLower(r.header.Get("Transfer-Encoding")), "chunked") {
				limit = maxBody
			}
		}
	case "metadata":
		if strings.HasPrefix(strings.ToLower(rec.ContentType), "application/json") {
			limit = maxRawPayload
		}
	}
	if limit < 0 {
		return r
	}
	body, err := rec.Payload()
	if err != nil {
		r.readErr = err
		return r
	}
	var b bytes.Buffer
	if n := min(rec.Length, limit); n > 0 {
		// Once, at the block's length (which bounds the payload's),
		// not doubled up to it; MinRead more, for ReadFrom's last read.
		b.Grow(int(n) + bytes.MinRead)
	}
	_, err = b.ReadFrom(io.LimitReader(body, limit))
	r.payload, r.readErr = b.Bytes(), err
	if r.payload == nil {
		r.payload = []byte{}
	}
	return r
}

// parsed is what one record gave its parser.
type parsed struct {
	stats Stats
	pages []page
	logs  []string
	err   error
}

// chunk is records read in a row, then their parses.
type chunk struct {
	raws   []*warc.Raw // the records as read; recs[i] is nil until raws[i] is parsed
	recs   []*raw
	out    []parsed
	err    error         // the reader's, after recs: io.EOF at the end of the file
	parsed chan struct{} // closed when out is filled
}

const (
	chunkRecords = 64
	chunkBytes   = 8 << 20
)

// chunksAhead is how many chunks (5,120 records) may be read and parsed
// ahead of the writer, so that the parsers go on while it commits a batch
// or waits for a merge pass's transaction: on the discovering WAT of
// docs/performance.md, CPU / wall went from 1.31–1.36 (3 chunks) to 1.43–1.49.
// A parsed chunk keeps its parse only (parseChunks), and no more than
// workers+2 chunks wait unparsed, each at most chunkBytes.
const chunksAhead = 80

// pipeline reads r from its goroutine and hands each chunk of records to
// whichever parser is free (a parser parses a whole chunk: no barrier
// between parsers); chunks come out of the returned channel in the file's
// order, once parsed, the last carrying the reader's error. stop ends it
// early; wait for it before closing r.
func (im *importer) pipeline(ctx context.Context, r *warc.Reader) (out <-chan *chunk, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	workers := im.opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	work := make(chan *chunk, workers)
	order := make(chan *chunk, chunksAhead) // bounds the chunks in flight
	done := make(chan *chunk)
	var wg sync.WaitGroup
	wg.Add(2 + workers)
	go func() { // the reader
		defer wg.Done()
		im.readChunks(ctx, r, order, work)
	}()
	for range workers { // the parsers
		go func() {
			defer wg.Done()
			im.parseChunks(ctx, work)
		}()
	}
	go func() { // the chunks in order, each once parsed
		defer wg.Done()
		inOrder(ctx, order, done)
	}()
	return done, func() {
		cancel()
		for range done { // let a blocked stage see ctx
		}
		for range order {
		}
		wg.Wait()
	}
}

// readChunks reads r a chunk at a time, handing each to order and to work,
// until the reader's error (io.EOF at the end) or ctx's end; it closes both.
func (im *importer) readChunks(ctx context.Context, r *warc.Reader, order, work chan<- *chunk) {
	pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("import", "read")))
	defer close(work)
	defer close(order)
	for {
		c := im.readChunk(r)
		if !send(ctx, order, c) || !send(ctx, work, c) {
			return
		}
		if c.err != nil {
			return
		}
	}
}

// readChunk reads records up to chunkRecords or chunkBytes, or up to the
// reader's error, which it keeps in the chunk.
func (im *importer) readChunk(r *warc.Reader) *chunk {
	c := &chunk{parsed: make(chan struct{})}
	var size int64
	for len(c.recs) < chunkRecords && size < chunkBytes {
		x, err := r.NextRaw()
		if err != nil {
			c.err = err
			break
		}
		var d *raw
		if rec := x.Parsed(); rec != nil { // valid until the next NextRaw
			d = detach(rec, im.opts.MaxBodyBytes)
			size += int64(len(d.payload))
		}
		size += int64(x.Size())
		c.raws = append(c.raws, x)
		c.recs = append(c.recs, d)
	}
	return c
}

// parseChunks parses each chunk of work whole, until work is closed.
func (im *importer) parseChunks(ctx context.Context, work <-chan *chunk) {
	pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("import", "parse")))
	ps := im.newParser()
	for c := range work {
		c.out = make([]parsed, len(c.recs))
		for i, rec := range c.recs {
			if rec == nil {
				var err error
				if rec, err = parseRaw(c.raws[i], im.opts.MaxBodyBytes); err != nil {
					c.out[i].err = err
					break // the file is damaged here: nothing after counts
				}
				c.recs[i] = rec
			}
			err := ps.record(rec)
			c.out[i] = parsed{stats: ps.stats, pages: ps.batch, logs: ps.logs, err: err}
			ps.stats, ps.batch, ps.logs = Stats{}, nil, nil
			// The writer needs the record's offsets only: a chunk
			// waiting for it holds its parse, not its bytes.
			c.raws[i], rec.payload, rec.header = nil, nil, nil
		}
		close(c.parsed)
	}
}

// inOrder hands the chunks of order to done, each once parsed, until order
// is closed or ctx ends; it closes done.
func inOrder(ctx context.Context, order <-chan *chunk, done chan<- *chunk) {
	defer close(done)
	for c := range order {
		select {
		case <-c.parsed:
		case <-ctx.Done():
			return
		}
		if !send(ctx, done, c) {
			return
		}
	}
}

// send hands c to ch, or reports false when ctx ends first.
func send(ctx context.Context, ch chan<- *chunk, c *chunk) bool {
	select {
	case ch <- c:
		return true
	case <-ctx.Done():
		return false
	}
}

// parseRaw parses a record NextRaw read and detaches it.
func parseRaw(x *warc.Raw, maxBody int64) (*raw, error) {
	rec, err := x.Parse()
	if err != nil {
		return nil, err
	}
	defer rec.Close()
	return detach(rec, maxBody), nil
}

// isHome reports whether uri is a host's home page (path "/" or empty, no
// query), whose answer is read whatever its type: it is the host's crawl.
func isHome(uri string) bool {
	u, err := url.Parse(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(uri), "<"), ">"))
	return err == nil && pagePath(u) == "/"
}
