package storetest_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// The big store of BenchmarkCommitPages_1MNodes10MEdges.
const (
	bigNodes    = 1_000_000
	bigOutEdges = 10 // per node: 10,000,000 edges
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
		big.err = buildBig(big.path)
		if fi, err := os.Stat(big.path); err == nil {
			b.Logf("built %d nodes, %d edges in %v: %.0f MB", bigNodes, bigNodes*bigOutEdges, time.Since(start).Round(time.Second), float64(fi.Size())/1e6)
		}
	})
	if big.err != nil {
		b.Fatal(big.err)
	}
	return big.path
}

// buildBig writes bigNodes crawled hosts, each linking to bigOutEdges
// others drawn from a skewed distribution (a few hosts get most links),
// through graph's own functions, with fsync off and in chunks so that no
// transaction holds the whole graph.
func buildBig(path string) error {
	s, err := kv.Open(path, kv.Options{NoSync: true})
	if err != nil {
		return err
	}
	defer s.Close()
	now := time.Now()
	ids := make([]uint64, bigNodes)
	for lo := 0; lo < bigNodes; lo += 50_000 {
		err := s.Update(func(tx *kv.Tx) error {
			for i := lo; i < min(lo+50_000, bigNodes); i++ {
				n, _, err := graph.Ensure(tx, fmt.Sprintf("big%07d.test", i), "http", now)
				if err != nil {
					return err
				}
				n.Status, n.HTTPStatus, n.CrawlCount, n.LastCrawl = graph.StatusCrawled, 200, 1, now
				n.Title = fmt.Sprintf("Host %d – a page title", i)
				if err := graph.Put(tx, &n); err != nil {
					return err
				}
				ids[i] = n.ID
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	r := rand.New(rand.NewPCG(7, 7))
	targets := make([]int, 0, bigOutEdges)
	for lo := 0; lo < bigNodes; lo += 5_000 {
		err := s.Update(func(tx *kv.Tx) error {
			for i := lo; i < min(lo+5_000, bigNodes); i++ {
				targets = targets[:0]
				for len(targets) < bigOutEdges {
					t := int(float64(bigNodes) * math.Pow(r.Float64(), 3))
					if t != i && !slices.Contains(targets, t) {
						targets = append(targets, t)
					}
				}
				slices.Sort(targets)
				for _, t := range targets {
					if err := graph.AddEdge(tx, ids[i], ids[t], 1, now); err != nil {
						return err
					}
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
