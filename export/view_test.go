package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/graph"
)

// TestFilters_Oracle checks every combination of filters against an
// oracle computed from the fixture itself, not from the store: node ids
// are positions + 1, since Ensure numbers hosts in creation order.
func TestFilters_Oracle(t *testing.T) {
	nodes, edges := paGraph(600, 3, 7)
	s := newStore(t)
	writeGraph(t, s, nodes, edges)
	for _, minWeight := range []uint64{0, 1, 2, 5} {
		for _, crawledOnly := range []bool{false, true} {
			for _, domains := range []bool{false, true} {
				opt := fixedOptions()
				opt.MinWeight, opt.CrawledOnly, opt.Domains = minWeight, crawledOnly, domains
				t.Run(fmt.Sprintf("min%d_crawled%v_domains%v", minWeight, crawledOnly, domains), func(t *testing.T) {
					wantNodes, wantEdges := filterOracle(nodes, edges, opt)
					var buf bytes.Buffer
					st, err := export.JSON(context.Background(), &buf, s, opt)
					if err != nil {
						t.Fatal(err)
					}
					var doc struct {
						Nodes []struct {
							ID   uint64 `json:"id"`
							Host string `json:"host"`
						} `json:"nodes"`
						Edges []struct {
							Source, Target, Weight uint64
						} `json:"edges"`
					}
					if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
						t.Fatal(err)
					}
					var gotNodes, gotEdges []string
					for _, n := range doc.Nodes {
						gotNodes = append(gotNodes, fmt.Sprintf("%d %s", n.ID, n.Host))
					}
					var weight uint64
					for _, e := range doc.Edges {
						gotEdges = append(gotEdges, fmt.Sprintf("%d>%d %d", e.Source, e.Target, e.Weight))
						weight += e.Weight
					}
					if !slices.Equal(gotNodes, wantNodes) {
						t.Errorf("nodes: got %d, want %d; first got %q, want %q", len(gotNodes), len(wantNodes), head(gotNodes), head(wantNodes))
					}
					if !slices.Equal(gotEdges, wantEdges) {
						t.Errorf("edges: got %d, want %d; first got %q, want %q", len(gotEdges), len(wantEdges), head(gotEdges), head(wantEdges))
					}
					if st.Nodes != uint64(len(doc.Nodes)) || st.Edges != uint64(len(doc.Edges)) || st.Weight != weight {
						t.Errorf("stats %+v, wrote %d nodes, %d edges, weight %d", st, len(doc.Nodes), len(doc.Edges), weight)
					}
				})
			}
		}
	}
}

func head(s []string) []string { return s[:min(5, len(s))] }

// filterOracle applies opt's filters to a fixture the plain way, giving
// nodes as "id host" in id order and edges as "from>to weight" in (from,
// to) order.
func filterOracle(nodes []fixtureNode, edges []fixtureEdge, opt export.Options) (ns, es []string) {
	kept := func(i int) bool { return !opt.CrawledOnly || nodes[i].crawls > 0 }
	group := func(i int) string { return nodes[i].host }
	if opt.Domains {
		group = func(i int) string { return graph.RegistrableDomain(nodes[i].host) }
	}
	id := map[string]uint64{} // group → smallest id of its kept members
	for i := range nodes {
		if g := group(i); kept(i) {
			if _, ok := id[g]; !ok {
				id[g] = uint64(i + 1)
			}
		}
	}
	for g, n := range id {
		ns = append(ns, fmt.Sprintf("%d %s", n, g))
	}
	w := map[[2]uint64]uint64{}
	for _, e := range edges {
		if !kept(e.from) || !kept(e.to) {
			continue
		}
		from, to := id[group(e.from)], id[group(e.to)]
		if from != to {
			w[[2]uint64{from, to}] += e.weight
		}
	}
	keys := slices.SortedFunc(maps.Keys(w), func(a, b [2]uint64) int {
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		return int(a[1]) - int(b[1])
	})
	for _, k := range keys {
		if w[k] >= opt.MinWeight {
			es = append(es, fmt.Sprintf("%d>%d %d", k[0], k[1], w[k]))
		}
	}
	slices.SortFunc(ns, func(a, b string) int {
		var x, y uint64
		fmt.Sscan(a, &x)
		fmt.Sscan(b, &y)
		return int(x) - int(y)
	})
	return ns, es
}
