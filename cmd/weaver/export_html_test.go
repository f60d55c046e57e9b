package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExport_HTML: --html FILE writes the map page, --html alone writes it
// to stdout, and it is refused over a database like any text export.
func TestExport_HTML(t *testing.T) {
	db := exportStore(t)
	page := filepath.Join(t.TempDir(), "map.html")
	code, _, stderr := runExportCmd(t, "--db", db, "--html", page)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "map.html: html, 3 nodes, 4 edges, total weight 7") {
		t.Errorf("stderr lacks the summary:\n%s", stderr)
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!DOCTYPE html>", `<div id="stats"`, `"host":"iana.org"`, "Title of example.com"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("map.html lacks %q", want)
		}
	}
	code, stdout, stderr := runExportCmd(t, "--db", db, "--html", "--crawled-only")
	if code != 0 || !strings.HasPrefix(stdout, "<!DOCTYPE html>") || strings.Contains(stdout, `"host":"www.example.com"`) {
		t.Errorf("--html to stdout with --crawled-only: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runExportCmd(t, "--db", db, "--html", db); code != 2 || !strings.Contains(stderr, "is the store being exported") {
		t.Errorf("--html over the store: exit %d, %s", code, stderr)
	}
}
