// The graph through time, from the crawl histories: the edges present at
// a time, those that appeared or went between two times, and the
// intervals in which an edge was present.

package graph

import (
	"cmp"
	"slices"
	"time"

	"github.com/weaver-crawler/weaver/kv"
)

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
			e.Weight, e.Nofollow, e.Redirect, e.Frame = l.Weight, l.Nofollow, l.Redirect, l.Frame
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
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
	})
	return appeared, disappeared, nil
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
