package e2e_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/tooltest"
)

// Issue 51: a newcomer's third hour. One test per item, each through the
// binary against the fake internet.

// TestThirdHour_HTTPSRevisits: pages link to http://hN.test/, which
// answers 301 to https://: the crawl remembers where the redirect led
// (the node's scheme, https), so each revisit asks the https page
// directly with its validators, and an unchanged host answers 304, as
// over plain HTTP.
func TestThirdHour_HTTPSRevisits(t *testing.T) {
	t.Parallel()
	l := fakeweb.NewLiving(fakeweb.LivingConfig{Hosts: 12, Volatile: 2, Period: time.Hour})
	srv, err := l.StartTLS("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ca, err := srv.WriteCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "l.bolt")
	r := weaver(t, dir, livingArgs(srv, db, "--ca-file", ca, "--delay", "0", "--revisit", "500ms", "--revisit-max", "1s",
		"--max-duration", "6s", "https://h0.test/")...)
	if r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	m := metrics(t, db+".metrics")
	if m.Revisits < 20 || m.NotModified*10 < m.Revisits*8 {
		t.Errorf("%d revisits, %d answered 304: want most (every host is unchanged for an hour)", m.Revisits, m.NotModified)
	}
	for h, n := range nodes(t, db) {
		if n.CrawlCount > 0 && n.Scheme != "https" {
			t.Errorf("%s: scheme %q, want https (where its redirect led)", h, n.Scheme)
		}
	}
}

// TestThirdHour_RetryFailedTLS: a crawl without the web's CA fails its
// seed with tls_unknown_ca; a resume with --ca-file finds nothing due and
// says how many hosts failed and how to ask them again; --retry-failed=tls
// requeues it, and the crawl goes on over TLS.
func TestThirdHour_RetryFailedTLS(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 30, Seed: 9})
	srv, caArgs := webModes[1].start(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "t.bolt")
	seed := webModes[1].seed(w)
	if r := weaver(t, dir, crawlArgs(srv, db, seed)...); r.code != 1 {
		t.Fatalf("without the CA: exit %d, want 1 (nothing answered)\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := weaver(t, dir, append(crawlArgs(srv, db), caArgs...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "1 host failed (tls 1): weaver crawl --retry-failed asks them again (--retry-failed=tls") {
		t.Errorf("resume with --ca-file: exit %d, want it to name the failed host and --retry-failed\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = weaver(t, dir, append(crawlArgs(srv, db, "--retry-failed=tls"), caArgs...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "Retry failed (tls): requeued 1 failed host") {
		t.Fatalf("--retry-failed=tls: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := nodes(t, db)[strings.TrimSuffix(strings.TrimPrefix(seed, "https://"), "/")]; n.Status != graph.StatusCrawled {
		t.Errorf("the seed after the retry: %s (%s), want crawled", n.Status, n.Error)
	}
}

// TestThirdHour_StoredPaths: ca_file and metrics_path are stored absolute,
// so a resume from another directory finds them; a stored CA that is gone
// is refused in one line that says which flag to give.
func TestThirdHour_StoredPaths(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 20, Seed: 12})
	srv, caArgs := webModes[1].start(t, w)
	dir := t.TempDir()
	ca, err := os.ReadFile(caArgs[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), ca, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"crawl", "--db", "rt.bolt", "--connect-to", srv.ConnectTo(), "--delay", "0", "--quiet", "--max-pages", "3",
		"--ca-file", "ca.pem", "--metrics", "rt.log", webModes[1].seed(w)}
	if r := weaver(t, dir, args...); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := weaver(t, sub, "crawl", "--db", "../rt.bolt", "--quiet", "--max-pages", "3")
	if r.code != 0 || !strings.Contains(r.stdout, "Metrics written to "+filepath.Join(dir, "rt.log")) {
		t.Fatalf("resume from sub/: exit %d, want the metrics where the crawl's go\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(sub, "metrics.log")); err == nil {
		t.Error("the resume wrote sub/metrics.log")
	}
	os.Remove(filepath.Join(dir, "ca.pem"))
	r = weaver(t, sub, "crawl", "--db", "../rt.bolt", "--quiet")
	want := "ca_file " + filepath.Join(dir, "ca.pem") + " (stored in ../rt.bolt, the CA this crawl trusts) does not exist: restore it, or give --ca-file FILE"
	if r.code != 2 || !strings.Contains(r.stderr, want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("the CA gone: exit %d, want 2 and one line %q\n%s", r.code, want, r.stderr)
	}
}

// TestThirdHour_BusyStore: a crawl started without --listen answers
// status, show, rank, export, snapshot and diff on its store while it
// runs (through a loopback API whose token is in a mode-0600 file beside
// the store); after kill -9 that file is stale, and the store is read as
// it is. A crawl started with --listen is served there again on a bare
// resume; when the remembered address is taken, it says so and goes on.
func TestThirdHour_BusyStore(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 400, Seed: 5, Latency: 100 * time.Millisecond})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "busy.bolt")
	cmd := exec.Command(weaverBin, crawlArgs(srv, db, w.Seed())...)
	cmd.Dir, cmd.Env = dir, cleanEnv()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var once sync.Once
	kill := func() { once.Do(func() { cmd.Process.Kill(); <-done }) }
	defer kill()
	side := db + ".listen"
	deadline := time.Now().Add(30 * time.Second)
	for {
		if fi, err := os.Stat(side); err == nil && fi.Size() > 0 {
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v, want 0600 (it holds the API's token)", side, fi.Mode().Perm())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 30 s", side)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second)
	seedHost := strings.TrimSuffix(strings.TrimPrefix(w.Seed(), "http://"), "/")
	for _, args := range [][]string{
		{"status", "--db", db}, {"show", "--db", db, seedHost}, {"rank", "--db", db, "--top", "3"},
		{"export", "--db", db, "--json", filepath.Join(dir, "g.json")}, {"snapshot", "--db", db, filepath.Join(dir, "copy.bolt")},
		{"diff", db, filepath.Join(dir, "copy.bolt")},
	} {
		if r := weaver(t, dir, args...); r.code != 0 {
			t.Errorf("%v on the running crawl's store: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	kill()
	if _, err := os.Stat(side); err != nil {
		t.Fatalf("after kill -9, %s is gone (%v): the test wants it stale", side, err)
	}
	if r := weaver(t, dir, "status", "--db", db); r.code != 0 || !strings.Contains(r.stdout, "Nodes:") {
		t.Errorf("status beside a stale %s: exit %d\n%s%s", side, r.code, r.stdout, r.stderr)
	}

	// --listen is remembered; a remembered address that is taken is a
	// warning.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	db2 := filepath.Join(dir, "listen.bolt")
	if r := weaver(t, dir, crawlArgs(srv, db2, "--listen", addr, "--max-pages", "2", w.Seed())...); r.code != 0 {
		t.Fatalf("crawl --listen: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := weaver(t, dir, "crawl", "--db", db2, "--max-pages", "2")
	if r.code != 0 || !strings.Contains(r.stdout, "Serving the status API on http://"+addr) {
		t.Errorf("a bare resume: exit %d, want the API on %s again\n%s%s", r.code, addr, r.stdout, r.stderr)
	}
	taken, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	r = weaver(t, dir, "crawl", "--db", db2, "--max-pages", "2")
	if r.code != 0 || !strings.Contains(r.stdout, "the stored listen "+addr+" cannot be bound") {
		t.Errorf("the address taken: exit %d, want a warning and the crawl\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestThirdHour_Metrics: a resume writes where the crawl's metrics went
// (metrics_path is stored absolute), metrics.log names its store, and a
// metrics file of another store is kept without --force, one line saying
// where this run's went.
func TestThirdHour_Metrics(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 40, Seed: 3, Latency: 20 * time.Millisecond})
	srv := startWeb(t, w)
	dir := t.TempDir()
	nl := filepath.Join(dir, "nl.bolt")
	base := []string{"--connect-to", srv.ConnectTo(), "--delay", "0", "--quiet"}
	if killed, err := interrupt(t, dir, append([]string{"crawl", "--db", "nl.bolt", "--metrics", "nl.log", w.Seed()}, base...), time.Second, syscall.SIGKILL); !killed || err == nil {
		t.Fatalf("the first run was to be killed: %v %v", killed, err)
	}
	if r := weaver(t, dir, "crawl", "--db", "nl.bolt"); r.code != 0 {
		t.Fatalf("resume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "metrics.log")); err == nil {
		t.Error("the resume wrote ./metrics.log, not the crawl's nl.log")
	}
	var m struct {
		Store string `json:"store"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "nl.log"))
	if err != nil || json.Unmarshal(data, &m) != nil || m.Store != nl {
		t.Fatalf("nl.log: %v, store %q, want %q\n%s", err, m.Store, nl, data)
	}
	other := filepath.Join(dir, "other.log")
	if r := weaver(t, dir, append([]string{"crawl", "--db", "other.bolt", "--metrics", other, "--max-pages", "2", w.Seed()}, base...)...); r.code != 0 {
		t.Fatalf("another store's crawl: exit %d\n%s", r.code, r.stderr)
	}
	before, _ := os.ReadFile(other)
	r := weaver(t, dir, "crawl", "--db", "nl.bolt", "--metrics", other, "--max-pages", "1")
	if r.code != 0 || !strings.Contains(r.stdout, other+" holds the metrics of another store, "+filepath.Join(dir, "other.bolt")+": kept (--force replaces it); this run's metrics go to "+nl+".metrics.log") {
		t.Errorf("another store's metrics: exit %d, want them kept and a line\n%s%s", r.code, r.stdout, r.stderr)
	}
	if after, _ := os.ReadFile(other); string(after) != string(before) {
		t.Error("another store's metrics file was replaced without --force")
	}
	if r := weaver(t, dir, "crawl", "--db", "nl.bolt", "--metrics", other, "--max-pages", "1", "--force"); r.code != 0 || !strings.Contains(r.stdout, "Metrics written to "+other) {
		t.Errorf("--force: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestThirdHour_WeightsLatest: under --revisit a host's weights sum its
// crawls; --weights latest exports and ranks each host's latest crawl
// alone, where every page's link counts once.
func TestThirdHour_WeightsLatest(t *testing.T) {
	t.Parallel()
	l, srv := startLiving(t, fakeweb.LivingConfig{Hosts: 10, Volatile: 5, Period: 300 * time.Millisecond})
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	r := weaver(t, dir, livingArgs(srv, db, "--delay", "0", "--revisit", "300ms", "--revisit-max", "600ms", "--max-duration", "4s", l.Seed())...)
	if r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	weights := func(args ...string) map[string]float64 {
		out := filepath.Join(dir, fmt.Sprintf("g%d.json", time.Now().UnixNano()))
		if r := weaver(t, dir, append([]string{"export", "--db", db, "--json", out}, args...)...); r.code != 0 {
			t.Fatalf("export %v: exit %d\n%s", args, r.code, r.stderr)
		}
		var doc struct {
			Edges []struct {
				Source, Target int
				Weight         float64
			} `json:"edges"`
		}
		data, _ := os.ReadFile(out)
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, e := range doc.Edges {
			got[fmt.Sprintf("%d→%d", e.Source, e.Target)] = e.Weight
		}
		return got
	}
	all, latest := weights(), weights("--weights", "latest")
	summed := 0
	for k, w := range latest {
		if w != 1 {
			t.Errorf("latest: %s weight %v, want 1 (one page a crawl)", k, w)
		}
		if all[k] > 1 {
			summed++
		}
	}
	if summed == 0 || len(latest) == 0 {
		t.Errorf("no edge summed over revisits (%d latest edges): the test proves nothing", len(latest))
	}
	if r := weaver(t, dir, "rank", "--db", db, "--weights", "latest", "--top", "3"); r.code != 0 {
		t.Errorf("rank --weights latest: exit %d\n%s", r.code, r.stderr)
	}
	if r := weaver(t, dir, "export", "--db", db, "--weights", "latest", "--at", "now", "--json", "-"); r.code != 2 {
		t.Errorf("--weights latest with --at: exit %d, want 2", r.code)
	}
}

// TestThirdHour_Import: a file that is no archive is refused before a
// store is made; the progress lines count each file's own records and
// agree with the summary; an import of weaver's own WARC gives
// robots_disallowed to the hosts whose archived robots.txt disallows their
// home page for the agent of the archived requests.
func TestThirdHour_Import(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notArchive := filepath.Join(dir, "big.db")
	if err := os.WriteFile(notArchive, []byte("SQLite format 3\x00 and more"), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "fresh.bolt")
	r := weaver(t, dir, "import", "--db", fresh, notArchive)
	if r.code != 2 || !strings.Contains(r.stderr, "big.db is a SQLite database, not a WARC or WAT file") {
		t.Errorf("import of a SQLite file: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(fresh); err == nil {
		t.Error("the refused import made a store")
	}

	w := fakeweb.New(fakeweb.Config{Hosts: 150, Seed: 31, RobotsDisallowEvery: 7})
	srv := startWeb(t, w)
	db := filepath.Join(dir, "c.bolt")
	warcs := filepath.Join(dir, "warcs")
	if r := fixture(t, dir, crawlArgs(srv, db, "--max-depth", "0", "--max-crawls-per-node", "1", "--warc", warcs, "--warc-max-size", "200000", w.Seed())...); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s", r.code, r.stderr)
	}
	imp := filepath.Join(dir, "i.bolt")
	r = weaver(t, dir, "import", "--db", imp, "--progress", "1ms", warcs)
	if r.code != 0 {
		t.Fatalf("import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	line := regexp.MustCompile(`(?m)^import: \S+ done 100% \S+ \| records (\d+) .* \| pages (\d+) \| nodes \+(\d+) \| links \+(\d+)`)
	var sum [4]int
	files := 0
	for _, m := range line.FindAllStringSubmatch(r.stderr, -1) {
		files++
		for i := range sum {
			n, _ := strconv.Atoi(m[i+1])
			sum[i] += n
		}
	}
	summary := regexp.MustCompile(`imported (\d+) files .*: (\d+) records, .*, (\d+) pages, .*; \+(\d+) nodes, \+\d+ edges, \+(\d+) links`).FindStringSubmatch(r.stdout)
	if files < 2 || summary == nil {
		t.Fatalf("%d done lines, summary %v\n%s%s", files, summary, r.stdout, r.stderr)
	}
	for i, k := range []int{2, 3, 4, 5} {
		if want, _ := strconv.Atoi(summary[k]); sum[i] != want {
			t.Errorf("the progress lines add up to %v (records, pages, nodes, links), the summary says %v", sum, summary[2:])
			break
		}
	}
	crawled, imported := nodes(t, db), nodes(t, imp)
	disallowed := 0
	for h, n := range crawled {
		if n.Status != graph.StatusRobotsDisallow {
			continue
		}
		disallowed++
		if got := imported[h].Status; got != graph.StatusRobotsDisallow {
			t.Errorf("%s: robots_disallowed in the crawl, %q in the import of its WARC", h, got)
		}
	}
	if disallowed < 5 {
		t.Errorf("only %d hosts disallowed: the test proves little", disallowed)
	}
}

// TestThirdHour_ConfigKeys: an unknown key of a config file gets the
// closest key, a flag's name its key, as flags and the environment do.
func TestThirdHour_ConfigKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct{ doc, want string }{
		{`{"max_dpeth": 2}`, `key "max_dpeth": unknown key: did you mean "max_depth"?`},
		{`{"workers": 4}`, `key "workers": unknown key: did you mean "concurrent_workers"? (a config file takes config keys; --workers sets concurrent_workers)`},
	} {
		cfg := filepath.Join(dir, "c.json")
		if err := os.WriteFile(cfg, []byte(c.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		r := weaver(t, dir, "crawl", "--db", filepath.Join(dir, "x.bolt"), "--config", cfg, "http://a.test/")
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "known:") {
			t.Errorf("%s: exit %d, want 2 and %q\n%s", c.doc, r.code, c.want, r.stderr)
		}
	}
}

// TestThirdHour_Messages: the progress line as documented (elapsed); --at
// takes a bare date and warns before the store's first host; a host left
// out says which limit; both diffs print an edge alike; GraphML carries
// every edge's facts for readers that do not apply defaults (networkx 2.8).
func TestThirdHour_Messages(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 120, Seed: 77, Latency: 60 * time.Millisecond})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "m.bolt")
	r := weaverEnv(t, dir, []string{"WEAVER_PROGRESS_INTERVAL_MS=100"}, crawlArgs(srv, db, "--max-depth", "1", w.Seed())...)
	if r.code != 0 || !regexp.MustCompile(`(?m)\[INFO\] Queue: \d+ \| .* pages/s \| elapsed \d:\d\d:\d\d$`).MatchString(r.stdout) {
		t.Errorf("progress line: exit %d, want one ending in elapsed h:mm:ss\n%s", r.code, r.stdout)
	}
	limited := 0
	for h, n := range nodes(t, db) {
		if n.Status == graph.StatusExcludedByLimit {
			limited++
			if !strings.HasPrefix(n.Error, "excluded by max_depth 1 (the host is 2 links from the nearest seed)") && !strings.HasPrefix(n.Error, "excluded by max_subdomains_per_root 3") {
				t.Errorf("%s: excluded_by_limit with error %q, want the limit named", h, n.Error)
			}
		}
	}
	if limited == 0 {
		t.Error("no host left out by max_depth 1: the test proves nothing")
	}
	r = weaver(t, dir, "export", "--db", db, "--at", "2020-01-01", "--json", filepath.Join(dir, "old.json"))
	if r.code != 0 || !strings.Contains(r.stderr, "--at 2020-01-01T00:00:00Z is before the store's first host was seen") {
		t.Errorf("--at before the store: exit %d, want a warning\n%s", r.code, r.stderr)
	}
	today := time.Now().UTC().Format(time.DateOnly)
	if r := weaver(t, dir, "export", "--db", db, "--at", today, "--json", filepath.Join(dir, "today.json")); r.code != 0 {
		t.Errorf("--at %s (a bare date): exit %d\n%s", today, r.code, r.stderr)
	}
	snap := filepath.Join(dir, "later.bolt")
	if r := fixture(t, dir, "snapshot", "--db", db, snap); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := fixture(t, dir, crawlArgs(srv, snap, "--max-depth", "2")...); r.code != 0 {
		t.Fatal(r.stderr)
	}
	edgeLine := regexp.MustCompile(`(?m)^\+ edge \S+ → \S+  weight \d+$`)
	stores := weaver(t, dir, "diff", db, snap)
	times := weaver(t, dir, "diff", "--db", snap, "--from", "2020-01-01", "--to", "now")
	if !edgeLine.MatchString(stores.stdout) || !edgeLine.MatchString(times.stdout) {
		t.Errorf("the two diffs print edges alike (%s): stores\n%s\ntimes\n%s", edgeLine, head(stores.stdout), head(times.stdout))
	}
	gml := filepath.Join(dir, "g.graphml")
	if r := weaver(t, dir, "export", "--db", db, "--graphml", gml); r.code != 0 {
		t.Fatal(r.stderr)
	}
	// Debian's networkx (2.8, /usr/bin/python3) applies no GraphML
	// default; the PATH one (3.x) does. Both see every fact.
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		py := tooltest.Python(t, "networkx", py)
		out, err := exec.Command(py, "-c", `import networkx as nx, sys
g = nx.read_graphml(sys.argv[1])
bad = [(u, v) for u, v, d in g.edges(data=True) if not {"weight", "nofollow", "redirect", "frame", "gone"} <= set(d)]
print(len(g.edges()), len(bad))`, gml).CombinedOutput()
		if f := strings.Fields(string(out)); err != nil || len(f) != 2 || f[1] != "0" || f[0] == "0" {
			t.Errorf("%s's networkx reading the GraphML: %v: %s (edges, edges lacking a fact)", py, err, out)
		}
	}
}

// head is the first lines of s, for a message.
func head(s string) string {
	sc := bufio.NewScanner(strings.NewReader(s))
	var lines []string
	for sc.Scan() && len(lines) < 8 {
		lines = append(lines, sc.Text())
	}
	return strings.Join(lines, "\n")
}
