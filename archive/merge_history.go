// Merge's crawl histories: each host's crawls joined by time, a crawl
// that two inputs hold counted once.

package archive

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// history merges input i's crawl history (graph/history.go) into dst, its
// node ids remapped: each host's history is the union of its inputs'
// crawls, by crawl time, each with its own links, written anew as the
// crawler writes it (a crawl whose links are those of the merged crawl
// before it stores none). A crawl two inputs both hold (a store and its
// copy, or a copy that crawled on: the same host and time) is kept once,
// and what the second input counted for it (the node's crawl, change and
// 304 counts, its edges' weights) is taken back.
func (m *merger) history(i int, src *kv.Store) error {
	ids := &m.ids[i]
	if m.dups == nil {
		m.dups = map[uint64]*dupCounts{}
	}
	type hist struct {
		node   uint64 // the output's
		crawls []graph.Crawl
	}
	var batch []hist
	records := 0
	flush := func() error {
		err := m.dst.Update(func(tx *kv.Tx) error {
			for _, h := range batch {
				if err := m.putHistory(tx, h.node, h.crawls); err != nil {
					return err
				}
			}
			return nil
		})
		batch, records = batch[:0], 0
		return err
	}
	err := src.View(func(tx *kv.Tx) error {
		if !graph.HasHistory(tx) {
			return nil // an older weaver's store, or no crawl answered
		}
		c := tx.Cursor(kv.BucketNodes)
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if len(k) != 8 || !graph.HasCrawls(tx, binary.BigEndian.Uint64(k)) {
				continue
			}
			id := binary.BigEndian.Uint64(k)
			h := hist{node: ids.get(id)}
			err := graph.ForEachCrawl(tx, id, func(c *graph.Crawl) error {
				cr := *c
				cr.Links = make([]graph.Link, len(c.Links))
				for j, l := range c.Links {
					if l.To = ids.get(l.To); l.To == 0 {
						return fmt.Errorf("%w: node %d's crawl at %s links to a node the store lacks", graph.ErrBadHistory, id, c.At)
					}
					cr.Links[j] = l
				}
				graph.SortLinks(cr.Links)
				h.crawls = append(h.crawls, cr)
				return nil
			})
			if err != nil {
				return fmt.Errorf("%s: %w", src.Path(), err)
			}
			batch = append(batch, h)
			if records += len(h.crawls); records >= m.batch {
				if err := m.ctx.Err(); err != nil {
					return err
				}
				if err := flush(); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil || len(batch) == 0 {
		return err
	}
	return flush()
}

// putHistory makes node's history in tx the union of what it holds and
// crawls (times strictly increasing); a crawl at a time it holds is kept
// once (see history).
func (m *merger) putHistory(tx *kv.Tx, node uint64, crawls []graph.Crawl) error {
	var old []graph.Crawl
	err := graph.ForEachCrawl(tx, node, func(c *graph.Crawl) error {
		cr := *c
		cr.Links = slices.Clone(c.Links)
		old = append(old, cr)
		return nil
	})
	if err != nil || len(old) == 0 {
		if err == nil {
			err = graph.ReplaceHistory(tx, node, crawls)
		}
		return err
	}
	merged := make([]graph.Crawl, 0, len(old)+len(crawls))
	for len(old) > 0 || len(crawls) > 0 {
		switch {
		case len(crawls) == 0 || len(old) > 0 && old[0].At.Before(crawls[0].At):
			merged, old = append(merged, old[0]), old[1:]
		case len(old) == 0 || crawls[0].At.Before(old[0].At):
			merged, crawls = append(merged, crawls[0]), crawls[1:]
		default: // the same crawl, in two inputs
			if err := m.dup(tx, node, &crawls[0]); err != nil {
				return err
			}
			merged, old, crawls = append(merged, old[0]), old[1:], crawls[1:]
		}
	}
	return graph.ReplaceHistory(tx, node, merged)
}

// dupCounts are what the inputs counted twice for a host: crawls met in
// two inputs, and how many of them changed something or answered 304.
type dupCounts struct{ crawls, changed, notModified int }

// dup takes back what a second input counted for its crawl c of node,
// which the output already holds: its links' weights now, the node's
// counts in finishHistory.
func (m *merger) dup(tx *kv.Tx, node uint64, c *graph.Crawl) error {
	d := m.dups[node]
	if d == nil {
		d = &dupCounts{}
		m.dups[node] = d
	}
	d.crawls++
	if c.Changed {
		d.changed++
	}
	if c.NotModified {
		d.notModified++
	}
	return graph.Uncount(tx, node, c)
}

// finishHistory takes back from each node's counts the crawls two inputs
// both held.
func (m *merger) finishHistory() error {
	nodes := slices.Sorted(maps.Keys(m.dups))
	for lo := 0; lo < len(nodes); lo += m.batch {
		err := m.dst.Update(func(tx *kv.Tx) error {
			for _, id := range nodes[lo:min(lo+m.batch, len(nodes))] {
				d := m.dups[id]
				n, ok, err := graph.Get(tx, id)
				if err != nil || !ok {
					return err
				}
				n.CrawlCount = max(n.CrawlCount-d.crawls, 0)
				n.Changes = max(n.Changes-d.changed, 0)
				n.NotModified = max(n.NotModified-d.notModified, 0)
				if err := graph.Put(tx, &n); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
