package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	gowarc "github.com/nlnwa/gowarc/v3"
)

// Record is one record read from a file. Its block can be read once, and
// only until the next call to Reader.Next.
type Record struct {
	Offset int64 // of its first byte in the file (its gzip member's, when compressed)
	End    int64 // offset just past it: where the next record starts

	Version     string    // "WARC/1.1", "WARC/1.0"
	Type        string    // WARC-Type: "response", "request", "warcinfo", "revisit", "metadata", ...
	TargetURI   string    // WARC-Target-URI, without the angle brackets some tools write
	Date        time.Time // WARC-Date (zero when missing or unreadable)
	ContentType string    // the record's Content-Type
	IP          string    // WARC-IP-Address
	Truncated   string    // WARC-Truncated ("" when whole)
	Length      int64     // Content-Length of the block

	rec   gowarc.WarcRecord
	un    gowarc.Unmarshaler // Raw.Parse's, given back to pool by Close
	pool  *sync.Pool
	block []byte // Raw.Parse's block without an HTTP message, or nil: rec's
}

// Header returns a WARC header field of the record ("" when absent).
func (r *Record) Header(name string) string { return r.rec.WarcHeader().Get(name) }

// HTTPStatus returns the status code of a response or revisit record
// holding an HTTP answer, and whether it holds one.
func (r *Record) HTTPStatus() (int, bool) {
	if b, ok := r.rec.Block().(gowarc.HttpResponseBlock); ok {
		return b.HttpStatusCode(), true
	}
	return 0, false
}

// HTTPHeader returns the HTTP headers of a record holding an HTTP message
// (nil otherwise).
func (r *Record) HTTPHeader() http.Header {
	switch b := r.rec.Block().(type) {
	case gowarc.HttpResponseBlock:
		if h := b.HttpHeader(); h != nil {
			return *h
		}
	case gowarc.HttpRequestBlock:
		if h := b.HttpHeader(); h != nil {
			return *h
		}
	}
	return nil
}

// Payload returns the body of an HTTP message (the entity after the
// headers), or the whole block of any other record.
func (r *Record) Payload() (io.Reader, error) {
	if r.block != nil {
		return bytes.NewReader(r.block), nil
	}
	if b, ok := r.rec.Block().(gowarc.PayloadBlock); ok {
		return b.PayloadBytes()
	}
	return r.rec.Block().RawBytes()
}

// Reader reads the records of one WARC file in order.
type Reader struct {
	path string
	f    *os.File
	size int64
	wr   *gowarc.WarcFileReader
	next int64   // where the next record should start
	cur  *Record // the record last returned, closed by the next Next
	done bool

	// LooseEnds counts the records read so far that ended in fewer line
	// ends than WARC's two CRLFs (each then read whole, for the caller to
	// warn of once).
	LooseEnds int

	members *members // NextRaw's inflater, while the file is gzip members
	parsing bool     // NextRaw reads with Next
}

// readOptions tolerate other tools' quirks (they become findings, not
// failures) but keep checking lengths and digests.
var readOptions = []gowarc.WarcRecordOption{
	gowarc.WithSyntaxErrorPolicy(gowarc.ErrWarn),
	gowarc.WithSpecViolationPolicy(gowarc.ErrWarn),
	gowarc.WithUnknownRecordTypePolicy(gowarc.ErrIgnore),
	gowarc.WithBlockErrorPolicy(gowarc.ErrIgnore),
	gowarc.WithBufferMaxMemBytes(4 << 20),
}

// NewReader opens path (a .warc or .warc.gz file, or a WAT) and reads from
// offset, which must be 0 or a record's End. It returns the file system's
// error.
func NewReader(path string, offset int64) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("warc: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("warc: %w", err)
	}
	if fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("warc: %s is a directory", path)
	}
	wr, err := gowarc.NewWarcFileReaderFromStream(f, offset, readOptions...)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("warc: %s: %w", path, err)
	}
	return &Reader{path: path, f: f, size: fi.Size(), wr: wr, next: offset}, nil
}

// maxLooseEnd is the most bytes of line ends between a record gowarc read
// and the next that are taken as the first one's end.
const maxLooseEnd = 4

// onlyLineEnds reports whether the file's bytes from..to are CRs and LFs.
func (r *Reader) onlyLineEnds(from, to int64) bool {
	b := make([]byte, to-from)
	if _, err := r.f.ReadAt(b, from); err != nil {
		return false
	}
	for _, c := range b {
		if c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// Size returns the file's size in bytes.
func (r *Reader) Size() int64 { return r.size }

// Next returns the next record. At the end of the file it returns io.EOF;
// where the file is damaged (a truncated record, a bad gzip member, a
// header that does not parse, bytes that are no record) it returns a
// *DamageError naming the offset where the damage starts, and io.EOF
// after that.
func (r *Reader) Next() (*Record, error) {
	if r.cur != nil {
		r.cur.rec.Close()
		r.cur = nil
	}
	if r.done {
		return nil, io.EOF
	}
	got, err := r.wr.Next()
	damage := func(err error) (*Record, error) {
		got.Close()
		r.done = true
		return nil, &DamageError{File: r.path, Offset: r.next, Err: err}
	}
	switch {
	case errors.Is(err, io.EOF) && got.WarcRecord == nil:
		r.done = true
		if r.next < r.size {
			return damage(fmt.Errorf("%d bytes at the end are no whole record", r.size-r.next))
		}
		return nil, io.EOF
	case err != nil:
		return damage(err)
	case got.Offset > r.next && got.Offset-r.next <= maxLooseEnd && r.onlyLineEnds(r.next, got.Offset):
		// The record before ended in one CRLF where WARC puts two (node-warc
		// writes such files; warcio reads them whole): read on.
		r.LooseEnds++
	case got.Offset != r.next:
		return damage(fmt.Errorf("%d bytes before the next record are no record", got.Offset-r.next))
	}
	out, derr := r.record(got, func(name string) string { return r.rawField(got.Offset, name) })
	if derr != nil {
		got.Close()
		r.done = true
		return nil, derr
	}
	r.next = out.End
	r.cur = out
	return out, nil
}

// record makes a Record of what gowarc read at r.next, or the damage its
// findings show. field reads a header field raw.
func (r *Reader) record(got gowarc.Record, field func(name string) string) (*Record, *DamageError) {
	// A record cut short (in a .warc; gzip reports it itself) parses with
	// findings: its block is shorter than its Content-Length, or the file
	// ends where its end-of-record marker should be. Other findings are
	// quirks, not damage.
	atEnd := got.Offset+got.Size >= r.size
	for _, v := range got.Validation {
		var cl *gowarc.ContentLengthError
		msg := v.Error()
		if errors.As(v, &cl) || (atEnd && (strings.HasPrefix(msg, "too few bytes in end of record") || strings.HasPrefix(msg, "unexpected end of record"))) {
			return nil, &DamageError{File: r.path, Offset: got.Offset, Err: v}
		}
	}
	rec := got.WarcRecord
	h := rec.WarcHeader()
	out := &Record{
		Offset: got.Offset, End: got.Offset + got.Size,
		Version: rec.Version().String(), Type: rec.Type().String(),
		TargetURI:   strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(h.Get(gowarc.WarcTargetURI)), "<"), ">"),
		ContentType: h.Get(gowarc.ContentType), IP: h.Get(gowarc.WarcIPAddress),
		Truncated: h.Get(gowarc.WarcTruncated), rec: rec,
	}
	if out.TargetURI == "" && h.Has(gowarc.WarcTargetURI) {
		// gowarc empties a field it finds invalid (wget writes the URI in
		// angle brackets, as WARC/1.0's grammar had it): read it raw.
		out.TargetURI = strings.TrimSuffix(strings.TrimPrefix(field(gowarc.WarcTargetURI), "<"), ">")
	}
	if out.Type == "" || strings.HasPrefix(out.Type, "unknown") {
		out.Type = h.Get(gowarc.WarcType)
	}
	out.Date, _ = h.GetTime(gowarc.WarcDate)
	out.Length, _ = h.GetInt64(gowarc.ContentLength)
	return out, nil
}

// rawField reads the record at offset's header again, without gowarc's
// validation, and returns the value of the field name ("" if none).
func (r *Reader) rawField(offset int64, name string) string {
	var src io.Reader = io.NewSectionReader(r.f, offset, r.size-offset)
	br := bufio.NewReader(src)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return ""
		}
		zr.Multistream(false)
		br = bufio.NewReader(zr)
	}
	return headerField(br, name)
}

// headerField reads a record's header from br and returns the value of
// the field name ("" if none).
func headerField(br *bufio.Reader, name string) string {
	for range 200 { // a header has a few dozen lines
		line, err := br.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if line == "" || err != nil {
			return ""
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Close closes the file.
func (r *Reader) Close() error {
	if r.cur != nil {
		r.cur.rec.Close()
		r.cur = nil
	}
	r.wr.Close()
	return r.f.Close()
}

// Recovered is what Open found of a file a killed writer left open.
type Recovered struct {
	File    string // the file's final name (or the .open name, when it was removed)
	Records int    // whole records kept
	Kept    int64  // bytes kept
	Cut     int64  // bytes cut off: a torn last record, or records no commit refers to
	Removed bool   // nothing in it was kept: the file was removed
	// Uncommitted says what was cut (or removed) is records written for
	// pages whose commit did not happen: they are past the position the
	// store recorded (Options.Committed).
	Uncommitted bool
	Err         string // what stopped the read at Kept ("" when the file was whole)
}

func (r Recovered) String() string {
	switch {
	case r.Removed && r.Uncommitted:
		return fmt.Sprintf("%s: removed (%d bytes: a file started for pages whose commit did not happen)", r.File, r.Cut)
	case r.Removed:
		return fmt.Sprintf("%s: removed (%d bytes, no whole record: %s)", r.File, r.Cut, r.Err)
	case r.Err != "" && r.Uncommitted:
		return fmt.Sprintf("%s: kept %d whole records, %d bytes, and closed; %s", r.File, r.Records, r.Kept, r.Err)
	case r.Uncommitted && r.Cut == 0:
		return fmt.Sprintf("%s: left open by a stopped writer, whole up to the last commit (%d records, %d bytes): closed", r.File, r.Records, r.Kept)
	case r.Uncommitted:
		return fmt.Sprintf("%s: cut at offset %d, the end of the last commit (%d records kept; %d bytes of records of pages whose commit did not happen dropped)", r.File, r.Kept, r.Records, r.Cut)
	case r.Cut == 0:
		return fmt.Sprintf("%s: left open by a stopped writer, whole (%d records, %d bytes): closed", r.File, r.Records, r.Kept)
	}
	return fmt.Sprintf("%s: cut after %d whole records at offset %d (%d bytes of a torn record dropped: %s)", r.File, r.Records, r.Kept, r.Cut, r.Err)
}

// Recover finishes the files a killed Writer with prefix left open in dir
// (NAME.warc.gz.open, NAME starting with prefix and its date), and makes
// them durable and renames them NAME.warc.gz. Without committed, each is
// cut after its last whole record (one with no whole record is removed).
// With committed, the position a crawl's store recorded with its last
// commit, what no commit refers to goes: that file is cut at the
// position, a file the writer started after it is removed, and a file
// before it is whole (cut after its last whole record, as without). A
// committed position with no file (the zero Position) is a store whose
// commits refer to no record yet: every open file of prefix is removed.
// The files of other prefixes are left alone: another crawl (a job of
// weaver serve, a crawl of another store) may be writing them. An empty
// prefix recovers every open file. It returns what it did, file by file,
// and the first file system error.
func Recover(dir, prefix string, committed *Position) ([]Recovered, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("warc: recover: %w", err)
	}
	at := -1 // the committed file's serial
	if committed != nil {
		if n, ok := serialOf(committed.File, prefix); ok && prefix != "" {
			at = n
		}
	}
	none := committed != nil && committed.File == "" && prefix != "" // no commit refers to a record
	var out []Recovered
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".warc.gz"+openSuffix) {
			continue
		}
		if m := fileName.FindStringSubmatch(e.Name()); prefix != "" && (m == nil || m[1] != prefix) {
			continue
		}
		path := dir + string(os.PathSeparator) + e.Name()
		cut := int64(-1) // keep every whole record
		if none {
			cut = 0
		} else if n, ok := serialOf(e.Name(), prefix); ok && at >= 0 {
			switch final := strings.TrimSuffix(e.Name(), openSuffix); {
			case final == committed.File:
				cut = committed.Offset
			case n > at:
				cut = 0
			}
		}
		rec, err := recoverFile(path, cut)
		out = append(out, rec)
		if err != nil {
			return out, err
		}
	}
	if len(out) > 0 {
		return out, syncDir(dir)
	}
	return out, nil
}

// recoverFile finishes one open file: cut at cut (0: removed), or, for a
// negative cut, after its last whole record.
func recoverFile(path string, cut int64) (Recovered, error) {
	final := strings.TrimSuffix(path, openSuffix)
	res := Recovered{File: final, Uncommitted: cut >= 0}
	r, err := NewReader(path, 0)
	if err != nil {
		return res, err
	}
	for {
		rec, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				res.Err = err.Error()
			}
			break
		}
		if cut >= 0 && rec.End > cut {
			res.Err = ""
			break
		}
		res.Records++
		res.Kept = rec.End
	}
	size := r.Size()
	r.Close()
	if cut >= 0 && res.Kept < cut {
		// The file lacks records the store's commits refer to: what it
		// holds is kept, and weaver check names the pages without theirs.
		if res.Err == "" {
			res.Err = fmt.Sprintf("%d bytes, %v at %d", size, errShort, cut)
		} else {
			res.Err = fmt.Sprintf("%s; %v at %d", res.Err, errShort, cut)
		}
	}
	res.Cut = size - res.Kept
	if res.Records == 0 {
		res.File, res.Removed = path, true
		if err := os.Remove(path); err != nil {
			return res, fmt.Errorf("warc: recover: %w", err)
		}
		return res, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return res, fmt.Errorf("warc: recover: %w", err)
	}
	if res.Cut > 0 {
		if err := f.Truncate(res.Kept); err != nil {
			f.Close()
			return res, fmt.Errorf("warc: recover: %w", err)
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return res, fmt.Errorf("warc: recover: %w", err)
	}
	if err := f.Close(); err != nil {
		return res, fmt.Errorf("warc: recover: %w", err)
	}
	if err := os.Rename(path, final); err != nil {
		return res, fmt.Errorf("warc: recover: %w", err)
	}
	return res, nil
}
