package export

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/layout"
)

// view is the store's graph seen through Options: the one place the
// filters are applied. Call nodes, then edges, inside one read
// transaction.
type view struct {
	ctx  context.Context
	tx   *kv.Tx
	opt  Options
	rows int // rows handed out, for the periodic context check

	kept    bitset // ids of the nodes kept, filled by nodes when a node filter is on
	top     bitset // with Options.Top, the ids of the top nodes; nil otherwise
	walked  bool   // nodes has run to the end
	domains *domainGraph
	ranks   *viewRanks     // nil with NoRanks
	lay     *layout.Stored // nil with NoLayout

	stats Stats
	// latest is the latest crawl of node latestOf, for gone.
	latest     *graph.Crawl
	latestOf   uint64
	latestRead bool
	// iv are the edge intervals of node ivOf's out-edges and ivFirst its
	// first crawl, for intervals.
	iv      map[uint64][]graph.Interval
	ivFirst time.Time
	ivOf    uint64
	ivRead  bool
	// asOf is the as_of of the node nodes hands out (with At), or of
	// each domain (domainAsOf).
	asOf string
	// first and last are the earliest and latest times over every node of
	// the store, filters aside: the crawl's time range.
	first, last time.Time
}

func newView(ctx context.Context, tx *kv.Tx, opt Options) (*view, error) {
	v := &view{ctx: ctx, tx: tx, opt: opt}
	if opt.Domains {
		d, err := v.collapse()
		if err != nil {
			return nil, err
		}
		v.domains = d
	}
	if opt.Top > 0 && !slices.Contains(TopMeasures, opt.topBy()) {
		return nil, fmt.Errorf("top: unknown measure %q (one of pagerank, harmonic, in-weight)", opt.TopBy)
	}
	if !opt.NoRanks || opt.Top > 0 {
		if err := v.rank(); err != nil {
			return nil, err
		}
	}
	if !opt.NoLayout {
		if err := v.layout(); err != nil {
			return nil, fmt.Errorf("layout: %w", err)
		}
	}
	return v, nil
}

// walk runs fn with a view of s in one read transaction.
func walk(ctx context.Context, s *kv.Store, opt Options, fn func(v *view) error) (Stats, error) {
	var st Stats
	err := s.View(func(tx *kv.Tx) error {
		v, err := newView(ctx, tx, opt)
		if err != nil {
			return err
		}
		err = fn(v)
		st = v.stats
		return err
	})
	return st, err
}

// layout gives the view its communities and positions. A view of the
// store's hosts (any filter but Domains and At) shows them as laid out in
// the whole graph, so that a filtered or top-N picture keeps each host
// where the whole picture has it: the stored layout when its stamp matches
// the graph, else one computed now, in memory (an export never writes
// into the store). The domain graph and the graph at a past time are laid
// out on their own, in memory.
func (v *view) layout() error {
	if v.domains == nil && v.opt.At.IsZero() {
		// A layout the caller computed is given because the stored one
		// is not fresh: no need to read the stored one again.
		if given := v.opt.Layout; given != nil && given.Stamp == layout.CurrentStamp(v.tx) {
			v.lay = given
			return nil
		}
		st, fresh, err := layout.Load(v.tx)
		if err != nil {
			return err
		}
		if fresh {
			v.lay = st
			return nil
		}
		v.lay, err = layout.ComputeStored(v.ctx, v.tx, layout.Options{})
		return err
	}
	b := layout.NewBuilder(0, 0)
	err := v.nodes(func(n *graph.Node) error { return b.AddNode(n.ID) })
	if err == nil {
		err = v.edges(func(e *graph.Edge) error {
			if e.Weight == 0 {
				return nil
			}
			return b.AddEdge(e.From, e.To, float64(e.Weight))
		})
	}
	if err != nil {
		return err
	}
	v.stats, v.walked, v.kept = Stats{}, false, nil
	g, err := b.Graph()
	if err != nil {
		return err
	}
	l, err := layout.Compute(v.ctx, g, layout.Options{})
	if err != nil {
		return err
	}
	ids := make([]uint64, g.Len())
	for i := range ids {
		ids[i] = g.ID(i)
	}
	v.lay = &layout.Stored{IDs: ids, Layout: l}
	return nil
}

// layoutOf returns the community and position of the node id, and false
// when the view has no layout.
func (v *view) layoutOf(id uint64) (comm uint32, x, y float64, ok bool) {
	return v.lay.Lookup(id)
}

// keepsNode reports whether the view shows the store's node n: the node
// filters and the top cut.
func (v *view) keepsNode(n *graph.Node) bool {
	return v.opt.keeps(n) && (v.top == nil || v.top.has(n.ID))
}

// filtersNodes reports whether edges must be checked against the kept
// nodes.
func (v *view) filtersNodes() bool { return v.opt.filtersNodes() || v.top != nil }

// checkEvery is how many rows a writer handles between two looks at its
// context.
const checkEvery = 10_000

// releaseEvery is how many rows pass between two page releases.
const releaseEvery = 1 << 16

// tick counts a row, lets the store's pages go every so often, and
// returns the context's error every checkEvery rows.
func (v *view) tick() error {
	v.rows++
	if v.rows%releaseEvery == 0 {
		v.tx.ReleasePages() // keeps RSS flat: see kv.Tx.ReleasePages
	}
	if v.rows%checkEvery == 0 {
		return v.ctx.Err()
	}
	return nil
}

func (v *view) span(n *graph.Node) {
	if earlier(n.FirstSeen, v.first) {
		v.first = n.FirstSeen
	}
	for _, t := range []time.Time{n.LastSeen, n.LastCrawl} {
		if t.After(v.last) {
			v.last = t
		}
	}
}

// nodes calls fn for every node kept, in id order. fn must not keep n.
func (v *view) nodes(fn func(n *graph.Node) error) error {
	if v.domains != nil {
		for i := range v.domains.nodes {
			if err := v.tick(); err != nil {
				return err
			}
			if v.top != nil && !v.top.has(v.domains.nodes[i].ID) {
				continue
			}
			v.stats.Nodes++
			v.asOf = v.domains.nodes[i].asOf
			if err := fn(&v.domains.nodes[i].Node); err != nil {
				return err
			}
		}
		v.walked = true
		return nil
	}
	err := v.forEachNode(func(n *graph.Node, asOf string) error {
		v.asOf = asOf
		if v.filtersNodes() {
			if !v.keepsNode(n) {
				return nil
			}
			v.kept.set(n.ID)
		}
		v.stats.Nodes++
		return fn(n)
	})
	if err != nil {
		return err
	}
	v.walked = true
	return nil
}

// edges calls fn for every edge kept, in (from, to) order, after nodes has
// run (CrawledOnly needs the set of kept nodes). fn must not keep e.
func (v *view) edges(fn func(e *graph.Edge) error) error {
	if !v.walked {
		if err := v.nodes(func(*graph.Node) error { return nil }); err != nil {
			return err
		}
		v.stats.Nodes = 0
	}
	emit := func(e *graph.Edge) error {
		v.stats.Edges++
		v.stats.Weight += e.Weight
		return fn(e)
	}
	if v.domains != nil {
		for i := range v.domains.edges {
			if err := v.tick(); err != nil {
				return err
			}
			e := &v.domains.edges[i]
			if v.top != nil && !(v.top.has(e.From) && v.top.has(e.To)) {
				continue
			}
			if e.Weight >= v.opt.MinWeight {
				if err := emit(e); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return v.forEachEdge(func(e *graph.Edge) error {
		if err := v.tick(); err != nil {
			return err
		}
		if e.Weight < v.opt.MinWeight {
			return nil
		}
		if v.filtersNodes() && !(v.kept.has(e.From) && v.kept.has(e.To)) {
			return nil
		}
		return emit(e)
	})
}

// forEachNode walks the store's nodes, every one, each with its as_of
// (see nodeAt) and counted in the crawl's time range (span): fn filters.
func (v *view) forEachNode(fn func(n *graph.Node, asOf string) error) error {
	return graph.ForEachNode(v.tx, func(n *graph.Node) error {
		if err := v.tick(); err != nil {
			return err
		}
		v.span(n)
		asOf, err := v.nodeAt(n)
		if err != nil {
			return err
		}
		return fn(n, asOf)
	})
}

// forEachEdge walks the store's edges, or with At those present then, or
// with WeightsLatest those of each source's latest crawl.
func (v *view) forEachEdge(fn func(e *graph.Edge) error) error {
	switch {
	case !v.opt.At.IsZero():
		return graph.EdgesAt(v.tx, v.opt.At, fn)
	case v.opt.latest():
		return graph.EdgesAt(v.tx, latestTime, fn)
	}
	return graph.ForEachEdge(v.tx, fn)
}

// latestTime is after every crawl: the graph "at" it is each source's
// latest crawl.
var latestTime = time.Unix(1<<40, 0)

// gone reports whether e is missing from its source's latest crawl (never
// with At, or for a domain edge, or a source without history). Edges come
// by source, so the source's latest crawl is read once.
func (v *view) gone(e *graph.Edge) bool {
	if !v.opt.At.IsZero() || v.domains != nil {
		return false
	}
	if v.latestOf != e.From || !v.latestRead {
		v.latestOf, v.latestRead = e.From, true
		cr, ok, err := graph.LatestCrawl(v.tx, e.From)
		v.latest = nil
		if err == nil && ok {
			v.latest = &cr
		}
	}
	return graph.Gone(v.latest, e.To)
}

// mirrorHost returns the host of the node a mirror copy copies ("" when
// mirrorOf is 0 or names no node): one read per mirror node.
func (v *view) mirrorHost(mirrorOf uint64) string {
	if mirrorOf == 0 || v.domains != nil {
		return ""
	}
	n, ok, err := graph.Get(v.tx, mirrorOf)
	if err != nil || !ok {
		return ""
	}
	return n.Host
}

// bitset is a set of node ids. Ids are dense (1, 2, 3... in creation
// order), so it costs one bit per node of the store.
type bitset []uint64

func (b *bitset) set(id uint64) {
	i := int(id / 64)
	if i >= len(*b) {
		*b = append(*b, make([]uint64, i+1-len(*b))...)
	}
	(*b)[i] |= 1 << (id % 64)
}

func (b bitset) has(id uint64) bool {
	i := int(id / 64)
	return i < len(b) && b[i]&(1<<(id%64)) != 0
}
