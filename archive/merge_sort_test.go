package archive

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weaver-crawler/weaver/internal/srcsort"
)

// TestSortEdges: the counting sort (sources dense for the batch) and
// the comparison sort (sources sparse) both give the batch sorted by key
// with each edge's records added up, as a plain sort and a fold do.
func TestSortEdges(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var s srcsort.Sorter[mEdge]
	for _, tc := range []struct{ n, nodes int }{{0, 1}, {1, 1}, {2, 2}, {500, 40}, {5000, 300}, {3000, 100_000}, {20, 1 << 40}} {
		t.Run(fmt.Sprintf("%d/%d", tc.n, tc.nodes), func(t *testing.T) {
			es := make([]mEdge, tc.n)
			for i := range es {
				es[i] = mEdge{from: 1 + r.Uint64N(uint64(tc.nodes)), to: 1 + r.Uint64N(uint64(tc.nodes)), weight: 1 + r.Uint64N(3),
					nofollow: r.Uint64N(2), first: int64(1 + r.IntN(100)), last: int64(100 + r.IntN(100))}
			}
			want := slices.Clone(es)
			slices.SortStableFunc(want, func(a, b mEdge) int { return a.compare(&b) })
			var folded []mEdge
			for _, e := range want {
				if n := len(folded); n > 0 && folded[n-1].compare(&e) == 0 {
					folded[n-1].add(&e)
					continue
				}
				folded = append(folded, e)
			}
			got := sortEdges(&s, es)
			if !slices.Equal(got, folded) {
				t.Fatalf("sorted %d edges of %d nodes: got %d edges, want %d", tc.n, tc.nodes, len(got), len(folded))
			}
		})
	}
}
