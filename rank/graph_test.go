package rank_test

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/rank"
)

func TestBuilder_Graph(t *testing.T) {
	for _, tc := range []struct {
		name string
		ids  []uint64
	}{
		{"dense ids", []uint64{1, 2, 3, 4, 5}},
		{"sparse ids", []uint64{3, 70, 1 << 20, 1 << 40, 1<<40 + 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := tc.ids
			g := buildIDs(t, id, []edge{
				{id[0], id[1], 2}, {id[0], id[3], 1}, {id[3], id[0], 7}, {id[3], id[4], 1},
			})
			if g.Len() != 5 || g.Edges() != 4 {
				t.Fatalf("%d nodes, %d edges, want 5 and 4", g.Len(), g.Edges())
			}
			for i, want := range id {
				if g.ID(i) != want {
					t.Errorf("ID(%d) = %d, want %d", i, g.ID(i), want)
				}
				if got, ok := g.Index(want); !ok || got != i {
					t.Errorf("Index(%d) = %d, %v; want %d", want, got, ok, i)
				}
			}
			for _, absent := range []uint64{0, id[0] + 1, id[4] + 1, 1 << 62} {
				if slices.Contains(id, absent) {
					continue
				}
				if _, ok := g.Index(absent); ok {
					t.Errorf("Index(%d) found a node", absent)
				}
			}
			wantOut := [][]uint32{{1, 3}, nil, nil, {0, 4}, nil}
			wantW := [][]float64{{2, 1}, nil, nil, {7, 1}, nil}
			for i := range g.Len() {
				to, w := g.Out(i)
				if !slices.Equal(to, wantOut[i]) || !slices.Equal(w, wantW[i]) {
					t.Errorf("Out(%d) = %v %v, want %v %v", i, to, w, wantOut[i], wantW[i])
				}
			}
			if got, want := g.InWeights(), []uint64{7, 2, 0, 1, 1}; !slices.Equal(got, want) {
				t.Errorf("InWeights = %v, want %v", got, want)
			}
		})
	}
}

// TestBuilder_EdgesFirst: edges then nodes make the same graph as nodes
// then edges, dense or sparse ids, with nodes that have no edge.
func TestBuilder_EdgesFirst(t *testing.T) {
	for seed := range uint64(10) {
		n := 3 + int(seed)*11
		edges := randomGraph(n, 3*n, seed)
		ids := make([]uint64, n)
		for i := range ids {
			ids[i] = uint64(i + 1)
			if seed%2 == 1 {
				ids[i] = uint64(i+1) * 1_000_003 // sparse: the searched index
			}
		}
		for i := range edges {
			edges[i].from, edges[i].to = ids[edges[i].from-1], ids[edges[i].to-1]
		}
		want := buildIDs(t, ids, edges)
		slices.SortFunc(edges, func(a, b edge) int {
			if a.from != b.from {
				return cmp.Compare(a.from, b.from)
			}
			return cmp.Compare(a.to, b.to)
		})
		b := rank.NewBuilder(0, 0)
		for _, e := range edges {
			if err := b.AddEdge(e.from, e.to, e.w); err != nil {
				t.Fatal(err)
			}
		}
		for _, id := range ids {
			if err := b.AddNode(id); err != nil {
				t.Fatal(err)
			}
		}
		got, err := b.Graph()
		if err != nil {
			t.Fatal(err)
		}
		if got.Len() != want.Len() || got.Edges() != want.Edges() {
			t.Fatalf("seed %d: %d nodes %d edges, want %d %d", seed, got.Len(), got.Edges(), want.Len(), want.Edges())
		}
		for i := range want.Len() {
			gt, gw := got.Out(i)
			wt, ww := want.Out(i)
			if got.ID(i) != want.ID(i) || !slices.Equal(gt, wt) || !slices.Equal(gw, ww) {
				t.Fatalf("seed %d, node %d: %d %v %v, want %d %v %v", seed, i, got.ID(i), gt, gw, want.ID(i), wt, ww)
			}
		}
	}
}

func TestBuilder_Empty(t *testing.T) {
	var b rank.Builder
	g, err := b.Graph()
	if err != nil || g.Len() != 0 || g.Edges() != 0 {
		t.Fatalf("empty graph: %v, %d nodes, %d edges", err, g.Len(), g.Edges())
	}
	ranks, err := rank.Compute(context.Background(), g, rank.Options{})
	if err != nil || len(ranks.PageRank) != 0 || len(ranks.Harmonic) != 0 {
		t.Errorf("ranks of the empty graph: %+v, %v", ranks, err)
	}
	// Nodes and no edge.
	g = build(t, 4, nil)
	ranks, err = rank.Compute(context.Background(), g, rank.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if ranks.PageRank[i] != 0.25 || ranks.Harmonic[i] != 0 {
			t.Errorf("node %d of an edgeless graph: pagerank %v harmonic %v, want 0.25 and 0", i, ranks.PageRank[i], ranks.Harmonic[i])
		}
	}
}

func TestBuilder_Errors(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(b *rank.Builder) error
		want error
	}{
		{"node ids not increasing", func(b *rank.Builder) error {
			b.AddNode(2)
			return b.AddNode(2)
		}, rank.ErrOrder},
		{"node after an edge", func(b *rank.Builder) error {
			b.AddNode(1)
			b.AddNode(2)
			b.AddEdge(1, 2, 1)
			return b.AddNode(3)
		}, rank.ErrOrder},
		{"edges not sorted by source", func(b *rank.Builder) error {
			b.AddNode(1)
			b.AddNode(2)
			b.AddEdge(2, 1, 1)
			return b.AddEdge(1, 2, 1)
		}, rank.ErrOrder},
		{"edges not sorted by target", func(b *rank.Builder) error {
			b.AddNode(1)
			b.AddNode(2)
			b.AddNode(3)
			b.AddEdge(1, 3, 1)
			return b.AddEdge(1, 2, 1)
		}, rank.ErrOrder},
		{"an edge twice", func(b *rank.Builder) error {
			b.AddNode(1)
			b.AddNode(2)
			b.AddEdge(1, 2, 1)
			return b.AddEdge(1, 2, 1)
		}, rank.ErrOrder},
		{"unknown source", func(b *rank.Builder) error {
			b.AddNode(1)
			return b.AddEdge(5, 1, 1)
		}, rank.ErrUnknownNode},
		{"unknown target", func(b *rank.Builder) error {
			b.AddNode(1)
			return b.AddEdge(1, 5, 1)
		}, rank.ErrUnknownNode},
		{"unknown target, sparse ids", func(b *rank.Builder) error {
			b.AddNode(1)
			b.AddNode(1 << 50)
			return b.AddEdge(1, 1<<49, 1)
		}, rank.ErrUnknownNode},
		{"edges first: unknown target", func(b *rank.Builder) error {
			b.AddEdge(1, 2, 1)
			b.AddEdge(2, 3, 1)
			b.AddNode(1)
			b.AddNode(2)
			_, err := b.Graph()
			return err
		}, rank.ErrUnknownNode},
		{"edges first: unknown source", func(b *rank.Builder) error {
			b.AddEdge(1, 2, 1)
			b.AddEdge(3, 2, 1)
			b.AddNode(1)
			b.AddNode(2)
			_, err := b.Graph()
			return err
		}, rank.ErrUnknownNode},
		{"edges first: unknown source past the last node", func(b *rank.Builder) error {
			b.AddEdge(9, 1, 1)
			b.AddNode(1)
			_, err := b.Graph()
			return err
		}, rank.ErrUnknownNode},
		{"edges first: not sorted", func(b *rank.Builder) error {
			b.AddEdge(2, 1, 1)
			return b.AddEdge(1, 2, 1)
		}, rank.ErrOrder},
		{"edges first: an edge after the nodes", func(b *rank.Builder) error {
			b.AddEdge(1, 2, 1)
			b.AddNode(1)
			return b.AddEdge(2, 1, 1)
		}, rank.ErrOrder},
		{"edges first: an id above 2^32", func(b *rank.Builder) error {
			return b.AddEdge(1, 1<<33, 1)
		}, rank.ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := rank.NewBuilder(0, 0)
			if err := tc.do(b); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			// The first error sticks.
			if _, err := b.Graph(); !errors.Is(err, tc.want) {
				t.Errorf("Graph: %v, want %v", err, tc.want)
			}
		})
	}
}

// TestLoad builds the graph of a real store: every node, edges with their
// weights, a node without edges.
func TestLoad(t *testing.T) {
	s := storetest.MustOpen(t)
	at := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	hosts := []string{"a.test", "b.test", "c.test", "lonely.test"}
	ids := map[string]uint64{}
	err := s.Update(func(tx *kv.Tx) error {
		for _, h := range hosts {
			n, _, err := graph.Ensure(tx, h, "https", at)
			if err != nil {
				return err
			}
			ids[h] = n.ID
		}
		for _, e := range []struct {
			from, to string
			w        uint64
		}{{"a.test", "b.test", 3}, {"b.test", "c.test", 1}, {"c.test", "a.test", 2}, {"a.test", "c.test", 1}} {
			if err := graph.AddEdge(tx, ids[e.from], ids[e.to], e.w, at); err != nil {
				return err
			}
		}
		// A second sighting adds to the weight.
		return graph.AddEdge(tx, ids["a.test"], ids["b.test"], 1, at)
	})
	if err != nil {
		t.Fatal(err)
	}
	var g *rank.Graph
	err = s.View(func(tx *kv.Tx) error {
		g, err = rank.Load(context.Background(), tx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if g.Len() != 4 || g.Edges() != 4 {
		t.Fatalf("%d nodes, %d edges; want 4, 4", g.Len(), g.Edges())
	}
	a, _ := g.Index(ids["a.test"])
	to, w := g.Out(a)
	b, _ := g.Index(ids["b.test"])
	c, _ := g.Index(ids["c.test"])
	if !slices.Equal(to, []uint32{uint32(b), uint32(c)}) || !slices.Equal(w, []float64{4, 1}) {
		t.Errorf("a.test's out-edges: %v %v, want [b c] [4 1]", to, w)
	}
	if _, ok := g.Index(ids["lonely.test"]); !ok {
		t.Error("the node without edges is missing")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = s.View(func(tx *kv.Tx) error {
		_, err := rank.Load(ctx, tx)
		return err
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Load with a cancelled context: %v", err)
	}
}
