package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/serve"
)

// proc is a weaver process running in the background.
type proc struct {
	cmd  *exec.Cmd
	out  *lockedBuffer // stdout and stderr
	done chan struct{} // closed when it has exited
	code int           // exit code, once done is closed
}

// lockedBuffer is a buffer safe to read while the process writes it.
type lockedBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// start starts weaver with args in dir; the test's cleanup kills it if
// it still runs.
func start(t *testing.T, dir string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(weaverBin, args...), out: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd.Dir, p.cmd.Env = dir, cleanEnv()
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.done)
		err := p.cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok {
			p.code = ee.ExitCode()
		} else if err != nil {
			p.code = -1
		}
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait waits for the process to exit and returns its exit code.
func (p *proc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(2 * time.Minute):
		t.Fatalf("weaver %v did not exit:\n%s", p.cmd.Args[1:], p.out.String())
		return 0
	}
}

// poll calls cond every 50 ms until it holds, the process exits, or a
// timeout passes.
func (p *proc) poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		select {
		case <-p.done:
			t.Fatalf("weaver exited (code %d) while waiting for %s:\n%s", p.code, what, p.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s:\n%s", what, p.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// api is a client of one weaver HTTP API.
type api struct {
	t    *testing.T
	base string
}

// do sends a request and returns the status code and body.
func (a api) do(method, path, body string) (int, []byte) {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, strings.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp.StatusCode, data
}

// json sends a request, checks the status code and decodes the answer.
func (a api) json(method, path, body string, wantCode int, v any) {
	a.t.Helper()
	code, data := a.do(method, path, body)
	if code != wantCode {
		a.t.Fatalf("%s %s: %d, want %d: %s", method, path, code, wantCode, data)
	}
	if v != nil {
		if err := json.Unmarshal(data, v); err != nil {
			a.t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
}

// listenAPI waits for a crawl's sidecar file and returns its status API.
func listenAPI(t *testing.T, p *proc, db string) api {
	t.Helper()
	var addr string
	p.poll(t, "the crawl's address in "+db+".listen", func() bool {
		data, err := os.ReadFile(db + ".listen")
		addr, _, _ = strings.Cut(string(data), "\n") // the address, then the token's line
		addr = strings.TrimSpace(addr)
		return err == nil && addr != ""
	})
	return api{t: t, base: "http://" + addr}
}

// slowCrawl is a crawl that stays busy until it is stopped: the seed's
// only kept link (max_outbound_links 1) is slow-a.drip.test, a host that
// answers one byte a second, fetched with a 20 s timeout. fresh is a host
// the crawl does not reach by itself, whose first link is another such
// host, slow-b.drip.test: once added as a seed, it keeps the crawl busy
// again.
type slowCrawl struct {
	w     *fakeweb.Web
	db    string
	p     *proc
	api   api
	fresh string
}

func startSlowCrawl(t *testing.T) *slowCrawl {
	t.Helper()
	w := fakeweb.New(fakeweb.Config{Hosts: 200, Seed: 5, Latency: 10 * time.Millisecond, RobotsDisallowEvery: -1,
		Faults: map[string]fakeweb.Fault{"slow-a.drip.test": fakeweb.SlowDrip, "slow-b.drip.test": fakeweb.SlowDrip}})
	srv := startWeb(t, w)
	reached := map[string]bool{}
	for e := range w.ExpectedEdges(1, excluded) {
		reached[e[0]], reached[e[1]] = true, true
	}
	// Extra hosts are linked first from regular hosts 0 (the seed) and 1.
	sc := &slowCrawl{w: w, fresh: w.Hosts()[1]}
	if !reached["slow-a.drip.test"] || len(reached) != 2 || reached[sc.fresh] {
		t.Fatalf("the fixture's assumption broke: from the seed, max_outbound_links 1 reaches %v, want only slow-a.drip.test", reached)
	}
	dir := t.TempDir()
	sc.db = filepath.Join(dir, "w.bolt")
	sc.p = start(t, dir, crawlArgs(srv, sc.db, "--listen", "127.0.0.1:0", "--workers", "2",
		"--max-outbound-links", "1", "--max-crawls-per-node", "1", "--max-depth", "0", "--ignore-robots",
		"--timeout", "20s", "--retries", "0", w.Seed())...)
	sc.api = listenAPI(t, sc.p, sc.db)
	sc.p.poll(t, "the seed to be crawled", func() bool {
		var st serve.Status
		sc.api.json("GET", "/status", "", http.StatusOK, &st)
		return st.Crawl != nil && st.Crawl.PagesFetched >= 1
	})
	return sc
}

// stop stops the crawl through POST /stop and checks it ended as a
// SIGTERM would have it.
func (sc *slowCrawl) stop(t *testing.T) {
	t.Helper()
	var ans serve.StopAnswer
	sc.api.json("POST", "/stop", "", http.StatusAccepted, &ans)
	if code := sc.p.wait(t); code != 0 {
		t.Fatalf("exit %d after POST /stop:\n%s", code, sc.p.out.String())
	}
	// A request, not a signal: seed 000's reasons name the cause.
	if m := metrics(t, sc.db+".metrics"); m.TerminationReason != "api_stop" {
		t.Errorf("termination_reason %q, want api_stop", m.TerminationReason)
	}
	if !strings.Contains(sc.p.out.String(), "[INFO] Stop requested (POST /stop)") || !strings.Contains(sc.p.out.String(), "Crawl ended (api_stop)") {
		t.Errorf("the log does not say the stop was requested:\n%s", sc.p.out.String())
	}
	if _, err := os.Stat(sc.db + ".listen"); err == nil {
		t.Error("the address file outlived the crawl")
	}
	s, err := kv.Open(sc.db, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.View(func(tx *kv.Tx) error {
		if v := tx.MetaString("listen_addr"); v != "" {
			t.Errorf("listen_addr %q left in the store's meta", v)
		}
		return nil
	})
}

// metric returns the value of a parsed family's sample whose labels
// include the name=value pairs given.
func metric(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("/metrics lacks %s", name)
	}
outer:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			ok := false
			for _, l := range m.Label {
				ok = ok || (l.GetName() == labels[i] && l.GetValue() == labels[i+1])
			}
			if !ok {
				continue outer
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	t.Fatalf("/metrics lacks %s%v", name, labels)
	return math.NaN()
}

// TestListen_StatusMetricsSeedsStop is the end-to-end test of
// weaver crawl --listen: poll /status until progress, scrape /metrics
// with Prometheus's parser, add a seed with POST /seeds and see it
// crawled, stop with POST /stop and find termination_reason "api_stop".
func TestListen_StatusMetricsSeedsStop(t *testing.T) {
	t.Parallel()
	sc := startSlowCrawl(t)

	var st serve.Status
	sc.api.json("GET", "/status", "", http.StatusOK, &st)
	if !st.Crawl.Running || st.Crawl.Nodes < 2 || st.Store.Nodes < 1 || len(st.Crawl.Workers) != 2 || st.Store.TopHosts == nil {
		t.Errorf("status: %+v %+v", st.Store, st.Crawl)
	}
	if !strings.HasSuffix(st.DBPath, string(filepath.Separator)+"w.bolt") {
		t.Errorf("db_path %q", st.DBPath)
	}

	_, body := sc.api.do("GET", "/metrics", "")
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, body)
	}
	if got := metric(t, fams, "weaver_pages_fetched_total"); got < 1 {
		t.Errorf("weaver_pages_fetched_total %v", got)
	}
	if got := metric(t, fams, "weaver_workers", "state", "fetching"); got < 1 {
		t.Errorf("weaver_workers{state=fetching} %v: the slow host is being fetched", got)
	}
	if got := metric(t, fams, "weaver_fetch_seconds"); got < 1 {
		t.Errorf("weaver_fetch_seconds count %v", got)
	}
	metric(t, fams, "weaver_frontier_size")
	metric(t, fams, "weaver_errors_total", "type", "timeout")
	if got := metric(t, fams, "weaver_crawl_running"); got != 1 {
		t.Errorf("weaver_crawl_running %v", got)
	}

	// Bad seeds are refused with a 400 naming them; a good one is queued.
	code, msg := sc.api.do("POST", "/seeds", `{"urls": ["gopher://old.test/"]}`)
	if code != http.StatusBadRequest || !strings.Contains(string(msg), "gopher://old.test/") {
		t.Errorf("bad seed: %d %s", code, msg)
	}
	var added serve.SeedsAnswer
	sc.api.json("POST", "/seeds", `{"urls": ["http://`+sc.fresh+`/"]}`, http.StatusOK, &added)
	if added.Queued != 1 {
		t.Errorf("queued %d, want 1", added.Queued)
	}
	sc.p.poll(t, sc.fresh+" to be crawled", func() bool {
		_, g := sc.api.do("GET", "/graph?format=json", "")
		var doc struct {
			Nodes []struct {
				Host       string `json:"host"`
				CrawlCount int    `json:"crawl_count"`
			} `json:"nodes"`
		}
		if err := json.Unmarshal(g, &doc); err != nil {
			t.Fatalf("/graph: %v", err)
		}
		for _, n := range doc.Nodes {
			if n.Host == sc.fresh && n.CrawlCount == 1 {
				return true
			}
		}
		return false
	})
	// Again: nothing queued, and the answer says why.
	sc.api.json("POST", "/seeds", `{"urls": ["http://`+sc.fresh+`/"]}`, http.StatusOK, &added)
	if want := "crawled 1 time, max_crawls_per_node 1"; added.Queued != 0 || len(added.Seeds) != 1 || added.Seeds[0].Reason != want {
		t.Errorf("a crawled seed again: %+v, want queued 0 and the reason %q", added, want)
	}
	sc.stop(t)
	ns := nodes(t, sc.db)
	// fresh's page was parsed (its first link, slow-b, is a node) and
	// neither slow host ever answered a page.
	slowB, ok := ns["slow-b.drip.test"]
	if ns[sc.fresh].CrawlCount != 1 || !ok || slowB.CrawlCount != 0 || ns["slow-a.drip.test"].CrawlCount != 0 {
		t.Errorf("%s: %+v; slow-b: %+v", sc.fresh, ns[sc.fresh], slowB)
	}
}

// TestListen_GraphAndSnapshot: the running crawl streams its graph in
// every format and a copy of its store that opens as a store.
func TestListen_GraphAndSnapshot(t *testing.T) {
	t.Parallel()
	sc := startSlowCrawl(t)
	for format, want := range map[string]string{"dot": "digraph", "graphml": "<graphml", "json": `"nodes"`} {
		code, body := sc.api.do("GET", "/graph?format="+format, "")
		if code != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("%s: %d %.200s", format, code, body)
		}
	}
	code, body := sc.api.do("GET", "/snapshot", "")
	if code != http.StatusOK {
		t.Fatalf("/snapshot: %d", code)
	}
	cp := filepath.Join(t.TempDir(), "copy.bolt")
	os.WriteFile(cp, body, 0o600)
	if got := edges(t, cp); len(got) == 0 { // opens it and checks every invariant
		t.Error("the snapshot has no edges")
	}
	sc.stop(t)
}

// jobAPI waits for weaver serve's address in its log.
func jobAPI(t *testing.T, p *proc) api {
	t.Helper()
	re := regexp.MustCompile(`Serving the job API on (http://[^ ]+) `)
	var base string
	p.poll(t, "the serving line", func() bool {
		sc := bufio.NewScanner(strings.NewReader(p.out.String()))
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				base = m[1]
				return true
			}
		}
		return false
	})
	return api{t: t, base: base}
}

// fullJob is GET /crawl/{id} of a final job.
type fullJob struct {
	Job struct {
		serve.Job
		Nodes []serve.JobNode `json:"nodes"`
		Edges []serve.JobEdge `json:"edges"`
	} `json:"job"`
}

// TestServe_RestartResume: weaver serve is stopped with SIGTERM while a
// job crawls; started again on the same directory, it resumes the job to
// the graph an uninterrupted crawl records.
func TestServe_RestartResume(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 500, Seed: 21, Latency: 20 * time.Millisecond, RobotsDisallowEvery: -1})
	srv := startWeb(t, w)
	dir := t.TempDir()
	data := filepath.Join(dir, "jobs")
	args := []string{"serve", "--listen", "127.0.0.1:0", "--dir", data, "--connect-to", srv.ConnectTo()}

	p1 := start(t, dir, args...)
	a1 := jobAPI(t, p1)
	var created serve.CreatedAnswer
	a1.json("POST", "/crawl", fmt.Sprintf(`{"url": %q, "max_crawls_per_node": 1, "max_depth": 0, "politeness_delay_ms": 0,
		"ignore_robots": true, "retry_delay_ms": 10, "concurrent_workers": 2}`, w.Seed()), http.StatusCreated, &created)
	id := created.JobID
	interrupted := true
	p1.poll(t, "the job's first pages", func() bool {
		var j serve.JobAnswer
		a1.json("GET", "/crawl/"+id+"?graph=false", "", http.StatusOK, &j)
		if j.Job.Status == serve.JobCompleted {
			interrupted = false
			return true
		}
		return j.Job.Progress != nil && j.Job.Progress.PagesFetched >= 10
	})
	p1.cmd.Process.Signal(syscall.SIGTERM)
	if code := p1.wait(t); code != 0 {
		t.Fatalf("SIGTERM: exit %d\n%s", code, p1.out.String())
	}
	if !interrupted {
		t.Log("the job completed before SIGTERM: the resume was not exercised")
	} else if !strings.Contains(p1.out.String(), "resumes when weaver serve restarts") {
		t.Errorf("the first serve's log does not say the job will resume:\n%s", p1.out.String())
	}

	p2 := start(t, dir, args...)
	a2 := jobAPI(t, p2)
	var full fullJob
	p2.poll(t, "the job to complete", func() bool {
		a2.json("GET", "/crawl/"+id, "", http.StatusOK, &full)
		if full.Job.Status == serve.JobFailed || full.Job.Status == serve.JobStopped {
			t.Fatalf("job %s: %+v", full.Job.Status, full.Job.Job)
		}
		return full.Job.Status == serve.JobCompleted
	})
	if interrupted && (full.Job.Runs != 2 || !strings.Contains(p2.out.String(), "Resuming job "+id)) {
		t.Errorf("runs %d, want 2; log:\n%s", full.Job.Runs, p2.out.String())
	}
	if m := full.Job.Metrics; m == nil || m.TerminationReason != "queue_empty" || m.PagesFailed != 0 {
		t.Errorf("metrics: %+v", m)
	}
	want := w.ExpectedEdges(10, excluded)
	got := map[[2]string]int{}
	for _, e := range full.Job.Edges {
		got[[2]string{e.From, e.To}] = int(e.Weight)
	}
	storetest.SameGraph(t, got, want)
	for _, n := range full.Job.Nodes {
		if n.CrawlCount > 1 {
			t.Errorf("%s crawled %d times, max 1", n.Host, n.CrawlCount)
		}
	}
	var list serve.JobsAnswer
	a2.json("GET", "/crawl", "", http.StatusOK, &list)
	if len(list.Jobs) != 1 || list.Jobs[0].ID != id {
		t.Errorf("jobs: %+v", list.Jobs)
	}
	p2.cmd.Process.Signal(syscall.SIGTERM)
	if code := p2.wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p2.out.String())
	}
	storetest.SameGraph(t, edges(t, filepath.Join(data, id+".bolt")), want) // the store itself, invariants checked
}

// TestServe_Errors: the job API's errors through the real binary.
func TestServe_Errors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := start(t, dir, "serve", "--listen", "127.0.0.1:0", "--dir", filepath.Join(dir, "jobs"))
	a := jobAPI(t, p)
	for _, c := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"POST", "/crawl", `{"url": "http://a.test/", "max_dept": 1}`, 400, "max_dept"},
		{"POST", "/crawl", `{"url": "http://a.test/", "db_path": "/tmp/x"}`, 400, "db_path"},
		{"POST", "/crawl", `{"max_pages": 3}`, 400, "url"},
		{"GET", "/crawl/crawl_nothere", "", 404, "no such job"},
		{"DELETE", "/crawl/crawl_nothere", "", 404, "no such job"},
		{"PATCH", "/crawl", "", 405, "not allowed"},
	} {
		code, body := a.do(c.method, c.path, c.body)
		if code != c.code || !strings.Contains(string(body), c.want) {
			t.Errorf("%s %s %s: %d %s, want %d with %q", c.method, c.path, c.body, code, body, c.code, c.want)
		}
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.wait(t); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestServe_WarcDir: a job's warc_dir must lead inside weaver serve's
// --dir, and then works. An absolute path, a "..", a symbolic link that
// leads out are refused with a 400 that says why, and write nothing;
// "warc/" writes the job's WARC files in DIR/warc, named after the job,
// every crawled page with its record, as weaver check verifies; a second
// job started into the same directory while the first writes leaves the
// first's open file alone. Keys a job cannot honour are refused, and not
// listed as known.
func TestServe_WarcDir(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 120, Seed: 71, Latency: 10 * time.Millisecond, RobotsDisallowEvery: -1})
	srv := startWeb(t, w)
	dir := t.TempDir()
	data := filepath.Join(dir, "jobs")
	outside := filepath.Join(dir, "outside")
	for _, d := range []string{data, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(data, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(data, "dangling")); err != nil {
		t.Fatal(err)
	}
	p := start(t, dir, "serve", "--listen", "127.0.0.1:0", "--dir", data, "--connect-to", srv.ConnectTo())
	a := jobAPI(t, p)
	job := func(extra string) string {
		return fmt.Sprintf(`{"url": %q, "max_crawls_per_node": 1, "max_depth": 0, "politeness_delay_ms": 0, "retry_delay_ms": 10%s}`, w.Seed(), extra)
	}
	abs := filepath.Join(dir, "anywhere")
	for _, c := range []struct{ extra, want string }{
		{`, "warc_dir": "` + abs + `"`, "absolute path"},
		{`, "warc_dir": "/anywhere"`, "absolute path"},
		{`, "warc_dir": "../x"`, `".." leads out`},
		{`, "warc_dir": "warc/../../x"`, `".." leads out`},
		{`, "warc_dir": "out"`, "symbolic link in it leads out"},
		{`, "warc_dir": "out/warc"`, "symbolic link in it leads out"},
		{`, "warc_dir": "dangling/warc"`, "symbolic link in it leads nowhere"},
		{`, "render": "auto"`, `"render" cannot be set through the API: weaver serve runs no browser`},
		{`, "browser": "/bin/sh"`, `"browser" cannot be set`},
		{`, "json_logs": true`, `"json_logs" cannot be set`},
	} {
		code, body := a.do("POST", "/crawl", job(c.extra))
		var e struct {
			Error string `json:"error"`
		}
		json.Unmarshal(body, &e)
		if code != http.StatusBadRequest || !strings.Contains(e.Error, c.want) {
			t.Errorf("POST /crawl with %s: %d %s, want 400 saying %q", c.extra, code, body, c.want)
		}
	}
	// The list of known keys is the keys that work.
	_, body := a.do("POST", "/crawl", `{"url": "http://a.test/", "max_dept": 1}`)
	known := regexp.MustCompile(`known: ([^)]*)\)`).FindStringSubmatch(string(body))
	if known == nil {
		t.Fatalf("unknown key: %s", body)
	}
	for _, k := range strings.Split(known[1], ", ") {
		if k == "render" || k == "browser" || k == "json_logs" || k == "db_path" || k == "metrics_path" || k == "token_file" {
			t.Errorf("%s is listed as known: %s", k, body)
		}
	}
	if !strings.Contains(known[1], "warc_dir") || !strings.Contains(known[1], "warc_max_size") {
		t.Errorf("warc_dir and warc_max_size are not listed as known: %s", body)
	}
	for _, d := range []string{outside, abs} {
		if entries, _ := os.ReadDir(d); len(entries) != 0 {
			t.Errorf("a refused job wrote into %s: %v", d, entries)
		}
	}
	if _, err := os.Stat(abs); err == nil {
		t.Errorf("a refused job created %s", abs)
	}
	if jobs, _ := filepath.Glob(filepath.Join(data, "*.bolt")); len(jobs) != 0 {
		t.Errorf("refused jobs left stores: %v", jobs)
	}

	var first, second serve.CreatedAnswer
	a.json("POST", "/crawl", job(`, "warc_dir": "warc/", "concurrent_workers": 2`), http.StatusCreated, &first)
	p.poll(t, "the first job's first pages", func() bool {
		var j serve.JobAnswer
		a.json("GET", "/crawl/"+first.JobID+"?graph=false", "", http.StatusOK, &j)
		return j.Job.Status == serve.JobCompleted || (j.Job.Progress != nil && j.Job.Progress.PagesFetched >= 5)
	})
	a.json("POST", "/crawl", job(`, "warc_dir": "warc"`), http.StatusCreated, &second)
	warcs := filepath.Join(data, "warc")
	for _, id := range []string{first.JobID, second.JobID} {
		var full fullJob
		p.poll(t, "job "+id+" to complete", func() bool {
			a.json("GET", "/crawl/"+id, "", http.StatusOK, &full)
			if full.Job.Status == serve.JobFailed || full.Job.Status == serve.JobStopped {
				t.Fatalf("job %s: %+v", full.Job.Status, full.Job.Job)
			}
			return full.Job.Status == serve.JobCompleted
		})
		files, _ := filepath.Glob(filepath.Join(warcs, id+"-*.warc.gz"))
		if len(files) == 0 {
			t.Fatalf("job %s wrote no WARC file in %s", id, warcs)
		}
		got := warcFileRecords(t, files)
		crawled := 0
		for _, n := range full.Job.Nodes {
			if n.CrawlCount > 0 {
				crawled++
			}
		}
		if crawled == 0 || got["response"] < crawled {
			t.Errorf("job %s: %d response records for %d crawled hosts", id, got["response"], crawled)
		}
		db := filepath.Join(data, id+".bolt")
		if r := weaver(t, dir, "check", "--db", db); r.code != 0 {
			t.Errorf("check %s: exit %d\n%s%s", id, r.code, r.stdout, r.stderr)
		}
		if set := statusSettings(t, dir, db); set["warc_dir"] != warcs {
			t.Errorf("job %s's stored warc_dir %v, want %s", id, set["warc_dir"], warcs)
		}
		// weaver status counts the job's files, not the other job's.
		r := weaver(t, dir, "status", "--db", db, "--json")
		var rep struct {
			Store struct {
				Warc *serve.WarcFiles `json:"warc"`
			} `json:"store"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Store.Warc == nil {
			t.Fatalf("status --json: %v\n%s%s", err, r.stdout, r.stderr)
		}
		if rep.Store.Warc.Files != len(files) || rep.Store.Warc.Dir != warcs {
			t.Errorf("job %s: status counts %d WARC files in %s, want its %d in %s", id, rep.Store.Warc.Files, rep.Store.Warc.Dir, len(files), warcs)
		}
	}
	if open, _ := filepath.Glob(filepath.Join(warcs, "*.open")); len(open) != 0 {
		t.Errorf("files left open after the jobs completed: %v", open)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t); code != 0 {
		t.Errorf("exit %d\n%s", code, p.out.String())
	}
	// The second job's writer recovered no file: not the first's, open
	// while it started.
	if l := regexp.MustCompile(`(?m)^\[WARN\] .*WARC: .*$`).FindAllString(p.out.String(), -1); len(l) != 0 {
		t.Errorf("a job's writer recovered a file in the shared directory: %q", l)
	}
}
