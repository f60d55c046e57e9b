package e2e_test

import (
	"math/rand"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
)

// politeArgs are crawlArgs with the politeness delay put back to d (and
// robots.txt obeyed): the defaults a user crawls with.
func politeArgs(srv *fakeweb.Server, db, d string, extra ...string) []string {
	args := crawlArgs(srv, db, extra...)
	for i, a := range args {
		if a == "--delay" {
			args[i+1] = d
		}
	}
	return args
}

// gaps checks that no two requests to one host came less than min apart,
// and returns how many pairs it checked.
func gaps(t *testing.T, reqs []fakeweb.Request, min time.Duration, except func(prev, next fakeweb.Request) bool) int {
	t.Helper()
	last := map[string]fakeweb.Request{}
	checked, bad := 0, 0
	for _, rq := range reqs {
		if prev, ok := last[rq.Host]; ok && (except == nil || !except(prev, rq)) {
			checked++
			if gap := rq.At.Sub(prev.At); gap < min && bad < 10 {
				bad++
				t.Errorf("%s: %s then %s %v apart, the delay is %v", rq.Host, prev.Path, rq.Path, gap, min)
			}
		}
		last[rq.Host] = rq
	}
	return checked
}

// TestPolite_DefaultsNoWorkerSleeps crawls with the default 1 s delay and
// robots.txt obeyed, 3 workers, 20 ms answers. No two requests to a host
// come less than 1 s apart, and while a host waits out its delay between
// robots.txt and its page the workers fetch other hosts: a crawler whose
// workers slept the delay would let at most a handful of requests through
// in that second, weaver lets through the dozens its workers can make.
func TestPolite_DefaultsNoWorkerSleeps(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 23, Latency: 20 * time.Millisecond, CrawlDelayEvery: -1, RobotsDisallowEvery: -1})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	r := weaver(t, dir, politeArgs(srv, db, "1s", "--workers", "3", "--max-depth", "0", "--max-crawls-per-node", "1", "--max-pages", "150", w.Seed())...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := w.Requests()
	if n := gaps(t, reqs, time.Second, nil); n < 100 {
		t.Fatalf("only %d request pairs to one host: the test proved nothing", n)
	}
	robotsAt := map[string]int{}
	var between []int
	for i, rq := range reqs {
		switch rq.Path {
		case "/robots.txt":
			robotsAt[rq.Host] = i
		case "/":
			if j, ok := robotsAt[rq.Host]; ok {
				between = append(between, i-j-1)
			}
		}
	}
	if len(between) < 100 {
		t.Fatalf("only %d hosts asked robots.txt then /", len(between))
	}
	sort.Ints(between)
	// The median host saw ~75 other requests during its second; a sleeping
	// worker design sees at most 2·(workers−1) ≈ 4.
	if med := between[len(between)/2]; med < 20 {
		t.Errorf("median requests to other hosts between a host's robots.txt and its page: %d, want ≥ 20 (workers sleep on hosts)", med)
	}
	m := metrics(t, db+".metrics")
	if m.AvgFetchTimeMS > 500 || m.AvgWaitTimeMS < 800 {
		t.Errorf("avg_fetch_time_ms %d, avg_wait_time_ms %d: want the fetch alone (~20 ms) and the wait apart (~1,000 ms)", m.AvgFetchTimeMS, m.AvgWaitTimeMS)
	}
}

// TestPolite_RetriesDoNotHoldWorkers: a host answering 429 with
// Retry-After and one bursting 5xx are retried after their waits, and
// while they wait the other hosts are fetched.
func TestPolite_RetriesDoNotHoldWorkers(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 200, Seed: 29, FaultRepeat: 2, Latency: 10 * time.Millisecond, Faults: map[string]fakeweb.Fault{
		"busy.retry.test": fakeweb.TooMany429, "flaky.retry.test": fakeweb.Burst5xx,
	}})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	args := politeArgs(srv, db, "0", "--workers", "1", "--max-depth", "0", "--max-crawls-per-node", "1", "--ignore-robots", "--retries", "3", w.Seed())
	for i, a := range args {
		if a == "--retry-delay" {
			args[i+1] = "1s"
		}
	}
	if r := weaver(t, dir, args...); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	ns := nodes(t, db)
	reqs := w.Requests()
	for _, h := range []string{"busy.retry.test", "flaky.retry.test"} {
		if n := ns[h]; n.Status != graph.StatusCrawled || n.HTTPStatus != 200 {
			t.Errorf("%s: status %s (HTTP %d), want crawled after retries", h, n.Status, n.HTTPStatus)
		}
		var at []int
		for i, rq := range reqs {
			if rq.Host == h {
				at = append(at, i)
			}
		}
		if len(at) != 3 {
			t.Fatalf("%s got %d requests, want 3 (two failures, then the page)", h, len(at))
		}
		for k := 1; k < len(at); k++ {
			if gap := reqs[at[k]].At.Sub(reqs[at[k-1]].At); gap < 950*time.Millisecond {
				t.Errorf("%s: retry %d came %v after the failure, want ≥ 1 s", h, k, gap)
			}
			// One worker, 10 ms answers: a worker that slept the second
			// would let nothing through; a free one fetches dozens (18
			// under the race detector on a loaded 2-core machine).
			if others := at[k] - at[k-1] - 1; others < 8 {
				t.Errorf("%s: %d requests to other hosts during retry %d's wait, want ≥ 8", h, others, k)
			}
		}
	}
}

// TestPolite_KillWhileParked_SameGraph stops a polite crawl with SIGKILL
// again and again, at moments when most open hosts are parked between
// robots.txt and their page, and resumes it: the graph equals the ground
// truth, and a host parked at the kill is not asked sooner after the
// restart than its delay allows (its wait is kept with its lease).
func TestPolite_KillWhileParked_SameGraph(t *testing.T) {
	const delay = 400 * time.Millisecond
	w := fakeweb.New(fakeweb.Config{Hosts: 250, Seed: 31, Latency: 5 * time.Millisecond, RobotsDisallowEvery: -1, CrawlDelayEvery: -1})
	srv := startWeb(t, w)
	want := w.ExpectedEdges(10, excluded)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	args := politeArgs(srv, db, delay.String(), "--max-depth", "0", "--max-crawls-per-node", "1")
	killAndResume(t, dir, db, args, w.Seed(), func(round int) time.Duration {
		if round < 5 {
			return time.Duration(600+rng.Intn(900)) * time.Millisecond
		}
		return 0
	})
	storetest.SameGraph(t, edges(t, db), want)
	for h, n := range nodes(t, db) {
		if n.CrawlCount > 1 {
			t.Errorf("%s crawled %d times, max 1", h, n.CrawlCount)
		}
	}
	// A host asked just before a kill (its answer maybe never committed)
	// waits one delay after the restart: every pair keeps the delay,
	// across restarts too.
	if n := gaps(t, w.Requests(), delay-10*time.Millisecond, nil); n < 200 {
		t.Fatalf("only %d request pairs checked", n)
	}
}

// TestPolite_NoWaste: a host that failed for good (here a private address
// linked from every depth) is attempted once, not at every depth, and its
// attempt does not use up --max-pages; a host whose cached robots.txt
// disallows its page is not attempted again.
func TestPolite_NoWaste(t *testing.T) {
	t.Run("failed for good", func(t *testing.T) {
		w, err := fakeweb.FromEdges(strings.NewReader("s.test\ta.test\t1\ns.test\t10.9.9.9\t1\n"+
			"a.test\tb.test\t1\na.test\t10.9.9.9\t1\nb.test\tc.test\t1\nb.test\t10.9.9.9\t1\nc.test\t10.9.9.9\t1\n"),
			fakeweb.Config{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		srv := startWeb(t, w)
		dir := t.TempDir()
		db := filepath.Join(dir, "w.bolt")
		// s, a, b, c and one attempt of 10.9.9.9: five pages.
		r := weaver(t, dir, crawlArgs(srv, db, "--max-depth", "0", "--max-pages", "5", "http://s.test/")...)
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		ns := nodes(t, db)
		for _, h := range []string{"s.test", "a.test", "b.test", "c.test"} {
			if ns[h].CrawlCount != 1 {
				t.Errorf("%s crawled %d times, want 1 (max_pages used up by repeated failures?)", h, ns[h].CrawlCount)
			}
		}
		if n := ns["10.9.9.9"]; n.Status != graph.StatusRefused || n.FailCount != 1 {
			t.Errorf("10.9.9.9: status %s, %d attempts; want refused, 1 attempt", n.Status, n.FailCount)
		}
		m := metrics(t, db+".metrics")
		// A host asked for once is not queued again by later links (issue
		// 27: one fetch of a host per crawl), so nothing is even skipped.
		if m.PagesFetched != 4 || m.PagesFailed != 1 || m.PagesSkipped != 0 {
			t.Errorf("metrics: %d fetched, %d failed, %d skipped; want 4, 1, 0", m.PagesFetched, m.PagesFailed, m.PagesSkipped)
		}
		if !strings.Contains(r.stdout, "4 pages fetched, 1 failed,") {
			t.Errorf("final line does not say what was fetched, failed, skipped:\n%s", r.stdout)
		}
	})
	t.Run("robots disallowed", func(t *testing.T) {
		w := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 37, RobotsDisallowEvery: 10})
		srv := startWeb(t, w)
		dir := t.TempDir()
		db := filepath.Join(dir, "w.bolt")
		if r := weaver(t, dir, crawlArgs(srv, db, "--max-depth", "0", "--max-crawls-per-node", "3", w.Seed())...); r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		disallowed := 0
		for _, n := range nodes(t, db) {
			if n.Status == graph.StatusRobotsDisallow {
				disallowed++
			}
		}
		m := metrics(t, db+".metrics")
		if disallowed < 10 || m.RobotsDisallowed != int64(disallowed) {
			t.Errorf("robots_disallowed %d, hosts disallowed %d: each should be tried once", m.RobotsDisallowed, disallowed)
		}
	})
}

// TestPolite_NothingReachable_Exit1: a crawl whose every page fails
// (offline: nothing listens where --connect-to points) exits 1 with one
// line saying why; a crawl stopped by a signal still exits 0.
func TestPolite_NothingReachable_Exit1(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	r := weaver(t, dir, "crawl", "--db", db, "--quiet", "--connect-to", "::127.0.0.1:1", "--retries", "0", "http://nowhere.test/")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "nothing could be fetched") || !strings.Contains(lines[0], "connect 1") {
		t.Errorf("stderr: %q, want one line saying nothing could be fetched (connect 1)", r.stderr)
	}
}

// TestPolite_SlowHostDoesNotHoldTheOthers: a host that drips its page a
// byte a second holds one worker until the timeout; the other workers
// go on fetching other hosts meanwhile.
func TestPolite_SlowHostDoesNotHoldTheOthers(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 200, Seed: 71, Latency: 10 * time.Millisecond, RobotsDisallowEvery: -1,
		Faults: map[string]fakeweb.Fault{"drip.slow.test": fakeweb.SlowDrip}})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	r := weaver(t, dir, politeArgs(srv, db, "0", "--workers", "3", "--max-depth", "0", "--max-crawls-per-node", "1",
		"--timeout", "2s", "--retries", "0", w.Seed())...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := w.Requests()
	at := -1
	for i, rq := range reqs {
		if rq.Host == "drip.slow.test" && rq.Path == "/" {
			at = i
		}
	}
	if at < 0 {
		t.Fatal("the slow host's page was never asked for")
	}
	// In the 2 s its request lasted, the two other workers fetch at 10 ms
	// a request: far more than the handful a stalled crawl would.
	end := reqs[at].At.Add(2 * time.Second)
	others := 0
	for _, rq := range reqs[at+1:] {
		if rq.At.After(end) {
			break
		}
		others++
	}
	if len(reqs)-at-1 < 50 {
		t.Fatalf("only %d requests after the slow host's: the test proved nothing", len(reqs)-at-1)
	}
	t.Logf("%d requests to other hosts during the slow host's 2 s", others)
	if others < 50 {
		t.Errorf("%d requests to other hosts while the slow host held a worker for 2 s, want ≥ 50", others)
	}
	if n := nodes(t, db)["drip.slow.test"]; n.Status != "timeout" {
		t.Errorf("slow host: status %s, want timeout", n.Status)
	}
}

// killAndResume runs a crawl of seed into db with args (the seed given
// until the store holds it: see seeded), killing it with SIGKILL
// after delay(round) for the first rounds (delay returns 0 once a run is
// to be left to end) and running it again, until a run ends by itself
// with queue_empty. It returns how many kills landed.
func killAndResume(t *testing.T, dir, db string, args []string, seed string, delay func(round int) time.Duration) int {
	t.Helper()
	kills := 0
	for round := 0; ; round++ {
		a := args
		if !seeded(t, db) {
			a = append(append([]string(nil), args...), seed)
		}
		signalled, err := interrupt(t, dir, a, delay(round), syscall.SIGKILL)
		if !signalled && err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if signalled {
			kills++
			continue
		}
		if m := metrics(t, db+".metrics"); m.TerminationReason == "queue_empty" {
			break
		}
	}
	if kills < 2 {
		t.Logf("only %d kills landed before the crawl finished", kills)
	}
	return kills
}
