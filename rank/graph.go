package rank

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// Graph is a directed graph with weighted edges, held compactly in memory
// (compressed sparse rows) for the rank algorithms. Nodes are numbered
// 0..Len()-1 in the order of their ids; ID and Index translate. A Graph is
// read-only once built and safe for concurrent readers.
type Graph struct {
	ids []uint64  // ids[i] is node i's id, ascending
	off []uint32  // node i's out-edges are to[off[i]:off[i+1]], len Len()+1
	to  []uint32  // target node of each edge, by source then target
	w   []float64 // weight of each edge
	pos []uint32  // pos[id] = 1 + the node of id (0: none); nil when ids are sparse
}

// Len returns the number of nodes.
func (g *Graph) Len() int { return len(g.ids) }

// Edges returns the number of edges.
func (g *Graph) Edges() int { return len(g.to) }

// ID returns the id of node i.
func (g *Graph) ID(i int) uint64 { return g.ids[i] }

// Index returns the node whose id is id, and whether there is one.
func (g *Graph) Index(id uint64) (int, bool) {
	if g.pos != nil {
		if id < uint64(len(g.pos)) && g.pos[id] != 0 {
			return int(g.pos[id] - 1), true
		}
		return 0, false
	}
	return slices.BinarySearch(g.ids, id)
}

// Out returns the targets of node i's out-edges, ascending, and their
// weights. The slices belong to g and must not be changed.
func (g *Graph) Out(i int) (to []uint32, w []float64) {
	a, b := g.off[i], g.off[i+1]
	return g.to[a:b:b], g.w[a:b:b]
}

// InWeights returns, for every node, the sum of the weights of the edges
// pointing at it.
func (g *Graph) InWeights() []uint64 {
	in := make([]uint64, g.Len())
	for e, v := range g.to {
		in[v] += uint64(g.w[e])
	}
	return in
}

// Builder builds a Graph from nodes in id order and edges in (from, to)
// order, the order of a store's buckets and of the export view: either
// every node then every edge, or every edge then every node (a walk that
// reads the edges first need not read the nodes twice). The zero value is
// ready to use; NewBuilder reserves room.
type Builder struct {
	g      Graph
	phase  int       // what has been added so far: see the phases below
	from   int       // nodes first: node of the last edge
	last   int64     // nodes first: target node of the last edge, -1 before the first edge of from
	lastID [2]uint64 // edges first: the last edge's ids
	rows   []source  // edges first: the sources, in order, with their first edge
	err    error     // the first error, returned by every later call
	hint   int       // edges expected, for the first allocation
	maxID  uint64    // largest node id so far
}

// The phases of a Builder.
const (
	phaseStart      = iota
	phaseNodes      // nodes added, no edge yet
	phaseNodesEdges // edges added after the nodes
	phaseEdges      // edges added, no node yet
	phaseEdgesNodes // nodes added after the edges
)

// source is a node that has out-edges, while edges come before nodes: its
// id and where its edges start.
type source struct {
	id    uint64
	start uint32
}

// NewBuilder returns a Builder with room for nodes nodes and edges edges
// (hints: more or fewer may be added).
func NewBuilder(nodes, edges int) *Builder {
	b := &Builder{hint: max(edges, 0)}
	b.g.ids = make([]uint64, 0, max(nodes, 0))
	return b
}

// maxIndex is the largest count of nodes or edges a Graph numbers.
const maxIndex = math.MaxUint32

// AddNode adds the node id. Ids must come in increasing order, all before
// the first edge or all after the last. It returns ErrOrder or
// ErrTooLarge (and the first error again for every later call).
func (b *Builder) AddNode(id uint64) error {
	switch {
	case b.err != nil:
		return b.err
	case b.phase == phaseNodesEdges:
		b.err = fmt.Errorf("%w: node %d after the edges", ErrOrder, id)
	case len(b.g.ids) > 0 && id <= b.maxID:
		b.err = fmt.Errorf("%w: node %d after node %d", ErrOrder, id, b.maxID)
	case uint64(len(b.g.ids)) >= maxIndex:
		b.err = fmt.Errorf("%w: more than %d nodes", ErrTooLarge, uint64(maxIndex))
	default:
		if b.phase == phaseStart {
			b.phase = phaseNodes
		} else if b.phase == phaseEdges {
			b.phase = phaseEdgesNodes
		}
		b.g.ids = append(b.g.ids, id)
		b.maxID = id
		return nil
	}
	return b.err
}

// AddEdge adds the edge from → to of weight w. Edges must come in (from,
// to) order, each pair once, and name nodes that are added before them or,
// when the edges come first, after them (ids above 2^32 must come first).
// A weight of 0 is an edge that carries no PageRank but still a path. It
// returns ErrUnknownNode, ErrOrder or ErrTooLarge (and the first error
// again for every later call); with the edges first, Graph reports unknown
// nodes.
func (b *Builder) AddEdge(from, to, w uint64) error {
	if b.err != nil {
		return b.err
	}
	switch b.phase {
	case phaseStart:
		b.phase = phaseEdges
		b.g.to = make([]uint32, 0, b.hint)
		b.g.w = make([]float64, 0, b.hint)
	case phaseNodes:
		b.phase = phaseNodesEdges
		b.index()
		b.g.off = make([]uint32, 1, len(b.g.ids)+1)
		b.g.to = make([]uint32, 0, b.hint)
		b.g.w = make([]float64, 0, b.hint)
		b.last = -1
	case phaseEdgesNodes:
		b.err = fmt.Errorf("%w: edge %d → %d after the nodes", ErrOrder, from, to)
		return b.err
	}
	if uint64(len(b.g.to)) >= maxIndex {
		b.err = fmt.Errorf("%w: more than %d edges", ErrTooLarge, uint64(maxIndex))
		return b.err
	}
	if b.phase == phaseEdges {
		return b.addEdgeFirst(from, to, w)
	}
	f, ok := b.g.Index(from)
	if !ok {
		b.err = fmt.Errorf("%w: edge %d → %d: no node %d", ErrUnknownNode, from, to, from)
		return b.err
	}
	t, ok := b.g.Index(to)
	if !ok {
		b.err = fmt.Errorf("%w: edge %d → %d: no node %d", ErrUnknownNode, from, to, to)
		return b.err
	}
	if f < b.from || (f == b.from && int64(t) <= b.last) {
		b.err = fmt.Errorf("%w: edge %d → %d", ErrOrder, from, to)
		return b.err
	}
	// off[i] for every node up to f is where its edges start.
	for len(b.g.off) <= f {
		b.g.off = append(b.g.off, uint32(len(b.g.to)))
	}
	b.from, b.last = f, int64(t)
	b.g.to = append(b.g.to, uint32(t))
	b.g.w = append(b.g.w, float64(w))
	return nil
}

// addEdgeFirst adds an edge before the nodes: targets are kept as ids
// until Graph knows the nodes.
func (b *Builder) addEdgeFirst(from, to, w uint64) error {
	if n := len(b.rows); n > 0 && (from < b.lastID[0] || from == b.lastID[0] && to <= b.lastID[1]) {
		b.err = fmt.Errorf("%w: edge %d → %d", ErrOrder, from, to)
		return b.err
	}
	if to > math.MaxUint32 {
		b.err = fmt.Errorf("%w: edge %d → %d: ids above 2^32 need the nodes before the edges", ErrTooLarge, from, to)
		return b.err
	}
	if len(b.rows) == 0 || from != b.lastID[0] {
		b.rows = append(b.rows, source{id: from, start: uint32(len(b.g.to))})
	}
	b.lastID = [2]uint64{from, to}
	b.g.to = append(b.g.to, uint32(to))
	b.g.w = append(b.g.w, float64(w))
	return nil
}

// index builds the id → node table once the nodes are known: a dense
// table when ids are dense enough (4 bytes per id up to the largest),
// else Index searches the sorted ids.
func (b *Builder) index() {
	n := uint64(len(b.g.ids))
	if n == 0 || b.maxID > 4*n+1024 {
		return
	}
	b.g.pos = make([]uint32, b.maxID+1)
	for i, id := range b.g.ids {
		b.g.pos[id] = uint32(i + 1)
	}
}

// Graph returns the graph built, or the first error of AddNode or AddEdge,
// or, when the edges came first, ErrUnknownNode for an edge whose node
// was not added. The Builder must not be used afterwards.
func (b *Builder) Graph() (*Graph, error) {
	if b.err != nil {
		return nil, b.err
	}
	switch b.phase {
	case phaseStart, phaseNodes:
		b.index()
		b.g.off = make([]uint32, 1, len(b.g.ids)+1)
	case phaseEdges, phaseEdgesNodes:
		if err := b.settle(); err != nil {
			b.err = err
			return nil, err
		}
	}
	for len(b.g.off) <= len(b.g.ids) {
		b.g.off = append(b.g.off, uint32(len(b.g.to)))
	}
	g := b.g
	b.g = Graph{}
	return &g, nil
}

// settle turns edges added before the nodes into the Graph's form: target
// ids become node indices, sources become offsets.
func (b *Builder) settle() error {
	b.index()
	for e, id := range b.g.to {
		i, ok := b.g.Index(uint64(id))
		if !ok {
			return fmt.Errorf("%w: an edge to %d: no node %d", ErrUnknownNode, id, id)
		}
		b.g.to[e] = uint32(i)
	}
	n := len(b.g.ids)
	b.g.off = make([]uint32, n+1)
	r := 0
	for i, id := range b.g.ids {
		if r < len(b.rows) && b.rows[r].id < id {
			break // a source that is no node: reported below
		}
		if r < len(b.rows) && b.rows[r].id == id {
			b.g.off[i] = b.rows[r].start
			r++
		} else if r < len(b.rows) {
			b.g.off[i] = b.rows[r].start
		} else {
			b.g.off[i] = uint32(len(b.g.to))
		}
	}
	if r < len(b.rows) {
		return fmt.Errorf("%w: edges from %d: no node %d", ErrUnknownNode, b.rows[r].id, b.rows[r].id)
	}
	b.g.off[n] = uint32(len(b.g.to))
	b.rows = nil
	return nil
}

// loadEvery is how many rows Load reads between two looks at its context
// and two releases of the store's pages.
const loadEvery = 1 << 16

// Load builds the Graph of every node and edge of the store, in tx. Pages
// of the store are handed back to the kernel as the walk goes (see
// kv.Tx.ReleasePages), so what stays resident is the Graph. It returns
// the context's error, a decoding error for a damaged record, or
// ErrUnknownNode for an edge whose node is missing (weaver check reports
// those).
func Load(ctx context.Context, tx *kv.Tx) (*Graph, error) {
	c := graph.GetCounts(tx)
	// Capacity hints, capped where int is 32 bits wide (a Raspberry Pi's armv7).
	b := NewBuilder(int(min(c.Nodes, maxIndex, math.MaxInt)), int(min(c.Edges, maxIndex, math.MaxInt)))
	rows := 0
	tick := func() error {
		rows++
		if rows%loadEvery == 0 {
			tx.ReleasePages()
			return ctx.Err()
		}
		return nil
	}
	err := graph.ForEachNode(tx, func(n *graph.Node) error {
		if err := tick(); err != nil {
			return err
		}
		return b.AddNode(n.ID)
	})
	if err != nil {
		return nil, fmt.Errorf("rank: load: %w", err)
	}
	err = graph.ForEachEdge(tx, func(e *graph.Edge) error {
		if err := tick(); err != nil {
			return err
		}
		return b.AddEdge(e.From, e.To, e.Weight)
	})
	if err != nil {
		return nil, fmt.Errorf("rank: load: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return b.Graph()
}

// transpose returns the in-edges of g in compressed sparse rows: node v's
// in-edges come from src[off[v]:off[v+1]], ascending.
func (g *Graph) transpose() (off, src []uint32) {
	n := g.Len()
	off = make([]uint32, n+1)
	for _, v := range g.to {
		off[v+1]++
	}
	for i := range n {
		off[i+1] += off[i]
	}
	src = make([]uint32, len(g.to))
	next := slices.Clone(off[:n])
	for u := range n {
		for _, v := range g.to[g.off[u]:g.off[u+1]] {
			src[next[v]] = uint32(u)
			next[v]++
		}
	}
	return off, src
}

// MemoryNeed estimates the most memory ranking a graph of nodes and edges
// takes (the Graph, the PageRank vectors, HyperBall's counters and the
// garbage collector's room), so that a caller can tell before it starts
// whether the machine has it. It errs high: measured as the peak RSS an
// export gains with ranks (weaver export --csv, with and without
// --no-ranks), 100,000 hosts and 1M edges took 34 MB and 250,000 hosts
// and 3M edges 54 MB, where it says 36 and 98 MB.
func MemoryNeed(nodes, edges uint64) uint64 { return 200*nodes + 16*edges }
