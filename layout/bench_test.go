package layout_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/layout"
)

// benchGraph is a graph of n nodes and about 10n edges with communities of
// 1,000 nodes: 8 of each node's 10 links inside its community.
func benchGraph(b *testing.B, n int) *layout.Graph {
	b.Helper()
	rnd := rand.New(rand.NewPCG(1, 2))
	bl := layout.NewBuilder(n, 10*n)
	for i := range n {
		if err := bl.AddNode(uint64(i + 1)); err != nil {
			b.Fatal(err)
		}
	}
	const size = 1000
	for i := range n {
		base := i / size * size
		for k := range 10 {
			var j int
			if k < 8 {
				j = base + rnd.IntN(min(size, n-base))
			} else {
				j = rnd.IntN(n)
			}
			if err := bl.AddIndexEdge(i, j, float64(1+rnd.IntN(4))); err != nil {
				b.Fatal(err)
			}
		}
	}
	g, err := bl.Graph()
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// BenchmarkLayout times Compute (communities, then ForceAtlas2 at its
// default iterations) on graphs of 10,000 to 1,000,000 nodes with ten
// times as many edges. The million runs only with WEAVER_BENCH_LARGE=1
// (it needs a few GB and minutes):
//
//	WEAVER_BENCH_LARGE=1 go test ./layout -run '^$' -bench Layout -benchtime 1x
func BenchmarkLayout(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			if n > 100_000 && os.Getenv("WEAVER_BENCH_LARGE") == "" {
				b.Skip("set WEAVER_BENCH_LARGE=1 for a million nodes")
			}
			g := benchGraph(b, n)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				comm, q, err := layout.Communities(context.Background(), g)
				if err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				x, y, err := layout.Positions(context.Background(), g, comm, layout.ForceOptions{})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(mid.Sub(start).Seconds(), "s-communities")
				b.ReportMetric(time.Since(mid).Seconds(), "s-forceatlas2")
				b.ReportMetric(q, "modularity")
				_ = x
				_ = y
			}
			b.ReportMetric(float64(g.Edges()), "edges")
		})
	}
}
