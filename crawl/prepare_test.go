package crawl_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

func newPrepared(t *testing.T) (*crawl.Crawler, *kv.Store) {
	t.Helper()
	s := storetest.MustOpen(t)
	cfg := crawl.Defaults()
	cfg.DBPath = s.Path()
	cfg.MetricsPath = filepath.Join(t.TempDir(), "metrics.log")
	cfg.Quiet = true
	c, err := crawl.New(cfg, s, crawl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

// queuedHosts lists the frontier's hosts in claim order.
func queuedHosts(t *testing.T, s *kv.Store) []string {
	t.Helper()
	var hosts []string
	err := s.View(func(tx *kv.Tx) error {
		c := tx.Cursor(kv.BucketFrontier)
		for k, v := c.First(); k != nil; k, v = c.Next() {
			var e frontier.Entry
			if err := kv.Decode(v, &e); err != nil {
				return err
			}
			hosts = append(hosts, e.Host)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hosts
}

// More seeds than one transaction takes are all queued, in their order.
func TestPrepare_SeedsInBatches(t *testing.T) {
	c, s := newPrepared(t)
	n := 2*crawl.PrepareBatch + 7
	seeds := make([]string, n)
	for i := range seeds {
		seeds[i] = fmt.Sprintf("http://h%05d.test/", n-i) // not in key order
	}
	_, queued, err := c.Prepare(seeds)
	if err != nil || queued != n {
		t.Fatalf("Prepare: queued %d, %v; want %d", queued, err, n)
	}
	hosts := queuedHosts(t, s)
	if len(hosts) != n {
		t.Fatalf("%d queued, want %d", len(hosts), n)
	}
	for i, h := range hosts {
		if want := fmt.Sprintf("h%05d.test", n-i); h != want {
			t.Fatalf("queue position %d holds %s, want %s", i, h, want)
		}
	}
	// Again with the same seeds (as after a stop part-way): nothing doubles.
	if _, queued, err := c.Prepare(seeds); err != nil || queued != 0 {
		t.Fatalf("second Prepare: queued %d, %v", queued, err)
	}
	if err := storetest.CheckAll(s); err != nil {
		t.Fatal(err)
	}
}

// A bad seed after more than a batch of good ones changes nothing.
func TestPrepare_BadSeedChangesNothing(t *testing.T) {
	c, s := newPrepared(t)
	var seeds []string
	for i := range crawl.PrepareBatch + 5 {
		seeds = append(seeds, fmt.Sprintf("http://h%05d.test/", i))
	}
	for _, bad := range []string{"ftp://files.test/", "http://"} {
		_, queued, err := c.Prepare(append(seeds, bad))
		if !errors.Is(err, crawl.ErrSeed) || queued != 0 {
			t.Errorf("%q: queued %d, %v; want ErrSeed", bad, queued, err)
		}
	}
	err := s.View(func(tx *kv.Tx) error {
		if n := graph.GetCounts(tx).Nodes; n != 0 || frontier.Len(tx) != 0 {
			return fmt.Errorf("store holds %d nodes, %d queued", n, frontier.Len(tx))
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

// knownNodes writes n crawled nodes and returns their ids in order.
func knownNodes(t *testing.T, s *kv.Store, n int) []uint64 {
	t.Helper()
	ids := make([]uint64, 0, n)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	err := s.Update(func(tx *kv.Tx) error {
		for i := range n {
			node, _, err := graph.Ensure(tx, fmt.Sprintf("h%05d.test", i), "http", now)
			if err != nil {
				return err
			}
			node.CrawlCount, node.Status = 1, graph.StatusCrawled
			if err := graph.Put(tx, &node); err != nil {
				return err
			}
			ids = append(ids, node.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// A finished crawl given a known seed re-queues every node under
// max_crawls_per_node (seed 000 §7), a batch a transaction, and leaves no
// marker behind.
func TestPrepare_RequeuePass(t *testing.T) {
	c, s := newPrepared(t)
	n := 2*crawl.PrepareBatch + 3
	knownNodes(t, s, n)
	_, queued, err := c.Prepare([]string{"http://h00000.test/"})
	if err != nil || queued != n {
		t.Fatalf("Prepare: queued %d, %v; want %d", queued, err, n)
	}
	s.View(func(tx *kv.Tx) error {
		if m := tx.MetaString(crawl.MetaRequeueNext); m != "" {
			t.Errorf("marker %q left after the pass", m)
		}
		return nil
	})
	if err := storetest.CheckAll(s); err != nil {
		t.Fatal(err)
	}
}

// A pass stopped between its transactions (the marker says where) is
// finished by the next Prepare, though the frontier is no longer empty.
func TestPrepare_RequeuePassResumes(t *testing.T) {
	c, s := newPrepared(t)
	n := 2*crawl.PrepareBatch + 3
	ids := knownNodes(t, s, n)
	cut := crawl.PrepareBatch + 1
	err := s.Update(func(tx *kv.Tx) error {
		// What the stopped pass had queued: the nodes before the cut.
		for _, id := range ids[:cut] {
			if _, err := frontier.Requeue(tx, frontier.Entry{NodeID: id, Host: fmt.Sprintf("h%05d.test", id-ids[0]), URL: "http://x/", Depth: 0}); err != nil {
				return err
			}
		}
		return tx.SetMetaString(crawl.MetaRequeueNext, strconv.FormatUint(ids[cut], 10))
	})
	if err != nil {
		t.Fatal(err)
	}
	_, queued, err := c.Prepare(nil)
	if err != nil || queued != n-cut {
		t.Fatalf("Prepare: queued %d, %v; want %d", queued, err, n-cut)
	}
	if got := len(queuedHosts(t, s)); got != n {
		t.Errorf("%d queued, want all %d", got, n)
	}
	if err := storetest.CheckAll(s); err != nil {
		t.Fatal(err)
	}
}

// A marker that is not a number starts the pass again from the first node.
func TestPrepare_RequeueDamagedMarker(t *testing.T) {
	c, s := newPrepared(t)
	n := crawl.PrepareBatch + 3
	knownNodes(t, s, n)
	if err := s.Update(func(tx *kv.Tx) error { return tx.SetMetaString(crawl.MetaRequeueNext, "x7") }); err != nil {
		t.Fatal(err)
	}
	if _, queued, err := c.Prepare(nil); err != nil || queued != n {
		t.Fatalf("Prepare: queued %d, %v; want %d", queued, err, n)
	}
	s.View(func(tx *kv.Tx) error {
		if m := tx.MetaString(crawl.MetaRequeueNext); m != "" {
			t.Errorf("marker %q left after the pass", m)
		}
		return nil
	})
}
