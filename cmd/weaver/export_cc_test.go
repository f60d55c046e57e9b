package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/internal/tooltest"
)

// TestExport_CCHostGraph: --cc-hostgraph PREFIX writes both gzipped files
// beside any other format, and --no-mirrors is accepted with them.
func TestExport_CCHostGraph(t *testing.T) {
	db := exportStore(t)
	prefix := filepath.Join(t.TempDir(), "uk")
	code, stdout, stderr := runExportCmd(t, "--db", db, "--cc-hostgraph", prefix, "--no-mirrors", "--json")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, `"no_mirrors":true`) {
		t.Errorf("JSON graph lacks no_mirrors: %.300s", stdout)
	}
	read := func(name string) string { return string(tooltest.Gunzip(t, name)) }
	// example.com and www.example.com are one vertex: the edges between
	// them are self-loops, dropped.
	if got, want := read(prefix+"-vertices.txt.gz"), "0\tcom.example\n1\torg.iana\n"; got != want {
		t.Errorf("vertices %q, want %q", got, want)
	}
	if got, want := read(prefix+"-edges.txt.gz"), "0\t1\n1\t0\n"; got != want {
		t.Errorf("edges %q, want %q", got, want)
	}
	if !strings.Contains(stderr, "cc-hostgraph, 2 vertices, 2 edges") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if code, _, stderr := runExportCmd(t, "--db", db, "--cc-hostgraph"); code != 2 {
		t.Errorf("--cc-hostgraph without PREFIX: exit %d, stderr:\n%s", code, stderr)
	}
}
