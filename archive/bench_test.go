package archive_test

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// benchHost is the name of the benchmark stores' host i.
func benchHost(i int) string { return fmt.Sprintf("h%07d.example.com", i) }

// crawledHost ensures the node of benchmark host i (named from first on),
// crawled once, and returns it.
func crawledHost(tx *kv.Tx, first, i int) (graph.Node, error) {
	n, _, err := graph.Ensure(tx, benchHost(first+i), "https", t0)
	if err != nil {
		return n, err
	}
	n.CrawlCount, n.Status, n.Title, n.LastCrawl = 1, graph.StatusCrawled, "Host "+strconv.Itoa(i), t0
	return n, graph.Put(tx, &n)
}

// openBench creates the benchmark store at path: no fsync, created at t0.
func openBench(tb testing.TB, path string) *kv.Store {
	tb.Helper()
	s, err := kv.Open(path, kv.Options{NoSync: true, Now: func() time.Time { return t0 }})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// bigStore builds a store of nodes hosts (named from first on) with
// perNode out-edges each, quickly: no fsync, large transactions.
func bigStore(tb testing.TB, path string, first, nodes, perNode int) {
	tb.Helper()
	s := openBench(tb, path)
	defer s.Close()
	inBatches(tb, s, nodes, func(tx *kv.Tx, lo, hi int) error {
		for i := lo; i < hi; i++ {
			from, err := crawledHost(tx, first, i)
			if err != nil {
				return err
			}
			for j := 1; j <= perNode; j++ {
				to, _, err := graph.Ensure(tx, benchHost(first+benchTarget(i, j, nodes)), "https", t0)
				if err != nil {
					return err
				}
				if to.ID != from.ID {
					if err := graph.AddEdge(tx, from.ID, to.ID, uint64(1+j%3), t0); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
}

// bulkStore builds the store bigStore builds (the same hosts and edges;
// the ids in host order), in bulk: the nodes first, then each node's
// edges appended in key order (graph.AppendEdges).
func bulkStore(tb testing.TB, path string, first, nodes, perNode int) {
	tb.Helper()
	s := openBench(tb, path)
	defer s.Close()
	inBatches(tb, s, nodes, func(tx *kv.Tx, lo, hi int) error {
		for i := lo; i < hi; i++ {
			if _, err := crawledHost(tx, first, i); err != nil {
				return err
			}
		}
		return nil
	})
	inBatches(tb, s, nodes, func(tx *kv.Tx, lo, hi int) error {
		var edges []graph.Edge
		for i := lo; i < hi; i++ {
			w := map[int]uint64{}
			for j := 1; j <= perNode; j++ {
				if to := benchTarget(i, j, nodes); to != i {
					w[to] += uint64(1 + j%3)
				}
			}
			for _, to := range slices.Sorted(maps.Keys(w)) {
				edges = append(edges, graph.Edge{From: uint64(i + 1), To: uint64(to + 1), Weight: w[to], FirstSeen: t0, LastSeen: t0})
			}
		}
		return graph.AppendEdges(tx, edges)
	})
}

// benchTarget is the j-th out-link of host i of nodes, as a host index.
func benchTarget(i, j, nodes int) int { return (i + j*j*7919) % nodes }

// inBatches calls fn for the hosts [lo, hi) of nodes, 20,000 to a
// transaction of s.
func inBatches(tb testing.TB, s *kv.Store, nodes int, fn func(tx *kv.Tx, lo, hi int) error) {
	tb.Helper()
	const batch = 20_000
	for lo := 0; lo < nodes; lo += batch {
		if err := s.Update(func(tx *kv.Tx) error { return fn(tx, lo, min(lo+batch, nodes)) }); err != nil {
			tb.Fatal(err)
		}
	}
}

// resetPeakRSS makes the kernel start VmHWM afresh (Linux's clear_refs),
// after returning freed heap to it, so that peakRSS measures what follows.
func resetPeakRSS(tb testing.TB) {
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		tb.Logf("cannot reset the peak RSS (%v): the figure includes the set-up", err)
	}
}

// peakRSS returns the process's peak resident set (VmHWM) in bytes, or 0
// where /proc is not Linux's.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkSnapshot_1MEdges copies a store of 100,000 hosts and 1,000,000
// edges, without and with the verification weaver snapshot runs by
// default, and reports the file size and the process's peak RSS during the
// copies (the set-up excluded).
func BenchmarkSnapshot_1MEdges(b *testing.B) {
	dir := b.TempDir()
	src := filepath.Join(dir, "big.bolt")
	bigStore(b, src, 0, 100_000, 10)
	for _, verify := range []bool{false, true} {
		b.Run("verify="+strconv.FormatBool(verify), func(b *testing.B) {
			s, err := kv.Open(src, kv.Options{ReadOnly: true})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			var info archive.Info
			resetPeakRSS(b)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				info, err = archive.Snapshot(context.Background(), s, filepath.Join(dir, "copy.bolt"), archive.Options{Force: true, Verify: verify})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(info.Edges), "edges")
			b.ReportMetric(float64(info.Bytes)/(1<<20), "file-MiB")
			b.ReportMetric(float64(peakRSS())/(1<<20), "peakRSS-MiB")
		})
	}
}

// BenchmarkMerge_2x500kEdges merges two stores of 50,000 hosts and 500,000
// edges each, sharing half of their hosts.
func BenchmarkMerge_2x500kEdges(b *testing.B) {
	dir := b.TempDir()
	a, c := filepath.Join(dir, "a.bolt"), filepath.Join(dir, "b.bolt")
	bigStore(b, a, 0, 50_000, 10)
	bigStore(b, c, 25_000, 50_000, 10)
	for _, verify := range []bool{false, true} {
		b.Run("verify="+strconv.FormatBool(verify), func(b *testing.B) {
			var res archive.MergeResult
			resetPeakRSS(b)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var err error
				res, err = archive.Merge(context.Background(), filepath.Join(dir, "out.bolt"), []string{a, c}, archive.MergeOptions{Force: true, Verify: verify})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(res.Out.Edges), "edges")
			b.ReportMetric(float64(res.Out.Bytes)/(1<<20), "file-MiB")
			b.ReportMetric(float64(peakRSS())/(1<<20), "peakRSS-MiB")
		})
	}
}

// BenchmarkMerge_4Overlapping merges four stores of 50,000 hosts and
// 500,000 edges each, each sharing half of its hosts with the next
// (125,000 hosts in all), and reports the input edges merged per
// CPU-second of the process (user and system, the output's verification
// left out: weaver merge --verify=false) and the peak RSS.
func BenchmarkMerge_4Overlapping(b *testing.B) {
	dir := b.TempDir()
	var inputs []string
	for i := range 4 {
		in := filepath.Join(dir, fmt.Sprintf("in%d.bolt", i))
		bulkStore(b, in, i*25_000, 50_000, 10)
		inputs = append(inputs, in)
	}
	var in uint64
	for _, p := range inputs {
		s, err := kv.Open(p, kv.Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		s.View(func(tx *kv.Tx) error { in += graph.GetCounts(tx).Edges; return nil })
		s.Close()
	}
	var res archive.MergeResult
	resetPeakRSS(b)
	cpu := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var err error
		res, err = archive.Merge(context.Background(), filepath.Join(dir, "out.bolt"), inputs, archive.MergeOptions{Force: true})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	cpu = cpuTime() - cpu
	b.ReportMetric(float64(in), "input-edges")
	b.ReportMetric(float64(res.Out.Edges), "edges")
	b.ReportMetric(float64(in)*float64(b.N)/cpu.Seconds(), "input-edges/CPU-s")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peakRSS-MiB")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRepair_1MEdges repairs a sound store of 100,000 hosts and
// 1,000,000 edges (every record read, checked and copied, the copy
// verified), and reads its pages as weaver check does before bbolt.
func BenchmarkRepair_1MEdges(b *testing.B) {
	dir := b.TempDir()
	src := filepath.Join(dir, "big.bolt")
	bigStore(b, src, 0, 100_000, 10)
	b.Run("repair", func(b *testing.B) {
		var res archive.RepairResult
		resetPeakRSS(b)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			var err error
			res, err = archive.Repair(context.Background(), src, filepath.Join(dir, "out.bolt"), archive.RepairOptions{Force: true})
			if err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(res.Out.Edges), "edges")
		b.ReportMetric(float64(res.Out.Bytes)/(1<<20), "file-MiB")
		b.ReportMetric(float64(peakRSS())/(1<<20), "peakRSS-MiB")
	})
	b.Run("check-pages", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if d, err := archive.CheckPages(src); err != nil || len(d) > 0 {
				b.Fatal(err, d)
			}
		}
	})
}
