package graph

import (
	"errors"
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
// kv.BucketCrawls, still read). This file writes the history; reading it
// is history_read.go, the graph at a time history_graph.go, checking and
// repairing it history_check.go.

// Crawl flags.
const (
	crawlChanged     = 1 << 0 // the out-links or the page's title, description, canonical, robots or status differ from the crawl before
	crawlNotModified = 1 << 1 // answered 304 Not Modified
	crawlSame        = 1 << 2 // links as the crawl before: none stored
)

// Link is one out-link of a crawl: the target and the pages of the crawl
// that linked to it (with how many of them only by nofollow, how many
// redirected to it, and how many showed it in a frame).
type Link struct {
	To, Weight, Nofollow, Redirect uint64
	Frame                          uint64
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
		e.Frame -= min(l.Frame, e.Frame)
		e.Nofollow, e.Redirect, e.Frame = min(e.Nofollow, e.Weight), min(e.Redirect, e.Weight), min(e.Frame, e.Weight)
		if err := PutEdge(tx, &e); err != nil {
			return err
		}
		if _, err := tx.AddCounter(counterWeight, -int64(w)); err != nil {
			return err
		}
	}
	return nil
}
