package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestExport_Top: --top N [--by M] cuts every format to the N highest
// hosts; --by alone, an unknown measure and --top 0 are usage errors.
func TestExport_Top(t *testing.T) {
	db := exportStore(t)
	// In-weights: example.com 2, www.example.com 1, iana.org 4.
	code, stdout, stderr := runExportCmd(t, "--db", db, "--top", "2", "--by", "in-weight", "--json")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	var g struct {
		Graph map[string]any
		Nodes []struct{ Host string }
		Edges []struct{ Source, Target, Weight uint64 }
	}
	if err := json.Unmarshal([]byte(stdout), &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes) != 2 || g.Nodes[0].Host != "example.com" || g.Nodes[1].Host != "iana.org" || len(g.Edges) != 2 {
		t.Errorf("top 2 by in-weight: %+v", g)
	}
	if g.Graph["top"] != 2.0 || g.Graph["top_by"] != "in-weight" {
		t.Errorf("graph: %v", g.Graph)
	}
	if !strings.Contains(stderr, "2 nodes, 2 edges, total weight 5") {
		t.Errorf("stderr:\n%s", stderr)
	}
	for _, args := range [][]string{
		{"--by", "harmonic", "--json"},
		{"--top", "2", "--by", "indegree", "--json"},
		{"--top", "0", "--json"},
		{"--top", "-1", "--json"},
	} {
		if code, _, stderr := runExportCmd(t, append([]string{"--db", db}, args...)...); code != 2 {
			t.Errorf("%v: exit %d, stderr:\n%s", args, code, stderr)
		}
	}
}
