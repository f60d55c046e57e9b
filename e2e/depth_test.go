package e2e_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// lateWeb is a sparse web (600 hosts, about 4 links a page, so that the
// depth limit matters) whose hosts are late in each way a real host is:
// one in five sets Crawl-delay: 1, one in sixty answers a second late (it
// holds a worker), one in seventeen answers its page 503 with Retry-After:
// 1 first, and
// every answer waits a few random milliseconds. Hosts far from the seed
// answer before hosts near it.
func lateWeb() *fakeweb.Web {
	cfg := fakeweb.Config{Hosts: 600, Seed: 39, LinksPerPage: 4, CrawlDelayEvery: 5, Jitter: 4 * time.Millisecond, FaultRepeat: 1}
	faults := map[string]fakeweb.Fault{}
	for i, h := range fakeweb.New(cfg).Hosts() {
		switch {
		case i%60 == 3:
			faults[h] = fakeweb.SlowAnswer
		case i%17 == 9:
			faults[h] = fakeweb.Unavailable
		}
	}
	cfg.Faults = faults
	return fakeweb.New(cfg)
}

// ball is the breadth-first view of an unlimited crawl's graph: each
// host's distance from the seed over the links it recorded, the links
// themselves, and which hosts were asked for (crawled or refused).
type ball struct {
	dist  map[string]int
	edges map[[2]string]int
	asked map[string]bool
}

func bfs(seed string, edges map[[2]string]int) map[string]int {
	out := map[string][]string{}
	for e := range edges {
		out[e[0]] = append(out[e[0]], e[1])
	}
	dist := map[string]int{seed: 0}
	for q := []string{seed}; len(q) > 0; q = q[1:] {
		for _, t := range out[q[0]] {
			if _, ok := dist[t]; !ok {
				dist[t] = dist[q[0]] + 1
				q = append(q, t)
			}
		}
	}
	return dist
}

// asked reports whether a crawl asked for host: its node is neither only
// discovered nor left out.
func asked(n graph.Node) bool {
	switch n.Status {
	case graph.StatusDiscovered, graph.StatusExcludedByLimit, graph.StatusOutOfScope, "":
		return false
	}
	return true
}

func readBall(t *testing.T, db, seed string) ball {
	t.Helper()
	b := ball{edges: edges(t, db), asked: map[string]bool{}}
	b.dist = bfs(seed, b.edges)
	for h, n := range nodes(t, db) {
		b.asked[h] = asked(n)
	}
	return b
}

// sameBall checks the crawl in db, limited to maxDepth, against the
// unlimited crawl's ball: it asked for exactly the hosts within maxDepth
// links of the seed, recorded exactly their links, with the same weights,
// and every host's depth is its distance from the seed.
func sameBall(t *testing.T, db string, ref ball, seed string, maxDepth int) {
	t.Helper()
	got := nodes(t, db)
	var missing, extra, wrongDepth []string
	for h, d := range ref.dist {
		if d <= maxDepth && ref.asked[h] && !asked(got[h]) {
			missing = append(missing, h)
		}
	}
	for h, n := range got {
		d, ok := ref.dist[h]
		if asked(n) && (!ok || d > maxDepth) {
			extra = append(extra, h)
		}
		if !ok || n.Depth != d {
			wrongDepth = append(wrongDepth, fmt.Sprintf("%s at %d, %d links from the seed", h, n.Depth, d))
		}
	}
	if len(missing)+len(extra)+len(wrongDepth) > 0 {
		t.Errorf("max_depth %d: %d hosts of the ball not crawled %q, %d crawled outside it %q, %d depths wrong %q",
			maxDepth, len(missing), first(missing, 5), len(extra), first(extra, 5), len(wrongDepth), first(wrongDepth, 5))
	}
	want := map[[2]string]int{}
	for e, w := range ref.edges {
		if ref.dist[e[0]] <= maxDepth {
			want[e] = w
		}
	}
	storetest.SameGraph(t, edges(t, db), want)
}

// first is the first n of list at most.
func first(list []string, n int) []string { return list[:min(n, len(list))] }

// lateBall serves lateWeb once for the depth tests, and crawls it once
// without a depth limit: the graph every limited crawl is checked against.
var lateBall struct {
	once sync.Once
	web  *fakeweb.Web
	srv  *fakeweb.Server
	ref  ball
	err  string
}

func lateRef(t *testing.T) (*fakeweb.Web, *fakeweb.Server, ball) {
	t.Helper()
	lateBall.once.Do(func() {
		w := lateWeb()
		srv, err := w.Start("127.0.0.1:0")
		if err != nil {
			lateBall.err = err.Error()
			return
		}
		// Beside the binaries, which outlive every test; so does the web.
		dir, err := os.MkdirTemp(filepath.Dir(weaverBin), "late-reference-")
		if err != nil {
			lateBall.err = err.Error()
			return
		}
		db := filepath.Join(dir, "ref.bolt")
		r := fixture(t, dir, append(crawlArgs(srv, db, "--max-depth", "0", "--max-subdomains-per-root", "0", "--workers", "16"), w.Seed())...)
		if r.code != 0 {
			lateBall.err = fmt.Sprintf("reference crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			return
		}
		lateBall.web, lateBall.srv, lateBall.ref = w, srv, readBall(t, db, seedHost(w))
	})
	if lateBall.err != "" {
		t.Fatal(lateBall.err)
	}
	return lateBall.web, lateBall.srv, lateBall.ref
}

func seedHost(w *fakeweb.Web) string {
	return strings.TrimSuffix(strings.TrimPrefix(w.Seed(), "http://"), "/")
}

// TestDepth_BFSBall: a crawl limited to max_depth asks for exactly the
// hosts within max_depth links of the seed, and records each host's
// distance from it, however late the hosts near the seed answer, for
// depths 1 to 5 and 1, 3 and 16 workers.
func TestDepth_BFSBall(t *testing.T) {
	t.Parallel() // the crawls wait for late hosts; what they find does not depend on time
	w, srv, ref := lateRef(t)
	if n := len(ref.dist); n < 500 {
		t.Fatalf("the reference crawl reached %d hosts", n)
	}
	// The crawls mostly wait for late hosts: they run at once, not
	// -parallel at a time.
	var wg sync.WaitGroup
	for d := 1; d <= 5; d++ {
		for _, workers := range []int{1, 3, 16} {
			wg.Add(1)
			go func() {
				defer wg.Done() // after Run has returned: the subtest's result is in
				t.Run(fmt.Sprintf("depth%d/workers%d", d, workers), func(t *testing.T) { crawlBall(t, srv, w.Seed(), ref, d, workers) })
			}()
		}
	}
	wg.Wait()
}

// crawlBall crawls to maxDepth with workers and checks the ball.
func crawlBall(t *testing.T, srv *fakeweb.Server, seedURL string, ref ball, d, workers int) {
	seed := strings.TrimSuffix(strings.TrimPrefix(seedURL, "http://"), "/")
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	r := weaver(t, dir, append(crawlArgs(srv, db, "--max-depth", fmt.Sprint(d), "--max-subdomains-per-root", "0",
		"--workers", fmt.Sprint(workers)), seedURL)...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	sameBall(t, db, ref, seed, d)
}

// TestDepth_BFSBall_Kills: a crawl killed twice at random instants and
// resumed gives the same ball.
func TestDepth_BFSBall_Kills(t *testing.T) {
	t.Parallel()
	w, srv, ref := lateRef(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	args := crawlArgs(srv, db, "--max-depth", "4", "--max-subdomains-per-root", "0", "--workers", "3")
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	kills := 0
	for round := 0; round < 10; round++ {
		a := args
		if !seeded(t, db) {
			a = append(a, w.Seed())
		}
		var d time.Duration // the third run is left to end
		if kills < 2 {
			d = time.Duration(300+rng.Intn(1200)) * time.Millisecond
		}
		killed, err := interrupt(t, dir, a, d, os.Kill)
		if killed {
			kills++
			t.Logf("round %d: killed after %v", round, d)
			continue
		}
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if m := metrics(t, db+".metrics"); m.TerminationReason == "queue_empty" {
			break
		}
	}
	if kills == 0 {
		t.Log("no kill landed before the crawl ended")
	}
	sameBall(t, db, ref, seedHost(w), 4)
	statusByDepth(t, dir, db)
}

// TestDepth_ResumeDeeper: a crawl to max_depth 2 (killed once, resumed
// to its end) resumed with --max-depth 4 and no seed reaches the ball of
// depth 4, as a crawl begun with it does, and fetches no page twice: the
// hosts left out at depth 3 are queued by the resume, not a new round.
func TestDepth_ResumeDeeper(t *testing.T) {
	t.Parallel()
	w, srv, ref := lateRef(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	shallow := crawlArgs(srv, db, "--max-depth", "2", "--max-subdomains-per-root", "0", "--workers", "3")
	d := time.Duration(200+rand.Intn(600)) * time.Millisecond
	if killed, err := interrupt(t, dir, append(shallow, w.Seed()), d, os.Kill); killed {
		t.Logf("killed after %v", d)
	} else if err != nil {
		t.Fatal(err)
	}
	if r := weaver(t, dir, shallow...); r.code != 0 {
		t.Fatalf("resume at depth 2: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	sameBall(t, db, ref, seedHost(w), 2)
	r := weaver(t, dir, crawlArgs(srv, db, "--max-depth", "4", "--max-subdomains-per-root", "0", "--workers", "3")...)
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "left out by an earlier run's max_depth") {
		t.Fatalf("resume at depth 4: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	sameBall(t, db, ref, seedHost(w), 4)
	for h, n := range nodes(t, db) {
		if n.CrawlCount > 1 {
			t.Errorf("%s fetched %d times", h, n.CrawlCount)
		}
	}
}

// statusByDepth checks weaver status's hosts per depth, text and JSON,
// against the store's nodes.
func statusByDepth(t *testing.T, dir, db string) {
	t.Helper()
	want := map[int][2]uint64{}
	for _, n := range nodes(t, db) {
		c := want[n.Depth]
		c[0]++
		if n.CrawlCount > 0 {
			c[1]++
		}
		want[n.Depth] = c
	}
	r := weaver(t, dir, "status", "--db", db, "--json")
	var rep struct {
		Store struct {
			HostsByDepth []struct {
				Depth          int
				Hosts, Crawled uint64
			} `json:"hosts_by_depth"`
		} `json:"store"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); r.code != 0 || err != nil {
		t.Fatalf("status --json: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	got := map[int][2]uint64{}
	for _, d := range rep.Store.HostsByDepth {
		got[d.Depth] = [2]uint64{d.Hosts, d.Crawled}
	}
	if !maps.Equal(got, want) || len(want) != 6 {
		t.Errorf("hosts_by_depth: got %v, want %v (depths 0 to 5)", got, want)
	}
	text := weaver(t, dir, "status", "--db", db).stdout
	line := fmt.Sprintf("  depth 5  %d hosts, 0 crawled\n", want[5][0])
	if !strings.Contains(text, "Hosts by depth (links from the nearest seed)\n") || !strings.Contains(text, line) {
		t.Errorf("weaver status does not show hosts by depth (%q):\n%s", line, text)
	}
}

// TestDepth_BFSBall_Cluster: two shards crawling the late web to
// max_depth 4, merged, give the same ball: a shard that learns a shorter
// path to a host it owns lowers its depth, and forwards the hosts it
// links to at their new depth.
func TestDepth_BFSBall_Cluster(t *testing.T) {
	t.Parallel()
	w, srv, ref := lateRef(t)
	nats := startNATS(t)
	dir := t.TempDir()
	var procs []*shardProc
	var dbs []string
	for k := range 2 {
		db := filepath.Join(dir, fmt.Sprintf("s%d.bolt", k))
		dbs = append(dbs, db)
		args := append(crawlArgs(srv, db, "--max-depth", "4", "--max-subdomains-per-root", "0", "--workers", "3",
			"--cluster", nats.URL(), "--shard", fmt.Sprintf("%d/2", k)), w.Seed())
		procs = append(procs, startShard(t, dir, nil, args...))
	}
	waitShards(t, procs, 3*time.Minute)
	sameBall(t, mergeShards(t, dir, dbs), ref, seedHost(w), 4)
}

// TestDepth_StoppedCrawl: a crawl to max_depth 3 that max_pages stops
// with hosts still queued leaves each of them discovered, though links
// from past max_depth reach many (edges checks the store with
// storetest.CheckAll, which holds that no queued host is
// excluded_by_limit). The weaver before a3d1724 fails it: a link from
// past max_depth marked a host queued nearer excluded_by_limit.
func TestDepth_StoppedCrawl(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 3000, Seed: 40})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	weaverOK(t, dir, crawlArgs(srv, db, "--max-depth", "3", "--max-pages", "300", "--workers", "3", w.Seed())...)
	var queued int
	view(t, db, func(tx *kv.Tx) error { queued = tx.Len(kv.BucketQueued); return nil })
	if queued == 0 {
		t.Fatal("no host queued when the crawl stopped: nothing to check")
	}
	edges(t, db)
}
