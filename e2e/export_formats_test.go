package e2e_test

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/internal/tooltest"
)

// TestExport_CSVGEXFTop crawls a small fake web, then exports it through
// the binary as CSV, GEXF and JSON in one call, cut to the top 5 by
// in-weight: the three agree on the nodes and edges, the GEXF file is
// well-formed for xmllint (which CI installs: libxml2-utils). Then the
// whole graph as GEXF and JSON: both networkx read the GEXF file with
// read_gexf alone (Debian's 2.8 and the PATH's 3.x, issue 40), every node
// with the JSON export's attributes and its viz position; and
// --gexf-timeline makes it dynamic (the crawl has a history).
func TestExport_CSVGEXFTop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, _ := outputStore(t, dir)
	prefix := filepath.Join(dir, "core")
	gexf := filepath.Join(dir, "core.gexf")
	r := weaverOK(t, dir, "export", "--db", db, "--top", "5", "--by", "in-weight", "--csv", prefix, "--gexf", gexf, "--json")
	var g struct {
		Graph map[string]any
		Nodes []struct{ ID uint64 }
		Edges []struct{ Source, Target uint64 }
	}
	if err := json.Unmarshal([]byte(r.stdout), &g); err != nil {
		t.Fatalf("JSON: %v\n%.500s", err, r.stdout)
	}
	if len(g.Nodes) != 5 || g.Graph["top_by"] != "in-weight" {
		t.Fatalf("JSON: %d nodes, graph %v", len(g.Nodes), g.Graph)
	}
	read := func(name string) [][]string {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		recs, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return recs
	}
	if n, e := len(read(prefix+"-nodes.csv"))-1, len(read(prefix+"-edges.csv"))-1; n != len(g.Nodes) || e != len(g.Edges) {
		t.Errorf("CSV: %d nodes, %d edges; JSON %d, %d", n, e, len(g.Nodes), len(g.Edges))
	}
	b, err := os.ReadFile(gexf)
	if err != nil {
		t.Fatal(err)
	}
	if n, e := strings.Count(string(b), "<node "), strings.Count(string(b), "<edge "); n != len(g.Nodes) || e != len(g.Edges) {
		t.Errorf("GEXF: %d nodes, %d edges; JSON %d, %d", n, e, len(g.Nodes), len(g.Edges))
	}
	// Well-formed XML by libxml2 (the GEXF schema itself is not to be
	// had offline: package export checks the file's structure).
	xmllint := tooltest.Tool(t, "xmllint")
	if out, err := exec.Command(xmllint, "--noout", "--nonet", gexf).CombinedOutput(); err != nil {
		t.Errorf("xmllint: %v\n%s", err, out)
	}
	for _, want := range []string{"core-nodes.csv", "csv, 5 nodes", "core.gexf: gexf, 5 nodes"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}

	full := filepath.Join(dir, "full.gexf")
	r = weaverOK(t, dir, "export", "--db", db, "--gexf", full, "--json")
	if err := json.Unmarshal([]byte(r.stdout), &g); err != nil {
		t.Fatalf("JSON: %v", err)
	}
	var doc struct{ Nodes []map[string]any }
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		t.Run(py, func(t *testing.T) {
			py := tooltest.Python(t, "networkx", py)
			checkGEXFRead(t, py, full, doc.Nodes, len(g.Edges))
		})
	}
	timeline := filepath.Join(dir, "timeline.gexf")
	weaverOK(t, dir, "export", "--db", db, "--gexf-timeline", "--gexf", timeline)
	if b, err := os.ReadFile(timeline); err != nil || !strings.Contains(string(b), `mode="dynamic" timeformat="dateTime"`) {
		t.Errorf("--gexf-timeline: %v %.600s", err, b)
	}
}

// gexfRead is networkx reading a GEXF file as a user would, read_gexf and
// the path, printing its version and every node's attributes.
const gexfRead = `
import json, sys
import networkx as nx
G = nx.read_gexf(sys.argv[1])
json.dump({"version": nx.__version__, "edges": G.number_of_edges(), "nodes": {n: d for n, d in G.nodes(data=True)}}, sys.stdout)
`

// checkGEXFRead reads the GEXF file at path with networkx in py and
// checks its nodes against the JSON export's (want): every attribute
// with its value, the viz position at x and y; and the edges' number.
func checkGEXFRead(t *testing.T, py, path string, want []map[string]any, edges int) {
	t.Helper()
	out, err := exec.Command(py, "-c", gexfRead, path).CombinedOutput()
	if err != nil {
		t.Fatalf("%s read_gexf: %v\n%s", py, err, out)
	}
	var got struct {
		Version string
		Edges   int
		Nodes   map[string]map[string]any
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(got.Nodes) != len(want) || got.Edges != edges || len(want) < 10 {
		t.Fatalf("networkx %s: %d nodes, %d edges; JSON %d, %d", got.Version, len(got.Nodes), got.Edges, len(want), edges)
	}
	for _, w := range want {
		id := strconv.FormatFloat(w["id"].(float64), 'f', -1, 64)
		n := got.Nodes[id]
		if n == nil || n["label"] != w["host"] {
			t.Errorf("node %s: %v, JSON %v", id, n, w)
			continue
		}
		for k, v := range w {
			if k == "id" || v == nil || v == "" {
				continue
			}
			if gv, ok := n[k].(float64); ok {
				if wv, ok := v.(float64); !ok || math.Abs(gv-wv) > 1e-12*math.Abs(wv) {
					t.Errorf("%s: %s is %v, JSON %v", w["host"], k, n[k], v)
				}
			} else if n[k] != v {
				t.Errorf("%s: %s is %#v, JSON %#v", w["host"], k, n[k], v)
			}
		}
		pos, _ := n["viz"].(map[string]any)["position"].(map[string]any)
		x, _ := pos["x"].(float64)
		y, _ := pos["y"].(float64)
		if pos == nil || math.Abs(x-w["x"].(float64)) > 0.0005 || math.Abs(y-w["y"].(float64)) > 0.0005 {
			t.Errorf("%s: viz position %v, JSON (%v, %v)", w["host"], pos, w["x"], w["y"])
		}
	}
	t.Logf("networkx %s read %d nodes, %d edges", got.Version, len(got.Nodes), got.Edges)
}
