package layout_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weaver-crawler/weaver/layout"
)

// nmi is the normalised mutual information of two partitions (1: the
// same partition up to names).
func nmi(a, b []uint32) float64 {
	n := float64(len(a))
	joint := map[[2]uint32]float64{}
	pa, pb := map[uint32]float64{}, map[uint32]float64{}
	for i := range a {
		joint[[2]uint32{a[i], b[i]}]++
		pa[a[i]]++
		pb[b[i]]++
	}
	var mi, ha, hb float64
	for k, c := range joint {
		mi += c / n * math.Log(c*n/(pa[k[0]]*pb[k[1]]))
	}
	for _, c := range pa {
		ha -= c / n * math.Log(c/n)
	}
	for _, c := range pb {
		hb -= c / n * math.Log(c/n)
	}
	if ha+hb == 0 {
		return 1
	}
	return 2 * mi / (ha + hb)
}

func TestLayout_PlantedPartition(t *testing.T) {
	n, edges, truth := planted(8, 40, 0.3, 0.01, 7)
	g := build(t, n, edges)
	l, err := layout.Compute(context.Background(), g, layout.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := nmi(l.Community, truth); got < 0.99 {
		t.Errorf("NMI with the planted partition = %.3f, want ≥ 0.99", got)
	}
	c := layout.Compactness(l.Community, l.X, l.Y)
	t.Logf("%d nodes, %d edges: modularity %.4f, NMI %.4f, compactness %.3f", n, g.Edges(), l.Modularity, nmi(l.Community, truth), c)
	if c > 0.4 {
		t.Errorf("compactness %.3f, want ≤ 0.4 on a planted partition", c)
	}
	// Largest community first.
	size := map[uint32]int{}
	for _, c := range l.Community {
		size[c]++
	}
	for k := uint32(1); k < uint32(len(size)); k++ {
		if size[k] > size[k-1] {
			t.Errorf("community %d has %d nodes, more than community %d (%d)", k, size[k], k-1, size[k-1])
		}
	}
}

func TestLayout_Deterministic(t *testing.T) {
	n, edges, _ := planted(5, 30, 0.3, 0.02, 3)
	a, err := layout.Compute(context.Background(), build(t, n, edges), layout.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The same graph with its edges in another order and split weights.
	rev := slices.Clone(edges)
	slices.Reverse(rev)
	var split []edge
	for _, e := range rev {
		split = append(split, edge{e.to, e.from, e.w / 2}, edge{e.from, e.to, e.w / 2})
	}
	b, err := layout.Compute(context.Background(), build(t, n, split), layout.Options{Force: layout.ForceOptions{Workers: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Community, b.Community) || !slices.Equal(a.X, b.X) || !slices.Equal(a.Y, b.Y) {
		t.Error("two runs on the same graph differ")
	}
}

// TestPositions_WorkersAgree: the positions do not depend on the workers,
// on a graph large enough that the quadtree is built in parallel too.
func TestPositions_WorkersAgree(t *testing.T) {
	const n = 20_000
	rnd := rand.New(rand.NewPCG(5, 5))
	var edges []edge
	truth := make([]uint32, n)
	for i := range n {
		truth[i] = uint32(i / 500)
		edges = append(edges, edge{i, (i + 1) % n, 1}, edge{i, i/500*500 + rnd.IntN(500), 2}, edge{i, rnd.IntN(n), 1})
	}
	g := build(t, n, edges)
	var got [][]float64
	for _, w := range []int{1, 4} {
		x, y, err := layout.Positions(context.Background(), g, truth, layout.ForceOptions{Iterations: 5, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, x, y)
	}
	if !slices.Equal(got[0], got[2]) || !slices.Equal(got[1], got[3]) {
		t.Error("1 worker and 4 give other positions")
	}
}

func TestLayout_Small(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		edges []edge
	}{
		{"empty", 0, nil},
		{"one node", 1, nil},
		{"two isolated", 2, nil},
		{"self-loop only", 2, []edge{{0, 0, 3}}},
		{"one edge", 2, []edge{{0, 1, 1}, {1, 0, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := layout.Compute(context.Background(), build(t, tc.n, tc.edges), layout.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Community) != tc.n || len(l.X) != tc.n || len(l.Y) != tc.n {
				t.Fatalf("got %d communities, %d x, %d y, want %d", len(l.Community), len(l.X), len(l.Y), tc.n)
			}
			for i := range tc.n {
				if math.IsNaN(l.X[i]) || math.IsNaN(l.Y[i]) || math.IsInf(l.X[i], 0) || math.IsInf(l.Y[i], 0) {
					t.Errorf("node %d at (%v, %v)", i, l.X[i], l.Y[i])
				}
			}
		})
	}
}

func TestLayout_Canceled(t *testing.T) {
	n, edges, _ := planted(4, 30, 0.3, 0.02, 3)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := layout.Compute(ctx, build(t, n, edges), layout.Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func TestBuilder_Errors(t *testing.T) {
	b := layout.NewBuilder(2, 1)
	if err := b.AddNode(2); err != nil {
		t.Fatal(err)
	}
	if err := b.AddNode(1); !errors.Is(err, layout.ErrOrder) {
		t.Errorf("AddNode out of order: %v, want ErrOrder", err)
	}
	b = layout.NewBuilder(2, 1)
	_ = b.AddNode(1)
	if err := b.AddEdge(1, 9, 1); !errors.Is(err, layout.ErrUnknownNode) {
		t.Errorf("AddEdge to an unknown node: %v, want ErrUnknownNode", err)
	}
	if _, err := b.Graph(); !errors.Is(err, layout.ErrUnknownNode) {
		t.Errorf("Graph after a bad edge: %v, want ErrUnknownNode", err)
	}
}

// TestLayout_UK1996 runs on the crawled part of the UK-1996 host graph
// (5,060 hosts): modularity at least 0.95 of networkx's Louvain (best
// of three seeds), and communities kept together (compactness ≤ 0.55;
// networkx's forceatlas2 gives 0.52–0.55).
func TestLayout_UK1996(t *testing.T) {
	n, edges := ukEdges(t, "uk1996-crawled-subgraph.tsv")
	g := build(t, n, edges)
	comm, q, err := layout.Communities(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("UK-1996 crawled subgraph: %d hosts, %d undirected edges: %d communities, modularity %.4f", n, g.Edges(), slices.Max(comm)+1, q)
	if raceOn {
		t.Log("the layout's compactness is checked without -race (ForceAtlas2 is ten times slower under it)")
	} else {
		x, y, err := layout.Positions(context.Background(), g, comm, layout.ForceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := layout.Compactness(comm, x, y)
		t.Logf("compactness %.3f", c)
		if c > 0.55 {
			t.Errorf("compactness %.3f, want ≤ 0.55", c)
		}
	}
	nx := nxLouvain(t, n, edges, 3)
	t.Logf("modularity: weaver %.4f, networkx %.4f (ratio %.3f)", q, nx, q/nx)
	if q < 0.95*nx {
		t.Errorf("modularity %.4f, below 0.95 × networkx's %.4f", q, nx)
	}
}
