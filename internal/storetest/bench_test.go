package storetest_test

import (
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// BenchmarkCommitPages measures page commits per second with fsync on: a
// page is a node upsert, 10 edge increments, 10 frontier pushes and a lease
// release, committed through the group writer by concurrent producers that,
// like workers, do not wait for the fsync before producing the next page.
func BenchmarkCommitPages(b *testing.B) {
	for _, producers := range []int{3, 32} {
		b.Run(fmt.Sprintf("producers=%d", producers), func(b *testing.B) {
			s, err := kv.Open(filepath.Join(b.TempDir(), "w.bolt"), kv.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			runCommitPages(b, s, producers, "src")
		})
	}
}

// runCommitPages leases b.N hosts new to s (named prefix0.test, ...),
// untimed, then times producers committing one page per lease and reports
// pages/s and pages/group.
func runCommitPages(b *testing.B, s *kv.Store, producers int, prefix string) {
	now := time.Now()
	leases := make([]frontier.Lease, b.N)
	err := s.Update(func(tx *kv.Tx) error {
		for i := range leases {
			h := fmt.Sprintf("%s%d.test", prefix, i)
			n, _, err := graph.Ensure(tx, h, "http", now)
			if err != nil {
				return err
			}
			leases[i] = frontier.Lease{Entry: frontier.Entry{NodeID: n.ID, Host: h, Depth: 1}, Key: make([]byte, 12)}
			if err := tx.Put(kv.BucketLeases, kv.U64(n.ID), &leases[i]); err != nil {
				return err
			}
		}
		_, err := tx.AddCounter("frontier.leases", int64(len(leases)))
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	g0, f0 := s.CommitStats()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last <-chan error
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					break
				}
				l := leases[i]
				last = s.Commit(func(tx *kv.Tx) error { return commitPage(tx, l, now) })
			}
			if last != nil {
				if err := <-last; err != nil {
					b.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	// Every page must be durable before the clock stops.
	if err := <-s.Commit(func(*kv.Tx) error { return nil }); err != nil {
		b.Fatal(err)
	}
	el := time.Since(start)
	b.StopTimer()
	g1, f1 := s.CommitStats()
	b.ReportMetric(float64(b.N)/el.Seconds(), "pages/s")
	if g1 > g0 {
		b.ReportMetric(float64(f1-f0)/float64(g1-g0), "pages/group")
	}
}

// BenchmarkFrontierMemory queues 1,000,000 hosts and reports the Go heap in
// use afterwards per entry: the frontier lives on disk, so it stays flat.
func BenchmarkFrontierMemory(b *testing.B) {
	const total = 1_000_000
	for i := 0; i < b.N; i++ {
		s, err := kv.Open(filepath.Join(b.TempDir(), "w.bolt"), kv.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		now := time.Now()
		for chunk := 0; chunk < total; chunk += 50_000 {
			err := s.Update(func(tx *kv.Tx) error {
				for j := chunk; j < chunk+50_000; j++ {
					h := fmt.Sprintf("host%07d.example", j)
					n, _, err := graph.Ensure(tx, h, "http", now)
					if err != nil {
						return err
					}
					if _, err := frontier.Push(tx, frontier.Entry{NodeID: n.ID, Host: h, URL: "http://" + h + "/", Depth: 1}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		var size int64
		s.View(func(tx *kv.Tx) error {
			if got := frontier.Len(tx); got != total {
				b.Fatalf("queued %d, want %d", got, total)
			}
			size = tx.Size()
			return nil
		})
		s.Close()
		b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/total, "heap-B/entry")
		b.ReportMetric(float64(after.HeapInuse)/(1<<20), "heap-MiB")
		b.ReportMetric(float64(size)/total, "file-B/entry")
	}
}
