package export

import (
	"slices"

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
