package graph

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/weaver-crawler/weaver/kv"
)

// The layout of a node's history since schema 2 (issue 43): its crawl
// records, oldest first, cut into segments. The latest segment is open:
// kv.BucketRecent, keyed by node id, takes each new record at its end.
// Segments are sealed, written to kv.BucketHistory under the next
// sequence number, so that they are only ever appended at the end of that
// bucket's key space and its pages fill up (the records of schema 1,
// keyed by node and time, went into the middle of the key space and left
// the pages a quarter full): an open segment with a record that holds its
// links (a crawl that found other links than the one before, or a host's
// first) is sealed at once, and one of records without links (unchanged
// crawls) when the next would take it past its bound (sealLimit). So an
// open segment holds only the unchanged crawls since the last sealed one:
// a few bytes each, whatever the host's out-degree, and about as many
// bytes for every host.
//
// A node's segments are a chain: each names the node's sealed segment
// before it (prev) and the latest one before it that holds a record with
// its links written out (base), whose last such record gives the links
// of the records at the start of the segment that stand for "the links of
// the crawl before".
//
//	open segment:   prev | base | time | records     (uvarint, uvarint, 8 B big-endian Unix ns)
//	sealed segment: node | prev | base | time | records
//	record:         uvarint(time since the record before << 3 | flags), then unless flags has
//	                crawlSame: uvarint(entry count), and per link as in schema 1 (target delta,
//	                weight<<2 | nofollow?<<1 | redirect?, the counts when flagged),
//	                then for a link with frames an entry (0, frame count): a target delta
//	                of 0 after a link is no link (targets increase), so records written
//	                before frames were counted read the same
//
// A segment's time is its first record's, whose time delta is 0; an open
// segment without records (just sealed) holds the time of the node's last
// crawl instead. Times strictly increase along the chain.

// sealAt is the mean bound on the bytes of records an open segment holds
// before a new record seals it (one record alone may be larger). Larger
// segments spread a sealed segment's own cost (its key, bbolt's element
// header, the chain fields: about 40 B) over more records, but the open
// segments are rewritten in place in the middle of kv.BucketRecent, whose
// pages split when the segments on them outgrow them.
const sealAt = 64

// sealLimit is the bound of node's open segment after sealed segment prev,
// drawn from sealAt/4 to 7·sealAt/4 by a hash of both. Hosts revisited at
// the same pace, as a crawl's are, would otherwise fill and seal their open
// segments together, from their first crawl on: kv.BucketRecent's pages
// would split for the peak and stand part empty after it. With a bound
// drawn anew for each segment, the open segments of a page's hosts are at
// every stage at once and add up to about the same size all along, so the
// pages keep the fill kv gives them (measured: docs/performance.md).
func sealLimit(node, prev uint64) int {
	h := (node*0x9e3779b97f4a7c15 ^ prev*0xbf58476d1ce4e5b9) * 0x94d049bb133111eb
	return sealAt/4 + int((h>>40)%(3*sealAt/2))
}

// segment is a run of one node's crawl records.
type segment struct {
	seq   uint64    // its key in kv.BucketHistory; 0 for the open segment
	node  uint64    // the node
	prev  uint64    // the node's sealed segment before it; 0 for none
	base  uint64    // the node's latest sealed segment before it that holds a record with links; 0 for none
	first time.Time // the first record's time; an empty open segment's: the node's last crawl's
	recs  []byte    // the records
}

// record is one crawl record read from a segment.
type record struct {
	at       time.Time
	flags    byte
	links    int // offset of its link count in the segment's records; -1 for a record without links
	off, end int // where it starts and ends in the segment's records
}

func (r *record) crawl() Crawl {
	return Crawl{At: r.at, Changed: r.flags&crawlChanged != 0, NotModified: r.flags&crawlNotModified != 0}
}

// errBad wraps ErrBadHistory with where it was found.
func (s *segment) errBad(format string, a ...any) error {
	where := fmt.Sprintf("open segment of node %d", s.node)
	if s.seq != 0 {
		where = fmt.Sprintf("segment %d", s.seq)
	}
	return fmt.Errorf("%w: %s: %s", ErrBadHistory, where, fmt.Sprintf(format, a...))
}

// decodeSegment reads a segment; a sealed one (seq not 0) starts with
// its node, an open one's node is its key.
func decodeSegment(seq, node uint64, v []byte) (segment, error) {
	s := segment{seq: seq, node: node}
	var vals [3]uint64
	fields := vals[1:]
	if seq != 0 {
		fields = vals[:]
	}
	for i := range fields {
		x, n := binary.Uvarint(v)
		if n <= 0 {
			return s, s.errBad("header")
		}
		fields[i], v = x, v[n:]
	}
	if seq != 0 {
		s.node = vals[0]
	}
	s.prev, s.base = vals[1], vals[2]
	if len(v) < 8 || seq != 0 && len(v) < 9 {
		return s, s.errBad("%d bytes after its header, want a time and records", len(v))
	}
	ns := binary.BigEndian.Uint64(v)
	if ns > math.MaxInt64 {
		return s, s.errBad("time %d", ns)
	}
	s.first, s.recs = time.Unix(0, int64(ns)).UTC(), v[8:]
	if s.prev >= seq && seq != 0 || s.base > s.prev {
		return s, s.errBad("chain %d, %d does not go back", s.prev, s.base)
	}
	return s, nil
}

// encode writes the segment as its bucket stores it.
func (s *segment) encode() []byte {
	b := make([]byte, 0, 3*binary.MaxVarintLen64+8+len(s.recs))
	if s.seq != 0 {
		b = binary.AppendUvarint(b, s.node)
	}
	b = binary.AppendUvarint(b, s.prev)
	b = binary.AppendUvarint(b, s.base)
	b = binary.BigEndian.AppendUint64(b, uint64(s.first.UnixNano()))
	return append(b, s.recs...)
}

// each calls fn for each of the segment's records, oldest first.
func (s *segment) each(fn func(r *record) error) error {
	b := s.recs
	r := record{at: s.first}
	for off := 0; off < len(b); {
		h, n := binary.Uvarint(b[off:])
		if n <= 0 {
			return s.errBad("record at %d", off)
		}
		r.flags, r.off = byte(h&7), off
		switch d := h >> 3; {
		case off == 0 && d != 0:
			return s.errBad("its first record is %d ns after the segment's time", d)
		case off != 0 && (d == 0 || d > math.MaxInt64-uint64(r.at.UnixNano())):
			return s.errBad("record at %d: time step %d", off, d)
		default:
			r.at = r.at.Add(time.Duration(d))
		}
		off += n
		r.links = -1
		if r.flags&crawlSame == 0 {
			r.links = off
			_, end, err := s.links(off, false)
			if err != nil {
				return err
			}
			off = end
		}
		r.end = off
		if err := fn(&r); err != nil {
			return err
		}
	}
	return nil
}

// links decodes the links of the record whose link count is at off (when
// decode; else only checks them) and returns the offset after them.
func (s *segment) links(off int, decode bool) ([]Link, int, error) {
	b := s.recs
	count, n := binary.Uvarint(b[off:])
	if n <= 0 || count > uint64(len(b)-off-n)/2 { // each link takes 2 bytes at least
		return nil, 0, s.errBad("link count at %d", off)
	}
	off += n
	var out []Link
	if decode {
		out = make([]Link, 0, count)
	}
	var last, lastWeight uint64
	framed := true // the entry before is a link's frame count, or there is none
	for range count {
		d, n1 := binary.Uvarint(b[off:])
		if n1 <= 0 {
			return nil, 0, s.errBad("link at %d", off)
		}
		f, n2 := binary.Uvarint(b[off+n1:])
		if n2 <= 0 {
			return nil, 0, s.errBad("link at %d", off)
		}
		if d == 0 && !framed {
			// The frame count of the link before.
			if f == 0 || f > lastWeight {
				return nil, 0, s.errBad("frame count at %d", off)
			}
			off += n1 + n2
			if decode {
				out[len(out)-1].Frame = f
			}
			framed = true
			continue
		}
		if d == 0 || last+d < last { // targets increase, from 1

			return nil, 0, s.errBad("link at %d", off)
		}
		off += n1 + n2
		framed = false
		l := Link{To: last + d, Weight: f >> 2}
		lastWeight = l.Weight
		last = l.To
		if f&2 != 0 {
			if l.Nofollow, n = binary.Uvarint(b[off:]); n <= 0 {
				return nil, 0, s.errBad("nofollow count at %d", off)
			}
			off += n
		}
		if f&1 != 0 {
			if l.Redirect, n = binary.Uvarint(b[off:]); n <= 0 {
				return nil, 0, s.errBad("redirect count at %d", off)
			}
			off += n
		}
		if decode {
			out = append(out, l)
		}
	}
	return out, off, nil
}

// appendRecord encodes a record d after the one before it (0: the first
// of a segment); links are written out unless same.
func appendRecord(b []byte, d time.Duration, c *Crawl, same bool) []byte {
	flags := uint64(0)
	if c.Changed {
		flags |= crawlChanged
	}
	if c.NotModified {
		flags |= crawlNotModified
	}
	if same {
		return binary.AppendUvarint(b, uint64(d)<<3|flags|crawlSame)
	}
	b = binary.AppendUvarint(b, uint64(d)<<3|flags)
	entries := len(c.Links)
	for _, l := range c.Links {
		if l.Frame != 0 {
			entries++
		}
	}
	b = binary.AppendUvarint(b, uint64(entries))
	var last uint64
	for _, l := range c.Links {
		b = binary.AppendUvarint(b, l.To-last)
		last = l.To
		f := l.Weight << 2
		if l.Nofollow != 0 {
			f |= 2
		}
		if l.Redirect != 0 {
			f |= 1
		}
		b = binary.AppendUvarint(b, f)
		if l.Nofollow != 0 {
			b = binary.AppendUvarint(b, l.Nofollow)
		}
		if l.Redirect != 0 {
			b = binary.AppendUvarint(b, l.Redirect)
		}
		if l.Frame != 0 {
			b = binary.AppendUvarint(append(b, 0), l.Frame)
		}
	}
	return b
}

// appender adds crawls at the end of a node's history: to its open
// segment, sealing it when it must.
type appender struct {
	open    segment
	last    time.Time // the node's last crawl
	none    bool      // the node has no crawl
	hasFull bool      // open holds a record with links
}

// newAppender continues node's open segment s (nil: a node without
// history).
func newAppender(node uint64, s *segment) (*appender, error) {
	if s == nil {
		return &appender{open: segment{node: node}, none: true}, nil
	}
	a := &appender{open: *s, last: s.first}
	a.open.recs = append([]byte(nil), s.recs...) // s's bytes belong to the transaction
	err := s.each(func(r *record) error {
		a.last = r.at
		a.hasFull = a.hasFull || r.links >= 0
		return nil
	})
	return a, err
}

// add appends crawl c; same says its links are those of the crawl before.
// c must be later than every crawl added before.
func (a *appender) add(tx *kv.Tx, c *Crawl, same bool) error {
	if !a.none && !c.At.After(a.last) {
		return fmt.Errorf("graph: node %d: crawl at %s is not after its last at %s", a.open.node, c.At, a.last)
	}
	if n := len(a.open.recs); n > 0 {
		a.open.recs = appendRecord(a.open.recs, c.At.Sub(a.last), c, same)
		if !same || len(a.open.recs) <= sealLimit(a.open.node, a.open.prev) {
			a.last, a.hasFull = c.At, a.hasFull || !same
			if !same {
				return a.seal(tx)
			}
			return nil
		}
		a.open.recs = a.open.recs[:n]
		if err := a.seal(tx); err != nil {
			return err
		}
	}
	a.open.first, a.open.recs = c.At, appendRecord(a.open.recs[:0], 0, c, same)
	a.last, a.none, a.hasFull = c.At, false, !same
	if !same {
		return a.seal(tx)
	}
	return nil
}

// seal writes the open segment under the next sequence number and starts
// an empty one after it.
func (a *appender) seal(tx *kv.Tx) error {
	seq := uint64(1)
	if k, _ := tx.Cursor(kv.BucketHistory).Last(); len(k) == 8 {
		seq = binary.BigEndian.Uint64(k) + 1
	}
	a.open.seq = seq
	if err := tx.PutRaw(kv.BucketHistory, kv.U64(seq), a.open.encode()); err != nil {
		return err
	}
	base := a.open.base
	if a.hasFull {
		base = seq
	}
	a.open = segment{node: a.open.node, prev: seq, base: base, first: a.last}
	a.hasFull = false
	return nil
}

// flush writes the open segment.
func (a *appender) flush(tx *kv.Tx) error {
	if a.none {
		return nil
	}
	return tx.PutRaw(kv.BucketRecent, kv.U64(a.open.node), a.open.encode())
}
