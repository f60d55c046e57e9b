package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go.etcd.io/bbolt"
	"math/rand"
	"os"
	"os/exec"
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

// dnsFailHost never resolves: Go refuses .onion names without asking DNS
// (RFC 7686), so the failure is the same on every machine, offline or not.
const dnsFailHost = "dns-fault.onion"

// hostileWeb gives one extra host every fault fakeweb knows, plus a host
// whose name does not resolve.
func hostileWeb(hosts int, keep func(fakeweb.Fault) bool) (*fakeweb.Web, map[string]fakeweb.Fault) {
	faults := map[string]fakeweb.Fault{}
	for _, f := range fakeweb.AllFaults() {
		if keep == nil || keep(f) {
			faults[strings.ToLower(f.String())+"-fault.test"] = f
		}
	}
	faults[dnsFailHost] = fakeweb.InvalidBytes
	return fakeweb.New(fakeweb.Config{Hosts: hosts, Seed: 4, Faults: faults, FaultRepeat: 2}), faults
}

// runMeasured runs weaver, built without the race detector, and returns
// its exit code, output and peak RSS. The peak is the child's own VmHWM,
// sampled from /proc while it runs: its rusage ru_maxrss cannot be used,
// because Go starts children with vfork and Linux folds the parent's peak
// (a race-instrumented test binary's hundreds of MiB) into the child's.
func runMeasured(t *testing.T, dir string, args ...string) (run, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, plainBin, args...)
	cmd.Dir, cmd.Env = dir, cleanEnv()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	peak := make(chan int64, 1)
	go func() {
		var hwm int64
		status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if data, err := os.ReadFile(status); err == nil {
				for _, line := range strings.Split(string(data), "\n") {
					var kb int64
					if _, err := fmt.Sscanf(line, "VmHWM: %d kB", &kb); err == nil && kb*1024 > hwm {
						hwm = kb * 1024
					}
				}
			}
			select {
			case <-done:
				peak <- hwm
				return
			case <-tick.C:
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	r := run{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("weaver: %v", err)
	}
	return r, <-peak
}

// TestHostile_EveryFault crawls a web where one host shows each fault and
// checks what weaver made of each, that it finished, that no host was
// fetched more often or sooner than its budget allows, how long the worst
// host held a worker, and the process's peak memory.
func TestHostile_EveryFault(t *testing.T) {
	w, _ := hostileWeb(150, nil)
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	const timeout, retries, delay = 2 * time.Second, 2, 50 * time.Millisecond
	args := []string{"crawl", "--db", db, "--metrics", db + ".metrics",
		"--connect-to", dnsFailHost + ":::", "--connect-to", srv.ConnectTo(),
		"--delay", delay.String(), "--timeout", timeout.String(), "--retries", fmt.Sprint(retries), "--retry-delay", "10ms",
		"--max-depth", "0", "--max-crawls-per-node", "1", "--quiet", w.Seed()}
	start := time.Now()
	r, rss := runMeasured(t, dir, args...)
	took := time.Since(start)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if m := metrics(t, db+".metrics"); m.TerminationReason != "queue_empty" {
		t.Fatalf("termination %q", m.TerminationReason)
	}
	ns := nodes(t, db)
	es := edges(t, db)
	status := func(h string) graph.Node {
		n, ok := ns[h]
		if !ok {
			t.Errorf("%s is not a node", h)
		}
		return n
	}
	const capBytes = 1 << 20
	want := map[string]graph.Status{
		"slowdrip-fault.test": graph.StatusTimeout, "endlessbody-fault.test": graph.StatusCrawled,
		"huge-fault.test": graph.StatusCrawled, "gzipbomb-fault.test": graph.StatusCrawled,
		"redirectloop-fault.test": graph.StatusFetchError, "redirectchain20-fault.test": graph.StatusFetchError,
		"resetmidbody-fault.test": graph.StatusFetchError, "binaryhtml-fault.test": graph.StatusCrawled,
		"manylinks-fault.test": graph.StatusCrawled, "invalidutf8-fault.test": graph.StatusCrawled,
		"invalidbytes-fault.test": graph.StatusCrawled, "toomany429-fault.test": graph.StatusCrawled,
		"burst5xx-fault.test": graph.StatusCrawled, "calendartrap-fault.test": graph.StatusCrawled,
		"linkstoprivate-fault.test": graph.StatusCrawled, "hugerobots-fault.test": graph.StatusCrawled,
		"binaryrobots-fault.test": graph.StatusCrawled, "robotsredirect-fault.test": graph.StatusRobotsDisallow,
		"unavailable-fault.test": graph.StatusCrawled, // 503 once, then the page on a retry
		dnsFailHost:              graph.StatusDNSError,
	}
	for h, st := range want {
		if n := status(h); n.Status != st {
			t.Errorf("%s: status %s (%s), want %s", h, n.Status, n.Error, st)
		}
	}
	for _, h := range []string{"endlessbody-fault.test", "huge-fault.test"} {
		if n := status(h); n.Bytes != capBytes {
			t.Errorf("%s: read %d bytes, want the %d cap", h, n.Bytes, capBytes)
		}
	}
	if n := status("gzipbomb-fault.test"); n.Bytes > capBytes {
		t.Errorf("gzip bomb: read %d bytes, cap %d", n.Bytes, capBytes)
	}
	out := map[string]int{}
	for e := range es {
		out[e[0]]++
	}
	if got := out["manylinks-fault.test"]; got != 10 {
		t.Errorf("100,000-link page: %d out-edges, want 10", got)
	}
	// Private and loopback targets: nodes, refused, never requested.
	private := []string{"10.0.0.1", "127.0.0.1:1", "[::1]", "169.254.169.254", "192.168.1.1"}
	reqHosts := map[string]bool{}
	for _, rq := range w.Requests() {
		reqHosts[rq.Host] = true
	}
	for _, h := range private {
		if n := status(h); n.Status != graph.StatusRefused || n.CrawlCount != 0 {
			t.Errorf("%s: status %s crawl_count %d, want refused and never crawled", h, n.Status, n.CrawlCount)
		}
		if reqHosts[strings.Trim(strings.Split(h, ":1")[0], "[]")] || reqHosts[h] {
			t.Errorf("%s was requested", h)
		}
	}
	// The calendar trap's endless subdomains stop at the subdomain limit.
	trap := ns["calendartrap-fault.test"].Domain
	perRoot := 0
	for _, n := range ns {
		if n.Domain == trap && n.CrawlCount > 0 {
			perRoot++
		}
	}
	if perRoot > 3 {
		t.Errorf("%d hosts of the trap's domain crawled, limit 3", perRoot)
	}

	// Per-host budgets: with max_crawls_per_node 1, a host gets at most
	// (1 + retries) attempts at robots.txt and at its page, each following
	// at most 5 redirects; and never two requests closer than the delay.
	byHost := map[string][]fakeweb.Request{}
	for _, rq := range w.Requests() {
		byHost[rq.Host] = append(byHost[rq.Host], rq)
	}
	budget := 2 * (1 + retries) * (1 + 5)
	for h, reqs := range byHost {
		if len(reqs) > budget {
			t.Errorf("%s: %d requests, budget %d", h, len(reqs), budget)
		}
		sort.Slice(reqs, func(i, j int) bool { return reqs[i].At.Before(reqs[j].At) })
		for i := 1; i < len(reqs); i++ {
			if gap := reqs[i].At.Sub(reqs[i-1].At); gap < delay-5*time.Millisecond {
				t.Errorf("%s: %s then %s only %v apart (delay %v)", h, reqs[i-1].Path, reqs[i].Path, gap, delay)
				break
			}
		}
	}
	// The worst stall: how long one host's page held a worker, against the
	// bound its retries allow (timeouts growing 2 s per retry, plus waits).
	var worst time.Duration
	var worstHost string
	for h, n := range ns {
		if d := time.Duration(n.FetchMS) * time.Millisecond; d > worst {
			worst, worstHost = d, h
		}
	}
	bound := time.Duration(retries+1)*timeout + 2*time.Second*time.Duration(retries*(retries+1)/2) + time.Duration(retries)*time.Second + time.Second
	if worst > bound {
		t.Errorf("worst stall %v on %s, bound %v", worst, worstHost, bound)
	}
	const rssBound = 200 << 20
	if rss > rssBound {
		t.Errorf("peak RSS %d MiB, bound %d MiB", rss>>20, rssBound>>20)
	}
	t.Logf("faults crawl: %v, %d nodes, worst per-host stall %v (%s, bound %v), peak RSS %.1f MiB (bound %d MiB)",
		took.Round(time.Millisecond), len(ns), worst, worstHost, bound, float64(rss)/(1<<20), rssBound>>20)
}

// TestHostile_TLSFailure: an https link to a host that speaks plain HTTP
// fails its TLS handshake and is recorded, not retried forever.
func TestHostile_TLSFailure(t *testing.T) {
	w := fakeweb.Loop3()
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	// Nothing at all could be fetched: exit 1 and one line saying so.
	if r := weaver(t, dir, crawlArgs(srv, db, "https://a.test/")...); r.code != 1 || !strings.Contains(r.stderr, "nothing could be fetched") || !strings.Contains(r.stderr, "tls 1") {
		t.Fatalf("exit %d, want 1 and the line saying nothing could be fetched\n%s", r.code, r.stderr)
	}
	n := nodes(t, db)["a.test"]
	if n.Status != graph.StatusFetchError || !strings.Contains(n.Error, "tls") || n.FailCount != 1 {
		t.Errorf("got status %s fail_count %d error %q, want a TLS fetch_error", n.Status, n.FailCount, n.Error)
	}
}

// TestHostile_SIGKILL20 kills a 2,000-host crawl with faults on at 20
// random instants, resuming each time, and checks the store after every
// kill and the final graph against an uninterrupted crawl's.
func TestHostile_SIGKILL20(t *testing.T) {
	t.Parallel()
	// The calendar trap is left out: which of its endless subdomains the
	// subdomain limit admits depends on arrival order, as on the real web.
	// So is the host a second late: against --timeout 1s it answers or
	// times out as the machine's load decides.
	w, _ := hostileWeb(2000, func(f fakeweb.Fault) bool { return f != fakeweb.CalendarTrap && f != fakeweb.SlowAnswer })
	srv := startWeb(t, w)
	base := func(db string) []string {
		return []string{"crawl", "--db", db, "--metrics", db + ".metrics",
			"--connect-to", dnsFailHost + ":::", "--connect-to", srv.ConnectTo(),
			// retries ≥ FaultRepeat: the 429 and 5xx hosts succeed whichever
			// crawl meets their failures (the fake server counts across crawls).
			"--delay", "0", "--timeout", "1s", "--retries", "2", "--retry-delay", "10ms",
			"--max-depth", "0", "--max-crawls-per-node", "1", "--quiet"}
	}
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref.bolt")
	if r := fixture(t, dir, append(base(ref), w.Seed())...); r.code != 0 {
		t.Fatalf("reference crawl: exit %d\n%s", r.code, r.stderr)
	}
	db := filepath.Join(dir, "killed.bolt")
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	kills := 0
	for round := 0; kills < 20 || round == 0; round++ {
		args := base(db)
		if !seeded(t, db) {
			args = append(args, w.Seed())
		}
		signalled, err := interrupt(t, dir, args, time.Duration(50+rng.Intn(400))*time.Millisecond, syscall.SIGKILL)
		if !signalled {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			t.Fatalf("the crawl finished after %d kills: make the web larger so all 20 land", kills)
		}
		kills++
		if _, err := os.Stat(db); errors.Is(err, os.ErrNotExist) {
			t.Logf("round %d: killed before the store existed", round)
			continue
		}
		edges(t, db) // opens, runs bbolt's check and weaver's invariants
	}
	if r := weaver(t, dir, base(db)...); r.code != 0 {
		t.Fatalf("final resume: exit %d\n%s", r.code, r.stderr)
	}
	if m := metrics(t, db+".metrics"); m.TerminationReason != "queue_empty" {
		t.Fatalf("final resume ended %q", m.TerminationReason)
	}
	storetest.SameGraph(t, edges(t, db), edges(t, ref))
	refNodes, gotNodes := nodes(t, ref), nodes(t, db)
	if len(refNodes) != len(gotNodes) {
		t.Errorf("%d nodes, uninterrupted crawl has %d", len(gotNodes), len(refNodes))
	}
	for h, rn := range refNodes {
		gn := gotNodes[h]
		if gn.CrawlCount != rn.CrawlCount || gn.Status != rn.Status {
			t.Errorf("%s: crawl_count %d status %s, uninterrupted: %d %s", h, gn.CrawlCount, gn.Status, rn.CrawlCount, rn.Status)
		}
	}
}

// TestHostile_BadStores: a locked, truncated, zero-byte, random-bytes
// store and a SQLite file given as --db each get a one-line error and exit
// 2 from every command that opens a store, and none is modified.
func TestHostile_BadStores(t *testing.T) {
	dir := t.TempDir()
	w := fakeweb.Loop3()
	srv := startWeb(t, w)
	good := filepath.Join(dir, "good.bolt")
	if r := fixture(t, dir, crawlArgs(srv, good, w.Seed())...); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	goodBytes, _ := os.ReadFile(good)
	// Truncated inside the pages the store uses (its file may be larger:
	// bbolt grows it ahead of use).
	used := int64(len(goodBytes))
	if db, err := bbolt.Open(good, 0o600, &bbolt.Options{ReadOnly: true}); err == nil {
		db.View(func(tx *bbolt.Tx) error { used = tx.Size(); return nil })
		db.Close()
	}
	random := make([]byte, 256<<10)
	rand.New(rand.NewSource(1)).Read(random)
	sqlite := append([]byte("SQLite format 3\x00"), make([]byte, 8192)...)
	files := map[string][]byte{
		"zero.bolt": nil, "random.bolt": random, "crawler.db": sqlite,
		"truncated.bolt": goodBytes[:used/2],
	}
	for name, data := range files {
		os.WriteFile(filepath.Join(dir, name), data, 0o600)
	}
	// A locked store: a crawl that is still running holds it.
	locked := filepath.Join(dir, "locked.bolt")
	slow := fakeweb.New(fakeweb.Config{Hosts: 500, Seed: 2, Latency: 200 * time.Millisecond})
	slowSrv := startWeb(t, slow)
	holder := exec.Command(weaverBin, crawlArgs(slowSrv, locked, "--workers", "1", slow.Seed())...)
	holder.Dir, holder.Env = dir, cleanEnv()
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { holder.Process.Kill(); holder.Wait() }()
	for i := 0; i < 100; i++ {
		if fi, err := os.Stat(locked); err == nil && fi.Size() > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	files["locked.bolt"] = nil
	commands := [][]string{
		{"crawl", "--db", "FILE", "http://a.test/"},
		{"crawl", "--db", "FILE"},
		{"export", "--db", "FILE", "--json", "-"},
		{"show", "--db", "FILE", "a.test"},
	}
	for name := range files {
		p := filepath.Join(dir, name)
		before, _ := os.ReadFile(p)
		for _, c := range commands {
			args := append([]string(nil), c...)
			for i := range args {
				if args[i] == "FILE" {
					args[i] = p
				}
			}
			start := time.Now()
			r := weaver(t, dir, args...)
			msg := strings.TrimSpace(r.stderr)
			if name == "locked.bolt" && c[0] != "crawl" {
				// The running crawl answers its readers (issue 51): an
				// export of a snapshot it streams, a show it answers.
				if c[0] == "export" && (r.code != 0 || !strings.Contains(r.stdout, `"nodes"`)) {
					t.Errorf("export of a running crawl's store: exit %d\n%s", r.code, msg)
				}
				if c[0] == "show" && (r.code != 2 || !strings.Contains(msg, "asked the running crawl")) {
					t.Errorf("show of a host a running crawl's store lacks: exit %d, %q", r.code, msg)
				}
				continue
			}
			if r.code != 2 || strings.Count(msg, "\n") != 0 || msg == "" {
				t.Errorf("%s %v: exit %d, stderr %q: want exit 2 and one line", name, c[0], r.code, msg)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("%s %v: took %v", name, c[0], d)
			}
			if name == "locked.bolt" {
				if !strings.Contains(msg, "in use by another weaver process") {
					t.Errorf("locked store: %q", msg)
				}
				continue
			}
			after, _ := os.ReadFile(p)
			if !bytes.Equal(before, after) {
				t.Errorf("%s was modified by %v", name, c[0])
			}
		}
	}
}
