package layout_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/layout"
)

// BenchmarkLayoutStore times what `weaver layout` does to a store:
// reading its graph, communities, ForceAtlas2, writing the result. Two
// stores of n hosts with 10 out-links each:
//
//   - web: hosts in sites of 20 to 5,000 hosts (sizes drawn from a power
//     law), 8 of a host's links inside its site, most of them to the
//     site's first hosts (its hubs), 2 anywhere, skewed towards a few
//     hosts the whole web links to; ids in the order a crawl finds hosts,
//     site by site as it meets them;
//   - random: the 10 targets drawn from one skewed distribution over
//     every host, no sites at all (the store of storetest's million-host
//     benchmarks): the worst case, nothing for Louvain to find and no
//     locality for either algorithm.
//
// The million hosts run only with WEAVER_BENCH_LARGE=1; building each
// store takes about a minute (not timed), and the stores are kept in
// WEAVER_BENCH_STORES (a directory) when it is set, for the next run:
//
//	WEAVER_BENCH_LARGE=1 go test ./layout -run '^$' -bench LayoutStore -benchtime 1x
func BenchmarkLayoutStore(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		for _, shape := range []string{"web", "random"} {
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
func benchStore(b *testing.B, shape string, n int) string {
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
	if err := buildStore(path+".tmp", shape, n); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		b.Fatal(err)
	}
	b.Logf("built %s in %v", path, time.Since(start).Round(time.Second))
	return path
}

// buildStore writes the store of BenchmarkLayoutStore through graph's
// own functions, fsync off, in chunks.
func buildStore(path, shape string, n int) error {
	os.Remove(path)
	s, err := kv.Open(path, kv.Options{NoSync: true})
	if err != nil {
		return err
	}
	defer s.Close()
	r := rand.New(rand.NewPCG(28, 29))
	// site[i] is host i's site, sites are runs of consecutive hosts.
	var siteStart []int
	for i := 0; i < n; {
		siteStart = append(siteStart, i)
		size := int(20 / math.Pow(1-r.Float64()*(1-math.Pow(20.0/5000, 1.2)), 1/1.2))
		i += size
	}
	siteStart = append(siteStart, n)
	targets := func(i int, out []int) []int {
		out = out[:0]
		s, _ := slices.BinarySearch(siteStart, i+1)
		lo, hi := siteStart[s-1], min(siteStart[s], n)
		for len(out) < 10 {
			var t int
			if shape == "web" && len(out) < 8 {
				t = lo + int(float64(hi-lo)*math.Pow(r.Float64(), 2))
			} else {
				t = int(float64(n) * math.Pow(r.Float64(), 3))
			}
			if t != i && !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
		return out
	}
	now := time.Now()
	ids := make([]uint64, n)
	for lo := 0; lo < n; lo += 50_000 {
		err := s.Update(func(tx *kv.Tx) error {
			for i := lo; i < min(lo+50_000, n); i++ {
				node, _, err := graph.Ensure(tx, fmt.Sprintf("h%07d.test", i), "http", now)
				if err != nil {
					return err
				}
				ids[i] = node.ID
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	var out []int
	adds := make([]graph.EdgeAdd, 0, 10)
	for lo := 0; lo < n; lo += 10_000 {
		err := s.Update(func(tx *kv.Tx) error {
			for i := lo; i < min(lo+10_000, n); i++ {
				out = targets(i, out)
				adds = adds[:0]
				for _, t := range out {
					adds = append(adds, graph.EdgeAdd{To: ids[t], Weight: uint64(1 + r.IntN(3))})
				}
				if err := graph.AddEdges(tx, ids[i], adds, now); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
