// Reading a node's crawl history: its segments (history_codec.go) or its
// schema 1 records (history_v1.go), walked oldest first, and what they
// say of the node at a time.

package graph

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weaver-crawler/weaver/kv"
)

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

// HasCrawls reports whether node has any crawl record.
func HasCrawls(tx *kv.Tx, node uint64) bool {
	if tx.Exists(kv.BucketRecent) && tx.GetRaw(kv.BucketRecent, kv.U64(node)) != nil {
		return true
	}
	return hasV1(tx, node)
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
