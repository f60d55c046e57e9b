package storetest_test

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// crashChild is the body of the re-executed test binary: three workers
// claim and commit pages through the group writer until killed.
func crashChild(path string) {
	s, err := kv.Open(path, kv.Options{Timeout: 5 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(3)
	}
	now := time.Now()
	if err := s.Update(func(tx *kv.Tx) error { _, err := frontier.Recover(tx); return err }); err != nil {
		os.Exit(4)
	}
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				var ls []frontier.Lease
				if err := <-s.Commit(func(tx *kv.Tx) (err error) { ls, err = claimOne(tx, now); return err }); err != nil {
					os.Exit(5)
				}
				for _, l := range ls {
					l := l
					s.Commit(func(tx *kv.Tx) error { return commitPage(tx, l, now) }) // not waited on, as workers do
				}
				if len(ls) == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
}

// TestCrash_SIGKILL kills a committing child at 20 random instants. After
// each kill the file must open, pass bbolt's check and weaver's invariants,
// and hold only whole pages.
func TestCrash_SIGKILL(t *testing.T) {
	if p := os.Getenv("WEAVER_CRASH_CHILD"); p != "" {
		crashChild(p)
		return
	}
	path := filepath.Join(t.TempDir(), "w.bolt")
	s, err := kv.Open(path, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := seedStore(s, time.Now()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	var lastPages int
	for kill := 0; kill < 20; kill++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrash_SIGKILL$")
		cmd.Env = append(os.Environ(), "WEAVER_CRASH_CHILD="+path)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(30+rng.Intn(250)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		pages := verifyWholePages(t, path)
		if pages < lastPages {
			t.Fatalf("kill %d: committed pages went from %d to %d", kill, lastPages, pages)
		}
		lastPages = pages
	}
	if lastPages == 0 {
		t.Fatal("the child never committed a page: the test proved nothing")
	}
	t.Logf("%d pages committed across 20 kills", lastPages)
}

// verifyWholePages opens the store after a kill and checks that every
// crawled node has all 10 of its edges and targets queued-or-visited, that
// no crawled node still holds a lease, and that no node was crawled twice.
func verifyWholePages(t *testing.T, path string) int {
	t.Helper()
	s, err := kv.Open(path, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("open after kill: %v", err)
	}
	defer s.Close()
	if err := storetest.CheckAll(s); err != nil {
		t.Fatalf("after kill: %v", err)
	}
	pages := 0
	err = s.View(func(tx *kv.Tx) error {
		return graph.ForEachNode(tx, func(n *graph.Node) error {
			edges := 0
			graph.ForEachEdgeFrom(tx, n.ID, func(*graph.Edge) error { edges++; return nil })
			switch {
			case n.CrawlCount > 1:
				t.Errorf("%s crawled %d times", n.Host, n.CrawlCount)
			case n.CrawlCount == 1:
				pages++
				if edges != 10 {
					t.Errorf("%s: crawled with %d edges, want all 10", n.Host, edges)
				}
				if tx.GetRaw(kv.BucketLeases, kv.U64(n.ID)) != nil {
					t.Errorf("%s: crawled but its lease is still there", n.Host)
				}
			case edges != 0:
				t.Errorf("%s: %d edges but not crawled (half a page)", n.Host, edges)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages
}
