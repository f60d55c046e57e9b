package e2e_test

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/internal/tooltest"
)

// TestExport_CSVGEXFTop crawls a small fake web, then exports it through
// the binary as CSV, GEXF and JSON in one call, cut to the top 5 by
// in-weight: the three agree on the nodes and edges, the GEXF file is
// well-formed for xmllint (which CI installs: libxml2-utils).
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
	// Well-formed XML by libxml2 (the GEXF 1.3 schema itself is not to be
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
}
