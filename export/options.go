package export

import (
	"fmt"
	"strconv"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/layout"
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
	// Weights says what an edge's weight counts: WeightsAll (""), the
	// pages that linked in every crawl, summed over the crawls, as seed
	// 000 asks; WeightsLatest, those of the source's latest answered
	// crawl only (a 304 carries the links of the crawl before it; a source
	// without a crawl history, imported or of an older weaver, keeps its
	// stored weights), so that a host revisited often weighs no more than
	// one crawled once. Edges the latest crawl no longer makes are left
	// out. With At, the weights are those of the crawl by At, whatever
	// Weights says.
	Weights Weights
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

// Weights is what an edge's weight counts (Options.Weights).
type Weights string

// The values of Options.Weights.
const (
	WeightsAll    Weights = "all"    // summed over every crawl: the default
	WeightsLatest Weights = "latest" // the source's latest answered crawl
)

// ParseWeights reads --weights: "all" (or "") or "latest".
func ParseWeights(s string) (Weights, error) {
	switch Weights(s) {
	case "", WeightsAll:
		return WeightsAll, nil
	case WeightsLatest:
		return WeightsLatest, nil
	}
	return "", fmt.Errorf("--weights %q: want all (summed over every crawl, the default) or latest (each host's latest crawl)", s)
}

// latest reports whether o's weights are the latest crawl's.
func (o Options) latest() bool { return o.Weights == WeightsLatest && o.At.IsZero() }

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
	if o.latest() {
		f += " weights=latest"
	}
	return f
}

func (o Options) atFilter() string {
	if o.At.IsZero() {
		return ""
	}
	return " at=" + o.At.UTC().Format(time.RFC3339Nano)
}

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
