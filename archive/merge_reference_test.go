package archive

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// MergeRecordByRecord is Merge with the nodes and edges merged as weaver
// merged them before the one-pass merge (up to 5017575): every input read
// after the other, each node looked up by host and written through
// graph.Ensure and graph.Put, each edge looked up and added. The tests
// compare the two merges' stores bucket by bucket.
func MergeRecordByRecord(ctx context.Context, out string, inputs []string, opt MergeOptions) (MergeResult, error) {
	return mergeWith(ctx, out, inputs, opt, func(m *merger, srcs []*kv.Store) error {
		stubs := map[uint64]bool{}
		for i, s := range srcs {
			if err := referenceNodes(m, stubs, i, s); err != nil {
				return err
			}
		}
		for i, s := range srcs {
			if err := referenceEdges(m, i, s); err != nil {
				return err
			}
		}
		return m.dst.View(func(tx *kv.Tx) error {
			return graph.ForEachNode(tx, func(n *graph.Node) error {
				if !n.NextDue.IsZero() {
					m.due = append(m.due, dueAt{n.ID, n.NextDue})
				}
				return nil
			})
		})
	})
}

func referenceNodes(m *merger, stubs map[uint64]bool, i int, src *kv.Store) error {
	ids := &m.ids[i]
	err := src.View(func(tx *kv.Tx) error {
		ids.limit = 4*graph.GetCounts(tx).Nodes + 1<<20
		return nil
	})
	if err != nil {
		return err
	}
	spec, sharded, err := shardOf(src)
	if err != nil {
		return err
	}
	var batch []graph.Node
	return m.scan(src, kv.BucketNodes, func(k, v []byte) error {
		var n graph.Node
		if err := graph.DecodeNode(k, v, &n); err != nil {
			return err
		}
		batch = append(batch, n)
		return nil
	}, func() error {
		err := m.dst.Update(func(tx *kv.Tx) error {
			for j := range batch {
				stub := sharded && !spec.Owns(batch[j].Host)
				id, err := referencePutNode(tx, stubs, &batch[j], stub)
				if err != nil {
					return err
				}
				ids.set(batch[j].ID, id)
			}
			return nil
		})
		batch = batch[:0]
		return err
	})
}

func referencePutNode(tx *kv.Tx, stubs map[uint64]bool, n *graph.Node, stub bool) (uint64, error) {
	cur, ok, err := graph.GetByHost(tx, n.Host)
	if err != nil {
		return 0, err
	}
	switch {
	case !ok:
		created, _, err := graph.Ensure(tx, n.Host, n.Scheme, n.FirstSeen)
		if err != nil {
			return 0, err
		}
		cur = *n
		cur.ID = created.ID
		if stub {
			stubs[cur.ID] = true
		}
	case stub == stubs[cur.ID]:
		mergeNode(&cur, n)
	case stub:
		cur.Depth, cur.SeedRedirects = closer(&cur, n)
		cur.FirstSeen = earliest(cur.FirstSeen, n.FirstSeen)
		cur.LastSeen = latest(cur.LastSeen, n.LastSeen)
	default:
		acc := *n
		acc.ID = cur.ID
		acc.Depth, acc.SeedRedirects = closer(&cur, n)
		acc.FirstSeen = earliest(cur.FirstSeen, n.FirstSeen)
		acc.LastSeen = latest(cur.LastSeen, n.LastSeen)
		acc.CrawlCount += cur.CrawlCount
		acc.FailCount += cur.FailCount
		cur = acc
		delete(stubs, cur.ID)
	}
	if _, err := graph.NoteContentHash(tx, &cur); err != nil {
		return 0, err
	}
	return cur.ID, graph.Put(tx, &cur)
}

func referenceEdges(m *merger, i int, src *kv.Store) error {
	ids := &m.ids[i]
	var batch []graph.Edge
	return m.scan(src, kv.BucketEdges, func(k, v []byte) error {
		var e graph.Edge
		if err := kv.Decode(v, &e); err != nil {
			return err
		}
		from, to := binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:])
		e.From, e.To = ids.get(from), ids.get(to)
		if e.From == 0 || e.To == 0 {
			return fmt.Errorf("edge %d→%d names a missing node: %w", from, to, graph.ErrInconsistent)
		}
		batch = append(batch, e)
		return nil
	}, func() error {
		slices.SortFunc(batch, func(a, b graph.Edge) int {
			return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
		})
		err := m.dst.Update(func(tx *kv.Tx) error {
			for j := range batch {
				if err := referenceAddEdge(tx, &batch[j]); err != nil {
					return err
				}
			}
			return nil
		})
		batch = batch[:0]
		return err
	})
}

func referenceAddEdge(tx *kv.Tx, e *graph.Edge) error {
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
