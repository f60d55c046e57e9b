package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLayout_StoresAndExports: weaver layout stores a layout the export
// then carries, the same on a second run; JSON nodes carry community, x, y.
func TestLayout_StoresAndExports(t *testing.T) {
	db := exportStore(t)
	code, out, errs := runWeaverCmd(t, nil, "layout", "--db", db)
	if code != 0 || !strings.Contains(out, "laid out 3 hosts and 4 links of "+db) || !strings.Contains(out, "modularity") {
		t.Fatalf("exit %d: %q %s", code, out, errs)
	}
	export := func() map[string][3]float64 {
		js := mustRun(t, nil, "export", "--db", db, "--json", "-")
		var g struct {
			Nodes []struct {
				Host      string
				Community *int
				X, Y      *float64
			}
		}
		if err := json.Unmarshal([]byte(js), &g); err != nil {
			t.Fatal(err)
		}
		m := map[string][3]float64{}
		for _, n := range g.Nodes {
			if n.Community == nil || n.X == nil || n.Y == nil {
				t.Fatalf("node %s lacks community, x or y:\n%s", n.Host, js)
			}
			m[n.Host] = [3]float64{float64(*n.Community), *n.X, *n.Y}
		}
		return m
	}
	first := export()
	if code, out, errs := runWeaverCmd(t, nil, "layout", "--db", db); code != 0 {
		t.Fatalf("second run: exit %d: %q %s", code, out, errs)
	}
	if second := export(); len(second) != 3 || !equalLayouts(first, second) {
		t.Errorf("two runs differ:\n%v\n%v", first, second)
	}
	// --no-layout leaves them out.
	if js := mustRun(t, nil, "export", "--db", db, "--no-layout", "--json", "-"); strings.Contains(js, `"community"`) {
		t.Errorf("--no-layout: the JSON has communities:\n%s", js)
	}
}

func equalLayouts(a, b map[string][3]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestLayout_Usage(t *testing.T) {
	dir := t.TempDir()
	notStore := filepath.Join(dir, "notes.txt")
	os.WriteFile(notStore, []byte("hello, this is not a store at all, not even close to one"), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"layout", "--db", filepath.Join(dir, "missing.bolt")}, "missing.bolt"},
		{[]string{"layout", "--db", notStore}, "not a weaver store"},
		{[]string{"layout", "extra"}, "no arguments"},
		{[]string{"layout", "--top", "3"}, "unknown flag --top"},
	} {
		code, _, errs := runWeaverCmd(t, nil, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, want 2 with %q:\n%s", c.args, code, c.want, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.bolt")); err == nil {
		t.Error("layout created a store")
	}
	code, out, errs := runWeaverCmd(t, nil, "layout", "-h")
	if code != 0 || errs != "" || !strings.Contains(out, "weaver layout [--db FILE]") || !strings.Contains(out, "Examples:") {
		t.Errorf("-h: exit %d, want the usage on stdout:\n%s\nstderr: %s", code, out, errs)
	}
}

// TestExport_LaysOutOnce: an export of a store without a layout lays its
// graph out once for all its files, says so on stderr, and writes in each
// file the positions `weaver layout` then stores; once stored, an export
// lays out nothing (and says nothing of it), nor does one with
// --no-layout or one of the Common Crawl format alone.
func TestExport_LaysOutOnce(t *testing.T) {
	db := exportStore(t)
	dir := t.TempDir()
	jsonPositions := func(path string) map[string][3]float64 {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var g struct {
			Nodes []struct {
				Host      string
				Community int
				X, Y      float64
			}
		}
		if err := json.Unmarshal(data, &g); err != nil {
			t.Fatal(err)
		}
		m := map[string][3]float64{}
		for _, n := range g.Nodes {
			m[n.Host] = [3]float64{float64(n.Community), n.X, n.Y}
		}
		return m
	}
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.graphml")
	code, _, errs := runExportCmd(t, "--db", db, "--json", a, "--graphml", b, "--csv", filepath.Join(dir, "c"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if n := strings.Count(errs, "laid out 3 hosts in memory"); n != 1 || !strings.Contains(errs, "weaver layout --db "+db) {
		t.Errorf("stderr says %d times that it laid the graph out, want once with the command that stores it:\n%s", n, errs)
	}
	computed := jsonPositions(a)
	if code, out, errs := runWeaverCmd(t, nil, "layout", "--db", db); code != 0 {
		t.Fatalf("weaver layout: exit %d: %q %s", code, out, errs)
	}
	code, _, errs = runExportCmd(t, "--db", db, "--force", "--json", a, "--graphml", b)
	if code != 0 || strings.Contains(errs, "laid out") {
		t.Fatalf("with a stored layout: exit %d:\n%s", code, errs)
	}
	if stored := jsonPositions(a); len(stored) != 3 || !equalLayouts(computed, stored) {
		t.Errorf("computed for the export %v, stored %v", computed, stored)
	}
	// A store without a layout: nothing laid out with --no-layout, nor
	// for the Common Crawl format, which has no place for it.
	fresh := exportStore(t)
	for _, args := range [][]string{
		{"--db", fresh, "--no-layout", "--json", filepath.Join(dir, "d.json")},
		{"--db", fresh, "--cc-hostgraph", filepath.Join(dir, "cc")},
	} {
		code, _, errs := runExportCmd(t, args...)
		if code != 0 || strings.Contains(errs, "laid out") {
			t.Errorf("%v: exit %d:\n%s", args, code, errs)
		}
	}
}
