package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExport_GEXF: --gexf writes GEXF 1.2 to stdout or a FILE, counts as
// a stdout format for the one-at-most rule, and takes --top;
// --gexf-timeline needs --gexf.
func TestExport_GEXF(t *testing.T) {
	db := exportStore(t)
	code, stdout, stderr := runExportCmd(t, "--db", db, "--gexf")
	if code != 0 || !strings.Contains(stdout, `<gexf xmlns="http://www.gexf.net/1.2draft"`) || strings.Count(stdout, "<node ") != 3 {
		t.Errorf("--gexf to stdout: exit %d, %.300s\n%s", code, stdout, stderr)
	}
	if code, _, stderr := runExportCmd(t, "--db", db, "--gexf", "--json"); code != 2 || !strings.Contains(stderr, "only one format can be written to stdout") {
		t.Errorf("--gexf --json both to stdout: exit %d, stderr:\n%s", code, stderr)
	}
	path := filepath.Join(t.TempDir(), "core.gexf")
	code, _, stderr = runExportCmd(t, "--db", db, "--top", "1", "--gexf", path, "--json")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(b), "<node ") != 1 || !strings.Contains(string(b), "top=1 top_by=pagerank") {
		t.Errorf("--top 1: %s", b)
	}
	if !strings.Contains(stderr, path+": gexf, 1 node, 0 edges") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if code, _, stderr := runExportCmd(t, "--db", db, "--gexf-timeline", "--json"); code != 2 || !strings.Contains(stderr, "--gexf-timeline needs --gexf") {
		t.Errorf("--gexf-timeline without --gexf: exit %d, stderr:\n%s", code, stderr)
	}
	// A store without a crawl history has no timeline: static either way.
	code, stdout, stderr = runExportCmd(t, "--db", db, "--gexf", "--gexf-timeline")
	if code != 0 || !strings.Contains(stdout, `mode="static"`) || strings.Count(stdout, "<node ") != 3 {
		t.Errorf("--gexf --gexf-timeline: exit %d, %.400s\n%s", code, stdout, stderr)
	}
}
