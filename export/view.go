package export

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/layout"
	"github.com/weaver-crawler/weaver/rank"
)

// Options choose what an export contains. The zero value exports every
// node and edge of the store.
type Options struct {
	// MinWeight drops edges whose weight is below it (with Domains, the
	// summed weight of the domain pair). Nodes are kept: a node whose
	// edges all fall below it stays as an isolated node.
	MinWeight uint64
	// CrawledOnly keeps only nodes weaver fetched (an HTTP answer came
	// back: CrawlCount > 0) and the edges between two of them.
	CrawledOnly bool
	// Domains collapses hosts into their registrable domain (Node.Domain):
	// weights of the host edges between two domains are summed, edges
	// inside one domain are dropped.
	Domains bool
	// NoMirrors leaves out the mirror copies (nodes whose MirrorOf is
	// set: hosts whose home page is the same bytes as an earlier host's)
	// and their edges; each group's first host stays.
	NoMirrors bool
	// NoRanks leaves out the ranks (PageRank and harmonic centrality)
	// every node otherwise carries. Computing them reads the graph once
	// more and holds it in memory (see package rank).
	NoRanks bool
	// NoLayout leaves out the community and position (community, x, y)
	// every node otherwise carries: those `weaver layout` stored when
	// they are fresh, else computed in memory (see package layout).
	NoLayout bool
	// Layout, when set, is a layout of the store's graph its caller
	// computed (layout.ComputeStored), used in place of computing one
	// when the stored layout is missing or stale and Layout's stamp is
	// the graph's: an export to several files lays the graph out once.
	Layout *layout.Stored
	// Top, when above 0, keeps only the Top highest nodes by TopBy, of
	// the graph the other filters leave (domains when Domains is set),
	// and the edges among them: the core of a large crawl. Ties are
	// broken by host name, ascending. The ranks the nodes carry are
	// those of that graph, before the cut, which chose them.
	Top int
	// TopBy is the measure Top ranks nodes by; "" means TopPageRank.
	TopBy TopMeasure
	// Ranks, when set, carries the ranks an export computed to the next
	// exports given the same cache: an export to several files with the
	// same filters ranks the graph once. They are reused only for the
	// same filters and the same graph (the store's node and edge counts
	// and total weight, as layout.Stamp).
	Ranks *RankCache
	// Force lets SQLite replace an existing file that is not a SQLite
	// database, and the text formats replace a database. It never allows
	// replacing the store being exported.
	Force bool
	// At, when set, exports the graph as it was at that time (issue 27):
	// the nodes first seen by At and the edges present at At, each with
	// the weight of its source's last crawl at or before At (see
	// graph.EdgesAt). Node attributes are those at At where the crawl
	// history records them, and each node says how far in its as_of
	// (see AsOfAt and nodeAt).
	At time.Time
	// GEXFTimeline makes the GEXF export of a store with a crawl history
	// a dynamic graph, which Gephi's timeline plays and networkx cannot
	// read (see GEXF); without it GEXF is static.
	GEXFTimeline bool
	// Version is the weaver version recorded in the export; "" means "dev".
	Version string
	// Now gives the export time recorded in the export; nil means time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// TopMeasure is what Options.Top ranks nodes by.
type TopMeasure string

// The measures of Options.TopBy.
const (
	TopPageRank TopMeasure = "pagerank"
	TopHarmonic TopMeasure = "harmonic"
	TopInWeight TopMeasure = "in-weight" // the summed weight of the node's in-edges
)

// TopMeasures are the valid values of Options.TopBy, for flags and
// messages.
var TopMeasures = []TopMeasure{TopPageRank, TopHarmonic, TopInWeight}

// topBy is o.TopBy with its default.
func (o Options) topBy() TopMeasure {
	if o.TopBy == "" {
		return TopPageRank
	}
	return o.TopBy
}

// topByName is the measure of Top, "" without Top.
func (o Options) topByName() string {
	if o.Top <= 0 {
		return ""
	}
	return string(o.topBy())
}

// filters describes the filters in one line, for the metadata of every
// format; top and top_by only when Top is set.
func (o Options) filters() string {
	f := "min_weight=" + strconv.FormatUint(o.MinWeight, 10) +
		" crawled_only=" + strconv.FormatBool(o.CrawledOnly) +
		" domains=" + strconv.FormatBool(o.Domains) +
		" no_mirrors=" + strconv.FormatBool(o.NoMirrors) + o.atFilter()
	if o.Top > 0 {
		f += " top=" + strconv.Itoa(o.Top) + " top_by=" + string(o.topBy())
	}
	return f
}

func (o Options) atFilter() string {
	if o.At.IsZero() {
		return ""
	}
	return " at=" + o.At.UTC().Format(time.RFC3339Nano)
}

// Stats count what an export wrote.
type Stats struct {
	Nodes  uint64 `json:"nodes"`
	Edges  uint64 `json:"edges"`
	Weight uint64 `json:"total_weight"` // sum of the written edges' weights
}

// checkEvery is how many rows a writer handles between two looks at its
// context.
const checkEvery = 10_000

// crawled reports whether weaver fetched n: the meaning of CrawledOnly.
func crawled(n *graph.Node) bool { return n.CrawlCount > 0 }

// keeps reports whether the node filters (CrawledOnly, NoMirrors) keep n.
func (o Options) keeps(n *graph.Node) bool {
	return (!o.CrawledOnly || crawled(n)) && (!o.NoMirrors || n.MirrorOf == 0) &&
		(o.At.IsZero() || !n.FirstSeen.After(o.At))
}

// filtersNodes reports whether a node filter is on, so that edges must
// be checked against the kept nodes.
func (o Options) filtersNodes() bool { return o.CrawledOnly || o.NoMirrors || !o.At.IsZero() }

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

// forEachEdge walks the store's edges, or with At those present then.
func (v *view) forEachEdge(fn func(e *graph.Edge) error) error {
	if !v.opt.At.IsZero() {
		return graph.EdgesAt(v.tx, v.opt.At, fn)
	}
	return graph.ForEachEdge(v.tx, fn)
}

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

// viewRanks are the ranks of the graph a view shows, by node index (the
// nodes in id order). The graph itself is dropped once ranked, so that
// the writer runs without it.
type viewRanks struct {
	ids      []uint64 // the nodes' ids, ascending
	inWeight []uint64 // the summed weights of each node's in-edges
	edges    int
	r        rank.Ranks
}

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
}

func (v *view) rankKey() rankKey {
	k := rankKey{stamp: layout.CurrentStamp(v.tx), minWeight: v.opt.MinWeight, crawledOnly: v.opt.CrawledOnly,
		domains: v.opt.Domains, noMirrors: v.opt.NoMirrors, no: v.opt.NoRanks, top: v.opt.Top, topBy: v.opt.topBy()}
	if !v.opt.At.IsZero() {
		k.at = v.opt.At.UnixNano()
	}
	return k
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
	if !n.FirstSeen.IsZero() && (v.first.IsZero() || n.FirstSeen.Before(v.first)) {
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
	err := graph.ForEachNode(v.tx, func(n *graph.Node) error {
		if err := v.tick(); err != nil {
			return err
		}
		v.span(n)
		asOf, err := v.nodeAt(n)
		if err != nil {
			return err
		}
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

// domainGraph is the store's graph with hosts collapsed into registrable
// domains, held in memory: one record per domain and per domain pair.
type domainGraph struct {
	nodes []domainNode   // in id order
	edges []graph.Edge   // in (From, To) order, self-loops dropped
	index map[string]int // domain → position in nodes
}

// domainNode is one domain: Node holds the sums and extremes over its
// hosts and, for the page fields (title, status, HTTP answer...), those
// of its representative host.
type domainNode struct {
	graph.Node
	rank int    // of the representative host, see repRank
	asOf string // with At, the least exact as_of of its hosts
}

// repRank orders the hosts of a domain for the choice of the one whose
// page describes the domain: a fetched host first, then the domain's own
// name, then its www host; the walk in id order breaks ties by smallest id.
func repRank(n *graph.Node) int {
	r := 0
	if crawled(n) {
		r += 4
	}
	switch n.Host {
	case n.Domain:
		r += 2
	case "www." + n.Domain:
		r++
	}
	return r
}

// collapse builds the domain graph: one pass over the nodes, one over the
// edges, both inside the view's transaction.
func (v *view) collapse() (*domainGraph, error) {
	d := &domainGraph{index: map[string]int{}}
	// of[id] is 1 + the position in d.nodes of host id's domain, 0 when
	// the host is filtered out.
	var of []int32
	err := graph.ForEachNode(v.tx, func(n *graph.Node) error {
		if err := v.tick(); err != nil {
			return err
		}
		v.span(n)
		asOf, err := v.nodeAt(n)
		if err != nil {
			return err
		}
		if !v.opt.keeps(n) {
			return nil
		}
		dom := n.Domain
		if dom == "" {
			dom = graph.RegistrableDomain(n.Host)
		}
		i, ok := d.index[dom]
		if !ok {
			i = len(d.nodes)
			d.index[dom] = i
			d.nodes = append(d.nodes, domainNode{Node: graph.Node{
				ID: n.ID, Host: dom, Domain: dom, Depth: n.Depth,
				FirstSeen: n.FirstSeen, LastSeen: n.LastSeen, LastCrawl: n.LastCrawl,
			}, rank: -1})
		}
		dn := &d.nodes[i]
		if dn.asOf == "" || asOfRank[asOf] > asOfRank[dn.asOf] {
			dn.asOf = asOf
		}
		if r := repRank(n); r > dn.rank {
			dn.rank = r
			dn.Scheme, dn.Title, dn.Description = n.Scheme, n.Title, n.Description
			dn.Status, dn.HTTPStatus, dn.ContentType, dn.Server = n.Status, n.HTTPStatus, n.ContentType, n.Server
			dn.FetchMS, dn.ContentHash, dn.Error = n.FetchMS, n.ContentHash, n.Error
			dn.Canonical, dn.RobotsDirectives = n.Canonical, n.RobotsDirectives
		}
		dn.PagesFetched += n.PagesFetched
		dn.CrawlCount += n.CrawlCount
		dn.FailCount += n.FailCount
		dn.Bytes += n.Bytes
		dn.Depth = min(dn.Depth, n.Depth)
		if !n.FirstSeen.IsZero() && (dn.FirstSeen.IsZero() || n.FirstSeen.Before(dn.FirstSeen)) {
			dn.FirstSeen = n.FirstSeen
		}
		if n.LastSeen.After(dn.LastSeen) {
			dn.LastSeen = n.LastSeen
		}
		if n.LastCrawl.After(dn.LastCrawl) {
			dn.LastCrawl = n.LastCrawl
		}
		for uint64(len(of)) <= n.ID {
			of = append(of, 0)
		}
		of[n.ID] = int32(i + 1)
		return nil
	})
	if err != nil {
		return nil, err
	}
	pos := func(id uint64) int32 {
		if id < uint64(len(of)) {
			return of[id]
		}
		return 0
	}
	pairs := map[[2]int32]int{} // domain pair → position in d.edges
	err = v.forEachEdge(func(e *graph.Edge) error {
		if err := v.tick(); err != nil {
			return err
		}
		from, to := pos(e.From), pos(e.To)
		if from == 0 || to == 0 || from == to {
			return nil
		}
		k := [2]int32{from - 1, to - 1}
		i, ok := pairs[k]
		if !ok {
			i = len(d.edges)
			pairs[k] = i
			d.edges = append(d.edges, graph.Edge{
				From: d.nodes[k[0]].ID, To: d.nodes[k[1]].ID,
				FirstSeen: e.FirstSeen, LastSeen: e.LastSeen,
			})
		}
		de := &d.edges[i]
		de.Weight += e.Weight
		de.Nofollow += e.Nofollow
		de.Redirect += e.Redirect
		if !e.FirstSeen.IsZero() && (de.FirstSeen.IsZero() || e.FirstSeen.Before(de.FirstSeen)) {
			de.FirstSeen = e.FirstSeen
		}
		if e.LastSeen.After(de.LastSeen) {
			de.LastSeen = e.LastSeen
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Domains were appended in the order of their smallest host id, which
	// is their id: d.nodes is already in id order.
	slices.SortFunc(d.edges, func(a, b graph.Edge) int {
		if a.From != b.From {
			return cmpU64(a.From, b.From)
		}
		return cmpU64(a.To, b.To)
	})
	return d, nil
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
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

// sqlTime formats t as SQLite's CURRENT_TIMESTAMP does, in UTC.
func sqlTime(t time.Time) string { return t.UTC().Format(time.DateTime) }

// timeText is sqlTime for a column of a million rows: it formats by hand
// (time.Format is a third of an edge's cost) and remembers the last
// second it formatted, since the edges one page adds share their times.
type timeText struct {
	sec int64
	s   string
}

// null returns t as sqlTime formats it, or nil (NULL) for the zero time.
func (c *timeText) null(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	sec := t.Unix()
	if c.s != "" && sec == c.sec {
		return c.s
	}
	u := t.UTC()
	y, mo, d := u.Date()
	h, mi, se := u.Clock()
	if y < 0 || y > 9999 {
		c.sec, c.s = sec, sqlTime(t)
		return c.s
	}
	var b [19]byte
	put := func(at, v, width int) {
		for i := at + width - 1; i >= at; i-- {
			b[i] = byte('0' + v%10)
			v /= 10
		}
	}
	put(0, y, 4)
	b[4] = '-'
	put(5, int(mo), 2)
	b[7] = '-'
	put(8, d, 2)
	b[10] = ' '
	put(11, h, 2)
	b[13] = ':'
	put(14, mi, 2)
	b[16] = ':'
	put(17, se, 2)
	c.sec, c.s = sec, string(b[:])
	return c.s
}

// isoTime formats t in RFC 3339, UTC, for the text formats; "" when zero.
func isoTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// wrap names the format, and the target when there is one, in an error.
// An error it already wrapped for f (a writer's, returned through
// WriteFile) gets the target added rather than a second prefix.
func wrap(f Format, target string, err error) error {
	if err == nil {
		return nil
	}
	var fe *formatError
	if errors.As(err, &fe) && fe.format == f {
		if fe.target == "" {
			fe.target = target
		}
		return err
	}
	return &formatError{format: f, target: target, err: err}
}

// formatError is an error of an export in one format.
type formatError struct {
	format Format
	target string // "" for a stream
	err    error
}

func (e *formatError) Error() string {
	if e.target == "" {
		return fmt.Sprintf("export: %s: %v", e.format, e.err)
	}
	return fmt.Sprintf("export: %s %s: %v", e.format, e.target, e.err)
}

func (e *formatError) Unwrap() error { return e.err }
