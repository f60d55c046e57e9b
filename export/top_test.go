package export_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/kv"
)

// topGraph is a JSON export, decoded.
type topGraph struct {
	Graph struct {
		Top   int    `json:"top"`
		TopBy string `json:"top_by"`
	} `json:"graph"`
	Nodes []struct {
		ID       uint64   `json:"id"`
		Host     string   `json:"host"`
		PageRank *float64 `json:"pagerank"`
		Harmonic *float64 `json:"harmonic"`
	} `json:"nodes"`
	Edges []struct {
		Source, Target, Weight uint64
	} `json:"edges"`
}

func exportTopJSON(tb testing.TB, s *kv.Store, opt export.Options) (topGraph, []byte) {
	tb.Helper()
	var b bytes.Buffer
	if _, err := export.JSON(context.Background(), &b, s, opt); err != nil {
		tb.Fatalf("export %+v: %v", opt, err)
	}
	var g topGraph
	if err := json.Unmarshal(b.Bytes(), &g); err != nil {
		tb.Fatal(err)
	}
	return g, b.Bytes()
}

// topOracle picks the n highest nodes of the full export g by measure,
// ties by host, computing in-weight from g's edges: the selection done
// again, independently of the view.
func topOracle(g topGraph, by export.TopMeasure, n int) []uint64 {
	in := map[uint64]float64{}
	for _, e := range g.Edges {
		in[e.Target] += float64(e.Weight)
	}
	type scored struct {
		id   uint64
		host string
		m    float64
	}
	var all []scored
	for _, nd := range g.Nodes {
		m := in[nd.ID]
		switch by {
		case export.TopPageRank:
			m = *nd.PageRank
		case export.TopHarmonic:
			m = *nd.Harmonic
		}
		all = append(all, scored{nd.ID, nd.Host, m})
	}
	slices.SortFunc(all, func(a, b scored) int { return cmp.Or(cmp.Compare(b.m, a.m), strings.Compare(a.host, b.host)) })
	var ids []uint64
	for _, s := range all[:min(n, len(all))] {
		ids = append(ids, s.id)
	}
	slices.Sort(ids)
	return ids
}

// TestTop_Oracle: on a 400-host graph, with each measure, several N and
// the other filters, Top keeps exactly the N nodes an independent
// selection over the full export picks, the edges among them and no
// other, and the ranks of the full graph.
func TestTop_Oracle(t *testing.T) {
	s := paStore(t, 400)
	variants := map[string]func(*export.Options){
		"plain":        func(*export.Options) {},
		"crawled-only": func(o *export.Options) { o.CrawledOnly = true },
		"domains":      func(o *export.Options) { o.Domains = true },
		"min-weight-2": func(o *export.Options) { o.MinWeight = 2 },
	}
	for name, set := range variants {
		opt := fixedOptions()
		opt.NoLayout = true // the cut is the subject: 200 exports need no layout each
		set(&opt)
		full, _ := exportTopJSON(t, s, opt)
		pr := map[uint64]float64{}
		for _, n := range full.Nodes {
			pr[n.ID] = *n.PageRank
		}
		for _, by := range export.TopMeasures {
			for _, n := range []int{1, 10, 37, 100000} {
				t.Run(fmt.Sprintf("%s/%s/%d", name, by, n), func(t *testing.T) {
					o := opt
					o.Top, o.TopBy = n, by
					got, _ := exportTopJSON(t, s, o)
					want := topOracle(full, by, n)
					var ids []uint64
					for _, nd := range got.Nodes {
						ids = append(ids, nd.ID)
						if *nd.PageRank != pr[nd.ID] {
							t.Errorf("node %d: pagerank %v, the full graph's %v", nd.ID, *nd.PageRank, pr[nd.ID])
						}
					}
					if !slices.Equal(ids, want) {
						t.Fatalf("top %d by %s:\n got %v\nwant %v", n, by, ids, want)
					}
					var wantEdges []string
					for _, e := range full.Edges {
						if slices.Contains(want, e.Source) && slices.Contains(want, e.Target) {
							wantEdges = append(wantEdges, fmt.Sprint(e))
						}
					}
					var gotEdges []string
					for _, e := range got.Edges {
						gotEdges = append(gotEdges, fmt.Sprint(e))
					}
					if !slices.Equal(gotEdges, wantEdges) {
						t.Errorf("edges:\n got %v\nwant %v", gotEdges, wantEdges)
					}
					if got.Graph.Top != n || got.Graph.TopBy != string(by) {
						t.Errorf("graph metadata: top %d by %q", got.Graph.Top, got.Graph.TopBy)
					}
				})
			}
		}
	}
}

// TestTop_Ties: in a ring of equal weights every node has the same
// in-weight and PageRank: the top N are the first N host names.
func TestTop_Ties(t *testing.T) {
	s := newStore(t)
	var nodes []fixtureNode
	var edges []fixtureEdge
	hosts := []string{"m.example", "c.example", "x.example", "a.example", "q.example", "b.example"}
	for i, h := range hosts {
		nodes = append(nodes, fixtureNode{host: h})
		edges = append(edges, fixtureEdge{i, (i + 1) % len(hosts), 2})
	}
	writeGraph(t, s, nodes, edges)
	for _, by := range []export.TopMeasure{export.TopInWeight, export.TopPageRank} {
		opt := fixedOptions()
		opt.Top, opt.TopBy = 3, by
		for _, noRanks := range []bool{false, true} {
			opt.NoRanks = noRanks
			g, raw := exportTopJSON(t, s, opt)
			var got []string
			for _, n := range g.Nodes {
				got = append(got, n.Host)
				if noRanks && n.PageRank != nil {
					t.Errorf("NoRanks: node %s has a pagerank", n.Host)
				}
			}
			slices.Sort(got)
			if want := []string{"a.example", "b.example", "c.example"}; !slices.Equal(got, want) {
				t.Errorf("by %s, no ranks %v: %v, want %v\n%s", by, noRanks, got, want, raw)
			}
		}
	}
}

// TestTop_EveryFormat: every writer shows the cut: GraphML, DOT, SQLite,
// CSV and the Common Crawl files hold the top nodes only.
func TestTop_EveryFormat(t *testing.T) {
	s := paStore(t, 200)
	opt := fixedOptions()
	opt.Top = 15
	g, _ := exportTopJSON(t, s, opt)
	want := export.Stats{Nodes: uint64(len(g.Nodes)), Edges: uint64(len(g.Edges))}
	for _, e := range g.Edges {
		want.Weight += e.Weight
	}
	if want.Nodes != 15 || want.Edges == 0 {
		t.Fatalf("JSON: %+v", want)
	}
	for _, f := range []export.Format{export.FormatSQLite, export.FormatGraphML, export.FormatDOT, export.FormatHTML} {
		_, st := exportFile(t, s, f, opt)
		if st != want {
			t.Errorf("%s: %+v, want %+v", f, st, want)
		}
	}
	npath, _, st := csvExport(t, s, opt)
	if st != want || len(readCSV(t, npath)) != 16 {
		t.Errorf("csv: %+v, want %+v", st, want)
	}
	st, err := export.CCHostGraph(context.Background(), s, t.TempDir()+"/cc", opt)
	if err != nil || st.Nodes > 15 || st.Edges > want.Edges {
		t.Errorf("cc-hostgraph: %+v, %v", st, err)
	}
	opt.TopBy = "bogus"
	if _, err := export.JSON(context.Background(), &bytes.Buffer{}, s, opt); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("unknown measure: %v", err)
	}
}

// topNetworkx computes the top 10 by each measure with networkx from the
// full JSON export on stdin, ties by host.
const topNetworkx = `
import json, sys
import networkx as nx
data = json.load(sys.stdin)
G = nx.DiGraph()
for n in data["nodes"]:
    G.add_node(n["id"], host=n["host"])
for e in data["edges"]:
    G.add_edge(e["source"], e["target"], weight=e["weight"])
measures = {
    "pagerank": nx.pagerank(G, weight="weight", tol=1e-14, max_iter=100000),
    "harmonic": nx.harmonic_centrality(G),
    "in-weight": dict(G.in_degree(weight="weight")),
}
out = {}
for by, m in measures.items():
    order = sorted(G.nodes, key=lambda v: (-m[v], G.nodes[v]["host"]))
    out[by] = sorted(order[:10])
json.dump(out, sys.stdout)
`

// TestTop_NetworkX: the top 10 by each measure is the set networkx picks
// from the full export.
func TestTop_NetworkX(t *testing.T) {
	py := needPandas(t) // nx.pagerank needs numpy and scipy
	s := paStore(t, 400)
	_, full := exportTopJSON(t, s, fixedOptions())
	var want map[string][]uint64
	if err := json.Unmarshal(runTool(t, full, py, "-c", topNetworkx), &want); err != nil {
		t.Fatal(err)
	}
	for _, by := range export.TopMeasures {
		opt := fixedOptions()
		opt.Top, opt.TopBy = 10, by
		g, _ := exportTopJSON(t, s, opt)
		var ids []uint64
		for _, n := range g.Nodes {
			ids = append(ids, n.ID)
		}
		if !slices.Equal(ids, want[string(by)]) {
			t.Errorf("top 10 by %s: %v, networkx %v", by, ids, want[string(by)])
		}
	}
}
