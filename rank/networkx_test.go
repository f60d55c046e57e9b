package rank_test

import (
	"context"
	"math"
	"testing"

	"github.com/weaver-crawler/weaver/rank"
)

// TestNetworkx compares both ranks with networkx's on graphs with
// dangling hosts, hosts without any link, weights above 1 and parts that
// do not reach each other: PageRank within 1e-9 of networkx run to a tight
// tolerance (tol=1e-14), harmonic centrality within 1e-9.
//
// networkx at its default tolerance (it stops when the L1 change is below
// N·1e-6) is itself up to ~6e-4 away from the fixed point on these graphs:
// weaver's distance from that run must be no more than networkx's own
// error (its distance from its tight run), plus 1e-9.
func TestNetworkx(t *testing.T) {
	hosts, edges := ukEdges(t, "uk1996-ac-uk-subgraph.tsv")
	for _, tc := range []struct {
		name  string
		n     int
		edges []edge
	}{
		{"random 40 nodes", 40, randomGraph(40, 50, 1)},
		{"random 300 nodes", 300, randomGraph(300, 900, 2)},
		{"random 2000 nodes, sparse", 2000, randomGraph(2000, 2500, 3)},
		{"uk1996 ac.uk", len(hosts), edges},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := build(t, tc.n, tc.edges)
			got, err := rank.Compute(context.Background(), g, rank.Options{})
			if err != nil {
				t.Fatal(err)
			}
			nx := networkx(t, g)
			if len(nx) != g.Len() {
				t.Fatalf("networkx has %d nodes, want %d", len(nx), g.Len())
			}
			var dDefault, dTight, nxErr, dHarm float64
			for i := range g.Len() {
				want := nx[g.ID(i)]
				dDefault = max(dDefault, math.Abs(got.PageRank[i]-want.pageRank))
				dTight = max(dTight, math.Abs(got.PageRank[i]-want.pageRankTight))
				nxErr = max(nxErr, math.Abs(want.pageRank-want.pageRankTight))
				dHarm = max(dHarm, math.Abs(got.Harmonic[i]-want.harmonic))
			}
			t.Logf("%d nodes, %d edges, %d iterations: max |weaver − networkx|: pagerank %.2g (networkx tol=1e-14), %.2g (networkx defaults, itself %.2g from tol=1e-14); harmonic %.2g",
				g.Len(), g.Edges(), got.Iterations, dTight, dDefault, nxErr, dHarm)
			if dTight > 1e-9 {
				t.Errorf("pagerank differs from networkx's (tol=1e-14) by %g, want ≤ 1e-9", dTight)
			}
			if dDefault > nxErr+1e-9 {
				t.Errorf("pagerank differs from networkx's at its defaults by %g, more than networkx's own error %g", dDefault, nxErr)
			}
			if dHarm > 1e-9 {
				t.Errorf("harmonic centrality differs from networkx's by %g, want ≤ 1e-9", dHarm)
			}
		})
	}
}
