package e2e_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

// edgeFacts reads a store's edges with their link facts by host pair.
func edgeFacts(t *testing.T, db string) map[[2]string]fakeweb.ExpectedEdge {
	t.Helper()
	out := map[[2]string]fakeweb.ExpectedEdge{}
	for k, e := range framedEdges(t, db) {
		out[k] = fakeweb.ExpectedEdge{Weight: int(e.Weight), Nofollow: int(e.Nofollow), Redirect: int(e.Redirect)}
	}
	return out
}

// sameHostGraph compares a store with the graph the fake web's model says
// a correct crawl records: every edge with its weight and facts, and every
// node's status, pages fetched, title, canonical, robots and mirror.
func sameHostGraph(t *testing.T, db string, want fakeweb.Expected) {
	t.Helper()
	got := edgeFacts(t, db)
	var diffs []string
	for k, w := range want.Edges {
		if g, ok := got[k]; !ok || g != w {
			diffs = append(diffs, fmt.Sprintf("edge %s → %s: got %+v (present %v), want %+v", k[0], k[1], g, ok, w))
		}
	}
	for k, g := range got {
		if _, ok := want.Edges[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("edge %s → %s: got %+v, want none", k[0], k[1], g))
		}
	}
	ns := nodes(t, db)
	byID := map[uint64]string{}
	for h, n := range ns {
		byID[n.ID] = h
	}
	for h, w := range want.Nodes {
		n, ok := ns[h]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("node %s missing", h))
			continue
		}
		g := fakeweb.ExpectedNode{Status: string(n.Status), PagesFetched: n.PagesFetched, Title: n.Title,
			Canonical: n.Canonical, Robots: n.RobotsDirectives, MirrorOf: byID[n.MirrorOf]}
		if w.Status != "crawled" {
			g.PagesFetched, g.Title, g.Canonical, g.Robots = w.PagesFetched, w.Title, w.Canonical, w.Robots
		}
		if g != w {
			diffs = append(diffs, fmt.Sprintf("node %s: got %+v, want %+v", h, g, w))
		}
	}
	for h := range ns {
		if _, ok := want.Nodes[h]; !ok {
			diffs = append(diffs, fmt.Sprintf("node %s: not in the expected graph", h))
		}
	}
	sort.Strings(diffs)
	for i, d := range diffs {
		if i == 20 {
			t.Errorf("... and %d more differences", len(diffs)-20)
			break
		}
		t.Error(d)
	}
}

// TestHostGraph_PagesPerHost crawls a web whose hosts have several pages,
// typed links, robots meta tags and X-Robots-Tag headers, robots.txt path
// rules, cross-host redirects and mirror hosts, at 1 and at 4 pages per
// host, and compares the store with the graph computed from the web's own
// model: weights count pages, nofollow and redirect facts, statuses,
// titles kept out by noindex, canonical URLs, directives and mirrors.
func TestHostGraph_PagesPerHost(t *testing.T) {
	t.Parallel()
	w := fakeweb.NewSites(fakeweb.SitesConfig{Hosts: 60, Seed: 41})
	srv := startWeb(t, w)
	for _, n := range []int{1, 4} {
		t.Run(fmt.Sprintf("pages=%d", n), func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "w.bolt")
			r := weaver(t, dir, crawlArgs(srv, db, "--max-depth", "0", "--max-crawls-per-node", "1", "--max-outbound-links", "3",
				"--pages-per-host", fmt.Sprint(n), w.Seed())...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			want := w.ExpectedSites(n, 3, nil)
			sameHostGraph(t, db, want)
			// Robots: no disallowed page was asked for.
			for _, rq := range w.Requests() {
				if strings.HasPrefix(rq.Path, "/private/") {
					t.Errorf("%s%s fetched though robots.txt disallows it", rq.Host, rq.Path)
				}
			}
			m := metrics(t, db+".metrics")
			pages := 0
			for _, nd := range want.Nodes {
				pages += nd.PagesFetched
			}
			if int(m.PagesFetched) != pages {
				t.Errorf("pages_fetched %d, the model fetches %d pages", m.PagesFetched, pages)
			}
		})
	}
}

// TestHostGraph_Scope: only hosts matching --scope are fetched; a link to
// another host is an edge to an out_of_scope node, never asked for.
func TestHostGraph_Scope(t *testing.T) {
	t.Parallel()
	w := fakeweb.NewSites(fakeweb.SitesConfig{Hosts: 45, Seed: 43})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	const scope = `\.ac\.uk$`
	re := regexp.MustCompile(scope)
	r := weaver(t, dir, crawlArgs(srv, db, "--max-depth", "0", "--max-crawls-per-node", "1", "--pages-per-host", "2",
		"--scope", scope, w.Seed())...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	want := w.ExpectedSites(2, 10, re.MatchString)
	sameHostGraph(t, db, want)
	out := 0
	for _, n := range nodes(t, db) {
		if n.Status == graph.StatusOutOfScope {
			out++
		}
	}
	if out == 0 {
		t.Fatal("no host was out of scope: the test proved nothing")
	}
	for _, rq := range w.Requests() {
		if !re.MatchString(rq.Host) {
			t.Errorf("%s%s asked though outside --scope", rq.Host, rq.Path)
		}
	}
	// A seed outside the scope is refused.
	r = weaver(t, dir, crawlArgs(srv, filepath.Join(dir, "x.bolt"), "--scope", scope, "http://www.shop-2.com/")...)
	if r.code != 2 || !strings.Contains(r.stderr, "outside scope") {
		t.Errorf("seed outside scope: exit %d, %q", r.code, r.stderr)
	}
}

// TestHostGraph_KillResume_SameGraph stops a 4-pages-per-host crawl with
// SIGKILL again and again, in the middle of hosts' pages, and resumes it:
// nothing is lost and nothing counted twice.
func TestHostGraph_KillResume_SameGraph(t *testing.T) {
	t.Parallel()
	w := fakeweb.NewSites(fakeweb.SitesConfig{Hosts: 80, Seed: 47})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	args := politeArgs(srv, db, "50ms", "--max-depth", "0", "--max-crawls-per-node", "1", "--max-outbound-links", "3", "--pages-per-host", "4")
	killAndResume(t, dir, db, args, w.Seed(), func(round int) time.Duration {
		if round < 5 {
			return time.Duration(300+round*150) * time.Millisecond
		}
		return 0
	})
	sameHostGraph(t, db, w.ExpectedSites(4, 3, nil))
}

// TestHostGraph_Cluster_PagesPerHost: three shards on a real NATS server
// crawl the web of sites with 4 pages per host; their merged stores hold
// the graph the model gives one process: weights, link facts, node
// fields and mirrors.
func TestHostGraph_Cluster_PagesPerHost(t *testing.T) {
	t.Parallel()
	w := fakeweb.NewSites(fakeweb.SitesConfig{Hosts: 90, Seed: 67})
	srv := startWeb(t, w)
	ns := startNATS(t)
	dir := t.TempDir()
	var dbs []string
	var procs []*shardProc
	for k := range 3 {
		db := filepath.Join(dir, fmt.Sprintf("s%d.bolt", k))
		dbs = append(dbs, db)
		args := crawlArgs(srv, db, "--max-depth", "0", "--max-crawls-per-node", "1", "--max-outbound-links", "3",
			"--pages-per-host", "4", "--workers", "2", "--cluster", ns.URL(), "--shard", fmt.Sprintf("%d/3", k), w.Seed())
		procs = append(procs, startShard(t, dir, nil, args...))
	}
	waitShards(t, procs, 3*time.Minute)
	merged := mergeShards(t, dir, dbs)
	sameHostGraph(t, merged, w.ExpectedSites(4, 3, nil))
}
