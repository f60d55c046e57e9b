package graph_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// TestAddEdges_SameAsAddEdgeFacts writes the same pages' links through
// AddEdges and through AddEdgeFacts edge by edge, over existing edges and
// new ones, facts and none, times before 1970 and far ahead, and compares
// every byte of the edges and the counters.
func TestAddEdges_SameAsAddEdgeFacts(t *testing.T) {
	batch, single := storetest.MustOpen(t), storetest.MustOpen(t)
	r := rand.New(rand.NewPCG(1, 2))
	times := []time.Time{t0, t0.Add(time.Nanosecond), time.Unix(0, 1).UTC(), time.Unix(-5, 0).UTC(), time.Unix(-1<<40, 7).UTC(), time.Unix(1<<36, 0).UTC()}
	weights := []uint64{1, 2, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1}
	for _, s := range []*kv.Store{batch, single} {
		if err := s.Update(func(tx *kv.Tx) error {
			for i := range 60 {
				if _, _, err := graph.Ensure(tx, fmt.Sprintf("h%d.test", i), "http", t0); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for round := 0; round < 40; round++ {
		from := uint64(r.IntN(20) + 1)
		now := times[r.IntN(len(times))]
		var adds []graph.EdgeAdd
		seen := map[uint64]bool{}
		for range r.IntN(30) {
			to := uint64(r.IntN(60) + 1)
			if seen[to] || to == from {
				continue
			}
			seen[to] = true
			w := weights[r.IntN(len(weights))]
			a := graph.EdgeAdd{To: to, Weight: w}
			if r.IntN(3) == 0 {
				a.Nofollow, a.Redirect = w/2, w/3
			}
			adds = append(adds, a)
		}
		if err := single.Update(func(tx *kv.Tx) error {
			for _, a := range adds {
				if err := graph.AddEdgeFacts(tx, from, a.To, a.Weight, a.Nofollow, a.Redirect, now); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := batch.Update(func(tx *kv.Tx) error { return graph.AddEdges(tx, from, adds, now) }); err != nil {
			t.Fatal(err)
		}
	}
	dump := func(s *kv.Store) (out [][2][]byte, c graph.Counts) {
		s.View(func(tx *kv.Tx) error {
			cur := tx.Cursor(kv.BucketEdges)
			for k, v := cur.First(); k != nil; k, v = cur.Next() {
				out = append(out, [2][]byte{bytes.Clone(k), bytes.Clone(v)})
			}
			c = graph.GetCounts(tx)
			return nil
		})
		return out, c
	}
	a, ca := dump(batch)
	b, cb := dump(single)
	if ca != cb || ca.Edges == 0 {
		t.Fatalf("counts: AddEdges %+v, AddEdgeFacts %+v", ca, cb)
	}
	if len(a) != len(b) {
		t.Fatalf("%d edges, want %d", len(a), len(b))
	}
	for i := range a {
		if !bytes.Equal(a[i][0], b[i][0]) || !bytes.Equal(a[i][1], b[i][1]) {
			t.Fatalf("edge %d: %x=%x, want %x=%x", i, a[i][0], a[i][1], b[i][0], b[i][1])
		}
	}
}

func TestAddEdges_BadFacts(t *testing.T) {
	s := storetest.MustOpen(t)
	err := s.Update(func(tx *kv.Tx) error {
		return graph.AddEdges(tx, 1, []graph.EdgeAdd{{To: 2, Weight: 1}, {To: 3, Weight: 1, Nofollow: 2}}, t0)
	})
	if !errors.Is(err, graph.ErrBadFacts) {
		t.Fatalf("got %v, want ErrBadFacts", err)
	}
}
