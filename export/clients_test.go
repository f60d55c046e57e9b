package export_test

import (
	"bytes"
	"cmp"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/tooltest"
	"github.com/weaver-crawler/weaver/kv"
)

// The tests in this file hand exports to the programs users open them
// with. Locally a missing program skips the test; with CI=true it fails.

// seedSchema is seed 000 §4.1, copied here from the seed rather than from
// package export, so that the test checks the export against the seed.
const seedSchema = `
CREATE TABLE nodes (
    node_id INTEGER PRIMARY KEY AUTOINCREMENT,
    domain_name TEXT UNIQUE NOT NULL,
    description TEXT,
    crawl_count INTEGER DEFAULT 0,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE edges (
    edge_id INTEGER PRIMARY KEY AUTOINCREMENT,
    from_node_id INTEGER NOT NULL,
    to_node_id INTEGER NOT NULL,
    weight INTEGER DEFAULT 1,
    FOREIGN KEY (from_node_id) REFERENCES nodes(node_id),
    FOREIGN KEY (to_node_id) REFERENCES nodes(node_id),
    UNIQUE(from_node_id, to_node_id)
);

CREATE INDEX idx_nodes_domain ON nodes(domain_name);
CREATE INDEX idx_edges_from ON edges(from_node_id);
CREATE INDEX idx_edges_to ON edges(to_node_id);
`

// oracle is what the store holds, computed here the plain way.
type oracle struct {
	counts   graph.Counts
	inWeight map[uint64]uint64 // node id → sum of the weights of its in-edges
	hosts    map[uint64]string
	resume   int // nodes with crawl_count < 3: seed 000 §4.2's resume query
}

func readOracle(tb testing.TB, s *kv.Store) oracle {
	tb.Helper()
	o := oracle{inWeight: map[uint64]uint64{}, hosts: map[uint64]string{}}
	err := s.View(func(tx *kv.Tx) error {
		o.counts = graph.GetCounts(tx)
		if err := graph.ForEachNode(tx, func(n *graph.Node) error {
			o.hosts[n.ID] = n.Host
			if n.CrawlCount < 3 {
				o.resume++
			}
			return nil
		}); err != nil {
			return err
		}
		return graph.ForEachEdge(tx, func(e *graph.Edge) error {
			o.inWeight[e.To] += e.Weight
			return nil
		})
	})
	if err != nil {
		tb.Fatal(err)
	}
	return o
}

// top10 is the seed's "most linked-to hosts" query answered from the
// oracle: host and in-degree weight, heaviest first, ties by id.
func (o oracle) top10() string {
	ids := slices.Collect(maps.Keys(o.inWeight))
	slices.SortFunc(ids, func(a, b uint64) int {
		if c := cmp.Compare(o.inWeight[b], o.inWeight[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	var b strings.Builder
	for _, id := range ids[:min(10, len(ids))] {
		fmt.Fprintf(&b, "%s|%d\n", o.hosts[id], o.inWeight[id])
	}
	return b.String()
}

func sqlite3(tb testing.TB, db, query string) string {
	tb.Helper()
	return string(runTool(tb, nil, tooltest.Tool(tb, "sqlite3"), "-batch", db, query))
}

func TestSQLite_Sqlite3Client(t *testing.T) {
	tooltest.Tool(t, "sqlite3")
	s := paStore(t, 1000)
	o := readOracle(t, s)
	path, st := exportFile(t, s, export.FormatSQLite, fixedOptions())
	if st.Nodes != o.counts.Nodes || st.Edges != o.counts.Edges || st.Weight != o.counts.Weight {
		t.Errorf("stats %+v, store %+v", st, o.counts)
	}
	checks := []struct{ name, query, want string }{
		{"integrity", "PRAGMA integrity_check;", "ok\n"},
		{"foreign keys", "PRAGMA foreign_key_check;", ""},
		{"counts", "SELECT (SELECT count(*) FROM nodes), count(*), sum(weight) FROM edges;",
			fmt.Sprintf("%d|%d|%d\n", o.counts.Nodes, o.counts.Edges, o.counts.Weight)},
		{"top 10 by in-degree weight", `SELECT n.domain_name, sum(e.weight) AS w
			FROM edges e JOIN nodes n ON n.node_id = e.to_node_id
			GROUP BY e.to_node_id ORDER BY w DESC, e.to_node_id LIMIT 10;`, o.top10()},
		{"resume: crawl_count < max", "SELECT count(*) FROM nodes WHERE crawl_count < 3;", fmt.Sprintf("%d\n", o.resume)},
		{"no edge to a missing node", `SELECT count(*) FROM edges e LEFT JOIN nodes n ON n.node_id = e.to_node_id WHERE n.node_id IS NULL;`, "0\n"},
		{"meta counts", "SELECT value FROM meta WHERE key IN ('nodes', 'edges', 'total_weight') ORDER BY key;",
			fmt.Sprintf("%d\n%d\n%d\n", o.counts.Edges, o.counts.Nodes, o.counts.Weight)},
	}
	for _, c := range checks {
		if got := sqlite3(t, path, c.query); got != c.want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
	// The seed's indexes serve the seed's lookups.
	plan := sqlite3(t, path, "EXPLAIN QUERY PLAN SELECT weight FROM edges WHERE to_node_id = 5;")
	if !strings.Contains(plan, "idx_edges_to") {
		t.Errorf("in-link lookup does not use idx_edges_to:\n%s", plan)
	}
	schema := sqlite3(t, path, ".schema")
	t.Logf(".schema:\n%s", schema)
	for _, stmt := range []string{
		"CREATE INDEX idx_nodes_domain ON nodes(domain_name);",
		"CREATE INDEX idx_edges_from ON edges(from_node_id);",
		"CREATE INDEX idx_edges_to ON edges(to_node_id);",
		"CREATE TABLE nodes (\n    node_id INTEGER PRIMARY KEY AUTOINCREMENT,\n    domain_name TEXT UNIQUE NOT NULL,\n    description TEXT,\n    crawl_count INTEGER DEFAULT 0,\n    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP\n,",
		"CREATE TABLE edges (\n    edge_id INTEGER PRIMARY KEY AUTOINCREMENT,\n    from_node_id INTEGER NOT NULL,\n    to_node_id INTEGER NOT NULL,\n    weight INTEGER DEFAULT 1,",
	} {
		if !strings.Contains(schema, stmt) {
			t.Errorf(".schema lacks %q", stmt)
		}
	}
}

// TestSQLite_SeedSchema compares the export's tables, columns, indexes
// and foreign keys with a database made from the seed's DDL itself: the
// seed's columns must come first with the same names, types, defaults and
// constraints, and the indexes must be the same.
func TestSQLite_SeedSchema(t *testing.T) {
	path, _ := exportFile(t, smallStore(t), export.FormatSQLite, fixedOptions())
	got := openSQLite(t, path)
	ref, err := sql.Open("sqlite3", "file:"+filepath.Join(t.TempDir(), "seed.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	if _, err := ref.Exec(seedSchema); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"PRAGMA table_info(nodes)", "PRAGMA table_info(edges)",
		"PRAGMA index_list(nodes)", "PRAGMA index_list(edges)",
		"PRAGMA index_xinfo(idx_nodes_domain)", "PRAGMA index_xinfo(idx_edges_from)", "PRAGMA index_xinfo(idx_edges_to)",
		"PRAGMA index_xinfo(sqlite_autoindex_nodes_1)", "PRAGMA index_xinfo(sqlite_autoindex_edges_1)",
		"PRAGMA foreign_key_list(edges)",
		"SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT IN ('meta', 'edge_hosts', 'sqlite_autoindex_meta_1', 'node_ranks', 'node_facts', 'edge_facts') ORDER BY name",
		"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('nodes', 'edges') ORDER BY name",
	} {
		want := queryStrings(t, ref, q)
		have := queryStrings(t, got, q)
		if strings.HasPrefix(q, "PRAGMA table_info") {
			if len(have) < len(want) {
				t.Errorf("%s: %d columns, the seed has %d", q, len(have), len(want))
				continue
			}
			have = have[:len(want)] // weaver's columns come after the seed's
		}
		if !slices.Equal(have, want) {
			t.Errorf("%s:\ngot  %q\nwant %q", q, have, want)
		}
	}
}

// queryStrings runs q and renders each row as one string.
func queryStrings(tb testing.TB, db *sql.DB, q string) []string {
	tb.Helper()
	rows, err := db.Query(q)
	if err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			tb.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%v", vals))
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

func TestDOT_GraphvizRenders(t *testing.T) {
	dot := tooltest.Tool(t, "dot")
	s := paStore(t, 1000)
	path, st := exportFile(t, s, export.FormatDOT, fixedOptions())
	start := time.Now()
	svg := runTool(t, nil, dot, "-Tsvg", path)
	t.Logf("dot -Tsvg: %d nodes, %d edges rendered in %v, %d bytes of SVG", st.Nodes, st.Edges, time.Since(start).Round(time.Millisecond), len(svg))
	if n := bytes.Count(svg, []byte(`class="node"`)); uint64(n) != st.Nodes {
		t.Errorf("SVG has %d nodes, export %d", n, st.Nodes)
	}
	if n := bytes.Count(svg, []byte(`class="edge"`)); uint64(n) != st.Edges {
		t.Errorf("SVG has %d edges, export %d", n, st.Edges)
	}
	xmlWellFormed(t, svg)
}

// xmlWellFormed checks a document with xmllint when it is installed.
func xmlWellFormed(tb testing.TB, doc []byte) {
	tb.Helper()
	runTool(tb, doc, tooltest.Tool(tb, "xmllint"), "--nonet", "--noout", "-")
}

func TestGraphML_XSD(t *testing.T) {
	xmllint := tooltest.Tool(t, "xmllint")
	xsd := graphmlXSD(t)
	for _, s := range []*kv.Store{smallStore(t), paStore(t, 1000)} {
		for _, opt := range []export.Options{fixedOptions(), {MinWeight: 2, CrawledOnly: true, Domains: true}} {
			path, _ := exportFile(t, s, export.FormatGraphML, opt)
			runTool(t, nil, xmllint, "--nonet", "--noout", path)
			runTool(t, nil, xmllint, "--nonet", "--noout", "--schema", xsd, path)
		}
	}
}

// networkxSummary loads a GraphML or node-link JSON export with networkx
// and returns its node and edge counts, total weight and directedness.
const networkxSummary = `
import json, sys
import networkx as nx
kind, path = sys.argv[1], sys.argv[2]
if kind == "graphml":
    g = nx.read_graphml(path)
else:
    # The README's lines, verbatim.
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    try:
        g = nx.node_link_graph(data, edges="edges")  # networkx 3.4 and later
    except TypeError:
        g = nx.node_link_graph(data, link="edges")  # networkx 2.8 to 3.3
print(json.dumps({
    "nodes": g.number_of_nodes(),
    "edges": g.number_of_edges(),
    "weight": sum(w for _, _, w in g.edges(data="weight")),
    "directed": g.is_directed(),
    "types": sorted({type(w).__name__ for _, _, w in g.edges(data="weight")}),
}))
`

type nxSummary struct {
	Nodes, Edges, Weight uint64
	Directed             bool
	Types                []string
}

// loadNetworkX loads the export at path with py's networkx. Warnings
// are errors: a networkx that deprecates the call fails the test.
func loadNetworkX(tb testing.TB, py, kind, path string) nxSummary {
	tb.Helper()
	out := runTool(tb, nil, py, "-W", "error", "-c", networkxSummary, kind, path)
	var got nxSummary
	if err := json.Unmarshal(out, &got); err != nil {
		tb.Fatalf("networkx output %q: %v", out, err)
	}
	return got
}

// TestGraphML_NetworkX: networkx's read_graphml, in the Python on PATH
// and in Debian's, reads the GraphML export whole.
func TestGraphML_NetworkX(t *testing.T) {
	s := paStore(t, 1000)
	c := storeCounts(t, s)
	path, _ := exportFile(t, s, export.FormatGraphML, fixedOptions())
	withNetworkx(t, func(t *testing.T, py string) {
		got := loadNetworkX(t, py, "graphml", path)
		want := nxSummary{Nodes: c.Nodes, Edges: c.Edges, Weight: c.Weight, Directed: true, Types: []string{"int"}}
		if !reflectEqual(got, want) {
			t.Errorf("networkx read_graphml: got %+v, want %+v", got, want)
		}
	})
}

// TestJSON_NetworkX: the README's lines load the JSON export whole, with
// no warning, in the Python on PATH (networkx 3.x) and in Debian's
// (python3-networkx, 2.8), whose node_link_graph knows no edges= and
// looks for "links" unless told link="edges".
func TestJSON_NetworkX(t *testing.T) {
	s := paStore(t, 1000)
	c := storeCounts(t, s)
	path, _ := exportFile(t, s, export.FormatJSON, fixedOptions())
	withNetworkx(t, func(t *testing.T, py string) {
		got := loadNetworkX(t, py, "json", path)
		want := nxSummary{Nodes: c.Nodes, Edges: c.Edges, Weight: c.Weight, Directed: true, Types: []string{"int"}}
		if !reflectEqual(got, want) {
			t.Errorf("networkx node_link_graph: got %+v, want %+v", got, want)
		}
	})
}

func reflectEqual(a, b nxSummary) bool {
	return a.Nodes == b.Nodes && a.Edges == b.Edges && a.Weight == b.Weight && a.Directed == b.Directed && slices.Equal(a.Types, b.Types)
}

var _ = strconv.Itoa
var _ = exec.Command
