package export_test

import (
	"bytes"
	"context"
	"encoding/json"
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

// ht is the history fixture's clock: ht(m) is t0 plus m minutes.
func ht(m float64) time.Time { return t0.Add(time.Duration(m * float64(time.Minute))) }

// historyStore is a store with a crawl history:
//
//   - a.test crawled at 1 {b:1, c:2}, 2 (the same), 3 {c:2} (b gone, the
//     page changed: "A2"), 4 {b:1, c:2} (b back, "A3");
//   - b.test crawled at 1.5 {a:1, c:1}, 4.5 {a:1, d:1} (c gone: its
//     latest crawl no longer links c);
//   - c.test crawled at 1.2 {} and at 4 answered 304 (unchanged);
//   - d.test first seen at 4.5, never crawled.
func historyStore(tb testing.TB) (*kv.Store, map[string]uint64) {
	tb.Helper()
	s := newStore(tb)
	ids := map[string]uint64{}
	err := s.Update(func(tx *kv.Tx) error {
		node := func(host string, first time.Time) *graph.Node {
			n, _, err := graph.Ensure(tx, host, "https", first)
			if err != nil {
				tb.Fatal(err)
			}
			ids[host] = n.ID
			return &n
		}
		nodes := map[string]*graph.Node{
			"a.test": node("a.test", ht(0)), "b.test": node("b.test", ht(1)),
			"c.test": node("c.test", ht(1)), "d.test": node("d.test", ht(4.5)),
		}
		crawl := func(host string, at time.Time, changed, notModified bool, title string, links map[string]uint64) {
			from := ids[host]
			var ls []graph.Link
			for to, w := range links {
				ls = append(ls, graph.Link{To: ids[to], Weight: w})
				if err := graph.AddEdgeFacts(tx, from, ids[to], w, 0, 0, at); err != nil {
					tb.Fatal(err)
				}
			}
			graph.SortLinks(ls)
			prev, ok, err := graph.LatestCrawl(tx, from)
			if err != nil {
				tb.Fatal(err)
			}
			var pp *graph.Crawl
			if ok {
				pp = &prev
			}
			if err := graph.PutCrawl(tx, from, graph.Crawl{At: at, Changed: changed, NotModified: notModified, Links: ls}, pp); err != nil {
				tb.Fatal(err)
			}
			n := nodes[host]
			n.CrawlCount++
			n.LastCrawl, n.LastSeen = at, at
			n.Status, n.HTTPStatus = graph.StatusCrawled, 200
			if !notModified {
				n.Title = title
			}
		}
		crawl("a.test", ht(1), false, false, "A1", map[string]uint64{"b.test": 1, "c.test": 2})
		crawl("c.test", ht(1.2), false, false, "C", nil)
		crawl("b.test", ht(1.5), false, false, "B1", map[string]uint64{"a.test": 1, "c.test": 1})
		crawl("a.test", ht(2), false, false, "A1", map[string]uint64{"b.test": 1, "c.test": 2})
		crawl("a.test", ht(3), true, false, "A2", map[string]uint64{"c.test": 2})
		crawl("a.test", ht(4), true, false, "A3", map[string]uint64{"b.test": 1, "c.test": 2})
		crawl("c.test", ht(4), false, true, "", nil)
		crawl("b.test", ht(4.5), true, false, "B2", map[string]uint64{"a.test": 1, "d.test": 1})
		for _, n := range nodes {
			if err := graph.Put(tx, n); err != nil {
				tb.Fatal(err)
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return s, ids
}

// exportJSON exports s as JSON with opt and decodes it.
func exportJSONDoc(t *testing.T, s *kv.Store, opt export.Options) (graphMeta map[string]any, nodes map[string]map[string]any, edges map[[2]string]map[string]any) {
	t.Helper()
	var buf bytes.Buffer
	if _, err := export.Write(context.Background(), &buf, s, export.FormatJSON, opt); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Graph map[string]any
		Nodes []map[string]any
		Edges []map[string]any
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, buf.Bytes())
	}
	hosts := map[float64]string{}
	nodes = map[string]map[string]any{}
	for _, n := range doc.Nodes {
		hosts[n["id"].(float64)] = n["host"].(string)
		nodes[n["host"].(string)] = n
	}
	edges = map[[2]string]map[string]any{}
	for _, e := range doc.Edges {
		edges[[2]string{hosts[e["source"].(float64)], hosts[e["target"].(float64)]}] = e
	}
	return doc.Graph, nodes, edges
}

// TestHistory_GoneInEveryFormat: the edge its source's latest crawl no
// longer links (b→c) is marked gone in every format, with its first and
// last seen; GEXF is static, and with GEXFTimeline dynamic, where the
// edge that went and came back (a→b) has two spells.
func TestHistory_GoneInEveryFormat(t *testing.T) {
	s, ids := historyStore(t)
	opt := fixedOptions()
	opt.NoRanks = true
	_, _, edges := exportJSONDoc(t, s, opt)
	for k, e := range edges {
		if want := k == [2]string{"b.test", "c.test"}; (e["gone"] == true) != want {
			t.Errorf("json: edge %v gone %v, want %v", k, e["gone"], want)
		}
	}
	if e := edges[[2]string{"b.test", "c.test"}]; e["last_seen"] != "2025-01-16T10:01:30Z" || e["first_seen"] != "2025-01-16T10:01:30Z" {
		t.Errorf("json: b→c %v", e)
	}

	read := func(f export.Format) string {
		var buf bytes.Buffer
		if _, err := export.Write(context.Background(), &buf, s, f, opt); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	b, c := ids["b.test"], ids["c.test"]
	id := func(n uint64) string { return strconv.FormatUint(n, 10) }

	graphml := read(export.FormatGraphML)
	if n := strings.Count(graphml, `<data key="gone">true</data>`); n != 1 ||
		!strings.Contains(graphml, `<edge source="n`+id(b)+`" target="n`+id(c)+`"><data key="weight">1</data><data key="nofollow">0</data><data key="redirect">0</data><data key="frame">0</data><data key="first_seen">2025-01-16T10:01:30Z</data><data key="last_seen">2025-01-16T10:01:30Z</data><data key="gone">true</data></edge>`) {
		t.Errorf("graphml: %d gone edges\n%s", n, graphml)
	}
	dot := read(export.FormatDOT)
	if n := strings.Count(dot, "gone=true, style=dotted"); n != 1 ||
		!regexp.MustCompile(`"n`+id(b)+`" -> "n`+id(c)+`" \[[^\]]*first_seen="2025-01-16T10:01:30Z", last_seen="2025-01-16T10:01:30Z", gone=true, style=dotted\]`).MatchString(dot) {
		t.Errorf("dot: %d gone edges\n%s", n, dot)
	}

	path, _ := exportFile(t, s, export.FormatSQLite, opt)
	db := openSQLite(t, path)
	var from, to int64
	var gone int
	if err := db.QueryRow(`SELECT e.from_node_id, e.to_node_id, f.gone FROM edges e JOIN edge_facts f USING (edge_id) WHERE f.gone = 1`).Scan(&from, &to, &gone); err != nil || uint64(from) != b || uint64(to) != c {
		t.Errorf("sqlite: gone edge %d→%d, %v", from, to, err)
	}
	var all, goneCount int
	if err := db.QueryRow(`SELECT count(*), sum(gone) FROM edge_facts`).Scan(&all, &goneCount); err != nil || all != len(edges) || goneCount != 1 {
		t.Errorf("sqlite: %d edge_facts, %d gone, %v", all, goneCount, err)
	}

	prefix := filepath.Join(t.TempDir(), "h")
	if _, err := export.CSV(context.Background(), s, prefix, opt); err != nil {
		t.Fatal(err)
	}
	_, epath := export.CSVFiles(prefix)
	csv, err := os.ReadFile(epath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(strings.SplitN(string(csv), "\n", 2)[0], ",gone,frame") || strings.Count(string(csv), ",true,0\n") != 1 ||
		!strings.Contains(string(csv), ",b.test,c.test,1,2025-01-16T10:01:30Z,2025-01-16T10:01:30Z,0,0,true,0\n") {
		t.Errorf("csv:\n%s", csv)
	}

	// GEXF is static by default: every client reads it (networkx
	// included, below), gone as an attribute.
	gexf := read(export.FormatGEXF)
	for _, no := range []string{`mode="dynamic"`, "timeformat", "<spells>", " start="} {
		if strings.Contains(gexf, no) {
			t.Errorf("static gexf has %s\n%s", no, gexf)
		}
	}
	if n := strings.Count(gexf, `<attvalue for="gone" value="true"/>`); n != 1 {
		t.Errorf("static gexf: %d gone edges\n%s", n, gexf)
	}
	static := filepath.Join(t.TempDir(), "static.gexf")
	if err := os.WriteFile(static, []byte(gexf), 0o644); err != nil {
		t.Fatal(err)
	}
	// With GEXFTimeline it is dynamic, for Gephi's timeline.
	opt.GEXFTimeline = true
	gexf = read(export.FormatGEXF)
	opt.GEXFTimeline = false
	for _, want := range []string{
		`<graph defaultedgetype="directed" mode="dynamic" timeformat="dateTime">`,
		`<node id="` + id(ids["d.test"]) + `" label="d.test" start="2025-01-16T10:04:30Z">`,
		// a→b: present from 1 to 3, and from 4 on.
		`<spells><spell start="2025-01-16T10:01:00Z" end="2025-01-16T10:03:00Z"/><spell start="2025-01-16T10:04:00Z"/></spells>`,
		// b→c: from 1.5 until b's crawl at 4.5 left it out.
		`source="` + id(b) + `" target="` + id(c) + `" weight="1" start="2025-01-16T10:01:30Z" end="2025-01-16T10:04:30Z">`,
		`<attvalue for="gone" value="true"/>`,
	} {
		if !strings.Contains(gexf, want) {
			t.Errorf("gexf timeline lacks %s\n%s", want, gexf)
		}
	}
	p := filepath.Join(t.TempDir(), "h.gexf")
	if err := os.WriteFile(p, []byte(gexf), 0o644); err != nil {
		t.Fatal(err)
	}
	runTool(t, nil, tooltest.Tool(t, "xmllint"), "--noout", "--nonet", p)
	withNetworkx(t, func(t *testing.T, py string) {
		// The static file as it is; the timeline with its timeformat
		// renamed to "date", as docs/exports.md says (networkx knows no
		// "dateTime"), the times then strings.
		got := readGEXF(t, py, static)
		gone := 0
		for _, e := range got.Edges {
			if e[2].(map[string]any)["gone"] == true {
				gone++
			}
		}
		if len(got.Nodes) != 4 || len(got.Edges) != len(edges) || gone != 1 {
			t.Errorf("networkx read the static file: %d nodes, %d edges, %d gone", len(got.Nodes), len(got.Edges), gone)
		}
		out := runTool(t, nil, py, "-c", gexfDynamicNetworkx, p)
		if want := "[['2025-01-16T10:01:00Z', '2025-01-16T10:03:00Z'], ['2025-01-16T10:04:00Z', 'None']]"; !strings.Contains(string(out), want) {
			t.Errorf("networkx: a→b spells %s, want %s", out, want)
		}
	})
}

// gexfDynamicNetworkx reads a dynamic GEXF export with networkx, its
// timeformat renamed to "date", and prints the spells of the edge 1→2.
const gexfDynamicNetworkx = `
import io, sys, networkx as nx
data = open(sys.argv[1], encoding="utf-8").read().replace('timeformat="dateTime"', 'timeformat="date"')
G = nx.read_gexf(io.BytesIO(data.encode("utf-8")))
print([list(s) for s in G.edges["1", "2"]["spells"]])
`

// TestHistory_NodesAt: with At, a node's counts and times are the
// history's then, its page fields those of its last crawl by then only
// when no later crawl changed the page, and as_of says which; nodes first
// seen later are left out; every format carries as_of.
func TestHistory_NodesAt(t *testing.T) {
	s, _ := historyStore(t)
	opt := fixedOptions()
	opt.NoRanks = true
	opt.At = ht(2.5)
	meta, nodes, edges := exportJSONDoc(t, s, opt)
	if meta["at"] != "2025-01-16T10:02:30Z" || !strings.Contains(meta["node_attributes"].(string), "as_of") {
		t.Errorf("graph metadata %v", meta)
	}
	type want struct {
		asOf, status, title, lastCrawl string
		crawls                         float64
	}
	for host, w := range map[string]want{
		"a.test": {export.AsOfCrawls, "", "", "2025-01-16T10:02:00Z", 2}, // changed at 3
		"b.test": {export.AsOfCrawls, "", "", "2025-01-16T10:01:30Z", 1}, // changed at 4.5
		"c.test": {export.AsOfPage, "crawled", "C", "2025-01-16T10:01:12Z", 1},
	} {
		n := nodes[host]
		if n == nil {
			t.Errorf("%s missing", host)
			continue
		}
		title, _ := n["title"].(string)
		lastCrawl, _ := n["last_crawl"].(string)
		if n["as_of"] != w.asOf || n["status"] != w.status || title != w.title || lastCrawl != w.lastCrawl || n["crawl_count"] != w.crawls {
			t.Errorf("%s at 2.5: %v, want %+v", host, n, w)
		}
		if n["as_of"] != export.AsOfPage && n["http_status"] != nil {
			t.Errorf("%s: http_status %v of a later page", host, n["http_status"])
		}
	}
	if _, ok := nodes["d.test"]; ok || len(nodes) != 3 {
		t.Errorf("nodes at 2.5: %v", nodes)
	}
	if len(edges) != 4 || edges[[2]string{"a.test", "c.test"}]["weight"] != 2.0 {
		t.Errorf("edges at 2.5: %v", edges)
	}

	// After the last crawl every record is as it was.
	opt.At = ht(5)
	_, nodes, _ = exportJSONDoc(t, s, opt)
	for host, n := range nodes {
		if n["as_of"] != export.AsOfAt {
			t.Errorf("%s at 5: as_of %v", host, n["as_of"])
		}
	}
	if nodes["a.test"]["title"] != "A3" || nodes["a.test"]["crawl_count"] != 4.0 {
		t.Errorf("a at 5: %v", nodes["a.test"])
	}

	// Every format carries as_of.
	opt.At = ht(2.5)
	for _, f := range []export.Format{export.FormatGraphML, export.FormatDOT, export.FormatGEXF} {
		var buf bytes.Buffer
		if _, err := export.Write(context.Background(), &buf, s, f, opt); err != nil {
			t.Fatal(err)
		}
		if out := buf.String(); !strings.Contains(out, "page") || !strings.Contains(out, "as_of") {
			t.Errorf("%s lacks as_of:\n%s", f, out)
		}
	}
	path, _ := exportFile(t, s, export.FormatSQLite, opt)
	db := openSQLite(t, path)
	var asOf, note string
	if err := db.QueryRow(`SELECT a.as_of FROM node_at a JOIN nodes n USING (node_id) WHERE n.domain_name = 'c.test'`).Scan(&asOf); err != nil || asOf != export.AsOfPage {
		t.Errorf("sqlite node_at: %q, %v", asOf, err)
	}
	if err := db.QueryRow(`SELECT value FROM meta WHERE key = 'node_attributes'`).Scan(&note); err != nil || !strings.Contains(note, "node_at") {
		t.Errorf("sqlite meta node_attributes: %q, %v", note, err)
	}
	prefix := filepath.Join(t.TempDir(), "h")
	if _, err := export.CSV(context.Background(), s, prefix, opt); err != nil {
		t.Fatal(err)
	}
	npath, _ := export.CSVFiles(prefix)
	csv, err := os.ReadFile(npath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(strings.SplitN(string(csv), "\n", 2)[0], ",as_of") || !strings.Contains(string(csv), ",page\n") {
		t.Errorf("csv nodes:\n%s", csv)
	}
}
