package layout

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Graph is an undirected graph with weighted edges, held in memory as
// compressed sparse rows: each edge {u, v} is listed under u and under v,
// neighbours ascending. The weight of {u, v} is the sum of the weights of
// the directed edges u→v and v→u it was built from; self-loops are
// dropped (they neither move a node nor change which community gains it
// most). Nodes are numbered 0..Len()-1 in the order of their ids.
type Graph struct {
	ids []uint64  // ids[i] is node i's id, ascending
	off []uint32  // node i's neighbours are adj[off[i]:off[i+1]]
	adj []uint32  // neighbours, ascending within a node
	w   []float64 // weight of each adj entry
}

// Len returns the number of nodes.
func (g *Graph) Len() int { return len(g.ids) }

// Edges returns the number of undirected edges.
func (g *Graph) Edges() int { return len(g.adj) / 2 }

// ID returns the id of node i.
func (g *Graph) ID(i int) uint64 { return g.ids[i] }

// Index returns the node whose id is id, and whether there is one.
func (g *Graph) Index(id uint64) (int, bool) { return slices.BinarySearch(g.ids, id) }

// Neighbors returns node i's neighbours, ascending, and the weights of
// the edges to them. The slices belong to g and must not be changed.
func (g *Graph) Neighbors(i int) ([]uint32, []float64) {
	a, b := g.off[i], g.off[i+1]
	return g.adj[a:b:b], g.w[a:b:b]
}

// Builder builds a Graph from nodes in increasing id order and directed
// edges between them in any order. The zero value is ready to use.
type Builder struct {
	index idIndex // the nodes' ids
	pairs []pair
	err   error
}

// idIndex holds ascending ids and finds the index of one: by an array
// indexed by id while the ids are dense enough for it to cost at most 16
// bytes a node (a store hands ids out from 1 in the order it finds
// hosts), else, for sparse ids (a merge of shards), by binary search.
type idIndex struct {
	ids    []uint64
	table  []uint32 // table[id] is the index+1 of id, 0 for none
	sparse bool     // no table: search
}

// add appends id, larger than every id before it.
func (x *idIndex) add(id uint64) {
	x.ids = append(x.ids, id)
	if x.sparse {
		return
	}
	if id >= 4*uint64(len(x.ids))+1024 {
		x.sparse, x.table = true, nil
		return
	}
	for uint64(len(x.table)) <= id {
		x.table = append(x.table, 0)
	}
	x.table[id] = uint32(len(x.ids))
}

// find returns the index of id, and whether it is there.
func (x idIndex) find(id uint64) (int, bool) {
	if x.sparse {
		return slices.BinarySearch(x.ids, id)
	}
	if id < uint64(len(x.table)) && x.table[id] != 0 {
		return int(x.table[id]) - 1, true
	}
	return 0, false
}

// pair is an undirected edge, u < v, and its weight.
type pair struct {
	u, v uint32
	w    float64
}

// NewBuilder returns a Builder with room for nodes nodes and edges
// edges (hints).
func NewBuilder(nodes, edges int) *Builder {
	return &Builder{index: idIndex{ids: make([]uint64, 0, max(nodes, 0))}, pairs: make([]pair, 0, max(edges, 0))}
}

// AddNode adds the node id. Ids must come in increasing order, before the
// edges that name them. It returns ErrOrder or ErrTooLarge (and the first
// error again for every later call).
func (b *Builder) AddNode(id uint64) error {
	switch {
	case b.err != nil:
	case len(b.index.ids) > 0 && id <= b.index.ids[len(b.index.ids)-1]:
		b.err = fmt.Errorf("%w: node %d after node %d", ErrOrder, id, b.index.ids[len(b.index.ids)-1])
	case uint64(len(b.index.ids)) >= math.MaxUint32:
		b.err = fmt.Errorf("%w: more than %d nodes", ErrTooLarge, uint64(math.MaxUint32))
	default:
		b.index.add(id)
	}
	return b.err
}

// AddEdge adds the directed edge from → to of weight w, which counts
// towards the undirected edge {from, to}. It returns ErrUnknownNode or
// ErrTooLarge (and the first error again for every later call).
func (b *Builder) AddEdge(from, to uint64, w float64) error {
	if b.err != nil {
		return b.err
	}
	u, ok1 := b.index.find(from)
	v, ok2 := b.index.find(to)
	switch {
	case !ok1 || !ok2:
		b.err = fmt.Errorf("%w: %d → %d", ErrUnknownNode, from, to)
		return b.err
	case u == v:
		return nil
	case uint64(len(b.pairs)) >= math.MaxUint32/2:
		b.err = fmt.Errorf("%w: more than %d edges", ErrTooLarge, math.MaxUint32/2)
		return b.err
	}
	if u > v {
		u, v = v, u
	}
	b.pairs = append(b.pairs, pair{uint32(u), uint32(v), w})
	return nil
}

// AddIndexEdge is AddEdge with node indices (positions in id order)
// instead of ids, for callers that already know them.
func (b *Builder) AddIndexEdge(u, v int, w float64) error {
	if b.err != nil {
		return b.err
	}
	if n := len(b.index.ids); u < 0 || v < 0 || u >= n || v >= n {
		b.err = fmt.Errorf("%w: node index %d or %d", ErrUnknownNode, u, v)
		return b.err
	}
	if u == v {
		return nil
	}
	if u > v {
		u, v = v, u
	}
	b.pairs = append(b.pairs, pair{uint32(u), uint32(v), w})
	return nil
}

// Graph returns the graph built, merging the edges between the same two
// nodes; the Builder must not be used again. It returns the first error
// of AddNode or AddEdge.
func (b *Builder) Graph() (*Graph, error) {
	if b.err != nil {
		return nil, b.err
	}
	p := mergePairs(b.pairs)
	b.pairs = nil
	off, adj, w := csr(len(b.index.ids), p)
	return &Graph{ids: b.index.ids, off: off, adj: adj, w: w}, nil
}

// csr returns the rows of the undirected graph of n nodes whose edges are
// p (u < v, sorted by (u, v), no pair twice): each edge under both ends.
func csr(n int, p []pair) (off, adj []uint32, w []float64) {
	m := len(p)
	off, adj, w = make([]uint32, n+1), make([]uint32, 2*m), make([]float64, 2*m)
	for _, e := range p {
		off[e.u+1]++
		off[e.v+1]++
	}
	for i := range n {
		off[i+1] += off[i]
	}
	fill := make([]uint32, n)
	copy(fill, off[:n])
	for _, e := range p {
		adj[fill[e.u]], w[fill[e.u]] = e.v, e.w
		fill[e.u]++
		adj[fill[e.v]], w[fill[e.v]] = e.u, e.w
		fill[e.v]++
	}
	// Each row is ascending: the pairs come by (u, v), so node x first
	// gets its neighbours u < x in increasing u, then, at its own turn,
	// its neighbours v > x in increasing v.
	return off, adj, w
}

// mergePairs sorts p by (u, v) and sums the weights of equal pairs, in
// place.
func mergePairs(p []pair) []pair {
	sortPairs(p)
	m := 0
	for _, e := range p {
		if m > 0 && p[m-1].u == e.u && p[m-1].v == e.v {
			p[m-1].w += e.w
			continue
		}
		p[m] = e
		m++
	}
	return p[:m]
}

// sortPairs sorts p by (u, v), equal pairs in their order: a radix sort
// of the key u·2^b+v (b the bits of the largest v), 11 bits a pass, for
// a large p: ten million pairs in well under a second, where a
// comparison sort took seconds.
func sortPairs(p []pair) {
	if len(p) < 1<<12 {
		slices.SortStableFunc(p, func(a, c pair) int {
			if r := cmp.Compare(a.u, c.u); r != 0 {
				return r
			}
			return cmp.Compare(a.v, c.v)
		})
		return
	}
	var maxU, maxV uint32
	for _, e := range p {
		maxU, maxV = max(maxU, e.u), max(maxV, e.v)
	}
	bv := uint(bits.Len32(maxV))
	total := bv + uint(bits.Len32(maxU))
	const digit = 11
	const mask = 1<<digit - 1
	src, dst := p, make([]pair, len(p))
	for shift := uint(0); shift < total; shift += digit {
		var count [1 << digit]int
		for _, e := range src {
			count[(uint64(e.u)<<bv|uint64(e.v))>>shift&mask]++
		}
		if slices.Contains(count[:], len(src)) {
			continue // one digit for every pair: nothing moves
		}
		at := 0
		for d, c := range count {
			count[d] = at
			at += c
		}
		for _, e := range src {
			d := (uint64(e.u)<<bv | uint64(e.v)) >> shift & mask
			dst[count[d]] = e
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &p[0] {
		copy(p, src)
	}
}

// MemoryNeed estimates the most memory laying out a graph of nodes and
// edges takes (Louvain's levels, ForceAtlas2's positions and forces, the
// garbage collector's room), so that a caller can tell before it starts
// whether the machine has it. It errs high: measured as the peak RSS an
// export gains with a layout computed in memory (weaver export --csv,
// with and without --no-layout), 100,000 hosts and 1M edges took 102 MB
// and 250,000 hosts and 3M edges 442 MB, where it says 200 and 581 MB.
func MemoryNeed(nodes, edges uint64) uint64 { return 500*nodes + 150*edges }
