package crawl_test

import (
	"context"
	"io/fs"
	"net/http"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// fullArchive is a crawl.Archive whose file fills now and then: Prepare
// fails with ENOSPC on the calls fail says. It keeps the URLs of the
// exchanges committed, in order.
type fullArchive struct {
	mu        sync.Mutex
	staged    []string
	committed []string
	prepares  int
	fails     int
	fail      func(n int) bool
}

func (a *fullArchive) Record(_ context.Context, req *http.Request, _ *http.Response, _ []byte, _ bool, _ string, _ time.Time, _ *crawl.WarcRef) (*crawl.Capture, error) {
	return &crawl.Capture{Ref: crawl.WarcRef{URL: req.URL.String()}, Records: []byte(req.URL.String())}, nil
}

func (a *fullArchive) Write(tx *kv.Tx, cs []*crawl.Capture) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range cs {
		a.staged = append(a.staged, string(c.Records))
	}
	tx.Enlist(a)
	return nil
}

func (a *fullArchive) Prepare() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.prepares++
	if a.fail(a.prepares) {
		a.fails++
		return &fs.PathError{Op: "write", Path: "/full/x.warc.gz.open", Err: syscall.ENOSPC}
	}
	return nil
}

func (a *fullArchive) Abort() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.staged = nil
}

func (a *fullArchive) Committed() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.committed = append(a.committed, a.staged...)
	a.staged = nil
}

// diskConfig is the configuration of the full-disk tests' crawls: the
// whole of srv's web into s, as fast as it goes, robots.txt off.
func diskConfig(t *testing.T, s *kv.Store, srv *fakeweb.Server) crawl.Config {
	cfg := crawl.Defaults()
	cfg.DBPath = s.Path()
	cfg.MetricsPath = filepath.Join(t.TempDir(), "metrics.log")
	cfg.ConnectTo = []string{srv.ConnectTo()}
	cfg.AllowPrivateNetworks, cfg.IgnoreRobots, cfg.Quiet = true, true, true
	cfg.PolitenessDelayMS, cfg.RetryDelayMS, cfg.ProgressIntervalMS = 0, 10, 0
	cfg.MaxDepth, cfg.MaxCrawlsPerNode = 0, 1
	return cfg
}

// TestCrawl_FullDiskWaits: commits that fail for want of room (here the
// archive's) wait, whole, and are made once there is room: the crawl
// pauses and goes on by itself, every page is committed and archived
// once, every lease handed out before a failed group is still good when
// it runs again, and the counters count each page once.
func TestCrawl_FullDiskWaits(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 7, Latency: 2 * time.Millisecond, RobotsDisallowEvery: -1})
	srv, err := w.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	s := storetest.MustOpen(t)
	cfg := diskConfig(t, s, srv)
	// Three full spells: each fails a group's Prepare four times.
	a := &fullArchive{fail: func(n int) bool { return (n >= 5 && n < 9) || (n >= 20 && n < 24) || (n >= 35 && n < 39) }}
	var mu sync.Mutex
	var lines []string
	c, err := crawl.New(cfg, s, crawl.Options{Archive: a, Log: func(level, msg string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, msg)
	}})
	if err != nil {
		t.Fatal(err)
	}
	crawl.SetDiskCheckEvery(c, 20*time.Millisecond)
	if _, _, err := c.Prepare([]string{w.Seed()}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Run(context.Background())
	if err != nil || res.TerminationReason != crawl.ReasonQueueEmpty {
		t.Fatalf("Run: %s, %v", res.TerminationReason, err)
	}
	if a.fails != 12 || res.DiskPauses != 3 {
		t.Errorf("%d failed prepares in %d disk pauses, want 12 in 3", a.fails, res.DiskPauses)
	}
	seen := map[string]int{}
	for _, u := range a.committed {
		seen[u]++
	}
	crawled := 0
	err = s.View(func(tx *kv.Tx) error {
		return graph.ForEachNode(tx, func(n *graph.Node) error {
			if n.CrawlCount == 0 {
				return nil
			}
			crawled++
			// Admitted by the limiter, whose log the failed groups' retries
			// wrote again (graph.Limiter).
			if !slices.Contains(graph.Subdomains(tx, n.Host), n.Host) {
				t.Errorf("%s crawled but not admitted by the limiter", n.Host)
			}
			if u := "http://" + n.Host + "/"; seen[u] != 1 {
				t.Errorf("%s archived %d times", u, seen[u])
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != crawled || len(a.committed) != crawled || res.PagesFetched != int64(crawled) {
		t.Errorf("%d exchanges archived (%d distinct), %d pages fetched, %d hosts crawled: want all equal",
			len(a.committed), len(seen), res.PagesFetched, crawled)
	}
	want := w.ExpectedEdges(10, fakeweb.DefaultExcluded)
	got := map[[2]string]int{}
	s.View(func(tx *kv.Tx) error {
		hosts := map[uint64]string{}
		graph.ForEachNode(tx, func(n *graph.Node) error { hosts[n.ID] = n.Host; return nil })
		return graph.ForEachEdge(tx, func(e *graph.Edge) error {
			got[[2]string{hosts[e.From], hosts[e.To]}] = int(e.Weight)
			return nil
		})
	})
	storetest.SameGraph(t, got, want)
	said := map[string]int{}
	for _, l := range lines {
		for _, p := range []string{"Disk full since", "Disk space back after"} {
			if len(l) >= len(p) && l[:len(p)] == p {
				said[p]++
			}
		}
	}
	if said["Disk full since"] != 3 || said["Disk space back after"] != 3 {
		t.Errorf("log: %v, want each pause said once, and its end", said)
	}
}

// TestCrawl_FullDiskStopWhilePaused: a stop (a signal, POST /stop) during
// a pause for a full disk ends the run at once, whatever the store's group
// writer held when the disk filled: the page commits and the claim for
// more hosts waiting behind the group it holds are given up, not waited
// for (they waited on the writer, which waited for the run to stop).
// Every run stops within the grace period, and the store keeps its
// invariants.
func TestCrawl_FullDiskStopWhilePaused(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 2000, Seed: 8, RobotsDisallowEvery: -1})
	srv, err := w.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for run := range 8 {
		s := storetest.MustOpen(t)
		cfg := diskConfig(t, s, srv)
		cfg.ConcurrentWorkers = 8
		failFrom := 3 + run*2 // the disk fills for good at a group of its own
		a := &fullArchive{fail: func(n int) bool { return n >= failFrom }}
		ctx, cancel := context.WithCancel(context.Background())
		full := make(chan struct{})
		var once sync.Once
		c, err := crawl.New(cfg, s, crawl.Options{Archive: a, Grace: time.Second, Log: func(level, msg string) {
			if len(msg) >= 15 && msg[:15] == "Disk full since" {
				once.Do(func() { close(full) })
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		crawl.SetDiskCheckEvery(c, 20*time.Millisecond)
		if _, _, err := c.Prepare([]string{w.Seed()}); err != nil {
			t.Fatal(err)
		}
		type result struct {
			res crawl.Result
			err error
		}
		done := make(chan result, 1)
		go func() {
			res, err := c.Run(ctx)
			done <- result{res, err}
		}()
		select {
		case <-full:
		case r := <-done:
			t.Fatalf("run %d ended before the disk filled: %s, %v", run, r.res.TerminationReason, r.err)
		case <-time.After(time.Minute):
			t.Fatalf("run %d: the disk never filled", run)
		}
		time.Sleep(time.Duration(run%4) * 15 * time.Millisecond) // the pause a little older each time
		cancel()
		select {
		case r := <-done:
			if r.err != nil || r.res.TerminationReason != crawl.ReasonSignal {
				t.Errorf("run %d: %s, %v; want a clean stop (signal)", run, r.res.TerminationReason, r.err)
			}
		case <-time.After(20 * time.Second):
			buf := make([]byte, 1<<20)
			t.Fatalf("run %d: still running 20 s after the stop, paused for a full disk:\n%s", run, buf[:runtime.Stack(buf, true)])
		}
		if err := storetest.CheckAll(s); err != nil {
			t.Errorf("run %d: %v", run, err)
		}
	}
}
