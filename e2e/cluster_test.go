package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/internal/tooltest"
)

// natsServer is a real NATS server with JetStream, in this test process,
// on a loopback port that survives a restart.
type natsServer struct {
	t    *testing.T
	dir  string
	port int
	mu   sync.Mutex
	s    *server.Server
}

func startNATS(t *testing.T) *natsServer {
	t.Helper()
	n := &natsServer{t: t, dir: t.TempDir(), port: -1}
	n.start()
	t.Cleanup(n.stop)
	return n
}

func (n *natsServer) start() {
	n.t.Helper()
	s, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: n.port, JetStream: true, StoreDir: n.dir,
		NoLog: true, NoSigs: true, ServerName: "weaver-test",
	})
	if err != nil {
		n.t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(20 * time.Second) {
		n.t.Fatal("nats-server did not start")
	}
	n.mu.Lock()
	n.s, n.port = s, s.Addr().(*net.TCPAddr).Port
	n.mu.Unlock()
}

func (n *natsServer) stop() {
	n.mu.Lock()
	s := n.s
	n.s = nil
	n.mu.Unlock()
	if s != nil {
		s.Shutdown()
		s.WaitForShutdown()
	}
}

func (n *natsServer) restart() { n.stop(); n.start() }

func (n *natsServer) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.port) }

// ukWeb is the fake internet replaying the UK web's crawled host graph of
// 1996 (shared data): 5,060 hosts, 20,091 links, served as cfg says.
func ukWeb(tb testing.TB, cfg fakeweb.Config) *fakeweb.Web {
	tb.Helper()
	path := filepath.Join("..", "..", "shared", "data", "webgraph", "uk1996-crawled-subgraph.tsv")
	f, err := os.Open(path)
	if err != nil {
		tooltest.Missing(tb, "open %s: %v", path, err)
	}
	defer f.Close()
	w, err := fakeweb.FromEdges(f, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// clusterCrawlArgs are a shard's (or, without shard, one process's) flags
// for a crawl whose closure does not depend on order: each host crawled
// once, no depth, subdomain or outbound-link limit.
func clusterCrawlArgs(srv *fakeweb.Server, db, natsURL, shard string, workers int) []string {
	args := crawlArgs(srv, db, "--max-depth", "0", "--max-crawls-per-node", "1", "--max-subdomains-per-root", "0",
		"--max-outbound-links", "0", "--workers", fmt.Sprint(workers))
	if natsURL != "" {
		args = append(args, "--cluster", natsURL, "--shard", shard)
	}
	return args
}

// shardProc is one running shard.
type shardProc struct {
	cmd  *exec.Cmd
	out  *bytes.Buffer
	done chan error
}

func startShard(t *testing.T, dir string, env []string, args ...string) *shardProc {
	t.Helper()
	cmd := exec.Command(weaverBin, args...)
	cmd.Dir, cmd.Env = dir, append(cleanEnv(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &shardProc{cmd: cmd, out: &out, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	return p
}

// waitShards waits for every shard to exit 0, killing them all after
// timeout.
func waitShards(t *testing.T, procs []*shardProc, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for k, p := range procs {
		select {
		case err := <-p.done:
			if err != nil {
				t.Fatalf("shard %d: %v\n%s", k, err, p.out)
			}
		case <-deadline:
			for _, p := range procs {
				p.cmd.Process.Kill()
			}
			t.Fatalf("shard %d did not end\n%s", k, p.out)
		}
	}
}

// mergeShards merges the shards' stores with weaver merge into dir/all.bolt.
func mergeShards(t *testing.T, dir string, dbs []string) string {
	t.Helper()
	merged := filepath.Join(dir, "all.bolt")
	if r := weaver(t, dir, append([]string{"merge", "-o", merged}, dbs...)...); r.code != 0 {
		t.Fatalf("merge: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return merged
}

// referenceCrawl is one process's crawl of w into dir (a new temporary
// directory when ""): the graph a cluster must give.
func referenceCrawl(t *testing.T, dir string, srv *fakeweb.Server, w *fakeweb.Web) (db string) {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	db = filepath.Join(dir, "one.bolt")
	if r := fixture(t, dir, append(clusterCrawlArgs(srv, db, "", "", 6), w.Seed())...); r.code != 0 {
		t.Fatalf("one process: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return db
}

// ukRef is one process's crawl of the UK-1996 web, made once for the
// cluster tests that compare with it (the graph does not depend on the
// web's latency).
var ukRef struct {
	sync.Mutex
	db string
}

func ukReference(t *testing.T, srv *fakeweb.Server, w *fakeweb.Web) string {
	t.Helper()
	ukRef.Lock()
	defer ukRef.Unlock()
	if ukRef.db != "" {
		return ukRef.db
	}
	// Beside the binaries, which outlive every test.
	dir, err := os.MkdirTemp(filepath.Dir(weaverBin), "uk-reference-")
	if err != nil {
		t.Fatal(err)
	}
	ukRef.db = referenceCrawl(t, dir, srv, w)
	return ukRef.db
}

// sameAsOneProcess checks a merged cluster store against one process's:
// the same edges and weights, and every host with the same status and
// crawl count.
func sameAsOneProcess(t *testing.T, merged, one string) {
	t.Helper()
	want := edges(t, one)
	if len(want) < 10_000 {
		t.Fatalf("the reference crawl recorded only %d edges", len(want))
	}
	storetest.SameGraph(t, edges(t, merged), want)
	got, wantN := nodes(t, merged), nodes(t, one)
	if len(got) != len(wantN) {
		t.Errorf("%d hosts merged, %d in one process", len(got), len(wantN))
	}
	statuses := map[graph.Status]int{}
	bad := 0
	for h, w := range wantN {
		g, ok := got[h]
		statuses[w.Status]++
		if !ok || g.Status != w.Status || g.CrawlCount != w.CrawlCount || g.HTTPStatus != w.HTTPStatus || g.Title != w.Title {
			if bad++; bad <= 10 {
				t.Errorf("%s: merged %q crawled %d times (HTTP %d), one process %q %d times (HTTP %d)", h, g.Status, g.CrawlCount, g.HTTPStatus, w.Status, w.CrawlCount, w.HTTPStatus)
			}
		}
	}
	if statuses["crawled"] == 0 || statuses["robots_disallowed"] == 0 {
		t.Errorf("statuses %v: the comparison needs crawled and disallowed hosts", statuses)
	}
}

// TestCluster_ThreeShards_SameAsOneProcess crawls the UK-1996 graph with
// three shards on one NATS server, merges their stores, and compares the
// result with one process's crawl. No home page is fetched twice.
func TestCluster_ThreeShards_SameAsOneProcess(t *testing.T) {
	t.Parallel() // its processes mostly wait: it overlaps the other cluster tests
	w := ukWeb(t, fakeweb.Config{RobotsDisallowEvery: 11})
	srv := startWeb(t, w)
	one := ukReference(t, srv, w)
	ns := startNATS(t)
	w.Reset()

	dir := t.TempDir()
	var dbs []string
	var procs []*shardProc
	// The server and shard come from the flags, the environment and a
	// config file, one shard each.
	for k := range 3 {
		db := filepath.Join(dir, fmt.Sprintf("s%d.bolt", k))
		dbs = append(dbs, db)
		args, env := clusterCrawlArgs(srv, db, ns.URL(), fmt.Sprintf("%d/3", k), 2), []string(nil)
		switch k {
		case 1:
			args, env = clusterCrawlArgs(srv, db, "", "", 2), []string{"WEAVER_CLUSTER=" + ns.URL(), "WEAVER_SHARD=1/3"}
		case 2:
			cfg := filepath.Join(dir, "shard2.json")
			if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"cluster": %q, "shard": "2/3"}`, ns.URL())), 0o644); err != nil {
				t.Fatal(err)
			}
			args = append(clusterCrawlArgs(srv, db, "", "", 2), "--config", cfg)
		}
		procs = append(procs, startShard(t, dir, env, append(args, w.Seed())...))
	}
	waitShards(t, procs, 4*time.Minute)
	for k, p := range procs {
		if m := metrics(t, dbs[k]+".metrics"); m.TerminationReason != "queue_empty" || m.PagesFetched == 0 {
			t.Errorf("shard %d: termination_reason %q after %d pages, want queue_empty", k, m.TerminationReason, m.PagesFetched)
		}
		if !strings.Contains(p.out.String(), "the crawl is complete") {
			t.Errorf("shard %d did not log the cluster's end:\n%s", k, p.out)
		}
	}
	home := map[string]int{}
	for _, r := range w.Requests() {
		if r.Path == "/" {
			home[r.Host]++
		}
	}
	for h, n := range home {
		if n > 1 {
			t.Errorf("%s's home page fetched %d times across the cluster", h, n)
		}
	}
	merged := mergeShards(t, dir, dbs)
	sameAsOneProcess(t, merged, one)
	if len(home) < 2000 {
		t.Errorf("only %d home pages fetched", len(home))
	}

	// weaver status --cluster reports every shard idle and the totals.
	r := weaver(t, dir, "status", "--cluster", ns.URL())
	if r.code != 0 {
		t.Fatalf("status --cluster: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"3 shards", "shard 0/3", "shard 1/3", "shard 2/3", "idle", "complete"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("status --cluster lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestCluster_Kills_SameGraph kills shards with SIGKILL at random moments
// (one of them between a page's commit and the publishing of its links,
// one between the stream's acknowledgement and the outbox's deletion),
// restarts the NATS server once mid-crawl, restarts every killed shard
// with the same command, and compares the merged graph with one process's.
func TestCluster_Kills_SameGraph(t *testing.T) {
	t.Parallel()
	w := ukWeb(t, fakeweb.Config{Latency: 2 * time.Millisecond, RobotsDisallowEvery: 11})
	srv := startWeb(t, w)
	one := ukReference(t, srv, w)
	ns := startNATS(t)
	dir := t.TempDir()
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	t.Logf("seed %d", rng.Int63())

	const shards = 3
	dbs := make([]string, shards)
	args := make([][]string, shards)
	procs := make([]*shardProc, shards)
	for k := range shards {
		dbs[k] = filepath.Join(dir, fmt.Sprintf("s%d.bolt", k))
		args[k] = append(clusterCrawlArgs(srv, dbs[k], ns.URL(), fmt.Sprintf("%d/%d", k, shards), 2), w.Seed())
	}
	// The first runs of shards 1 and 2 kill themselves in the windows a
	// crash may hit: links committed and not yet published, and links
	// published and not yet deleted from the outbox.
	hooks := map[int]string{1: "WEAVER_TEST_CLUSTER_KILL=read:3", 2: "WEAVER_TEST_CLUSTER_KILL=acked:2"}
	hookedRun := make([]bool, shards) // the process running is a hooked first run
	for k := range shards {
		var env []string
		if h, ok := hooks[k]; ok {
			env, hookedRun[k] = []string{h}, true
		}
		procs[k] = startShard(t, dir, env, args[k]...)
	}
	kills, hooked, natsRestarted := 0, 0, false
	deadline := time.After(5 * time.Minute)
	ended := make([]bool, shards)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	nextKill := time.Now().Add(time.Duration(200+rng.Intn(600)) * time.Millisecond)
	natsAt := time.Now().Add(time.Duration(700+rng.Intn(800)) * time.Millisecond)
	for {
		all := true
		for k := range shards {
			if ended[k] {
				continue
			}
			all = false
			select {
			case err := <-procs[k].done:
				if err == nil {
					ended[k], hookedRun[k] = true, false
					continue
				}
				ws, _ := procs[k].cmd.ProcessState.Sys().(syscall.WaitStatus)
				if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
					t.Fatalf("shard %d: %v\n%s", k, err, procs[k].out)
				}
				if strings.Contains(procs[k].out.String(), "WEAVER_TEST_CLUSTER_KILL") {
					hooked++
				}
				hookedRun[k] = false
				t.Logf("shard %d killed; restarting", k)
				edges(t, dbs[k]) // opens, checks bbolt's and weaver's invariants
				procs[k] = startShard(t, dir, nil, args[k]...)
			default:
			}
		}
		if all {
			break
		}
		select {
		case <-deadline:
			for _, p := range procs {
				p.cmd.Process.Kill()
			}
			t.Fatalf("the cluster did not end in 5 minutes (%d kills)", kills)
		case <-tick.C:
		}
		now := time.Now()
		if kills < 5 && now.After(nextKill) {
			// A hooked run is left to die in its window.
			k := rng.Intn(shards)
			if !ended[k] && !hookedRun[k] {
				procs[k].cmd.Process.Signal(syscall.SIGKILL)
				kills++
			}
			nextKill = now.Add(time.Duration(200+rng.Intn(700)) * time.Millisecond)
		}
		if !natsRestarted && now.After(natsAt) {
			t.Log("restarting the NATS server")
			ns.restart()
			natsRestarted = true
		}
	}
	if hooked < 2 {
		t.Errorf("only %d of the 2 crash windows were hit by WEAVER_TEST_CLUSTER_KILL", hooked)
	}
	if !natsRestarted {
		t.Error("the NATS server was not restarted mid-crawl")
	}
	if kills < 5 {
		t.Errorf("only %d random kills landed before the crawl ended", kills)
	}
	t.Logf("%d random kills, %d in the publish windows, NATS restarted", kills, hooked)
	for k := range shards {
		if m := metrics(t, dbs[k]+".metrics"); m.TerminationReason != "queue_empty" {
			t.Errorf("shard %d: termination_reason %q, want queue_empty", k, m.TerminationReason)
		}
	}
	merged := mergeShards(t, dir, dbs)
	sameAsOneProcess(t, merged, one)
}

// TestCluster_BadInput: a clear error, exit 2, and nothing written.
func TestCluster_BadInput(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 200, Seed: 5, Latency: 20 * time.Millisecond})
	srv := startWeb(t, w)
	ns := startNATS(t)
	dir := t.TempDir()
	s0 := filepath.Join(dir, "s0.bolt")

	// Shard 0 of 3 runs for a while (waiting, alone, for the others): the
	// crawl's configuration is recorded. Its /metrics and /status, and
	// weaver status --cluster, show the cluster's figures meanwhile.
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().String()
	free.Close()
	p := startShard(t, dir, nil, append(clusterCrawlArgs(srv, s0, ns.URL(), "0/3", 2), "--listen", addr, w.Seed())...)
	time.Sleep(1500 * time.Millisecond)
	metricsText := httpGet(t, "http://"+addr+"/metrics")
	for _, want := range []string{"weaver_cluster_outbox ", "weaver_cluster_published_total ", "weaver_cluster_consumed_total 0",
		`weaver_cluster_shards{state="unknown"} 2`, "weaver_cluster_connected 1"} {
		if !strings.Contains(metricsText, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if st := httpGet(t, "http://"+addr+"/status"); !strings.Contains(st, `"cluster": {`) || !strings.Contains(st, `"shards": 3`) {
		t.Errorf("/status lacks the cluster: %s", st)
	}
	if r := weaver(t, dir, "status", "--cluster", ns.URL()); r.code != 0 || !strings.Contains(r.stdout, "2 not started") {
		t.Errorf("status --cluster: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := <-p.done; err != nil {
		t.Fatalf("shard 0: %v\n%s", err, p.out)
	}
	before, err := os.ReadFile(s0)
	if err != nil {
		t.Fatal(err)
	}

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "nats://" + closed.Addr().String()
	closed.Close()

	newDB := filepath.Join(dir, "new.bolt")
	for _, tc := range []struct {
		name string
		args []string
		want string
		db   string // a store that must not be created
	}{
		{"unreachable server", clusterCrawlArgs(srv, newDB, deadURL, "1/3", 2), "cannot reach the NATS server", newDB},
		{"K out of range", clusterCrawlArgs(srv, newDB, ns.URL(), "3/3", 2), "K must be", newDB},
		{"not K/N", clusterCrawlArgs(srv, newDB, ns.URL(), "1", 2), "want K/N", newDB},
		{"wrong N", clusterCrawlArgs(srv, newDB, ns.URL(), "1/2", 2), "has 3 shards", newDB},
		{"shard without cluster", append(crawlArgs(srv, newDB), "--shard", "1/3"), "shard", newDB},
		{"other settings", append(clusterCrawlArgs(srv, newDB, ns.URL(), "1/3", 2), "--max-depth", "2"), "max_depth", newDB},
		{"store of another shard", clusterCrawlArgs(srv, s0, ns.URL(), "1/3", 2), "store of shard 0/3", ""},
		{"a new store for a shard that ran", clusterCrawlArgs(srv, newDB, ns.URL(), "0/3", 2), "ran with another store", newDB},
		{"bad crawl name", append(clusterCrawlArgs(srv, newDB, ns.URL(), "1/3", 2), "--crawl-name", "a.b"), "crawl name", newDB},
		{"shard store without cluster", crawlArgs(srv, s0), "is shard 0/3 of cluster crawl", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := weaver(t, dir, append(tc.args, w.Seed())...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
				t.Errorf("exit %d, want 2 and one line with %q:\n%s%s", r.code, tc.want, r.stdout, r.stderr)
			}
			if tc.db != "" {
				if _, err := os.Stat(tc.db); !os.IsNotExist(err) {
					t.Errorf("%s was created (%v)", tc.db, err)
				}
			}
			after, err := os.ReadFile(s0)
			if err != nil || !bytes.Equal(before, after) {
				t.Errorf("%s changed", s0)
			}
		})
	}
	// A new crawl name is a new crawl, even from the same seeds: a new
	// store may start it (and is then its store).
	fresh := filepath.Join(dir, "fresh.bolt")
	p = startShard(t, dir, nil, append(clusterCrawlArgs(srv, fresh, ns.URL(), "0/3", 2), "--crawl-name", "second-run", w.Seed())...)
	time.Sleep(700 * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := <-p.done; err != nil || !strings.Contains(p.out.String(), "of crawl second-run") {
		t.Fatalf("--crawl-name second-run: %v\n%s", err, p.out)
	}
	if r := weaver(t, dir, append(clusterCrawlArgs(srv, s0, ns.URL(), "0/3", 2), "--crawl-name", "second-run", w.Seed())...); r.code != 2 || !strings.Contains(r.stderr, "not to crawl second-run") {
		t.Errorf("shard 0's store in crawl second-run: exit %d\n%s", r.code, r.stderr)
	}

	// Another seed set is another crawl: shard 0's store is not its own.
	r := weaver(t, dir, append(clusterCrawlArgs(srv, s0, ns.URL(), "0/3", 2), "http://other.example/")...)
	if r.code != 2 || !strings.Contains(r.stderr, "belongs to cluster crawl") {
		t.Errorf("another seed set on shard 0's store: exit %d\n%s", r.code, r.stderr)
	}
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestCluster_NATSDown_KeepsCrawling stops the NATS server for two
// seconds mid-crawl: the shards go on crawling their own hosts (their
// /status shows pages fetched while disconnected), their links wait in
// the outbox, and once the server is back they drain it and the crawl
// ends with the one process's graph.
func TestCluster_NATSDown_KeepsCrawling(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 1000, Seed: 9, Latency: 10 * time.Millisecond, CrawlDelayEvery: -1})
	srv := startWeb(t, w)
	t0 := time.Now()
	one := referenceCrawl(t, "", srv, w)
	t.Logf("reference crawl: %v", time.Since(t0))
	ns := startNATS(t)
	dir := t.TempDir()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().String()
	free.Close()
	var dbs []string
	var procs []*shardProc
	for k := range 2 {
		db := filepath.Join(dir, fmt.Sprintf("s%d.bolt", k))
		dbs = append(dbs, db)
		args := clusterCrawlArgs(srv, db, ns.URL(), fmt.Sprintf("%d/2", k), 2)
		if k == 0 {
			args = append(args, "--listen", addr)
		}
		procs = append(procs, startShard(t, dir, nil, append(args, w.Seed())...))
	}
	type status struct {
		Crawl struct {
			PagesFetched int64 `json:"pages_fetched"`
			Cluster      struct {
				Connected bool   `json:"connected"`
				Outbox    uint64 `json:"outbox"`
			} `json:"cluster"`
		} `json:"crawl"`
	}
	read := func() status {
		var st status
		if err := json.Unmarshal([]byte(httpGet(t, "http://"+addr+"/status")), &st); err != nil {
			t.Fatalf("/status: %v", err)
		}
		return st
	}
	deadline := time.Now().Add(time.Minute)
	for {
		// Until the shard serves /status, its address refuses.
		if resp, err := http.Get("http://" + addr + "/status"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("shard 0 did not serve /status in a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for read().Crawl.PagesFetched < 50 {
		if time.Now().After(deadline) {
			t.Fatal("shard 0 fetched fewer than 50 pages in a minute")
		}
		time.Sleep(50 * time.Millisecond)
	}
	ns.stop()
	time.Sleep(300 * time.Millisecond)
	before := read()
	time.Sleep(1700 * time.Millisecond)
	during := read()
	ns.start()
	if before.Crawl.Cluster.Connected || during.Crawl.Cluster.Connected {
		t.Errorf("/status says connected while the server was down")
	}
	if during.Crawl.PagesFetched <= before.Crawl.PagesFetched {
		t.Errorf("shard 0 fetched no page while the server was down (%d, then %d)", before.Crawl.PagesFetched, during.Crawl.PagesFetched)
	}
	if during.Crawl.Cluster.Outbox == 0 {
		t.Errorf("no link waited in shard 0's outbox while the server was down")
	}
	t.Logf("while NATS was down: %d → %d pages fetched, %d links waiting in the outbox", before.Crawl.PagesFetched, during.Crawl.PagesFetched, during.Crawl.Cluster.Outbox)
	t.Logf("at %v: NATS back", time.Since(t0))
	waitShards(t, procs, 3*time.Minute)
	t.Logf("at %v: the shards ended", time.Since(t0))
	storetest.SameGraph(t, edges(t, mergeShards(t, dir, dbs)), edges(t, one))
}

// TestCluster_WebAway_ShardsPause takes the web away from two shards
// mid-crawl and brings it back: a shard uses the same crawl code as one
// process, so it pauses instead of failing hosts (the NATS server stays
// up), resumes by itself, and the merged stores hold one process's graph
// with no host failed.
func TestCluster_WebAway_ShardsPause(t *testing.T) {
	t.Parallel()
	// 40 ms a page on 2×4 workers: at most 200 of the 400 hosts before
	// the web goes away a second after both shards joined.
	w := fakeweb.New(fakeweb.Config{Hosts: 400, Seed: 61, Latency: 40 * time.Millisecond, RobotsDisallowEvery: -1, CrawlDelayEvery: -1})
	fw := newFlakyWeb(t, w)
	one := referenceCrawl(t, "", fw.srv, w)
	ns := startNATS(t)
	dir := t.TempDir()
	var dbs []string
	var shards []*liveWeaver
	for k := range 2 {
		db := filepath.Join(dir, fmt.Sprintf("s%d.bolt", k))
		dbs = append(dbs, db)
		args := append(clusterCrawlArgs(fw.srv, db, ns.URL(), fmt.Sprintf("%d/2", k), 4), "--ignore-robots", w.Seed())
		shards = append(shards, startWeaver(t, dir, nil, args...))
	}
	for _, s := range shards {
		s.waitLine(t, "Cluster: shard", 30*time.Second)
	}
	time.Sleep(time.Second)
	fw.down()
	for _, s := range shards {
		s.waitLine(t, "Network unreachable", 30*time.Second)
	}
	time.Sleep(2 * time.Second)
	fw.up()
	for k, s := range shards {
		s.waitLine(t, "Network back", 30*time.Second)
		if err := s.wait(t, 2*time.Minute); err != nil {
			t.Fatalf("shard %d: %v\n%s", k, err, s.log())
		}
	}
	merged := mergeShards(t, dir, dbs)
	storetest.SameGraph(t, edges(t, merged), edges(t, one))
	noHostFailed(t, merged)
}
