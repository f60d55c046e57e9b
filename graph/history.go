package graph

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weaver-crawler/weaver/kv"
)

// The graph's history (issue 27): every answered crawl of a host leaves a
// record of the host's out-links of that crawl with that crawl's own
// weights. An edge is present from a crawl of its source that links to it
// until the first later crawl that does not, so "the graph at T" is, for
// each node, the links of its last crawl at or before T; the intervals of
// an edge follow from its source's records.
//
// A record whose links are those of the crawl before it (a 304, an
// unchanged page) stores none: a time step and a flags byte. How records
// are laid out in the store: history_codec.go (schema 2: per node, a chain
// of segments appended at the end of kv.BucketHistory and an open segment
// in kv.BucketRecent) and history_v1.go (schema 1: a record per crawl in
// kv.BucketCrawls, still read).

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
// LatestCrawl resolved it (nil when none): a crawl with the same links
// stores none. c.Links must be sorted. A crawl that is not later than the
// node's last (a clock set back) is put in its place, replacing one at
// the same time, by writing the node's history anew. It returns
// ErrBadHistory when the node's history is damaged.
func PutCrawl(tx *kv.Tx, node uint64, c Crawl, prev *Crawl) error {
	open, ok, err := openSegment(tx, node)
	if err != nil {
		return err
	}
	if !ok && hasV1(tx, node) {
		return insertCrawl(tx, node, c) // schema 1 records: rewritten as segments
	}
	var a *appender
	if ok {
		a, err = newAppender(node, &open)
	} else {
		a, err = newAppender(node, nil)
	}
	if err != nil {
		return err
	}
	if !a.none && !c.At.After(a.last) {
		return insertCrawl(tx, node, c)
	}
	same := !a.none && prev != nil && SameLinks(prev.Links, c.Links)
	if err := a.add(tx, &c, same); err != nil {
		return err
	}
	return a.flush(tx)
}

// insertCrawl puts c into node's history in time order, in place of a
// crawl at the same time, and writes the history anew.
func insertCrawl(tx *kv.Tx, node uint64, c Crawl) error {
	var all []Crawl
	err := eachCrawl(tx, node, true, func(old *Crawl, _ bool) error {
		if !old.At.Equal(c.At) {
			all = append(all, *old)
		}
		return nil
	})
	if err != nil {
		return err
	}
	i, _ := slices.BinarySearchFunc(all, c.At, func(x Crawl, t time.Time) int { return x.At.Compare(t) })
	return ReplaceHistory(tx, node, slices.Insert(all, i, c))
}

// ReplaceHistory writes crawls, oldest first (their times strictly
// increasing, their links sorted), as node's whole history, in place of
// what it had (weaver merge). A crawl whose links are those of the one
// before it stores none. It returns ErrBadHistory when the history it
// replaces is damaged.
func ReplaceHistory(tx *kv.Tx, node uint64, crawls []Crawl) error {
	if err := deleteHistory(tx, node); err != nil {
		return err
	}
	a, _ := newAppender(node, nil)
	for i := range crawls {
		same := i > 0 && SameLinks(crawls[i-1].Links, crawls[i].Links)
		if err := a.add(tx, &crawls[i], same); err != nil {
			return err
		}
	}
	return a.flush(tx)
}

// deleteHistory deletes node's history, in either layout.
func deleteHistory(tx *kv.Tx, node uint64) error {
	open, ok, err := openSegment(tx, node)
	if err != nil || !ok {
		if err == nil {
			err = deleteV1(tx, node)
		}
		return err
	}
	for seq := open.prev; seq != 0; {
		s, err := sealedSegment(tx, seq, node)
		if err != nil {
			return err
		}
		if err := tx.Delete(kv.BucketHistory, kv.U64(seq)); err != nil {
			return err
		}
		seq = s.prev
	}
	if err := tx.Delete(kv.BucketRecent, kv.U64(node)); err != nil {
		return err
	}
	return deleteV1(tx, node)
}

// openSegment returns node's open segment, and whether it has one (a
// node without history, or whose history is schema 1's, has none).
func openSegment(tx *kv.Tx, node uint64) (segment, bool, error) {
	if !tx.Exists(kv.BucketRecent) {
		return segment{}, false, nil
	}
	v := tx.GetRaw(kv.BucketRecent, kv.U64(node))
	if v == nil {
		return segment{}, false, nil
	}
	s, err := decodeSegment(0, node, v)
	if err == nil && len(s.recs) == 0 && s.prev == 0 {
		err = s.errBad("no record, and no sealed segment before it")
	}
	return s, err == nil, err
}

// sealedSegment returns node's sealed segment seq.
func sealedSegment(tx *kv.Tx, seq, node uint64) (segment, error) {
	v := tx.GetRaw(kv.BucketHistory, kv.U64(seq))
	if v == nil {
		return segment{}, fmt.Errorf("%w: node %d's segment %d is missing", ErrBadHistory, node, seq)
	}
	s, err := decodeSegment(seq, 0, v)
	if err == nil && s.node != node {
		err = fmt.Errorf("%w: node %d's segment %d is node %d's", ErrBadHistory, node, seq, s.node)
	}
	return s, err
}

// chain returns node's segments, oldest first, the open one last.
func chain(tx *kv.Tx, node uint64, open segment) ([]segment, error) {
	segs := []segment{open}
	for seq := open.prev; seq != 0; seq = segs[len(segs)-1].prev {
		s, err := sealedSegment(tx, seq, node)
		if err != nil {
			return nil, err
		}
		segs = append(segs, s)
	}
	slices.Reverse(segs)
	return segs, nil
}

// baseLinks returns the links of the last record with links of node's
// sealed segment base (none when base is 0).
func baseLinks(tx *kv.Tx, node, base uint64) ([]Link, error) {
	if base == 0 {
		return nil, nil
	}
	s, err := sealedSegment(tx, base, node)
	if err != nil {
		return nil, err
	}
	at := -1
	if err := s.each(func(r *record) error {
		if r.links >= 0 {
			at = r.links
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if at < 0 {
		return nil, s.errBad("it is a base but holds no record with links")
	}
	links, _, err := s.links(at, true)
	return links, err
}

// eachCrawl calls fn for every crawl of node, oldest first, in either
// layout; with links, each with its links resolved, and stored says
// whether its record holds them (false: those of the crawl before).
func eachCrawl(tx *kv.Tx, node uint64, links bool, fn func(c *Crawl, stored bool) error) error {
	open, ok, err := openSegment(tx, node)
	if err != nil {
		return err
	}
	if !ok {
		return eachV1(tx, node, func(c *Crawl) error { return fn(c, true) })
	}
	segs, err := chain(tx, node, open)
	if err != nil {
		return err
	}
	var cur []Link
	if links {
		if cur, err = baseLinks(tx, node, segs[0].base); err != nil {
			return err
		}
	}
	for i := range segs {
		s := &segs[i]
		err := s.each(func(r *record) error {
			c := r.crawl()
			if links && r.links >= 0 {
				var err error
				if cur, _, err = s.links(r.links, true); err != nil {
					return err
				}
			}
			c.Links = cur
			return fn(&c, r.links >= 0)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// CrawlAt returns node's last crawl at or before t (the latest when t is
// zero), with its links resolved, and whether there is one. A store
// without history (an older weaver's) has none. It returns ErrBadHistory
// when the node's history is damaged.
func CrawlAt(tx *kv.Tx, node uint64, t time.Time) (Crawl, bool, error) {
	s, ok, err := openSegment(tx, node)
	if err != nil {
		return Crawl{}, false, err
	}
	if !ok {
		return crawlAtV1(tx, node, t)
	}
	if len(s.recs) == 0 { // just sealed: the last crawl is the segment before
		if s, err = sealedSegment(tx, s.prev, node); err != nil {
			return Crawl{}, false, err
		}
	}
	for !t.IsZero() && s.first.After(t) {
		if s.prev == 0 {
			return Crawl{}, false, nil
		}
		if s, err = sealedSegment(tx, s.prev, node); err != nil {
			return Crawl{}, false, err
		}
	}
	var out Crawl
	at := -1 // the links of the last record with links up to out
	err = s.each(func(r *record) error {
		if !t.IsZero() && r.at.After(t) {
			return errStop
		}
		out = r.crawl()
		if r.links >= 0 {
			at = r.links
		}
		return nil
	})
	if err != nil && err != errStop {
		return Crawl{}, false, err
	}
	if at >= 0 {
		out.Links, _, err = s.links(at, true)
	} else {
		out.Links, err = baseLinks(tx, node, s.base)
	}
	if err != nil {
		return Crawl{}, false, err
	}
	return out, true, nil
}

// errStop ends a walk early.
var errStop = errors.New("stop")

// crawlAtV1 is CrawlAt for a node whose history is schema 1's.
func crawlAtV1(tx *kv.Tx, node uint64, t time.Time) (out Crawl, found bool, err error) {
	err = eachV1(tx, node, func(c *Crawl) error {
		if !t.IsZero() && c.At.After(t) {
			return errStop
		}
		out, found = *c, true
		return nil
	})
	if err == errStop {
		err = nil
	}
	if err != nil {
		return Crawl{}, false, err
	}
	return out, found, nil
}

// LatestCrawl is CrawlAt for the node's last crawl.
func LatestCrawl(tx *kv.Tx, node uint64) (Crawl, bool, error) {
	return CrawlAt(tx, node, time.Time{})
}

// CrawlTimes returns the times of node's crawls, oldest first, and how
// many of them changed something and answered 304.
func CrawlTimes(tx *kv.Tx, node uint64) (times []time.Time, changed, notModified int, err error) {
	err = eachCrawl(tx, node, false, func(c *Crawl, _ bool) error {
		times = append(times, c.At)
		if c.Changed {
			changed++
		}
		if c.NotModified {
			notModified++
		}
		return nil
	})
	if err != nil {
		return nil, 0, 0, err
	}
	return times, changed, notModified, nil
}

// HasHistory reports whether the store holds any crawl record.
func HasHistory(tx *kv.Tx) bool {
	for _, b := range [][]byte{kv.BucketRecent, kv.BucketCrawls} {
		if tx.Exists(b) {
			if k, _ := tx.Cursor(b).First(); k != nil {
				return true
			}
		}
	}
	return false
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
	if tx.Exists(kv.BucketRecent) && tx.GetRaw(kv.BucketRecent, kv.U64(node)) != nil {
		return true
	}
	return hasV1(tx, node)
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
// before it). fn must not keep c.Links past the call. It returns
// ErrBadHistory when the node's history is damaged.
func ForEachCrawl(tx *kv.Tx, node uint64, fn func(c *Crawl) error) error {
	return eachCrawl(tx, node, true, func(c *Crawl, _ bool) error { return fn(c) })
}

// LinksStored reports, for each crawl of node oldest first, whether its
// record holds its links (false: it stands for those of the crawl before
// it).
func LinksStored(tx *kv.Tx, node uint64) ([]bool, error) {
	var out []bool
	err := eachCrawl(tx, node, false, func(_ *Crawl, stored bool) error {
		out = append(out, stored)
		return nil
	})
	return out, err
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
	err := eachCrawl(tx, node, false, func(c *Crawl, _ bool) error {
		h.Records++
		if c.At.After(t) {
			h.ChangedAfter = h.ChangedAfter || c.Changed
			return nil
		}
		h.Crawls++
		h.Last = c.At
		if c.Changed {
			h.Changes++
			h.LastChange = c.At
		}
		if c.NotModified {
			h.NotModified++
		}
		return nil
	})
	return h, err
}

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
		if err := PutEdge(tx, &e); err != nil {
			return err
		}
		if _, err := tx.AddCounter(counterWeight, -int64(w)); err != nil {
			return err
		}
	}
	return nil
}
