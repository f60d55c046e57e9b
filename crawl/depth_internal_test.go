package crawl

import (
	"testing"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// depthCrawler is a crawler on a new store with max_depth and the
// subdomain cap given.
func depthCrawler(t *testing.T, maxDepth, maxSubdomains int) (*Crawler, *kv.Store) {
	t.Helper()
	s := storetest.MustOpen(t)
	cfg := Defaults()
	cfg.MaxDepth, cfg.MaxSubdomainsPerRoot = maxDepth, maxSubdomains
	c, err := New(cfg, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

// queue puts host in the frontier at depth, as a link found it there.
func queue(t *testing.T, c *Crawler, s *kv.Store, host string, depth int) {
	t.Helper()
	err := s.Update(func(tx *kv.Tx) error {
		n, _, err := graph.EnsureAt(tx, host, "http", depth, c.now())
		if err != nil {
			return err
		}
		if _, err := c.admitAll(tx, host); err != nil {
			return err
		}
		_, err = frontier.Push(tx, frontier.Entry{NodeID: n.ID, Host: host, URL: frontier.HomeURL("http", host), Depth: depth})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// fetchAndCommit claims host's entry and commits its page, answered with
// links to the hosts given, as a worker would.
func fetchAndCommit(t *testing.T, c *Crawler, s *kv.Store, host string, links ...string) {
	t.Helper()
	err := s.Update(func(tx *kv.Tx) error {
		ls, err := frontier.Claim(tx, 1, 1000, c.now(), func(e *frontier.Entry) frontier.Verdict {
			if e.Host == host {
				return frontier.Take
			}
			return frontier.Skip
		})
		if err != nil {
			return err
		}
		if len(ls) != 1 {
			t.Fatalf("%s is not queued", host)
		}
		p := &page{lease: ls[0], fetched: true, status: 200}
		for _, l := range links {
			p.targets = append(p.targets, target{host: l, scheme: "http", weight: 1})
		}
		return c.commitPage(tx, p)
	})
	if err != nil {
		t.Fatal(err)
	}
}

type depthWant struct {
	depth  int
	status graph.Status
	queued int // the depth it is queued at, -1 when not queued
	crawls int
}

func checkDepths(t *testing.T, s *kv.Store, want map[string]depthWant) {
	t.Helper()
	err := s.View(func(tx *kv.Tx) error {
		for host, w := range want {
			n, ok, err := graph.GetByHost(tx, host)
			if err != nil || !ok {
				t.Fatalf("%s: %v, found %v", host, err, ok)
			}
			queued := -1
			if d, ok := frontier.QueuedAt(tx, n.ID); ok {
				queued = d
			}
			if n.Depth != w.depth || n.Status != w.status || queued != w.queued || n.CrawlCount != w.crawls {
				t.Errorf("%s: depth %d, %s, queued at %d, crawled %d times; want depth %d, %s, queued at %d, crawled %d times",
					host, n.Depth, n.Status, queued, n.CrawlCount, w.depth, w.status, w.queued, w.crawls)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A page that finds a shorter path to a host crawled already lowers the
// host's depth in its own commit, and the decrease travels along the
// links recorded: a host crawled at the greater depth brings its targets
// closer, one left out beyond max_depth and now within it is queued at its
// new depth, and so on, two levels here. Nothing crawled is queued again.
func TestRelax_LowersAndRequeues(t *testing.T) {
	c, s := depthCrawler(t, 3, 0)
	queue(t, c, s, "p.test", 2)
	queue(t, c, s, "s.test", 0) // the seed, answering late
	fetchAndCommit(t, c, s, "p.test", "a.test", "y.test")
	fetchAndCommit(t, c, s, "a.test", "b.test", "y.test")
	fetchAndCommit(t, c, s, "y.test", "z.test")
	checkDepths(t, s, map[string]depthWant{
		"a.test": {3, graph.StatusCrawled, -1, 1},
		"y.test": {3, graph.StatusCrawled, -1, 1},
		"b.test": {4, graph.StatusExcludedByLimit, -1, 0},
		"z.test": {4, graph.StatusExcludedByLimit, -1, 0},
	})

	fetchAndCommit(t, c, s, "s.test", "a.test")
	checkDepths(t, s, map[string]depthWant{
		"s.test": {0, graph.StatusCrawled, -1, 1},
		"a.test": {1, graph.StatusCrawled, -1, 1},
		"y.test": {2, graph.StatusCrawled, -1, 1},
		"b.test": {2, graph.StatusDiscovered, 2, 0},
		"z.test": {3, graph.StatusDiscovered, 3, 0},
		"p.test": {2, graph.StatusCrawled, -1, 1},
	})
	if err := storetest.CheckAll(s); err != nil {
		t.Fatal(err)
	}
}

// A host being fetched when a shorter path to it is found commits its page
// at the depth it has then: its links are one hop further than it.
func TestRelax_LeasedHostCommitsAtItsNewDepth(t *testing.T) {
	c, s := depthCrawler(t, 2, 0)
	queue(t, c, s, "a.test", 2)
	queue(t, c, s, "s.test", 0)
	var lease frontier.Lease
	err := s.Update(func(tx *kv.Tx) error {
		ls, err := frontier.Claim(tx, 1, 10, c.now(), func(e *frontier.Entry) frontier.Verdict {
			if e.Host == "a.test" {
				return frontier.Take
			}
			return frontier.Skip
		})
		if len(ls) == 1 {
			lease = ls[0]
		}
		return err
	})
	if err != nil || lease.Host != "a.test" {
		t.Fatalf("claim: %v, %+v", err, lease)
	}
	fetchAndCommit(t, c, s, "s.test", "a.test")
	err = s.Update(func(tx *kv.Tx) error {
		return c.commitPage(tx, &page{lease: lease, fetched: true, status: 200, targets: []target{{host: "b.test", scheme: "http", weight: 1}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	checkDepths(t, s, map[string]depthWant{
		"a.test": {1, graph.StatusCrawled, -1, 1},
		"b.test": {2, graph.StatusDiscovered, 2, 0},
	})
}

// Where the subdomain cap decides, the host nearer a seed wins: one of
// the domain's admitted hosts that is only queued, deeper, gives its
// place up. A host fetched already keeps its place.
func TestAdmitSubdomain_PrefersLowerDepth(t *testing.T) {
	c, s := depthCrawler(t, 5, 2)
	queue(t, c, s, "p.test", 0)
	queue(t, c, s, "q.test", 3)
	fetchAndCommit(t, c, s, "q.test", "a.x.test") // a at 4, admitted
	fetchAndCommit(t, c, s, "p.test", "b.x.test") // b at 1, admitted: the cap is full
	queue(t, c, s, "r.test", 1)                   // r.test crawled next
	fetchAndCommit(t, c, s, "r.test", "c.x.test") // c at 2 takes a's place
	checkDepths(t, s, map[string]depthWant{
		"a.x.test": {4, graph.StatusExcludedByLimit, -1, 0},
		"b.x.test": {1, graph.StatusDiscovered, 1, 0},
		"c.x.test": {2, graph.StatusDiscovered, 2, 0},
	})
	fetchAndCommit(t, c, s, "b.x.test")
	queue(t, c, s, "u.test", 0)
	fetchAndCommit(t, c, s, "u.test", "d.x.test") // d at 1: c is deeper, and only queued
	checkDepths(t, s, map[string]depthWant{
		"b.x.test": {1, graph.StatusCrawled, -1, 1},
		"c.x.test": {2, graph.StatusExcludedByLimit, -1, 0},
		"d.x.test": {1, graph.StatusDiscovered, 1, 0},
	})
	err := s.View(func(tx *kv.Tx) error {
		if got := graph.Subdomains(tx, "x.test"); len(got) != 2 || got[0] != "b.x.test" || got[1] != "d.x.test" {
			t.Errorf("admitted under x.test: %v, want b and d", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := storetest.CheckAll(s); err != nil {
		t.Fatal(err)
	}
}

// TestReach_ResumeWithGreaterMaxDepth: a crawl stopped with hosts left out
// by max_depth, resumed with a greater one, queues them at their depth
// (Prepare's reach pass), as a crawl begun with it would have; a resume
// with the same limits, or stricter ones, leaves them out.
func TestReach_ResumeWithGreaterMaxDepth(t *testing.T) {
	c, s := depthCrawler(t, 1, 0)
	queue(t, c, s, "s.test", 0)
	fetchAndCommit(t, c, s, "s.test", "a.test")
	fetchAndCommit(t, c, s, "a.test", "b.test")
	checkDepths(t, s, map[string]depthWant{"b.test": {2, graph.StatusExcludedByLimit, -1, 0}})

	resume := func(maxDepth int) *Crawler {
		t.Helper()
		cfg := Defaults()
		cfg.MaxDepth, cfg.MaxSubdomainsPerRoot = maxDepth, 0
		c, err := New(cfg, s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Prepare(nil); err != nil {
			t.Fatal(err)
		}
		return c
	}
	resume(1)
	checkDepths(t, s, map[string]depthWant{"b.test": {2, graph.StatusExcludedByLimit, -1, 0}})
	c = resume(2)
	checkDepths(t, s, map[string]depthWant{"b.test": {2, graph.StatusDiscovered, 2, 0}})
	if t.Failed() {
		t.FailNow() // b.test is not queued: fetchAndCommit would wait for it
	}
	fetchAndCommit(t, c, s, "b.test", "z.test")
	checkDepths(t, s, map[string]depthWant{"z.test": {3, graph.StatusExcludedByLimit, -1, 0}})
	resume(0) // no limit: z.test too
	checkDepths(t, s, map[string]depthWant{"z.test": {3, graph.StatusDiscovered, 3, 0}})
	if err := storetest.CheckAll(s); err != nil {
		t.Fatal(err)
	}
}

func TestReach_Looser(t *testing.T) {
	for _, tc := range []struct {
		recorded   string
		depth, sub int
		want       bool
	}{
		{"", 5, 3, true}, {"damaged", 5, 3, true},
		{"5 3", 5, 3, false}, {"5 3", 4, 3, false}, {"5 3", 6, 3, true}, {"5 3", 0, 3, true},
		{"5 3", 5, 4, true}, {"5 3", 5, 0, true}, {"0 0", 5, 3, false}, {"0 3", 0, 2, false},
	} {
		if got := looser(tc.recorded, tc.depth, tc.sub); got != tc.want {
			t.Errorf("looser(%q, %d, %d) = %v, want %v", tc.recorded, tc.depth, tc.sub, got, tc.want)
		}
	}
}

// A link from past max_depth to a host queued nearer leaves the host as
// it is: discovered and queued at its own depth, not excluded_by_limit,
// which a crawl stopped before fetching it would export.
func TestAdmit_PastMaxDepthToAHostQueuedNearer(t *testing.T) {
	for _, sub := range []int{0, 1} {
		c, s := depthCrawler(t, 2, sub)
		queue(t, c, s, "s.test", 0)
		queue(t, c, s, "q.test", 2)
		fetchAndCommit(t, c, s, "s.test", "a.test") // a at 1, queued
		fetchAndCommit(t, c, s, "q.test", "a.test") // a link at 3, past max_depth
		checkDepths(t, s, map[string]depthWant{"a.test": {1, graph.StatusDiscovered, 1, 0}})
		fetchAndCommit(t, c, s, "a.test")
		checkDepths(t, s, map[string]depthWant{"a.test": {1, graph.StatusCrawled, -1, 1}})
		if err := storetest.CheckAll(s); err != nil {
			t.Fatal(err)
		}
	}
}
