// Merge's crawl state: the frontiers and leases queued again, visited
// marks, the subdomain limiter's hosts, robots.txt caches, and the revisit
// schedule filed anew from the merged nodes.

package archive

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/kv"
)

// frontier queues every input's entries and leases in dst, one per host at
// its smallest depth. frontier.Push, called in (depth, arrival, input)
// order, keeps the first entry of each host and numbers the arrivals anew.
func (m *merger) frontier(srcs []*kv.Store) error {
	var all []queuedAt // renumbered
	for i, src := range srcs {
		ids := &m.ids[i]
		err := src.View(func(tx *kv.Tx) error {
			c := tx.Cursor(kv.BucketFrontier)
			for k, v := c.First(); k != nil; k, v = c.Next() {
				var e frontier.Entry
				if err := kv.Decode(v, &e); err != nil {
					return fmt.Errorf("%s: frontier entry %x: %w", src.Path(), k, err)
				}
				all = append(all, queuedAt{depth: e.Depth, seq: keySeq(k), input: i, e: e})
			}
			return frontier.ForEachLease(tx, func(l *frontier.Lease) error {
				all = append(all, queuedAt{depth: l.Depth, seq: keySeq(l.Key), input: i, e: l.Entry})
				return nil
			})
		})
		if err != nil {
			return err
		}
		for j := len(all) - 1; j >= 0 && all[j].input == i; j-- {
			old := all[j].e.NodeID
			if all[j].e.NodeID = ids.get(old); all[j].e.NodeID == 0 {
				return fmt.Errorf("%s: frontier entry of %s names missing node %d: %w", src.Path(), all[j].e.Host, old, frontier.ErrInconsistent)
			}
		}
	}
	slices.SortFunc(all, queuedAt.compare)
	for start := 0; start < len(all); start += m.batch {
		if err := m.ctx.Err(); err != nil {
			return err
		}
		chunk := all[start:min(start+m.batch, len(all))]
		err := m.dst.Update(func(tx *kv.Tx) error {
			for _, q := range chunk {
				if _, err := frontier.Push(tx, q.e); err != nil {
					return fmt.Errorf("frontier entry of %s: %w", q.e.Host, err)
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

// visited copies input i's visited marks (frontier/visited.go),
// renumbered.
func (m *merger) visited(i int, src *kv.Store) error {
	ids := &m.ids[i]
	var batch [][]byte
	return m.scan(src, kv.BucketVisited, func(k, _ []byte) error {
		node, ok := frontier.VisitedNode(k)
		if !ok {
			return nil // not a mark this weaver writes; the crawler never reads it
		}
		id := ids.get(node)
		if id == 0 {
			return nil // a mark of a node the input lacks: meaningless, dropped
		}
		batch = append(batch, frontier.RenumberVisited(k, id))
		return nil
	}, func() error {
		slices.SortFunc(batch, bytes.Compare)
		return keysFlush(m.dst, kv.BucketVisited, &batch)()
	})
}

// roots copies the subdomain limiter's admitted hosts: the union, with
// the latest admissions of an input whose crawl did not end (its roots log,
// graph/limiter.go) put in roots, where the crawl would have folded them.
func (m *merger) roots(src *kv.Store) error {
	var batch [][]byte
	err := m.scan(src, kv.BucketRoots, func(k, _ []byte) error {
		batch = append(batch, bytes.Clone(k))
		return nil
	}, keysFlush(m.dst, kv.BucketRoots, &batch))
	logged := false
	if err == nil {
		err = src.View(func(tx *kv.Tx) error { logged = tx.Exists(kv.BucketRootLog); return nil })
	}
	if err != nil || !logged {
		return err
	}
	return m.scan(src, kv.BucketRootLog, func(_, v []byte) error {
		if bytes.IndexByte(v, 0) > 0 {
			batch = append(batch, bytes.Clone(v))
		}
		return nil
	}, func() error {
		slices.SortFunc(batch, bytes.Compare)
		return keysFlush(m.dst, kv.BucketRoots, &batch)()
	})
}

// robots keeps, per host, the freshest robots.txt record of all inputs (the
// earlier input's on a tie).
func (m *merger) robots(src *kv.Store) error {
	var batch []kvPair
	return m.scan(src, kv.BucketRobots, func(k, v []byte) error {
		batch = append(batch, kvPair{bytes.Clone(k), bytes.Clone(v)})
		return nil
	}, func() error {
		err := m.dst.Update(func(tx *kv.Tx) error {
			for _, r := range batch {
				if cur := tx.GetRaw(kv.BucketRobots, r.k); cur != nil && !fetchedAt(r.v).After(fetchedAt(cur)) {
					continue
				}
				if err := tx.PutRaw(kv.BucketRobots, r.k, r.v); err != nil {
					return err
				}
			}
			return nil
		})
		batch = batch[:0]
		return err
	})
}

// rebuildDue files every merged node with a due time in the revisit
// schedule (frontier.Schedule), to fetch its home page: nodes noted them
// in m.due as it wrote the nodes (the history, which comes between,
// changes no due time).
func (m *merger) rebuildDue() error {
	slices.SortFunc(m.due, func(a, b dueAt) int { return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.node, b.node)) })
	for start := 0; start < len(m.due); start += m.batch {
		chunk := m.due[start:min(start+m.batch, len(m.due))]
		err := m.dst.Update(func(tx *kv.Tx) error {
			for _, d := range chunk {
				if err := frontier.Schedule(tx, d.node, d.at, ""); err != nil {
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

// dueAt is a merged node's due time.
type dueAt struct {
	node uint64
	at   time.Time
}
