package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/tooltest"
	"github.com/weaver-crawler/weaver/kv"
)

// factsHosts is a graph with issue 20's facts: canonical URLs, robots
// directives, pages per host, a mirror group (cam.ac.uk copies
// www.cam.ac.uk), edges with nofollow and redirect counts, and hosts that
// Common Crawl's naming merges (www.ox.ac.uk, ox.ac.uk, ox.ac.uk:8080).
var factsHosts = []string{
	"www.cam.ac.uk", "cam.ac.uk", "www.ox.ac.uk", "ox.ac.uk", "ox.ac.uk:8080", "example.com", "192.0.2.1", "blog.example.com",
}

// factsEdges: from, to, weight, nofollow, redirect (positions in factsHosts).
var factsEdges = [][5]uint64{
	{0, 2, 3, 1, 0}, {0, 1, 1, 0, 1}, {1, 2, 2, 2, 0}, {2, 3, 1, 0, 0}, {2, 5, 4, 0, 0},
	{3, 5, 1, 0, 0}, {4, 5, 2, 1, 1}, {5, 0, 1, 0, 0}, {5, 6, 1, 0, 0}, {6, 7, 1, 0, 0}, {3, 2, 1, 0, 0},
}

func factsStore(tb testing.TB) *kv.Store {
	tb.Helper()
	s := newStore(tb)
	err := s.Update(func(tx *kv.Tx) error {
		ids := make([]uint64, len(factsHosts))
		for i, h := range factsHosts {
			n, _, err := graph.Ensure(tx, h, "https", t0.Add(time.Duration(i)*time.Minute))
			if err != nil {
				return err
			}
			ids[i] = n.ID
			if i == 7 {
				continue // discovered only
			}
			n.Status, n.CrawlCount, n.HTTPStatus = graph.StatusCrawled, 1, 200
			n.Title = "Host " + h
			n.ContentHash = fmt.Sprintf("%064x", i+1)
			if i == 1 {
				n.ContentHash = fmt.Sprintf("%064x", 1) // the same home page as www.cam.ac.uk
			}
			n.PagesFetched = 1 + i%4
			if i%2 == 0 {
				n.Canonical = "https://" + h + "/"
			}
			if i == 2 {
				n.RobotsDirectives = "noindex,noarchive"
			}
			if _, err := graph.NoteContentHash(tx, &n); err != nil {
				return err
			}
			if err := graph.Put(tx, &n); err != nil {
				return err
			}
		}
		for _, e := range factsEdges {
			if err := graph.AddEdgeFacts(tx, ids[e[0]], ids[e[1]], e[2], e[3], e[4], t0.Add(time.Hour)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

type factsJSON struct {
	Nodes []struct {
		ID           uint64 `json:"id"`
		Host         string `json:"host"`
		Canonical    string `json:"canonical"`
		Robots       string `json:"robots"`
		MirrorOf     uint64 `json:"mirror_of"`
		PagesFetched int    `json:"pages_fetched"`
	} `json:"nodes"`
	Edges []struct {
		Source, Target, Weight, Nofollow, Redirect uint64
	} `json:"edges"`
}

func readFactsJSON(t *testing.T, s *kv.Store, opt export.Options) factsJSON {
	t.Helper()
	var b bytes.Buffer
	if _, err := export.JSON(context.Background(), &b, s, opt); err != nil {
		t.Fatal(err)
	}
	var got factsJSON
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestFacts_JSON(t *testing.T) {
	got := readFactsJSON(t, factsStore(t), fixedOptions())
	if len(got.Nodes) != len(factsHosts) || len(got.Edges) != len(factsEdges) {
		t.Fatalf("%d nodes, %d edges", len(got.Nodes), len(got.Edges))
	}
	for i, n := range got.Nodes {
		wantMirror := uint64(0)
		if i == 1 {
			wantMirror = got.Nodes[0].ID
		}
		if n.MirrorOf != wantMirror || (i != 7 && n.PagesFetched != 1+i%4) || (i%2 == 0 && n.Canonical != "https://"+n.Host+"/") {
			t.Errorf("node %s: %+v", n.Host, n)
		}
	}
	if got.Nodes[2].Robots != "noindex,noarchive" {
		t.Errorf("robots of %s: %q", got.Nodes[2].Host, got.Nodes[2].Robots)
	}
	for _, e := range got.Edges {
		found := false
		for _, f := range factsEdges {
			if got.Nodes[f[0]].ID == e.Source && got.Nodes[f[1]].ID == e.Target {
				found = true
				if e.Weight != f[2] || e.Nofollow != f[3] || e.Redirect != f[4] {
					t.Errorf("edge %d→%d: %+v, want %v", e.Source, e.Target, e, f)
				}
			}
		}
		if !found {
			t.Errorf("edge %+v not in the fixture", e)
		}
	}
}

// --no-mirrors leaves out cam.ac.uk and its edges, in and out.
func TestFacts_NoMirrors(t *testing.T) {
	opt := fixedOptions()
	opt.NoMirrors = true
	got := readFactsJSON(t, factsStore(t), opt)
	if len(got.Nodes) != len(factsHosts)-1 || len(got.Edges) != len(factsEdges)-2 {
		t.Errorf("%d nodes, %d edges; want %d, %d", len(got.Nodes), len(got.Edges), len(factsHosts)-1, len(factsEdges)-2)
	}
	for _, n := range got.Nodes {
		if n.Host == "cam.ac.uk" || n.MirrorOf != 0 {
			t.Errorf("mirror %s exported", n.Host)
		}
	}
	// The domain graph leaves the copy out too.
	opt.Domains = true
	d := readFactsJSON(t, factsStore(t), opt)
	for _, e := range d.Edges {
		if e.Nofollow > e.Weight || e.Redirect > e.Weight {
			t.Errorf("domain edge %+v: facts above weight", e)
		}
	}
}

func TestFacts_GraphML(t *testing.T) {
	s := factsStore(t)
	path, _ := exportFile(t, s, export.FormatGraphML, fixedOptions())
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<data key="mirror_of">www.cam.ac.uk</data>`, `<data key="robots">noindex,noarchive</data>`,
		`<data key="canonical">https://www.cam.ac.uk/</data>`, `<data key="pages_fetched">2</data>`,
		`<data key="weight">2</data><data key="nofollow">1</data><data key="redirect">1</data><data key="frame">0</data><data key="first_seen">`,
	} {
		if !bytes.Contains(doc, []byte(want)) {
			t.Errorf("GraphML lacks %s", want)
		}
	}
	xmllint := tooltest.Tool(t, "xmllint")
	runTool(t, nil, xmllint, "--nonet", "--noout", "--schema", graphmlXSD(t), path)
	out := runTool(t, nil, tooltest.Python(t, "networkx"), "-c", `
import sys, networkx as nx
g = nx.read_graphml(sys.argv[1])
print(sum(d.get("nofollow", 0) for _, _, d in g.edges(data=True)),
      sum(d.get("redirect", 0) for _, _, d in g.edges(data=True)),
      sorted(d["mirror_of"] for _, d in g.nodes(data=True) if "mirror_of" in d))
`, path)
	if got, want := strings.TrimSpace(string(out)), "4 2 ['www.cam.ac.uk']"; got != want {
		t.Errorf("networkx: %s, want %s", got, want)
	}
}

func TestFacts_SQLite(t *testing.T) {
	s := factsStore(t)
	path, _ := exportFile(t, s, export.FormatSQLite, fixedOptions())
	db := openSQLite(t, path)
	for _, c := range []struct{ q, want string }{
		{"SELECT count(*), sum(nofollow), sum(redirect) FROM edge_facts JOIN edges USING (edge_id)", "[11 4 2]"},
		{"SELECT count(*) FROM edge_facts f JOIN edges e USING (edge_id) WHERE f.first_seen = e.first_seen", "[11]"},
		{`SELECT n.domain_name, m.domain_name FROM node_facts f JOIN nodes n USING (node_id)
			JOIN nodes m ON m.node_id = f.mirror_of`, "[cam.ac.uk www.cam.ac.uk]"},
		{"SELECT robots, pages_fetched FROM node_facts JOIN nodes USING (node_id) WHERE domain_name = 'www.ox.ac.uk'", "[noindex,noarchive 3]"},
		{"SELECT count(*), count(canonical) FROM node_facts", "[8 4]"},
		{"SELECT value FROM meta WHERE key = 'no_mirrors'", "[false]"},
	} {
		if got := strings.Join(queryStrings(t, db, c.q), " "); got != c.want {
			t.Errorf("%s: got %s, want %s", c.q, got, c.want)
		}
	}
}

// readGz returns the lines of a gzipped text file.
func readGz(t *testing.T, path string) []string {
	t.Helper()
	b := tooltest.Gunzip(t, path)
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestCCHostGraph_Format(t *testing.T) {
	s := factsStore(t)
	prefix := filepath.Join(t.TempDir(), "weaver")
	st, err := export.CCHostGraph(context.Background(), s, prefix, fixedOptions())
	if err != nil {
		t.Fatal(err)
	}
	vpath, epath := export.CCHostGraphFiles(prefix)
	// Reversed and sorted: 192.0.2.1, com.example, com.example.blog,
	// uk.ac.cam (www.cam.ac.uk, cam.ac.uk), uk.ac.ox (three hosts).
	wantV := []string{"0\t192.0.2.1", "1\tcom.example", "2\tcom.example.blog", "3\tuk.ac.cam", "4\tuk.ac.ox"}
	if got := readGz(t, vpath); strings.Join(got, "\n") != strings.Join(wantV, "\n") {
		t.Errorf("vertices:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantV, "\n"))
	}
	// cam→ox, cam→cam (dropped), ox→ox (dropped), ox→example, example→cam,
	// example→192.0.2.1, 192.0.2.1→blog.example.com.
	wantE := []string{"0\t2", "1\t0", "1\t3", "3\t4", "4\t1"}
	if got := readGz(t, epath); strings.Join(got, "\n") != strings.Join(wantE, "\n") {
		t.Errorf("edges:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantE, "\n"))
	}
	if st.Nodes != 5 || st.Edges != 5 {
		t.Errorf("stats %+v", st)
	}
	for _, c := range [][2]string{{"www.cam.ac.uk", "uk.ac.cam"}, {"ox.ac.uk:8080", "uk.ac.ox"}, {"www.example.com", "com.example"},
		{"wwwx.example.com", "com.example.wwwx"}, {"[2001:db8::1]:8080", "[2001:db8::1]"}, {"10.0.0.1:80", "10.0.0.1"}, {"localhost", "localhost"}} {
		if got := export.ReverseHost(c[0]); got != c[1] {
			t.Errorf("ReverseHost(%q) = %q, want %q", c[0], got, c[1])
		}
	}
}

// ccCheck loads the Common Crawl files with pandas and networkx and
// compares them with a host graph it computes itself, in Python, from the
// SQLite export's seed tables: reversal, www. stripping, merging, ids,
// deduplication and order.
const ccCheck = `
import gzip, sqlite3, sys
import pandas as pd
import networkx as nx
db, vpath, epath = sys.argv[1:4]
con = sqlite3.connect(db)
def rev(h):
    if h.startswith("["):
        return h[:h.index("]") + 1]
    if ":" in h:
        h = h.rsplit(":", 1)[0]
    if all(p.isdigit() for p in h.split(".")) and h.count(".") == 3:
        return h
    if h.startswith("www."):
        h = h[4:]
    return ".".join(reversed(h.split(".")))
name = {i: rev(h) for i, h in con.execute("SELECT node_id, domain_name FROM nodes")}
names = sorted(set(name.values()), key=lambda s: s.encode())
vid = {n: i for i, n in enumerate(names)}
want_edges = sorted({(vid[name[a]], vid[name[b]]) for a, b in con.execute("SELECT from_node_id, to_node_id FROM edges")
                     if vid[name[a]] != vid[name[b]]})
v = pd.read_csv(vpath, sep="\t", header=None, names=["id", "name"], dtype={"id": "int64", "name": "str"}, compression="gzip", keep_default_na=False)
e = pd.read_csv(epath, sep="\t", header=None, names=["src", "dst"], dtype="int64", compression="gzip")
problems = []
if list(v["id"]) != list(range(len(names))):
    problems.append("vertex ids are not 0..n-1 in order")
if list(v["name"]) != names:
    problems.append("vertex names %r, want %r" % (list(v["name"])[:10], names[:10]))
got_edges = list(zip(e["src"], e["dst"]))
if got_edges != want_edges:
    problems.append("edges %r, want %r" % (got_edges[:10], want_edges[:10]))
g = nx.from_pandas_edgelist(e, "src", "dst", create_using=nx.DiGraph)
g.add_nodes_from(v["id"])
if g.number_of_nodes() != len(names) or g.number_of_edges() != len(want_edges) or nx.number_of_selfloops(g) != 0:
    problems.append("networkx: %d nodes, %d edges, %d self-loops" % (g.number_of_nodes(), g.number_of_edges(), nx.number_of_selfloops(g)))
print("\n".join(problems) if problems else "ok %d %d" % (len(names), len(want_edges)))
`

// needPandas returns a Python 3 with pandas and networkx, or skips (fails
// under CI=true).
func needPandas(tb testing.TB) string {
	tb.Helper()
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import pandas, networkx").Run() == nil {
			return p
		}
	}
	tooltest.Missing(tb, "no python3 with pandas and networkx (apt-get install python3-pandas python3-networkx)")
	return ""
}

// TestCCHostGraph_Pandas proves the Common Crawl files with readers
// weaver did not write: pandas reads them, networkx builds the graph, and
// both are compared with what Python derives from the SQLite export of
// the same store, for the facts fixture and a 1,000-host graph, with and
// without filters.
func TestCCHostGraph_Pandas(t *testing.T) {
	py := needPandas(t)
	for _, tc := range []struct {
		name string
		s    *kv.Store
		opt  func(*export.Options)
	}{
		{"facts", factsStore(t), func(*export.Options) {}},
		{"facts without mirrors", factsStore(t), func(o *export.Options) { o.NoMirrors = true }},
		{"1000 hosts", paStore(t, 1000), func(*export.Options) {}},
		{"1000 hosts crawled, weight 2", paStore(t, 1000), func(o *export.Options) { o.CrawledOnly, o.MinWeight = true, 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := fixedOptions()
			opt.NoRanks = true
			tc.opt(&opt)
			db, _ := exportFile(t, tc.s, export.FormatSQLite, opt)
			prefix := filepath.Join(t.TempDir(), "cc")
			if _, err := export.CCHostGraph(context.Background(), tc.s, prefix, opt); err != nil {
				t.Fatal(err)
			}
			vpath, epath := export.CCHostGraphFiles(prefix)
			out := strings.TrimSpace(string(runTool(t, nil, py, "-c", ccCheck, db, vpath, epath)))
			if !strings.HasPrefix(out, "ok ") {
				t.Errorf("pandas/networkx:\n%s", out)
			}
			t.Logf("%s", out)
		})
	}
}

// The two files are refused over a database, like every text format.
func TestCCHostGraph_RefusesDatabase(t *testing.T) {
	s := factsStore(t)
	db, _ := exportFile(t, s, export.FormatSQLite, fixedOptions())
	prefix := strings.TrimSuffix(db, ".db")
	vpath, _ := export.CCHostGraphFiles(prefix)
	data, _ := os.ReadFile(db)
	if err := os.WriteFile(vpath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := export.CCHostGraph(context.Background(), s, prefix, fixedOptions()); err == nil {
		t.Error("a SQLite database was overwritten")
	}
}

// DOT edges carry their facts, and a link made only with typed links is
// dashed; Graphviz draws the file.
func TestFacts_DOT(t *testing.T) {
	var b bytes.Buffer
	if _, err := export.DOT(context.Background(), &b, factsStore(t), fixedOptions()); err != nil {
		t.Fatal(err)
	}
	doc := b.String()
	if n := strings.Count(doc, "style=dashed"); n != 1 { // cam.ac.uk → www.ox.ac.uk: 2 of 2 typed
		t.Errorf("%d dashed edges, want 1:\n%s", n, doc)
	}
	if !strings.Contains(doc, "nofollow=1, redirect=1") {
		t.Errorf("no edge with its facts:\n%s", doc)
	}
	runTool(t, b.Bytes(), tooltest.Tool(t, "dot"), "-Tsvg")
}
