package export

import (
	"cmp"
	"slices"
	"time"

	"github.com/weaver-crawler/weaver/graph"
)

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
	c := &collapser{d: &domainGraph{index: map[string]int{}}, pairs: map[[2]int32]int{}}
	err := v.forEachNode(func(n *graph.Node, asOf string) error {
		if v.opt.keeps(n) {
			c.addHost(n, asOf)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = v.forEachEdge(func(e *graph.Edge) error {
		if err := v.tick(); err != nil {
			return err
		}
		c.addLink(e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Domains were appended in the order of their smallest host id, which
	// is their id: d.nodes is already in id order.
	slices.SortFunc(c.d.edges, func(a, b graph.Edge) int {
		if a.From != b.From {
			return cmp.Compare(a.From, b.From)
		}
		return cmp.Compare(a.To, b.To)
	})
	return c.d, nil
}

// collapser is the state of collapse between its two passes.
type collapser struct {
	d *domainGraph
	// of[id] is 1 + the position in d.nodes of host id's domain, 0 when
	// the host is filtered out.
	of    []int32
	pairs map[[2]int32]int // domain pair → position in d.edges
}

// addHost adds the kept host n, whose as_of is asOf, to its domain.
func (c *collapser) addHost(n *graph.Node, asOf string) {
	d := c.d
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
	d.nodes[i].add(n, asOf)
	for uint64(len(c.of)) <= n.ID {
		c.of = append(c.of, 0)
	}
	c.of[n.ID] = int32(i + 1)
}

// add counts host n into its domain dn: the sums and extremes, and the
// page fields when n describes the domain better (repRank).
func (dn *domainNode) add(n *graph.Node, asOf string) {
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
	if earlier(n.FirstSeen, dn.FirstSeen) {
		dn.FirstSeen = n.FirstSeen
	}
	if n.LastSeen.After(dn.LastSeen) {
		dn.LastSeen = n.LastSeen
	}
	if n.LastCrawl.After(dn.LastCrawl) {
		dn.LastCrawl = n.LastCrawl
	}
}

// domain returns 1 + the position in d.nodes of host id's domain, 0 when
// the host is filtered out.
func (c *collapser) domain(id uint64) int32 {
	if id < uint64(len(c.of)) {
		return c.of[id]
	}
	return 0
}

// addLink adds the host edge e to the edge of its domain pair, unless it
// stays inside one domain or an end is filtered out.
func (c *collapser) addLink(e *graph.Edge) {
	d := c.d
	from, to := c.domain(e.From), c.domain(e.To)
	if from == 0 || to == 0 || from == to {
		return
	}
	k := [2]int32{from - 1, to - 1}
	i, ok := c.pairs[k]
	if !ok {
		i = len(d.edges)
		c.pairs[k] = i
		d.edges = append(d.edges, graph.Edge{
			From: d.nodes[k[0]].ID, To: d.nodes[k[1]].ID,
			FirstSeen: e.FirstSeen, LastSeen: e.LastSeen,
		})
	}
	de := &d.edges[i]
	de.Weight += e.Weight
	de.Nofollow += e.Nofollow
	de.Redirect += e.Redirect
	de.Frame += e.Frame
	if earlier(e.FirstSeen, de.FirstSeen) {
		de.FirstSeen = e.FirstSeen
	}
	if e.LastSeen.After(de.LastSeen) {
		de.LastSeen = e.LastSeen
	}
}

// earlier reports whether t is set and before than, or than is not set:
// the earliest first-seen time of several, the unknown ones aside.
func earlier(t, than time.Time) bool {
	return !t.IsZero() && (than.IsZero() || t.Before(than))
}
