// Merge's edges and their example links (--anchors): renumbered, weights
// and link facts summed, first/last-seen widened.

package archive

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// edges adds input i's edges to dst, renumbered. Each batch is sorted by
// its new key so that it is written in key order.
func (m *merger) edges(i int, src *kv.Store) error {
	ids := &m.ids[i]
	var batch []graph.Edge
	return m.scan(src, kv.BucketEdges, func(k, v []byte) error {
		if len(k) != 16 {
			return fmt.Errorf("%s: edge key %x: %w", src.Path(), k, graph.ErrInconsistent)
		}
		var e graph.Edge
		if err := kv.Decode(v, &e); err != nil {
			return fmt.Errorf("%s: edge %x: %w", src.Path(), k, err)
		}
		from, to := binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:])
		e.From, e.To = ids.get(from), ids.get(to)
		if e.From == 0 || e.To == 0 {
			return fmt.Errorf("%s: edge %d→%d names a missing node: %w", src.Path(), from, to, graph.ErrInconsistent)
		}
		batch = append(batch, e)
		return nil
	}, func() error {
		slices.SortFunc(batch, func(a, b graph.Edge) int {
			return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
		})
		err := m.dst.Update(func(tx *kv.Tx) error {
			for j := range batch {
				if err := addEdge(tx, &batch[j]); err != nil {
					return err
				}
			}
			return nil
		})
		batch = batch[:0]
		return err
	})
}

// addEdge adds e's weight and link facts to the edge e.From→e.To in tx
// and widens its first/last-seen to e's. graph.AddEdgeFacts keeps the
// counters; the record is then rewritten with the merged times, which
// AddEdgeFacts sets to its now.
func addEdge(tx *kv.Tx, e *graph.Edge) error {
	old, ok, err := graph.GetEdge(tx, e.From, e.To)
	if err != nil {
		return err
	}
	if err := graph.AddEdgeFacts(tx, e.From, e.To, e.Weight, e.Nofollow, e.Redirect, e.LastSeen); err != nil {
		return err
	}
	merged := graph.Edge{From: e.From, To: e.To, Weight: e.Weight, FirstSeen: e.FirstSeen, LastSeen: e.LastSeen, Nofollow: e.Nofollow, Redirect: e.Redirect, Frame: e.Frame}
	if ok {
		merged.Weight += old.Weight
		merged.Nofollow += old.Nofollow
		merged.Redirect += old.Redirect
		merged.Frame += old.Frame
		merged.FirstSeen = earliest(old.FirstSeen, e.FirstSeen)
		merged.LastSeen = latest(old.LastSeen, e.LastSeen)
	}
	return graph.PutEdge(tx, &merged)
}

// anchors copies input i's example links (graph.Anchor) with their edge's
// ids remapped; an edge that has some in two inputs keeps the first
// input's, then the other's, as many as the longer list had.
func (m *merger) anchors(i int, src *kv.Store) error {
	ids := &m.ids[i]
	has := false
	if err := src.View(func(tx *kv.Tx) error { has = tx.Exists(kv.BucketAnchors); return nil }); err != nil || !has {
		return err // an older weaver's store: no anchors
	}
	type rec struct {
		from, to uint64
		list     []graph.Anchor
	}
	var batch []rec
	return m.scan(src, kv.BucketAnchors, func(k, v []byte) error {
		if len(k) != 16 {
			return fmt.Errorf("%s: anchors key %x: %w", src.Path(), k, graph.ErrInconsistent)
		}
		var list []graph.Anchor
		if err := kv.Decode(v, &list); err != nil {
			return fmt.Errorf("%s: anchors %x: %w", src.Path(), k, err)
		}
		batch = append(batch, rec{ids.get(binary.BigEndian.Uint64(k)), ids.get(binary.BigEndian.Uint64(k[8:])), list})
		return nil
	}, func() error {
		err := m.dst.Update(func(tx *kv.Tx) error {
			for _, r := range batch {
				if _, ok, err := graph.GetEdge(tx, r.from, r.to); err != nil || !ok {
					if err != nil {
						return err
					}
					continue // no edge of the output: the anchors have nothing to stand for
				}
				old, err := graph.GetAnchors(tx, r.from, r.to)
				if err != nil {
					return err
				}
				list := graph.MergeAnchors(old, r.list, max(len(old), len(r.list)))
				if err := graph.PutAnchors(tx, r.from, r.to, list); err != nil {
					return err
				}
			}
			return nil
		})
		batch = batch[:0]
		return err
	})
}
