package graph_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// TestAppendEdges: appended edges read back as written, with the edge and
// weight counters grown by them; an edge out of order, at or before the
// bucket's last, or with facts above its weight is refused.
func TestAppendEdges(t *testing.T) {
	s, err := kv.Open(filepath.Join(t.TempDir(), "s.bolt"), kv.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	in := []graph.Edge{
		{From: 1, To: 2, Weight: 3, FirstSeen: t0, LastSeen: t0},
		{From: 1, To: 7, Weight: 5, Nofollow: 2, Redirect: 1, Frame: 4, FirstSeen: t0, LastSeen: t0.Add(time.Hour)},
		{From: 4, To: 1, Weight: 1, FirstSeen: t0, LastSeen: t0},
	}
	if err := s.Update(func(tx *kv.Tx) error { return graph.AppendEdges(tx, in) }); err != nil {
		t.Fatal(err)
	}
	err = s.View(func(tx *kv.Tx) error {
		for _, want := range in {
			got, ok, err := graph.GetEdge(tx, want.From, want.To)
			if err != nil || !ok || got != want {
				t.Errorf("edge %d→%d: got %+v (%v %v), want %+v", want.From, want.To, got, ok, err, want)
			}
		}
		if c := graph.GetCounts(tx); c.Edges != 3 || c.Weight != 9 {
			t.Errorf("counts %+v, want 3 edges of weight 9", c)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]graph.Edge{
		{{From: 4, To: 1, Weight: 1}},                              // the bucket's last
		{{From: 5, To: 2, Weight: 1}, {From: 5, To: 1, Weight: 1}}, // out of order
		{{From: 6, To: 0, Weight: 1}},                              // no node
		{{From: 7, To: 1, Weight: 1, Frame: 2}},                    // a fact above the weight
	} {
		err := s.Update(func(tx *kv.Tx) error { return graph.AppendEdges(tx, bad) })
		if !errors.Is(err, graph.ErrInconsistent) && !errors.Is(err, graph.ErrBadFacts) {
			t.Errorf("%+v: got %v, want ErrInconsistent or ErrBadFacts", bad, err)
		}
	}
}

// TestEdgeAppender: one appender across transactions, one of them
// refused and rolled back, each reusing the buffer the last one encoded
// in: every committed edge reads back as written (the buffer is reused
// only once bbolt has copied the last transaction's values into pages).
func TestEdgeAppender(t *testing.T) {
	s, err := kv.Open(filepath.Join(t.TempDir(), "s.bolt"), kv.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var a graph.EdgeAppender
	var want []graph.Edge
	for b := range 6 {
		var es []graph.Edge
		for j := range 500 - 70*b { // smaller each time: the buffer is reused, not grown
			es = append(es, graph.Edge{From: uint64(b + 1), To: uint64(j + 1), Weight: uint64(b*1000 + j + 1), FirstSeen: t0, LastSeen: t0.Add(time.Duration(j) * time.Second)})
		}
		if b == 3 { // refused after its puts, rolled back: an edge out of order at its end
			bad := append(es[:len(es):len(es)], graph.Edge{From: 1, To: 1, Weight: 1})
			if err := s.Update(func(tx *kv.Tx) error { return a.Append(tx, bad) }); !errors.Is(err, graph.ErrInconsistent) {
				t.Fatalf("batch out of order: got %v, want ErrInconsistent", err)
			}
		}
		if err := s.Update(func(tx *kv.Tx) error { return a.Append(tx, es) }); err != nil {
			t.Fatal(err)
		}
		want = append(want, es...)
	}
	err = s.View(func(tx *kv.Tx) error {
		var got []graph.Edge
		err := graph.ForEachEdge(tx, func(e *graph.Edge) error { got = append(got, *e); return nil })
		if err != nil {
			return err
		}
		if len(got) != len(want) {
			t.Fatalf("%d edges, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("edge %d: got %+v, want %+v", i, got[i], want[i])
			}
		}
		if c := graph.GetCounts(tx); c.Edges != uint64(len(want)) {
			t.Errorf("counts %+v, want %d edges", c, len(want))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// BenchmarkAppendEdges appends 1,000,000 edges in key order to a new
// store's edges bucket, in transactions of each size: bbolt grows the
// last leaf in memory until a commit splits it, so the size matters.
func BenchmarkAppendEdges(b *testing.B) {
	for _, batch := range []int{1000, 2048, 10_000, 50_000} {
		b.Run(fmt.Sprint(batch), func(b *testing.B) {
			t0 := time.Unix(1e9, 0)
			const total = 1_000_000
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s, err := kv.Open(filepath.Join(b.TempDir(), "x.bolt"), kv.Options{NoSync: true})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for lo := 0; lo < total; lo += batch {
					es := make([]graph.Edge, 0, batch)
					for j := lo; j < min(lo+batch, total); j++ {
						es = append(es, graph.Edge{From: uint64(1 + j/10), To: uint64(1 + j%10), Weight: 1, FirstSeen: t0, LastSeen: t0})
					}
					if err := s.Update(func(tx *kv.Tx) error { return graph.AppendEdges(tx, es) }); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				s.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
		})
	}
}
