package storetest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// The big store of BenchmarkCommitPages_1MNodes10MEdges.
const (
	bigNodes    = 1_000_000
	bigOutEdges = storetest.BigLinks // per node: 10,000,000 edges
)

// big is built once per test process: a benchmark function runs twice
// (b.N = 1, then the -benchtime count), and building it takes minutes.
var big struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if big.dir != "" {
		os.RemoveAll(big.dir)
	}
	os.Exit(code)
}

// bigStorePath returns the big store, building it on first use.
func bigStorePath(b *testing.B) string {
	b.Helper()
	big.once.Do(func() {
		if big.dir, big.err = os.MkdirTemp("", "weaver-storetest-big-"); big.err != nil {
			return
		}
		big.path = filepath.Join(big.dir, "w.bolt")
		start := time.Now()
		big.err = storetest.BuildBig(big.path, storetest.Random, bigNodes)
		if fi, err := os.Stat(big.path); err == nil {
			b.Logf("built %d nodes, %d edges in %v: %.0f MB", bigNodes, bigNodes*bigOutEdges, time.Since(start).Round(time.Second), float64(fi.Size())/1e6)
		}
	})
	if big.err != nil {
		b.Fatal(big.err)
	}
	return big.path
}

// BenchmarkCommitPages_1MNodes10MEdges is BenchmarkCommitPages on a store
// that already holds 1,000,000 nodes and 10,000,000 edges: the same page
// (a node update, 10 new hosts, 10 edges, 10 frontier pushes, a lease
// release), committed with fsync on through the group writer by 3 and 32
// producers that do not wait for the fsync. Only the commits are timed.
func BenchmarkCommitPages_1MNodes10MEdges(b *testing.B) {
	path := bigStorePath(b)
	for _, producers := range []int{3, 32} {
		b.Run(fmt.Sprintf("producers=%d", producers), func(b *testing.B) {
			s, err := kv.Open(path, kv.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			// Hosts new to the store on every run.
			runCommitPages(b, s, producers, fmt.Sprintf("src%d-", time.Now().UnixNano()))
		})
	}
}
