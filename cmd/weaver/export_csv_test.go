package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExport_CSV: --csv PREFIX writes both files beside a format on
// stdout, refuses to replace them without --force, and needs a PREFIX.
func TestExport_CSV(t *testing.T) {
	db := exportStore(t)
	prefix := filepath.Join(t.TempDir(), "crawl")
	code, stdout, stderr := runExportCmd(t, "--db", db, "--csv", prefix, "--crawled-only", "--json")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, `"crawled_only":true`) {
		t.Errorf("JSON to stdout: %.300s", stdout)
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
	nodes, edges := read(prefix+"-nodes.csv"), read(prefix+"-edges.csv")
	if len(nodes) != 3 || nodes[1][1] != "example.com" || nodes[2][1] != "iana.org" {
		t.Errorf("nodes.csv: %v", nodes)
	}
	// example.com → iana.org (3) and back (2): www.example.com was not fetched.
	if len(edges) != 3 || strings.Join(edges[1][:5], " ") != "1 3 example.com iana.org 3" || strings.Join(edges[2][:5], " ") != "3 1 iana.org example.com 2" {
		t.Errorf("edges.csv: %v", edges)
	}
	if !strings.Contains(stderr, "csv, 2 nodes, 2 edges, total weight 5") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if code, _, stderr := runExportCmd(t, "--db", db, "--csv", prefix); code != 2 || !strings.Contains(stderr, "exists") {
		t.Errorf("existing files without --force: exit %d, stderr:\n%s", code, stderr)
	}
	if code, _, stderr := runExportCmd(t, "--db", db, "--csv", prefix, "--force"); code != 0 {
		t.Errorf("--force: exit %d, stderr:\n%s", code, stderr)
	}
	if code, _, stderr := runExportCmd(t, "--db", db, "--csv"); code != 2 {
		t.Errorf("--csv without PREFIX: exit %d, stderr:\n%s", code, stderr)
	}
}
