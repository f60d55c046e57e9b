package graph

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weaver-crawler/weaver/kv"
)

// The graph's history (issue 27): every answered crawl of a host leaves a
// record in kv.BucketCrawls keyed by the node and the crawl's time, holding
// the host's out-links of that crawl with that crawl's own weights. An
// edge is present from a crawl of its source that links to it until the
// first later crawl that does not, so "the graph at T" is, for each node,
// the links of its last crawl at or before T; the intervals of an edge
// follow from its source's records.
//
// A record is a flags byte, then the links as varints sorted by target:
// the target id's delta from the one before, then weight<<2 | nofollow?<<1
// | redirect?, then the nofollow and redirect counts when flagged. A crawl
// whose links are those of the crawl before it (a 304, an unchanged page)
// is the flags byte alone: a revisit that changes nothing costs a key (16
// B) and one byte, whatever the host's out-degree.

// Crawl flags.
const (
	crawlChanged     = 1 << 0 // the content or the out-links differ from the crawl before
	crawlNotModified = 1 << 1 // answered 304 Not Modified
	crawlSame        = 1 << 2 // links as the crawl before: none stored
)

// Link is one out-link of a crawl: the target and the pages of the crawl
// that linked to it (with how many of them only by nofollow, and how many
// redirected to it).
type Link struct {
	To, Weight, Nofollow, Redirect uint64
}

// Crawl is one crawl of a host in its history.
type Crawl struct {
	At          time.Time
	Changed     bool
	NotModified bool
	Links       []Link // sorted by To
}

// ErrBadHistory wraps a damaged history record.
var ErrBadHistory = errors.New("graph: damaged crawl history record")

func crawlKey(node uint64, at time.Time) []byte {
	k := make([]byte, 16)
	binary.BigEndian.PutUint64(k, node)
	binary.BigEndian.PutUint64(k[8:], uint64(at.UnixNano()))
	return k
}

// SameLinks reports whether a and b (both sorted by To) hold the same
// targets with the same weights.
func SameLinks(a, b []Link) bool { return slices.Equal(a, b) }

// SortLinks sorts links by target.
func SortLinks(links []Link) {
	slices.SortFunc(links, func(a, b Link) int {
		switch {
		case a.To < b.To:
			return -1
		case a.To > b.To:
			return 1
		}
		return 0
	})
}

// PutCrawl records a crawl of node. prev is the node's latest crawl as
// LatestCrawl resolved it (ok false when none): a crawl with the same
// links stores none. c.Links must be sorted.
func PutCrawl(tx *kv.Tx, node uint64, c Crawl, prev *Crawl) error {
	same := prev != nil && SameLinks(prev.Links, c.Links)
	return tx.PutRaw(kv.BucketCrawls, crawlKey(node, c.At), encodeCrawl(&c, same))
}

func encodeCrawl(c *Crawl, same bool) []byte {
	flags := byte(0)
	if c.Changed {
		flags |= crawlChanged
	}
	if c.NotModified {
		flags |= crawlNotModified
	}
	if same {
		return []byte{flags | crawlSame}
	}
	buf := make([]byte, 1, 1+3*len(c.Links))
	buf[0] = flags
	var last uint64
	for _, l := range c.Links {
		buf = binary.AppendUvarint(buf, l.To-last)
		last = l.To
		f := l.Weight << 2
		if l.Nofollow != 0 {
			f |= 2
		}
		if l.Redirect != 0 {
			f |= 1
		}
		buf = binary.AppendUvarint(buf, f)
		if l.Nofollow != 0 {
			buf = binary.AppendUvarint(buf, l.Nofollow)
		}
		if l.Redirect != 0 {
			buf = binary.AppendUvarint(buf, l.Redirect)
		}
	}
	return buf
}

// RemapCrawl rewrites a crawl record (key k, value v) for another store
// whose node ids are mapID's (weaver merge): the node in the key and
// every target. A record without links stays one, unless resolve gives
// the links it stands for (the crawl before it, already remapped): then
// they are written out. mapID returns 0 for an id it does not know,
// which is an error.
func RemapCrawl(k, v []byte, mapID func(uint64) uint64, resolve []Link) (nk, nv []byte, c Crawl, err error) {
	c, same, err := decodeCrawl(k, v)
	if err != nil {
		return nil, nil, c, err
	}
	node := mapID(binary.BigEndian.Uint64(k))
	if node == 0 {
		return nil, nil, c, fmt.Errorf("%w: key %x names a node the store lacks", ErrBadHistory, k)
	}
	if same && resolve == nil {
		return crawlKey(node, c.At), encodeCrawl(&c, true), c, nil
	}
	if same {
		c.Links = slices.Clone(resolve)
	} else {
		for i := range c.Links {
			if c.Links[i].To = mapID(c.Links[i].To); c.Links[i].To == 0 {
				return nil, nil, c, fmt.Errorf("%w: key %x links to a node the store lacks", ErrBadHistory, k)
			}
		}
		SortLinks(c.Links)
	}
	return crawlKey(node, c.At), encodeCrawl(&c, false), c, nil
}

// decodeCrawl reads a record; same reports a record without links.
func decodeCrawl(k, v []byte) (c Crawl, same bool, err error) {
	if len(k) != 16 || len(v) < 1 {
		return c, false, fmt.Errorf("%w: key %x", ErrBadHistory, k)
	}
	c.At = time.Unix(0, int64(binary.BigEndian.Uint64(k[8:]))).UTC()
	c.Changed = v[0]&crawlChanged != 0
	c.NotModified = v[0]&crawlNotModified != 0
	if v[0]&crawlSame != 0 {
		return c, true, nil
	}
	r := bytes.NewReader(v[1:])
	var last uint64
	for r.Len() > 0 {
		d, err1 := binary.ReadUvarint(r)
		f, err2 := binary.ReadUvarint(r)
		if err1 != nil || err2 != nil {
			return c, false, fmt.Errorf("%w: key %x", ErrBadHistory, k)
		}
		l := Link{To: last + d, Weight: f >> 2}
		last = l.To
		if f&2 != 0 {
			if l.Nofollow, err1 = binary.ReadUvarint(r); err1 != nil {
				return c, false, fmt.Errorf("%w: key %x", ErrBadHistory, k)
			}
		}
		if f&1 != 0 {
			if l.Redirect, err1 = binary.ReadUvarint(r); err1 != nil {
				return c, false, fmt.Errorf("%w: key %x", ErrBadHistory, k)
			}
		}
		c.Links = append(c.Links, l)
	}
	return c, false, nil
}

// CrawlAt returns node's last crawl at or before t (the latest when t is
// zero), with its links resolved, and whether there is one. A store
// without history (an older weaver's) has none.
func CrawlAt(tx *kv.Tx, node uint64, t time.Time) (Crawl, bool, error) {
	if !tx.Exists(kv.BucketCrawls) {
		return Crawl{}, false, nil
	}
	c := tx.Cursor(kv.BucketCrawls)
	prefix := kv.U64(node)
	var k, v []byte
	if t.IsZero() {
		k, _ = c.Seek(kv.U64(node + 1))
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
	} else {
		seek := crawlKey(node, t.Add(time.Nanosecond))
		k, _ = c.Seek(seek)
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
	}
	if k == nil || !bytes.HasPrefix(k, prefix) {
		return Crawl{}, false, nil
	}
	out, same, err := decodeCrawl(k, v)
	if err != nil {
		return Crawl{}, false, err
	}
	// A record without links takes those of the nearest one before it.
	for same {
		k, v = c.Prev()
		if k == nil || !bytes.HasPrefix(k, prefix) {
			return out, true, nil // the first crawl was "same": no links
		}
		var older Crawl
		if older, same, err = decodeCrawl(k, v); err != nil {
			return Crawl{}, false, err
		}
		out.Links = older.Links
	}
	return out, true, nil
}

// LatestCrawl is CrawlAt for the node's last crawl.
func LatestCrawl(tx *kv.Tx, node uint64) (Crawl, bool, error) {
	return CrawlAt(tx, node, time.Time{})
}

// CrawlTimes returns the times of node's crawls, oldest first, and how
// many of them changed something and answered 304.
func CrawlTimes(tx *kv.Tx, node uint64) (times []time.Time, changed, notModified int, err error) {
	if !tx.Exists(kv.BucketCrawls) {
		return nil, 0, 0, nil
	}
	c := tx.Cursor(kv.BucketCrawls)
	prefix := kv.U64(node)
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(k) != 16 || len(v) < 1 {
			return nil, 0, 0, fmt.Errorf("%w: key %x", ErrBadHistory, k)
		}
		times = append(times, time.Unix(0, int64(binary.BigEndian.Uint64(k[8:]))).UTC())
		if v[0]&crawlChanged != 0 {
			changed++
		}
		if v[0]&crawlNotModified != 0 {
			notModified++
		}
	}
	return times, changed, notModified, nil
}

// HasHistory reports whether the store holds any crawl record.
func HasHistory(tx *kv.Tx) bool {
	if !tx.Exists(kv.BucketCrawls) {
		return false
	}
	k, _ := tx.Cursor(kv.BucketCrawls).First()
	return k != nil
}

// EdgesAt calls fn for every edge present at t: for each node with
// history, the links of its last crawl at or before t, each with that
// crawl's weight (the edge's stored facts otherwise: first seen, and its
// accumulated weight in Edge.Weight is replaced by the crawl's). A node
// without history (crawled by an older weaver) contributes its stored
// edges first seen by t, with their stored weights. Edges come in (from,
// to) order.
func EdgesAt(tx *kv.Tx, t time.Time, fn func(e *Edge) error) error {
	return ForEachNode(tx, func(n *Node) error {
		cr, ok, err := CrawlAt(tx, n.ID, t)
		if err != nil {
			return err
		}
		if !ok {
			if HasCrawls(tx, n.ID) {
				return nil // its first crawl is after t
			}
			return ForEachEdgeFrom(tx, n.ID, func(e *Edge) error {
				if e.FirstSeen.After(t) {
					return nil
				}
				return fn(e)
			})
		}
		for _, l := range cr.Links {
			e, ok, err := GetEdge(tx, n.ID, l.To)
			if err != nil {
				return err
			}
			if !ok {
				e = Edge{From: n.ID, To: l.To, FirstSeen: cr.At}
			}
			e.Weight, e.Nofollow, e.Redirect = l.Weight, l.Nofollow, l.Redirect
			if e.LastSeen.After(t) || e.LastSeen.IsZero() {
				e.LastSeen = cr.At
			}
			if err := fn(&e); err != nil {
				return err
			}
		}
		return nil
	})
}

// HasCrawls reports whether node has any crawl record.
func HasCrawls(tx *kv.Tx, node uint64) bool {
	if !tx.Exists(kv.BucketCrawls) {
		return false
	}
	prefix := kv.U64(node)
	k, _ := tx.Cursor(kv.BucketCrawls).Seek(prefix)
	return k != nil && bytes.HasPrefix(k, prefix)
}

// Gone reports whether the edge from→to is missing from its source's
// latest crawl (false when the source has no history). latest is the
// source's LatestCrawl, passed in so that a walk over a node's edges
// reads it once.
func Gone(latest *Crawl, to uint64) bool {
	if latest == nil {
		return false
	}
	_, found := slices.BinarySearchFunc(latest.Links, to, func(l Link, to uint64) int {
		switch {
		case l.To < to:
			return -1
		case l.To > to:
			return 1
		}
		return 0
	})
	return !found
}

// EdgeChange is an edge that appeared or disappeared between two times.
type EdgeChange struct {
	From, To uint64
	Weight   uint64 // the weight then: at the later time for an edge that appeared, the earlier for one gone
}

// DiffAt lists the edges present at to and not at from (appeared) and
// those present at from and not at to (disappeared), in (from, to) order.
func DiffAt(tx *kv.Tx, from, to time.Time) (appeared, disappeared []EdgeChange, err error) {
	type key [2]uint64
	before := map[key]uint64{}
	if err := EdgesAt(tx, from, func(e *Edge) error { before[key{e.From, e.To}] = e.Weight; return nil }); err != nil {
		return nil, nil, err
	}
	err = EdgesAt(tx, to, func(e *Edge) error {
		k := key{e.From, e.To}
		if _, ok := before[k]; ok {
			delete(before, k)
			return nil
		}
		appeared = append(appeared, EdgeChange{e.From, e.To, e.Weight})
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for k, w := range before {
		disappeared = append(disappeared, EdgeChange{k[0], k[1], w})
	}
	slices.SortFunc(disappeared, func(a, b EdgeChange) int {
		if a.From != b.From {
			return cmpU(a.From, b.From)
		}
		return cmpU(a.To, b.To)
	})
	return appeared, disappeared, nil
}

func cmpU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ForEachCrawl calls fn for every crawl of node, oldest first, each with
// its links resolved (a record without links takes those of the crawl
// before it). fn must not keep c.Links past the call.
func ForEachCrawl(tx *kv.Tx, node uint64, fn func(c *Crawl) error) error {
	if !tx.Exists(kv.BucketCrawls) {
		return nil
	}
	cur := tx.Cursor(kv.BucketCrawls)
	prefix := kv.U64(node)
	var links []Link
	for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
		c, same, err := decodeCrawl(k, v)
		if err != nil {
			return err
		}
		if same {
			c.Links = links
		}
		links = c.Links
		if err := fn(&c); err != nil {
			return err
		}
	}
	return nil
}

// Interval is a time an edge was present: from Start, the first crawl of
// its source that linked it (or the edge's first seen, when earlier), to
// End, the first later crawl of its source that did not; End is zero for
// an edge its source's latest crawl links.
type Interval struct{ Start, End time.Time }

// EdgeIntervals returns, for every target node's crawls ever linked, the
// intervals in which the edge node→target was present, oldest first, and
// the time of node's first crawl. It reads node's whole history; a node
// without history gives none and a zero time.
func EdgeIntervals(tx *kv.Tx, node uint64) (_ map[uint64][]Interval, first time.Time, _ error) {
	out := map[uint64][]Interval{}
	open := map[uint64]bool{}
	err := ForEachCrawl(tx, node, func(c *Crawl) error {
		if first.IsZero() {
			first = c.At
		}
		linked := make(map[uint64]bool, len(c.Links))
		for _, l := range c.Links {
			linked[l.To] = true
			if !open[l.To] {
				open[l.To] = true
				out[l.To] = append(out[l.To], Interval{Start: c.At})
			}
		}
		for to := range open {
			if !linked[to] {
				iv := out[to]
				iv[len(iv)-1].End = c.At
				delete(open, to)
			}
		}
		return nil
	})
	return out, first, err
}

// HistoryAt is what a node's crawl history says of it at a time.
type HistoryAt struct {
	Records      int       // crawl records in all
	Crawls       int       // crawls at or before the time
	Last         time.Time // the last of them; zero when none
	Changes      int       // crawls at or before the time that changed the page or its links
	LastChange   time.Time // the last of them
	NotModified  int       // crawls at or before the time answered 304
	ChangedAfter bool      // a crawl after the time changed the page or its links
}

// NodeHistoryAt reads node's history as of t.
func NodeHistoryAt(tx *kv.Tx, node uint64, t time.Time) (HistoryAt, error) {
	var h HistoryAt
	if !tx.Exists(kv.BucketCrawls) {
		return h, nil
	}
	c := tx.Cursor(kv.BucketCrawls)
	prefix := kv.U64(node)
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(k) != 16 || len(v) < 1 {
			return h, fmt.Errorf("%w: key %x", ErrBadHistory, k)
		}
		h.Records++
		at := time.Unix(0, int64(binary.BigEndian.Uint64(k[8:]))).UTC()
		changed := v[0]&crawlChanged != 0
		if at.After(t) {
			h.ChangedAfter = h.ChangedAfter || changed
			continue
		}
		h.Crawls++
		h.Last = at
		if changed {
			h.Changes++
			h.LastChange = at
		}
		if v[0]&crawlNotModified != 0 {
			h.NotModified++
		}
	}
	return h, nil
}

// ExpandHistory rewrites every record of node that stands for the links
// of the crawl before it with those links written out, so that records
// of another store can go between them (weaver merge). CompactHistory
// undoes it.
func ExpandHistory(tx *kv.Tx, node uint64) error {
	return rewriteHistory(tx, node, false)
}

// CompactHistory rewrites every record of node whose links are those of
// the crawl before it as a record without links, as PutCrawl writes them.
func CompactHistory(tx *kv.Tx, node uint64) error {
	return rewriteHistory(tx, node, true)
}

func rewriteHistory(tx *kv.Tx, node uint64, compact bool) error {
	type rec struct {
		c    Crawl
		same bool
	}
	var recs []rec
	var prev []Link
	first := true
	err := ForEachCrawl(tx, node, func(c *Crawl) error {
		same := compact && !first && SameLinks(prev, c.Links)
		first = false
		prev = c.Links
		recs = append(recs, rec{*c, same})
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := tx.PutRaw(kv.BucketCrawls, crawlKey(node, r.c.At), encodeCrawl(&r.c, r.same)); err != nil {
			return err
		}
	}
	return nil
}

// DecodeCrawl reads one record of kv.BucketCrawls (key k, value v); same
// reports a record without links, which stands for those of the crawl
// before it.
func DecodeCrawl(k, v []byte) (c Crawl, same bool, err error) { return decodeCrawl(k, v) }

// Uncount takes back what crawl c of node added to its edges' weights and
// link facts, and to the weight counter: for weaver merge, which meets
// the same crawl (one host, one time) in two stores and would otherwise
// count it twice. An edge never goes below zero.
func Uncount(tx *kv.Tx, node uint64, c *Crawl) error {
	for _, l := range c.Links {
		e, ok, err := GetEdge(tx, node, l.To)
		if err != nil || !ok {
			return err
		}
		w := min(l.Weight, e.Weight)
		e.Weight -= w
		e.Nofollow -= min(l.Nofollow, e.Nofollow)
		e.Redirect -= min(l.Redirect, e.Redirect)
		e.Nofollow, e.Redirect = min(e.Nofollow, e.Weight), min(e.Redirect, e.Weight)
		if err := tx.Put(kv.BucketEdges, edgeKey(node, l.To), &e); err != nil {
			return err
		}
		if _, err := tx.AddCounter(counterWeight, -int64(w)); err != nil {
			return err
		}
	}
	return nil
}
