package graph_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// TestMergeEdges_SameAsAddEdge: links added one by one with AddEdge, each
// at its time, and the same links summed per edge (weight, first and last
// time) and merged in key order with MergeEdges, in several rounds over
// edges the store has and new ones (some with link facts), leave the same
// bytes in the edges bucket and the same counters: on 50 hosts (one leaf
// of edges), and on 2,000 where a round's edges fall many leaves apart
// or close together (MergeEdges steps to a near key, seeks a far one).
func TestMergeEdges_SameAsAddEdge(t *testing.T) {
	t.Run("50 hosts", func(t *testing.T) { mergeSameAsAddEdge(t, 50, 300) })
	t.Run("2000 hosts", func(t *testing.T) { mergeSameAsAddEdge(t, 2000, 6000) })
}

func mergeSameAsAddEdge(t *testing.T, hosts, perRound int) {
	single, merged := storetest.MustOpen(t), storetest.MustOpen(t)
	for _, s := range []*kv.Store{single, merged} {
		if err := s.Update(func(tx *kv.Tx) error {
			for i := range hosts {
				if _, _, err := graph.Ensure(tx, fmt.Sprintf("h%d.test", i), "http", t0); err != nil {
					return err
				}
			}
			// An edge with facts, which a merge keeps.
			return graph.AddEdgeFacts(tx, 3, 4, 2, 1, 1, t0)
		}); err != nil {
			t.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 5 {
		type link struct{ from, to uint64 }
		var links []link
		for range perRound {
			from, to := uint64(r.IntN(hosts)+1), uint64(r.IntN(hosts)+1)
			switch round {
			case 2:
				from = uint64(r.IntN(5) + 1) // a few pages' edges: near each other
			case 4:
				from += uint64(hosts) * 4 / 5 // the last ids: mostly the end of the key space
			}
			if from != to && from <= uint64(hosts) {
				links = append(links, link{from, to})
			}
		}
		sums := map[link]*graph.EdgeMerge{}
		err := single.Update(func(tx *kv.Tx) error {
			for i, l := range links {
				at := t0.Add(time.Duration(round*1000+i) * time.Second)
				if err := graph.AddEdge(tx, l.from, l.to, 1, at); err != nil {
					return err
				}
				if m := sums[l]; m != nil {
					m.Weight++
					m.Last = at
				} else {
					sums[l] = &graph.EdgeMerge{From: l.from, To: l.to, Weight: 1, First: at, Last: at}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var edges []graph.EdgeMerge
		for _, m := range sums {
			edges = append(edges, *m)
		}
		slices.SortFunc(edges, func(a, b graph.EdgeMerge) int {
			if a.From != b.From {
				return int(a.From) - int(b.From)
			}
			return int(a.To) - int(b.To)
		})
		if err := merged.Update(func(tx *kv.Tx) error { return graph.MergeEdges(tx, edges) }); err != nil {
			t.Fatal(err)
		}
	}
	dump := func(s *kv.Store) (out []string, c graph.Counts) {
		s.View(func(tx *kv.Tx) error {
			cur := tx.Cursor(kv.BucketEdges)
			for k, v := cur.First(); k != nil; k, v = cur.Next() {
				out = append(out, fmt.Sprintf("%x=%x", k, v))
			}
			c = graph.GetCounts(tx)
			return nil
		})
		return out, c
	}
	a, ca := dump(merged)
	b, cb := dump(single)
	if ca != cb || ca.Edges < 100 {
		t.Fatalf("counts: MergeEdges %+v, AddEdge %+v", ca, cb)
	}
	if !slices.Equal(a, b) {
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				t.Fatalf("edge %d: %s, want %s", i, a[i], b[i])
			}
		}
		t.Fatalf("%d edges, want %d", len(a), len(b))
	}
}

// TestMergeEdges_Refuses edges out of order, twice, a self-loop and id 0,
// writing nothing.
func TestMergeEdges_Refuses(t *testing.T) {
	s := storetest.MustOpen(t)
	if err := s.Update(func(tx *kv.Tx) error {
		for i := range 3 {
			if _, _, err := graph.Ensure(tx, fmt.Sprintf("h%d.test", i), "http", t0); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	e := func(from, to uint64) graph.EdgeMerge {
		return graph.EdgeMerge{From: from, To: to, Weight: 1, First: t0, Last: t0}
	}
	for _, edges := range [][]graph.EdgeMerge{
		{e(1, 3), e(1, 2)}, {e(2, 1), e(1, 3)}, {e(1, 2), e(1, 2)}, {e(2, 2)}, {e(0, 1)}, {e(1, 0)},
	} {
		err := s.Update(func(tx *kv.Tx) error { return graph.MergeEdges(tx, edges) })
		if !errors.Is(err, graph.ErrInconsistent) {
			t.Errorf("%v: got %v, want ErrInconsistent", edges, err)
		}
	}
	s.View(func(tx *kv.Tx) error {
		if k, _ := tx.Cursor(kv.BucketEdges).First(); k != nil || !bytes.Equal(nil, k) {
			t.Errorf("an edge was written: %x", k)
		}
		return nil
	})
}
