package rank_test

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/rank"
)

// The figures of the issue: PageRank in ≤ 10 s and HyperBall in ≤ 2 min on
// a graph of 1,000,000 hosts and 10,000,000 edges, in ≤ 500 MB of peak
// RSS. Run them, one process each so that each peak is its own, with
//
//	go test -run '^$' -bench PageRank_1M -benchtime 1x ./rank
//	go test -run '^$' -bench HyperBall_1M -benchtime 1x ./rank
//
// The graph is synthetic (see synthetic), generated once per process
// straight into the Builder; its memory (about 140 MB) counts in the peak,
// as the Graph a store loads into would.

const (
	bigHosts = 1_000_000
	bigDeg   = 11.8 // mean Pareto out-degree giving about 10,000,000 edges after the hosts that link nowhere and duplicates
)

var bigGraph struct {
	once sync.Once
	g    *rank.Graph
	took time.Duration
}

func big(b *testing.B) *rank.Graph {
	b.Helper()
	bigGraph.once.Do(func() {
		start := time.Now()
		bigGraph.g = synthetic(b, bigHosts, bigDeg, 1)
		bigGraph.took = time.Since(start)
	})
	b.Logf("graph: %d hosts, %d edges, generated in %v", bigGraph.g.Len(), bigGraph.g.Edges(), bigGraph.took.Round(time.Millisecond))
	return bigGraph.g
}

// resetPeak returns memory the process no longer uses to the system and
// resets its peak RSS (VmHWM), so that the next peakMB is this
// benchmark's own (Linux; elsewhere peakMB reports the process's peak).
func resetPeak() {
	runtime.GC()
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// peakMB is the process's peak RSS in MB since resetPeak (VmHWM), or 0
// when /proc is not there.
func peakMB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb * 1024 / 1e6
		}
	}
	return 0
}

func BenchmarkPageRank_1MHosts10MEdges(b *testing.B) {
	g := big(b)
	resetPeak()
	var seconds float64
	var iters int
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		pr, it, err := rank.PageRank(context.Background(), g, rank.PageRankOptions{})
		if err != nil {
			b.Fatal(err)
		}
		seconds += time.Since(start).Seconds()
		iters = it
		runtime.KeepAlive(pr)
	}
	b.StopTimer()
	b.ReportMetric(seconds/float64(b.N), "s/pagerank")
	b.ReportMetric(float64(iters), "iterations")
	b.ReportMetric(peakMB(), "MB-peak-RSS")
}

func BenchmarkHyperBall_1MHosts10MEdges(b *testing.B) {
	g := big(b)
	resetPeak()
	var seconds float64
	var iters int
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		h, it, err := rank.HyperBall(context.Background(), g, rank.DefaultLog2m, rank.DefaultSeed)
		if err != nil {
			b.Fatal(err)
		}
		seconds += time.Since(start).Seconds()
		iters = it
		runtime.KeepAlive(h)
	}
	b.StopTimer()
	b.ReportMetric(seconds/float64(b.N), "s/hyperball")
	b.ReportMetric(float64(iters), "iterations")
	b.ReportMetric(peakMB(), "MB-peak-RSS")
}

// BenchmarkHarmonicExact_10kHosts is the exact computation at its largest
// size, on the synthetic graph of TestHyperBall_Spearman10k.
func BenchmarkHarmonicExact_10kHosts(b *testing.B) {
	g := synthetic(b, 10_000, 10, 1)
	b.ResetTimer()
	for range b.N {
		if _, err := rank.HarmonicExact(context.Background(), g, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTop orders a million scores, all of them (weaver show's
// position of a host) and the first 100 (an export's --top 100).
func BenchmarkTop(b *testing.B) {
	scores := make([]float64, 1_000_000)
	for i := range scores {
		scores[i] = float64((i*7919)%100_003) / 100_003
	}
	for _, n := range []int{100, len(scores)} {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			for range b.N {
				runtime.KeepAlive(rank.Top(scores, n))
			}
		})
	}
}
