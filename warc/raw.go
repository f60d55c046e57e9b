package warc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/klauspost/compress/gzip"
	gowarc "github.com/nlnwa/gowarc/v3"
)

// Reading in two steps (issue 43). Reader.Next inflates a record's gzip
// member, parses its header and block and checks its digests on the
// reader's goroutine: a third of an import's CPU, which no other
// goroutine could share. NextRaw only inflates the member (gowarc reads a
// record per member too, and drops what follows the record in it); Parse
// does the rest on any goroutine, with the same outcome, damage included.

// Raw is a record read by NextRaw: its gzip member inflated, not parsed
// yet, or (where the file is not one gzip member per record) a Record
// Next parsed.
type Raw struct {
	Offset int64 // of its first byte in the file
	End    int64 // just past it
	r      *Reader
	data   []byte  // the member, inflated
	rec    *Record // or the record, parsed already
}

// Size is the bytes Parse will read: the member inflated (0 when parsed
// already).
func (x *Raw) Size() int { return len(x.data) }

// Parsed returns the record when NextRaw parsed it already (see Raw): it
// is valid until the next call to NextRaw.
func (x *Raw) Parsed() *Record { return x.rec }

// Parse parses the record, as Next would have: a record whose findings
// show damage gives a *DamageError. It may run on any goroutine; the
// record is valid until its Close.
func (x *Raw) Parse() (*Record, error) {
	if x.rec != nil {
		return x.rec, nil
	}
	if blockless(x.data) {
		return x.parseBlockless()
	}
	un := unmarshalers.Get().(gowarc.Unmarshaler)
	rec, validation, err := x.unmarshal(un)
	if err != nil {
		unmarshalers.Put(un)
		return nil, &DamageError{File: x.r.path, Offset: x.Offset, Err: err}
	}
	return x.finish(rec, validation, un, &unmarshalers, nil)
}

// finish makes the Record of rec, which un (from pool) read: block, when
// not nil, is its block as the member holds it. On damage the record is
// closed and un goes back to pool.
func (x *Raw) finish(rec gowarc.WarcRecord, validation []error, un gowarc.Unmarshaler, pool *sync.Pool, block []byte) (*Record, error) {
	got := gowarc.Record{WarcRecord: rec, Offset: x.Offset, Size: x.End - x.Offset, Validation: validation}
	out, derr := x.r.record(got, func(name string) string { return headerField(bufio.NewReader(bytes.NewReader(x.data)), name) })
	if derr != nil {
		rec.Close()
		pool.Put(un)
		return nil, derr
	}
	out.un, out.pool, out.block = un, pool, block
	return out, nil
}

// unmarshal reads the member's record with un; a member that holds bytes
// before its record, or no record, is damage.
func (x *Raw) unmarshal(un gowarc.Unmarshaler) (gowarc.WarcRecord, []error, error) {
	rec, skipped, validation, err := un.Unmarshal(bufio.NewReader(bytes.NewReader(x.data)))
	switch {
	case err == nil && skipped > 0:
		rec.Close()
		err = fmt.Errorf("%d bytes before the record are no record", skipped)
	case errors.Is(err, io.EOF) && rec == nil:
		err = fmt.Errorf("a gzip member without a record: %w", io.ErrUnexpectedEOF)
	}
	return rec, validation, err
}

// blockless reports whether the record in data is of a type whose block
// is not an HTTP message (metadata, warcinfo, resource: all of a WAT),
// by its first WARC-Type field.
func blockless(data []byte) bool {
	_, rest, _ := bytes.Cut(data, []byte("\n")) // the version line
	for len(rest) > 0 {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			return false
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if ok && bytes.EqualFold(bytes.TrimSpace(name), []byte(gowarc.WarcType)) {
			switch string(bytes.ToLower(bytes.TrimSpace(value))) {
			case "metadata", "warcinfo", "resource":
				return true
			}
			return false
		}
	}
	return false
}

// parseBlockless parses a record whose block is not an HTTP message
// without gowarc's checks of the spec: they copy the block into a buffer,
// hash it and parse its target URI, about five times the rest of the
// parse. The block is taken from the member as it is, and the checks that
// find damage are made here as gowarc makes them: a block shorter than
// its Content-Length, and at the end of the file a missing end of record.
// A field a record type does not allow is kept (gowarc's check blanks it).
func (x *Raw) parseBlockless() (*Record, error) {
	damage := func(err error) (*Record, error) {
		return nil, &DamageError{File: x.r.path, Offset: x.Offset, Err: err}
	}
	un := lenient.Get().(gowarc.Unmarshaler)
	rec, validation, err := x.unmarshal(un)
	if err != nil {
		lenient.Put(un)
		return damage(err)
	}
	fail := func(err error) (*Record, error) {
		rec.Close()
		lenient.Put(un)
		return damage(err)
	}
	// The header ends at its first empty line, as gowarc reads it.
	start := bytes.IndexByte(x.data, '\n') + 1
	for {
		i := bytes.IndexByte(x.data[start:], '\n')
		if i < 0 {
			return fail(fmt.Errorf("no end of the header"))
		}
		line := x.data[start : start+i+1]
		start += i + 1
		if len(line) == 1 || (len(line) == 2 && line[0] == '\r') {
			break
		}
	}
	h := rec.WarcHeader()
	length, _ := h.GetInt64(gowarc.ContentLength)
	avail := int64(len(x.data) - start)
	if h.Has(gowarc.ContentLength) && avail < length {
		return fail(&gowarc.ContentLengthError{Expected: length, Actual: avail})
	}
	length = min(max(length, 0), avail)
	block := x.data[start : start+int(length)]
	if x.End >= x.r.size {
		// The end of record marker, as gowarc checks it.
		tail := x.data[start+int(length):]
		tail = tail[:min(len(tail), 4)]
		lf := (len(tail) == 1 && tail[0] == '\n') || (len(tail) == 2 && tail[0] == '\n' && tail[1] == '\n')
		if !bytes.Equal(tail, []byte("\r\n\r\n")) && !lf && len(tail) < 4 {
			return fail(fmt.Errorf("too few bytes in end of record marker. Expected %q, was %q", "\r\n\r\n", tail))
		}
	}
	return x.finish(rec, validation, un, &lenient, block)
}

// unmarshalers keeps gowarc's unmarshalers for Parse: making one writes a
// global of the uuid package (gowarc's defaults enable its pool), which
// two goroutines must not do at once, so New runs under a lock; a record
// gives its own back when closed.
var (
	unmarshalers   = sync.Pool{New: func() any { return newUnmarshalerOf(readOptions...) }}
	lenient        = sync.Pool{New: func() any { return newUnmarshalerOf(append(slices.Clone(readOptions), lenientOptions...)...) }}
	newUnmarshaler sync.Mutex
)

// lenientOptions are parseBlockless's: no check of the spec.
var lenientOptions = []gowarc.WarcRecordOption{gowarc.WithSpecViolationPolicy(gowarc.ErrIgnore)}

func newUnmarshalerOf(opts ...gowarc.WarcRecordOption) gowarc.Unmarshaler {
	newUnmarshaler.Lock()
	defer newUnmarshaler.Unlock()
	return gowarc.NewUnmarshaler(opts...)
}

// Close frees what the record holds (its block's buffers); a record of
// Next is closed by the next call to Next.
func (r *Record) Close() {
	r.rec.Close()
	if r.un != nil {
		r.pool.Put(r.un)
		r.un = nil
	}
}

// NextRaw returns the next record as its gzip member inflated, for Parse to
// parse on another goroutine. A file (or what follows a member) that is
// not gzip members is read by Next, and NextRaw returns what it parsed. At
// the end of the file it returns io.EOF; where a member is damaged it
// returns a *DamageError, and io.EOF after that.
func (r *Reader) NextRaw() (*Raw, error) {
	if r.done {
		return nil, io.EOF
	}
	if r.cur != nil {
		r.cur.rec.Close()
		r.cur = nil
	}
	if r.members == nil && !r.parsing {
		if magic := r.peek(r.next); magic == nil {
			r.done = true
			return nil, io.EOF
		} else if magic[0] == 0x1f && magic[1] == 0x8b {
			r.members = newMembers(r, r.next)
		} else {
			r.parsing = true
		}
	}
	if r.members != nil {
		x, err := r.members.next()
		if errors.Is(err, errTooLarge) {
			return r.nextLarge()
		}
		if x != nil || err != nil {
			return x, err
		}
		// Not a gzip member: what follows is read by Next, from here.
		r.members = nil
		r.parsing = true
		if err := r.readFromNext(); err != nil {
			return nil, err
		}
	}
	return r.nextParsed()
}

// nextLarge reads the record at r.next, a gzip member too large for
// NextRaw to inflate in memory, with Next, and goes on with NextRaw's
// inflater after it.
func (r *Reader) nextLarge() (*Raw, error) {
	if err := r.readFromNext(); err != nil {
		return nil, err
	}
	x, err := r.nextParsed()
	if err == nil {
		r.members = newMembers(r, r.next)
	}
	return x, err
}

// readFromNext makes Next read from r.next.
func (r *Reader) readFromNext() error {
	wr, err := gowarc.NewWarcFileReaderFromStream(r.f, r.next, readOptions...)
	if err != nil {
		r.done = true
		return &DamageError{File: r.path, Offset: r.next, Err: err}
	}
	r.wr = wr // the old one is not closed: that would close r.f
	return nil
}

// nextParsed returns Next's record as a Raw.
func (r *Reader) nextParsed() (*Raw, error) {
	rec, err := r.Next()
	if err != nil {
		return nil, err
	}
	return &Raw{Offset: rec.Offset, End: rec.End, r: r, rec: rec}, nil
}

// peek returns the two bytes at off, nil when fewer are there.
func (r *Reader) peek(off int64) []byte {
	b := make([]byte, 2)
	if n, _ := r.f.ReadAt(b, off); n < 2 {
		return nil
	}
	return b
}

// members inflates a file's gzip members one by one.
type members struct {
	r    *Reader
	cr   *countReader
	br   *bufio.Reader
	zr   *gzip.Reader
	base int64 // the file offset cr started at
	// buf is where each member is inflated, reused: a member's record
	// gets an exact copy. Inflated into a new buffer, a member of n bytes
	// cost about 2n bytes allocated, zeroed and copied again as it grew.
	buf bytes.Buffer
}

func newMembers(r *Reader, off int64) *members {
	cr := &countReader{r: io.NewSectionReader(r.f, off, r.size-off)}
	return &members{r: r, cr: cr, br: bufio.NewReaderSize(cr, 1<<20), base: off}
}

// pos is the file offset of the next byte to inflate.
func (m *members) pos() int64 { return m.base + m.cr.n - int64(m.br.Buffered()) }

// next inflates the member at r.next; it returns nil, nil when the bytes
// there are not a gzip member.
func (m *members) next() (*Raw, error) {
	r := m.r
	magic, err := m.br.Peek(2)
	if len(magic) == 0 && errors.Is(err, io.EOF) {
		r.done = true
		return nil, io.EOF
	}
	if len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
		return nil, nil
	}
	start := r.next
	if m.zr == nil {
		m.zr, err = gzip.NewReader(m.br)
	} else {
		err = m.zr.Reset(m.br)
	}
	m.buf.Reset()
	if err == nil {
		m.zr.Multistream(false)
		_, err = m.buf.ReadFrom(io.LimitReader(m.zr, maxInflated+1))
	}
	if err != nil {
		r.done = true
		return nil, &DamageError{File: r.path, Offset: start, Err: err}
	}
	if m.buf.Len() > maxInflated {
		m.buf = bytes.Buffer{}
		return nil, errTooLarge
	}
	r.next = m.pos()
	return &Raw{Offset: start, End: r.next, r: r, data: bytes.Clone(m.buf.Bytes())}, nil
}

// maxInflated is the most bytes of a gzip member NextRaw inflates into
// memory: a larger one (a record of a big download, or a few MB of gzip
// that inflate to GBs) is read by Next, as gowarc reads any record,
// keeping what readOptions allow in memory and the rest in a temporary
// file. The reader's buffer is bounded by it too.
const maxInflated = 4 << 20

// errTooLarge says a gzip member inflates to more than maxInflated bytes.
var errTooLarge = errors.New("warc: gzip member too large to inflate in memory")

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
