package export

import (
	"runtime"
	"slices"
	"strings"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/layout"
	"github.com/weaver-crawler/weaver/rank"
)

// RankCache holds the ranks of the last export that used it (see
// Options.Ranks); the zero value is empty. It is not safe for concurrent
// exports.
type RankCache struct {
	key      rankKey
	ranks    *viewRanks
	top      bitset
	computed int
}

// Computed is how many times exports given c computed ranks, rather than
// taking the ones c held.
func (c *RankCache) Computed() int { return c.computed }

// rankKey is what a view's ranks depend on: the graph and the filters.
type rankKey struct {
	stamp                               layout.Stamp
	minWeight                           uint64
	crawledOnly, domains, noMirrors, no bool
	top                                 int
	topBy                               TopMeasure
	at                                  int64 // At's UnixNano; 0 when zero
	latest                              bool  // WeightsLatest
}

func (v *view) rankKey() rankKey {
	k := rankKey{stamp: layout.CurrentStamp(v.tx), minWeight: v.opt.MinWeight, crawledOnly: v.opt.CrawledOnly,
		domains: v.opt.Domains, noMirrors: v.opt.NoMirrors, no: v.opt.NoRanks, top: v.opt.Top, topBy: v.opt.topBy()}
	if !v.opt.At.IsZero() {
		k.at = v.opt.At.UnixNano()
	}
	k.latest = v.opt.latest()
	return k
}

// viewRanks are the ranks of the graph a view shows, by node index (the
// nodes in id order). The graph itself is dropped once ranked, so that
// the writer runs without it.
type viewRanks struct {
	ids      []uint64 // the nodes' ids, ascending
	inWeight []uint64 // the summed weights of each node's in-edges
	edges    int
	r        rank.Ranks
}

// rank computes the ranks of the view's graph, filters and domains
// applied, so that they are the ranks of the graph the export holds (what
// networkx computes from the file): one walk of the view to build the
// graph, after which the view starts again for the writer. With
// Options.Ranks it takes the ones an earlier export computed for the same
// graph and filters, and leaves its own there.
func (v *view) rank() error {
	key := v.rankKey()
	if c := v.opt.Ranks; c != nil && c.ranks != nil && c.key == key {
		v.ranks, v.top = c.ranks, c.top
		if v.opt.NoRanks {
			v.ranks = nil
		}
		return nil
	}
	var b *rank.Builder
	if v.domains != nil {
		b = rank.NewBuilder(len(v.domains.nodes), len(v.domains.edges))
	} else {
		c := graph.GetCounts(v.tx)
		b = rank.NewBuilder(int(min(c.Nodes, 1<<32)), int(min(c.Edges, 1<<32)))
	}
	var hosts map[uint64]string // for the top cut's ties
	if v.opt.Top > 0 {
		hosts = map[uint64]string{}
	}
	err := v.nodes(func(n *graph.Node) error {
		if hosts != nil {
			hosts[n.ID] = n.Host
		}
		return b.AddNode(n.ID)
	})
	if err == nil {
		err = v.edges(func(e *graph.Edge) error { return b.AddEdge(e.From, e.To, e.Weight) })
	}
	if err != nil {
		return err
	}
	g, err := b.Graph()
	if err != nil {
		return err
	}
	// The walk left as much garbage as the process's GC setting allows
	// (weaver collects at 200 % growth), and the ranks are about to
	// allocate as much again: collect it now, so that the peak is the
	// graph and the ranks, not the two plus the walk's leftovers.
	runtime.GC()
	var r rank.Ranks
	// --no-ranks --top N --by in-weight needs the graph, not its ranks.
	if !v.opt.NoRanks || v.opt.topBy() != TopInWeight {
		r, err = rank.Compute(v.ctx, g, rank.Options{NoHarmonic: v.opt.NoRanks && v.opt.topBy() == TopPageRank})
		if err != nil {
			return err
		}
	}
	ids := make([]uint64, g.Len())
	for i := range ids {
		ids[i] = g.ID(i)
	}
	v.ranks = &viewRanks{ids: ids, inWeight: g.InWeights(), edges: g.Edges(), r: r}
	v.stats, v.walked = Stats{}, false
	v.kept = nil
	if v.opt.Top > 0 {
		v.cutTop(hosts)
	}
	if c := v.opt.Ranks; c != nil {
		c.key, c.ranks, c.top = key, v.ranks, v.top
		c.computed++
	}
	if v.opt.NoRanks {
		v.ranks = nil
	}
	return nil
}

// cutTop sets v.top to the Options.Top highest nodes of the ranked graph
// by Options.TopBy, ties broken by host name (hosts maps ids to names).
func (v *view) cutTop(hosts map[uint64]string) {
	r := v.ranks
	measure := func(i int) float64 {
		switch v.opt.topBy() {
		case TopHarmonic:
			return r.r.Harmonic[i]
		case TopInWeight:
			return float64(r.inWeight[i])
		}
		return r.r.PageRank[i]
	}
	order := make([]int, len(r.ids))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if ma, mb := measure(a), measure(b); ma != mb {
			if ma > mb {
				return -1
			}
			return 1
		}
		return strings.Compare(hosts[r.ids[a]], hosts[r.ids[b]])
	})
	v.top = bitset{}
	for _, i := range order[:min(v.opt.Top, len(order))] {
		v.top.set(r.ids[i])
	}
}

// rankOf returns the ranks of the node id, and false when the view has no
// ranks.
func (v *view) rankOf(id uint64) (pagerank, harmonic float64, ok bool) {
	if v.ranks == nil {
		return 0, 0, false
	}
	i, ok := slices.BinarySearch(v.ranks.ids, id)
	if !ok {
		return 0, 0, false
	}
	return v.ranks.r.PageRank[i], v.ranks.r.Harmonic[i], true
}

// harmonicMethod says how the view's harmonic centrality was computed;
// "" without ranks.
func (v *view) harmonicMethod() string {
	if v.ranks == nil {
		return ""
	}
	return string(v.ranks.r.HarmonicMethod)
}

// nodeCount is the number of nodes of the view, once ranked; 0 without
// ranks.
func (v *view) nodeCount() int {
	if v.ranks == nil {
		return 0
	}
	return len(v.ranks.ids)
}
