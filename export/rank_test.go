package export_test

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/tooltest"
	"github.com/weaver-crawler/weaver/kv"
)

// ukStore loads the UK-1996 host graph between hosts that had pages
// (../shared/data/webgraph/uk1996-crawled-subgraph.tsv: 5,060 hosts,
// 20,091 edges, 7,677 of them heavier than 1) into a real store through
// graph's own functions, as a crawl records it: hosts with out-links
// marked crawled. It has 1,942 hosts without out-links and 78 weakly
// connected parts.
func ukStore(tb testing.TB) *kv.Store {
	tb.Helper()
	path, err := filepath.Abs(filepath.Join("..", "..", "shared", "data", "webgraph", "uk1996-crawled-subgraph.tsv"))
	if err != nil {
		tb.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		tooltest.Missing(tb, "the UK-1996 host graph: %v", err)
	}
	defer f.Close()
	s := newStore(tb)
	err = s.Update(func(tx *kv.Tx) error {
		node := func(host string) (graph.Node, error) {
			h, err := graph.NormalizeHost(host, "http")
			if err != nil {
				return graph.Node{}, err
			}
			n, _, err := graph.EnsureAt(tx, h, "http", 1, t0)
			return n, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			parts := strings.Split(sc.Text(), "\t")
			if len(parts) != 3 {
				continue
			}
			w, err := strconv.ParseUint(parts[2], 10, 64)
			if err != nil {
				return err
			}
			from, err := node(parts[0])
			if err != nil {
				return err
			}
			to, err := node(parts[1])
			if err != nil {
				return err
			}
			if from.CrawlCount == 0 {
				from.CrawlCount, from.Status, from.HTTPStatus, from.LastCrawl = 1, graph.StatusCrawled, 200, t0.Add(time.Hour)
				if err := graph.Put(tx, &from); err != nil {
					return err
				}
			}
			if err := graph.AddEdge(tx, from.ID, to.ID, w, t0); err != nil {
				return err
			}
		}
		return sc.Err()
	})
	if err != nil {
		tb.Fatalf("load %s: %v", path, err)
	}
	return s
}

// networkxRanks loads an export with networkx, computes PageRank (at
// networkx's defaults and at tol=1e-14) and harmonic centrality, and
// compares them with the pagerank and harmonic the file gives each node.
const networkxRanks = `
import json, sys
import networkx as nx
kind, path = sys.argv[1], sys.argv[2]
if kind == "graphml":
    G = nx.read_graphml(path)
else:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    try:
        G = nx.node_link_graph(data, edges="edges")
    except TypeError:  # networkx before 3.4
        G = nx.node_link_graph(data, attrs={"source": "source", "target": "target", "name": "id", "key": "key", "link": "edges"})
default = nx.pagerank(G, weight="weight")
tight = nx.pagerank(G, weight="weight", tol=1e-14, max_iter=100000)
harmonic = nx.harmonic_centrality(G)
nodes = list(G)
print(json.dumps({
    "nodes": len(nodes),
    "edges": G.number_of_edges(),
    "heavy_edges": sum(1 for _, _, w in G.edges(data="weight") if w > 1),
    "dangling": sum(1 for n in nodes if G.out_degree(n) == 0),
    "parts": nx.number_weakly_connected_components(G),
    "pagerank_tight": max(abs(G.nodes[n]["pagerank"] - tight[n]) for n in nodes),
    "pagerank_default": max(abs(G.nodes[n]["pagerank"] - default[n]) for n in nodes),
    "networkx_default_error": max(abs(default[n] - tight[n]) for n in nodes),
    "harmonic": max(abs(G.nodes[n]["harmonic"] - harmonic[n]) for n in nodes),
    "harmonic_max": max(harmonic.values()),
}))
`

// nxCheck is networkxRanks's answer.
type nxCheck struct {
	Nodes, Edges, Dangling, Parts int
	HeavyEdges                    int     `json:"heavy_edges"`
	PageRankTight                 float64 `json:"pagerank_tight"`
	PageRankDefault               float64 `json:"pagerank_default"`
	NetworkxDefaultError          float64 `json:"networkx_default_error"`
	Harmonic                      float64
	HarmonicMax                   float64 `json:"harmonic_max"`
}

// TestExport_RanksMatchNetworkx is the check: networkx, given an
// export of a real host graph (dangling hosts, weights above 1, parts that
// do not reach each other), computes both ranks itself and finds the ones
// in the file: PageRank within 1e-5 of networkx.pagerank(G,
// weight="weight") run to a tight tolerance (tol=1e-14; in fact within
// 1e-9), harmonic centrality within 1e-6 of
// networkx.harmonic_centrality(G). networkx at its default tolerance is
// itself 3.5e-4 (hosts) and 4.6e-4 (domains) from its tight result; the file must be
// no further from that run than networkx's own error. Host level in
// GraphML and JSON, domain level (the ranks of the domain graph) in
// GraphML.
func TestExport_RanksMatchNetworkx(t *testing.T) {
	py := tooltest.Python(t, "networkx, scipy")
	s := ukStore(t)
	for _, tc := range []struct {
		name   string
		format export.Format
		opt    func(*export.Options)
	}{
		{"hosts, graphml", export.FormatGraphML, nil},
		{"hosts, json", export.FormatJSON, nil},
		{"domains, graphml", export.FormatGraphML, func(o *export.Options) { o.Domains = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := fixedOptions()
			opt.NoLayout = true // the ranks are the subject; laying out 58,000 hosts thrice is not
			if tc.opt != nil {
				tc.opt(&opt)
			}
			path, st := exportFile(t, s, tc.format, opt)
			out := runTool(t, nil, py, "-c", networkxRanks, string(tc.format), path)
			var got nxCheck
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("networkx output %q: %v", out, err)
			}
			t.Logf("%d nodes (%d without out-links), %d edges (%d heavier than 1), %d weakly connected parts: max |file − networkx|: pagerank %.2g (networkx tol=1e-14), %.2g (networkx defaults, themselves %.2g from tol=1e-14); harmonic %.2g (largest %.1f)",
				got.Nodes, got.Dangling, got.Edges, got.HeavyEdges, got.Parts, got.PageRankTight, got.PageRankDefault, got.NetworkxDefaultError, got.Harmonic, got.HarmonicMax)
			if uint64(got.Nodes) != st.Nodes || uint64(got.Edges) != st.Edges {
				t.Errorf("networkx read %d nodes and %d edges, the export wrote %d and %d", got.Nodes, got.Edges, st.Nodes, st.Edges)
			}
			if got.Dangling == 0 || got.HeavyEdges == 0 || got.Parts < 2 {
				t.Errorf("the graph lacks what the check is about: %+v", got)
			}
			if got.PageRankTight > 1e-5 {
				t.Errorf("pagerank: max |file − networkx (tol=1e-14)| = %g, want ≤ 1e-5", got.PageRankTight)
			}
			if got.PageRankDefault > got.NetworkxDefaultError+1e-9 {
				t.Errorf("pagerank: max |file − networkx (defaults)| = %g, more than networkx's own error %g", got.PageRankDefault, got.NetworkxDefaultError)
			}
			if got.Harmonic > 1e-6 {
				t.Errorf("harmonic: max |file − networkx| = %g, want ≤ 1e-6", got.Harmonic)
			}
		})
	}
}

// exportRanks reads the ranks of every node from an export, by node id.
func exportRanks(t *testing.T, f export.Format, path string) map[uint64][2]float64 {
	t.Helper()
	got := map[uint64][2]float64{}
	parse := func(s string) float64 {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("%s: rank %q: %v", f, s, err)
		}
		return x
	}
	switch f {
	case export.FormatJSON:
		var doc struct {
			Nodes []struct {
				ID       uint64   `json:"id"`
				PageRank *float64 `json:"pagerank"`
				Harmonic *float64 `json:"harmonic"`
			} `json:"nodes"`
		}
		if err := json.Unmarshal(readFile(t, path), &doc); err != nil {
			t.Fatal(err)
		}
		for _, n := range doc.Nodes {
			if n.PageRank != nil && n.Harmonic != nil {
				got[n.ID] = [2]float64{*n.PageRank, *n.Harmonic}
			}
		}
	case export.FormatGraphML:
		var doc struct {
			Nodes []struct {
				ID   string `xml:"id,attr"`
				Data []struct {
					Key   string `xml:"key,attr"`
					Value string `xml:",chardata"`
				} `xml:"data"`
			} `xml:"graph>node"`
		}
		if err := xml.Unmarshal(readFile(t, path), &doc); err != nil {
			t.Fatal(err)
		}
		for _, n := range doc.Nodes {
			id, _ := strconv.ParseUint(strings.TrimPrefix(n.ID, "n"), 10, 64)
			var r [2]float64
			found := 0
			for _, d := range n.Data {
				switch d.Key {
				case "pagerank":
					r[0] = parse(d.Value)
					found++
				case "harmonic":
					r[1] = parse(d.Value)
					found++
				}
			}
			if found == 2 {
				got[id] = r
			}
		}
	case export.FormatDOT:
		re := regexp.MustCompile(`(?m)^\t"n(\d+)" \[.*pagerank="([^"]+)", harmonic="([^"]+)"\];$`)
		for _, m := range re.FindAllStringSubmatch(string(readFile(t, path)), -1) {
			id, _ := strconv.ParseUint(m[1], 10, 64)
			got[id] = [2]float64{parse(m[2]), parse(m[3])}
		}
	case export.FormatSQLite:
		db := openSQLite(t, path)
		rows, err := db.Query("SELECT node_id, pagerank, harmonic FROM node_ranks")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id uint64
			var pr, h float64
			if err := rows.Scan(&id, &pr, &h); err != nil {
				t.Fatal(err)
			}
			got[id] = [2]float64{pr, h}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return got
}

// TestExport_RanksEverywhere: every format gives every node the same two
// ranks, to the last bit, with and without filters.
func TestExport_RanksEverywhere(t *testing.T) {
	s := paStore(t, 400)
	for _, tc := range []struct {
		name string
		opt  func(*export.Options)
	}{
		{"all", nil},
		{"crawled only, min weight 2", func(o *export.Options) { o.CrawledOnly = true; o.MinWeight = 2 }},
		{"domains", func(o *export.Options) { o.Domains = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := fixedOptions()
			if tc.opt != nil {
				tc.opt(&opt)
			}
			var want map[uint64][2]float64
			for _, f := range []export.Format{export.FormatJSON, export.FormatGraphML, export.FormatDOT, export.FormatSQLite} {
				path, st := exportFile(t, s, f, opt)
				got := exportRanks(t, f, path)
				if uint64(len(got)) != st.Nodes {
					t.Fatalf("%s: %d nodes with ranks, %d nodes written", f, len(got), st.Nodes)
				}
				if want == nil {
					want = got
					sum := 0.0
					for _, r := range got {
						sum += r[0]
					}
					if sum < 1-1e-9 || sum > 1+1e-9 {
						t.Errorf("%s: pageranks sum to %v, want 1", f, sum)
					}
					continue
				}
				for id, r := range want {
					if got[id] != r {
						t.Errorf("%s: node %d: ranks %v, JSON has %v", f, id, got[id], r)
						break
					}
				}
			}
		})
	}
}

// TestExport_NoRanks: Options.NoRanks leaves the ranks out of every
// format: no GraphML keys for them, no SQLite node_ranks table.
func TestExport_NoRanks(t *testing.T) {
	s := smallStore(t)
	opt := fixedOptions()
	opt.NoRanks = true
	for _, f := range []export.Format{export.FormatJSON, export.FormatGraphML, export.FormatDOT, export.FormatSQLite} {
		path, _ := exportFile(t, s, f, opt)
		if f == export.FormatSQLite {
			var n int
			if err := openSQLite(t, path).QueryRow("SELECT count(*) FROM sqlite_master WHERE name = 'node_ranks'").Scan(&n); err != nil || n != 0 {
				t.Errorf("sqlite: %d node_ranks tables (%v), want none", n, err)
			}
			continue
		}
		if got := exportRanks(t, f, path); len(got) != 0 {
			t.Errorf("%s: %d nodes with ranks, want none", f, len(got))
		}
		if data := string(readFile(t, path)); strings.Contains(data, `harmonic`) || strings.Contains(data, `pagerank`) {
			t.Errorf("%s: mentions the ranks without them", f)
		}
	}
}

// TestExport_RanksHyperBall: above 10,000 nodes the harmonic centrality
// is HyperBall's estimate, and the export says so.
func TestExport_RanksHyperBall(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 10,001-host store")
	}
	s := newStore(t)
	nodes, edges := paGraph(10_001, 3, 2)
	writeGraph(t, s, nodes, edges)
	opt := fixedOptions()
	opt.NoLayout = true // the ranks are the subject
	path, _ := exportFile(t, s, export.FormatSQLite, opt)
	db := openSQLite(t, path)
	var method string
	var n int
	var sum float64
	if err := db.QueryRow("SELECT value FROM meta WHERE key = 'harmonic_method'").Scan(&method); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT count(*), sum(pagerank) FROM node_ranks JOIN nodes USING (node_id)").Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(method, "hyperball") || n != 10_001 || sum < 1-1e-9 || sum > 1+1e-9 {
		t.Errorf("harmonic_method %q, %d ranked nodes with pageranks summing to %v; want hyperball, 10001, 1", method, n, sum)
	}
	var zero int
	if err := db.QueryRow("SELECT count(*) FROM node_ranks WHERE harmonic > 0").Scan(&zero); err != nil {
		t.Fatal(err)
	}
	if zero == 0 {
		t.Error("no node has a harmonic centrality above 0")
	}
}

// TestTop: the top list from the store and from the JSON export agree,
// with every filter; in-weights are the sums of the written edges.
func TestTop(t *testing.T) {
	s := paStore(t, 300)
	for _, tc := range []struct {
		name string
		opt  export.Options
		n    int
	}{
		{"all hosts", export.Options{}, 0},
		{"top 10", export.Options{}, 10},
		{"domains, top 5", export.Options{Domains: true}, 5},
		{"crawled only, min weight 2", export.Options{CrawledOnly: true, MinWeight: 2}, 0},
		{"more than there are", export.Options{Domains: true}, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list, err := export.Top(t.Context(), s, tc.opt, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			opt := fixedOptions()
			opt.MinWeight, opt.CrawledOnly, opt.Domains = tc.opt.MinWeight, tc.opt.CrawledOnly, tc.opt.Domains
			path, st := exportFile(t, s, export.FormatJSON, opt)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fromJSON, err := export.TopFromJSON(f, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			want := int(st.Nodes)
			if tc.n > 0 {
				want = min(tc.n, want)
			}
			if list.Nodes != st.Nodes || list.Edges != st.Edges || len(list.Top) != want || list.Domains != tc.opt.Domains || list.HarmonicMethod != "exact" {
				t.Fatalf("%d nodes, %d edges, %d listed, domains %v, %q; export: %+v", list.Nodes, list.Edges, len(list.Top), list.Domains, list.HarmonicMethod, st)
			}
			if len(fromJSON.Top) != len(list.Top) || fromJSON.Nodes != list.Nodes || fromJSON.Edges != list.Edges || fromJSON.HarmonicMethod != list.HarmonicMethod {
				t.Fatalf("from JSON: %+v", fromJSON)
			}
			var sumIn uint64
			for i, r := range list.Top {
				if r != fromJSON.Top[i] {
					t.Errorf("#%d: store %+v, JSON %+v", i+1, r, fromJSON.Top[i])
				}
				if i > 0 && (r.PageRank > list.Top[i-1].PageRank || r.PageRank == list.Top[i-1].PageRank && r.ID < list.Top[i-1].ID) {
					t.Errorf("#%d out of order: %+v after %+v", i+1, r, list.Top[i-1])
				}
				if r.Host == "" {
					t.Errorf("#%d has no host", i+1)
				}
				sumIn += r.InWeight
			}
			if tc.n == 0 && sumIn != st.Weight {
				t.Errorf("in-weights sum to %d, the edges weigh %d", sumIn, st.Weight)
			}
		})
	}
}

func TestTopFromJSON_Bad(t *testing.T) {
	for name, in := range map[string]string{
		"empty":           ``,
		"not an object":   `[1, 2]`,
		"no ranks":        `{"nodes": [{"id": 1, "host": "a"}], "edges": []}`,
		"edge to nothing": `{"nodes": [{"id": 1, "host": "a", "pagerank": 1, "harmonic": 0}], "edges": [{"source": 1, "target": 2, "weight": 1}]}`,
		"truncated":       `{"nodes": [{"id": 1, "host": "a", "pagerank": 1, "harmonic": 0}`,
		"nodes not array": `{"nodes": 3}`,
	} {
		if _, err := export.TopFromJSON(strings.NewReader(in), 5); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	list, err := export.TopFromJSON(strings.NewReader(`{"directed": true, "graph": {"domains": true, "harmonic_method": "exact"}, "nodes": [{"id": 2, "host": "b", "pagerank": 0.25, "harmonic": 1}, {"id": 1, "host": "a", "pagerank": 0.75, "harmonic": 0}], "edges": [{"source": 1, "target": 2, "weight": 7}]}`), 0)
	if err != nil || !list.Domains || list.Nodes != 2 || list.Edges != 1 || len(list.Top) != 2 || list.Top[0].Host != "a" || list.Top[1].InWeight != 7 {
		t.Errorf("%+v, %v", list, err)
	}
}

// TestTop_EmptyStore: a store without hosts ranks nothing, without error.
func TestTop_EmptyStore(t *testing.T) {
	list, err := export.Top(t.Context(), newStore(t), export.Options{}, 10)
	if err != nil || list.Nodes != 0 || list.Top == nil || len(list.Top) != 0 {
		t.Errorf("%+v, %v", list, err)
	}
	data, err := json.Marshal(list)
	if err != nil || !strings.Contains(string(data), `"top":[]`) {
		t.Errorf("JSON %s, %v", data, err)
	}
}
