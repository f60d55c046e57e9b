package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

func TestDiff_CLI(t *testing.T) {
	dir := t.TempDir()
	before := archiveStore(t, filepath.Join(dir, "old.bolt"), 4, nil)
	after := archiveStore(t, filepath.Join(dir, "new.bolt"), 6, nil)

	code, out, errs := runArchiveCmd(t, "diff", before, before, "--exit-code")
	if code != 0 || out != "no differences (host level)\n" {
		t.Errorf("self: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runArchiveCmd(t, "diff", before, after)
	for _, want := range []string{
		"+ host host4.test\n", "+ host host5.test\n",
		"+ edge host3.test → host4.test  weight 4\n",
		"~ node host2.test  status discovered → crawled\n",
		`~ node host2.test  title "" → "Host 2"` + "\n",
		"hosts: 2 added, 0 removed; edges: 2 added, 0 removed, 0 changed weight; nodes: 1 changed\n",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d, output lacks %q:\n%s%s", code, want, out, errs)
		}
	}
	if code, _, _ := runArchiveCmd(t, "diff", "--exit-code", before, after); code != 1 {
		t.Errorf("--exit-code with differences: exit %d, want 1", code)
	}

	code, out, errs = runArchiveCmd(t, "diff", before, after, "--json")
	var r archive.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 {
		t.Fatalf("exit %d, %v\n%s%s", code, err, out, errs)
	}
	if len(r.Added) != 2 || len(r.EdgesAdded) != 2 || len(r.NodesChanged) != 1 || r.NodesChanged[0].NewStatus != graph.StatusCrawled {
		t.Errorf("json: %+v", r)
	}
	code, out, _ = runArchiveCmd(t, "diff", "--domains", "--json", before, after)
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || r.Level != "domain" || len(r.Added) != 2 {
		t.Errorf("domains: exit %d %v %+v", code, err, r)
	}
}

func TestDiff_CLIUsage(t *testing.T) {
	dir := t.TempDir()
	db := archiveStore(t, filepath.Join(dir, "w.bolt"), 4, nil)
	for _, args := range [][]string{
		{"diff", db},
		{"diff", db, db, db},
		{"diff", db, filepath.Join(dir, "none.bolt")},
		{"diff", "--bogus", db, db},
	} {
		if code, _, errs := runArchiveCmd(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2\n%s", args, code, errs)
		}
	}
	live, err := kv.Open(db, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if code, _, errs := runArchiveCmd(t, "diff", db, db); code != 2 || !strings.Contains(errs, "wait for it to end") {
		t.Errorf("in use: exit %d\n%s", code, errs)
	}
}
