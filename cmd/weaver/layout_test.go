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
