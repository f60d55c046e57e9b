package layout_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/layout"
)

// BenchmarkLayoutStore times what `weaver layout` does to a store:
// reading its graph, communities, ForceAtlas2, writing the result. Two
// stores of n hosts with 10 out-links each (storetest.BuildBig): web,
// hosts in sites that link mostly inside, to their hubs; and random, the
// store of storetest's million-host benchmarks, the worst case: nothing
// for Louvain to find and no locality for either algorithm.
//
// The million hosts run only with WEAVER_BENCH_LARGE=1; building each
// store takes about a minute (not timed), and the stores are kept in
// WEAVER_BENCH_STORES (a directory) when it is set, for the next run:
//
//	WEAVER_BENCH_LARGE=1 go test ./layout -run '^$' -bench LayoutStore -benchtime 1x
func BenchmarkLayoutStore(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		for _, shape := range []storetest.Shape{storetest.Web, storetest.Random} {
			b.Run(fmt.Sprintf("shape=%s/hosts=%d", shape, n), func(b *testing.B) {
				if n > 100_000 && os.Getenv("WEAVER_BENCH_LARGE") == "" {
					b.Skip("set WEAVER_BENCH_LARGE=1 for a million hosts")
				}
				path := benchStore(b, shape, n)
				for range b.N {
					s, err := kv.Open(path, kv.Options{NoSync: true})
					if err != nil {
						b.Fatal(err)
					}
					start := time.Now()
					var st *layout.Stored
					var read, compute time.Duration
					err = s.View(func(tx *kv.Tx) error {
						g, err := layout.Read(context.Background(), tx)
						if err != nil {
							return err
						}
						read = time.Since(start)
						l, err := layout.Compute(context.Background(), g, layout.Options{})
						if err != nil {
							return err
						}
						compute = time.Since(start) - read
						st = &layout.Stored{Stamp: layout.CurrentStamp(tx), Layout: l}
						for i := range g.Len() {
							st.IDs = append(st.IDs, g.ID(i))
						}
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
					save := time.Now()
					err = s.Update(func(tx *kv.Tx) error { return layout.Save(tx, st) })
					s.Close()
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(read.Seconds(), "s-read")
					b.ReportMetric(compute.Seconds(), "s-compute")
					b.ReportMetric(time.Since(save).Seconds(), "s-save")
					b.ReportMetric(time.Since(start).Seconds(), "s-total")
					b.ReportMetric(st.Modularity, "modularity")
				}
			})
		}
	}
}

// benchStore returns the path of a store of the shape and size, built
// on first use (see BenchmarkLayoutStore).
func benchStore(b *testing.B, shape storetest.Shape, n int) string {
	b.Helper()
	dir := os.Getenv("WEAVER_BENCH_STORES")
	if dir == "" {
		dir = b.TempDir()
	}
	path := filepath.Join(dir, fmt.Sprintf("layout-%s-%d.bolt", shape, n))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	start := time.Now()
	os.Remove(path + ".tmp")
	if err := storetest.BuildBig(path+".tmp", shape, n); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		b.Fatal(err)
	}
	b.Logf("built %s in %v", path, time.Since(start).Round(time.Second))
	return path
}
