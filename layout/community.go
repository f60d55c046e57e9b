package layout

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	gg "gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/community"
	"gonum.org/v1/gonum/graph/simple"
)

// seed is the seed of every random choice: of Louvain's node order and of
// the layout's starting positions. Fixed, so that one graph always gets
// the same communities and positions.
const seed = 1996

// Communities returns the community of every node of g, by node index,
// found by Louvain modularity optimisation at resolution 1 (gonum's
// community.Modularize, whose random node order comes from a fixed seed)
// and numbered by size: community 0 is the largest, ties going to the
// community holding the smaller node index. It also returns the
// partition's modularity. It returns the context's error, checked before
// and after the optimisation, which is not interruptible.
func Communities(ctx context.Context, g *Graph) (comm []uint32, q float64, err error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	comm = make([]uint32, g.Len())
	if g.Edges() == 0 {
		// Every node alone: Louvain has nothing to merge.
		for i := range comm {
			comm[i] = uint32(i)
		}
		return comm, 0, nil
	}
	defer func() {
		// gonum panics on what it considers a programming error (a
		// negative weight); make that an error, never a crash.
		if r := recover(); r != nil {
			comm, q, err = nil, 0, fmt.Errorf("layout: communities: %v", r)
		}
	}()
	ug := undirected{g}
	red := community.Modularize(ug, 1, rand.NewPCG(seed, seed))
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	groups := red.Communities()
	for _, c := range groups {
		slices.SortFunc(c, func(a, b gg.Node) int { return cmp.Compare(a.ID(), b.ID()) })
	}
	groups = slices.DeleteFunc(groups, func(c []gg.Node) bool { return len(c) == 0 })
	slices.SortFunc(groups, func(a, b []gg.Node) int {
		if len(a) != len(b) {
			return cmp.Compare(len(b), len(a))
		}
		return cmp.Compare(a[0].ID(), b[0].ID())
	})
	for k, c := range groups {
		for _, n := range c {
			comm[n.ID()] = uint32(k)
		}
	}
	return comm, Modularity(g, comm), nil
}

// Modularity returns the modularity of the partition comm of g (weighted,
// resolution 1): the fraction of the edge weight inside communities less
// the fraction expected were the edges placed at random with the same
// weighted degrees. It is what networkx.community.modularity computes.
func Modularity(g *Graph, comm []uint32) float64 {
	var m2 float64 // twice the total weight
	k := 0
	for _, c := range comm {
		k = max(k, int(c)+1)
	}
	in := make([]float64, k)  // weight inside each community, counted twice
	tot := make([]float64, k) // summed weighted degree of each community
	for i := range g.Len() {
		adj, w := g.Neighbors(i)
		for j, v := range adj {
			m2 += w[j]
			tot[comm[i]] += w[j]
			if comm[v] == comm[i] {
				in[comm[i]] += w[j]
			}
		}
	}
	if m2 == 0 {
		return 0
	}
	var q float64
	for c := range k {
		q += in[c]/m2 - (tot[c]/m2)*(tot[c]/m2)
	}
	return q
}

// undirected is g as gonum's graph.WeightedUndirected: node ids are node
// indices. It reads g's rows in place, without copying the graph into
// gonum's map-based types.
type undirected struct{ g *Graph }

func (u undirected) Node(id int64) gg.Node {
	if id < 0 || id >= int64(u.g.Len()) {
		return nil
	}
	return simple.Node(id)
}

func (u undirected) Nodes() gg.Nodes { return &rangeNodes{n: u.g.Len(), i: -1} }

func (u undirected) From(id int64) gg.Nodes {
	if id < 0 || id >= int64(u.g.Len()) {
		return &sliceNodes{i: -1}
	}
	adj, _ := u.g.Neighbors(int(id))
	return &sliceNodes{adj: adj, i: -1}
}

func (u undirected) HasEdgeBetween(x, y int64) bool { _, ok := u.Weight(x, y); return ok && x != y }

func (u undirected) Edge(x, y int64) gg.Edge { return u.WeightedEdge(x, y) }

func (u undirected) EdgeBetween(x, y int64) gg.Edge { return u.WeightedEdge(x, y) }

func (u undirected) WeightedEdgeBetween(x, y int64) gg.WeightedEdge { return u.WeightedEdge(x, y) }

func (u undirected) WeightedEdge(x, y int64) gg.WeightedEdge {
	w, ok := u.Weight(x, y)
	if !ok || x == y {
		return nil
	}
	return simple.WeightedEdge{F: simple.Node(x), T: simple.Node(y), W: w}
}

// Weight returns the weight of {x, y}; a node's weight to itself is 0
// (self-loops are dropped), as gonum's simple graphs say.
func (u undirected) Weight(x, y int64) (float64, bool) {
	n := int64(u.g.Len())
	if x < 0 || y < 0 || x >= n || y >= n {
		return 0, false
	}
	if x == y {
		return 0, true
	}
	adj, w := u.g.Neighbors(int(x))
	if k, ok := slices.BinarySearch(adj, uint32(y)); ok {
		return w[k], true
	}
	return 0, false
}

// rangeNodes iterates over the nodes 0..n-1.
type rangeNodes struct{ n, i int }

func (r *rangeNodes) Next() bool {
	if r.i+1 >= r.n {
		r.i = r.n
		return false
	}
	r.i++
	return true
}
func (r *rangeNodes) Len() int { return max(r.n-r.i-1, 0) }
func (r *rangeNodes) Reset()   { r.i = -1 }
func (r *rangeNodes) Node() gg.Node {
	if r.i < 0 || r.i >= r.n {
		return nil
	}
	return simple.Node(r.i)
}

// sliceNodes iterates over a row of neighbours.
type sliceNodes struct {
	adj []uint32
	i   int
}

func (s *sliceNodes) Next() bool {
	if s.i+1 >= len(s.adj) {
		s.i = len(s.adj)
		return false
	}
	s.i++
	return true
}
func (s *sliceNodes) Len() int { return max(len(s.adj)-s.i-1, 0) }
func (s *sliceNodes) Reset()   { s.i = -1 }
func (s *sliceNodes) Node() gg.Node {
	if s.i < 0 || s.i >= len(s.adj) {
		return nil
	}
	return simple.Node(s.adj[s.i])
}
