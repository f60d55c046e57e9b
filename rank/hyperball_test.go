package rank_test

import (
	"context"
	"testing"

	"github.com/weaver-crawler/weaver/rank"
)

// TestHyperBall_Spearman10k measures HyperBall's error where it takes
// over from the exact computation: on 10,000-host graphs, the Spearman
// rank correlation between HyperBall's estimates (the defaults: 64
// registers per counter, the default seed) and the exact harmonic
// centrality must be at least 0.99. The graphs are fixed (a real one and
// a seeded synthetic one), so the figure is a fact about them, logged for
// docs/ranks.md.
func TestHyperBall_Spearman10k(t *testing.T) {
	hosts, edges := ukTop(t, 10_000)
	for _, tc := range []struct {
		name string
		g    *rank.Graph
	}{
		{"uk1996, the 10,000 hosts with most links", build(t, len(hosts), edges)},
		{"synthetic power-law, 10,000 hosts", synthetic(t, 10_000, 10, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exact, method, err := rank.Harmonic(context.Background(), tc.g, rank.HarmonicOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !method.Exact() {
				t.Fatalf("10,000 hosts computed by %q, want exact", method)
			}
			est, method, err := rank.Harmonic(context.Background(), tc.g, rank.HarmonicOptions{ExactMax: -1})
			if err != nil {
				t.Fatal(err)
			}
			rho := rank.Spearman(exact, est)
			t.Logf("%d hosts, %d edges: Spearman %.4f (%s)", tc.g.Len(), tc.g.Edges(), rho, method)
			if !(rho >= 0.99) {
				t.Errorf("Spearman rank correlation of HyperBall with the exact ranks: %.4f, want ≥ 0.99", rho)
			}
		})
	}
}
