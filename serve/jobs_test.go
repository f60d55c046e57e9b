package serve_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/internal/crawlwarc"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/serve"
)

// jobBase is every test job's configuration: srv reached through
// connect_to, no delays.
func jobBase(srv *fakeweb.Server) crawl.Config {
	cfg := crawl.Defaults()
	cfg.ConnectTo = []string{srv.ConnectTo()}
	cfg.AllowPrivateNetworks = true
	cfg.PolitenessDelayMS = 0
	cfg.RetryDelayMS = 10
	cfg.ProgressIntervalMS = 0
	cfg.Quiet = true
	return cfg
}

// logSink collects a manager's log lines.
type logSink struct {
	mu    sync.Mutex // guards lines
	lines []string
}

func (l *logSink) log(level, msg string) {
	l.mu.Lock()
	l.lines = append(l.lines, level+" "+msg)
	l.mu.Unlock()
}

// newManager opens a job manager on dir; the test's cleanup closes it.
func newManager(t *testing.T, dir string, srv *fakeweb.Server) (*serve.JobManager, string) {
	t.Helper()
	logs := &logSink{}
	m, err := serve.NewJobManager(serve.JobOptions{Dir: dir, Base: jobBase(srv), MaxRunning: 2, Log: logs.log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return m, newServer(t, serve.NewJobHandler(m, "test")).URL
}

// fullJob is GET /crawl/{id} with the graph.
type fullJob struct {
	Job struct {
		serve.Job
		Nodes []serve.JobNode `json:"nodes"`
		Edges []serve.JobEdge `json:"edges"`
	} `json:"job"`
}

func createJob(t *testing.T, url, body string) string {
	t.Helper()
	a := do(t, "POST", url+"/crawl", body)
	if a.code != http.StatusCreated {
		t.Fatalf("POST /crawl: %d %s", a.code, a.body)
	}
	var c serve.CreatedAnswer
	decode(t, a, &c)
	if !strings.HasPrefix(c.JobID, "crawl_") || (c.Status != serve.JobQueued && c.Status != serve.JobRunning) {
		t.Errorf("created %+v", c)
	}
	if loc := a.header.Get("Location"); loc != "/crawl/"+c.JobID {
		t.Errorf("Location %q", loc)
	}
	return c.JobID
}

func getJob(t *testing.T, url, id string) serve.Job {
	t.Helper()
	a := do(t, "GET", url+"/crawl/"+id+"?graph=false", "")
	if a.code != http.StatusOK {
		t.Fatalf("GET /crawl/%s: %d %s", id, a.code, a.body)
	}
	var j serve.JobAnswer
	decode(t, a, &j)
	return j.Job
}

func waitJob(t *testing.T, url, id string, want serve.JobStatus) serve.Job {
	t.Helper()
	var j serve.Job
	eventually(t, 2*time.Minute, fmt.Sprintf("job %s to be %s", id, want), func() bool {
		j = getJob(t, url, id)
		if j.Status != want && (j.Status == serve.JobFailed || j.Status == serve.JobCompleted) {
			t.Fatalf("job %s ended %s, want %s: %+v", id, j.Status, want, j)
		}
		return j.Status == want
	})
	return j
}

// edgeMap is a job's edges as host pairs.
func edgeMap(es []serve.JobEdge) map[[2]string]int {
	out := map[[2]string]int{}
	for _, e := range es {
		out[[2]string{e.From, e.To}] = int(e.Weight)
	}
	return out
}

// groundTruth are the settings under which fakeweb's ExpectedEdges holds.
const groundTruth = `"max_crawls_per_node": 1, "max_depth": 0, "ignore_robots": true`

func TestJobs_CreateRunComplete(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 80, Seed: 4, RobotsDisallowEvery: -1})
	srv := startWeb(t, w)
	dir := t.TempDir()
	_, url := newManager(t, dir, srv)
	id := createJob(t, url, `{"url": "`+w.Seed()+`", `+groundTruth+`}`)
	j := waitJob(t, url, id, serve.JobCompleted)
	if j.SeedURL != w.Seed() || j.StartedAt == nil || j.EndedAt == nil || j.Runs != 1 || j.Error != "" || j.Progress != nil {
		t.Errorf("job: %+v", j)
	}
	if j.Metrics == nil || j.Metrics.TerminationReason != crawl.ReasonQueueEmpty || j.Metrics.PagesFetched == 0 {
		t.Fatalf("metrics: %+v", j.Metrics)
	}
	a := do(t, "GET", url+"/crawl/"+id, "")
	var full fullJob
	if err := json.Unmarshal(a.body, &full); err != nil || a.code != http.StatusOK {
		t.Fatalf("%d %v: %.300s", a.code, err, a.body)
	}
	if full.Job.ID != id || full.Job.Status != serve.JobCompleted {
		t.Errorf("job %+v", full.Job.Job)
	}
	storetest.SameGraph(t, edgeMap(full.Job.Edges), w.ExpectedEdges(10, fakeweb.DefaultExcluded))
	crawled := 0
	for _, n := range full.Job.Nodes {
		if n.CrawlCount > 1 {
			t.Errorf("%s crawled %d times", n.Host, n.CrawlCount)
		}
		if n.CrawlCount == 1 {
			crawled++
			if n.Title != w.Title(n.Host) || n.Status != "crawled" {
				t.Errorf("node %+v, want title %q", n, w.Title(n.Host))
			}
		}
	}
	if crawled == 0 || uint64(len(full.Job.Nodes)) != j.Metrics.TotalNodes {
		t.Errorf("%d nodes (%d crawled), metrics say %d", len(full.Job.Nodes), crawled, j.Metrics.TotalNodes)
	}
	// The job's store is a weaver store like any other: the cleanup checks
	// its invariants. It holds the job's settings, as a crawl's store does.
	st := storetest.MustOpenPath(t, filepath.Join(dir, id+".bolt"), kv.Options{ReadOnly: true})
	var set crawl.Settings
	if err := st.View(func(tx *kv.Tx) (err error) { set, err = crawl.ReadSettings(tx); return err }); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"max_depth": "0 (no limit)", "max_crawls_per_node": "1", "ignore_robots": "true", "max_outbound_links": "10"} {
		if got := set.Text(key); got != want {
			t.Errorf("stored setting %s = %q, want %q", key, got, want)
		}
	}
}

// TestJobs_WarcDir: a job's warc_dir, relative to the manager's
// directory, gets its WARC files, named after the job; the job's store
// remembers it absolute among its settings (a weaver crawl resuming the
// store archives there too) and in the meta weaver status and check read.
func TestJobs_WarcDir(t *testing.T) {
	srv := startWeb(t, fakeweb.Loop3())
	dir := t.TempDir()
	_, url := newManager(t, dir, srv)
	id := createJob(t, url, `{"url": "http://a.test/", "max_crawls_per_node": 1, "warc_dir": "w/", "warc_max_size": 100000}`)
	waitJob(t, url, id, serve.JobCompleted)
	files, _ := filepath.Glob(filepath.Join(dir, "w", id+"-*.warc.gz"))
	if len(files) == 0 {
		t.Fatalf("no WARC file of job %s in %s", id, filepath.Join(dir, "w"))
	}
	st := storetest.MustOpenPath(t, filepath.Join(dir, id+".bolt"), kv.Options{ReadOnly: true})
	var set crawl.Settings
	var meta string
	if err := st.View(func(tx *kv.Tx) (err error) {
		meta = tx.MetaString(crawlwarc.MetaDir)
		set, err = crawl.ReadSettings(tx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "w")
	if got := set.Text("warc_dir"); got != want || meta != want {
		t.Errorf("stored warc_dir %q, meta %q; want %s", got, meta, want)
	}
	if got := set.Text("warc_max_size"); got != "100000" {
		t.Errorf("stored warc_max_size %q, want 100000", got)
	}
}

func TestJobs_GraphAndList(t *testing.T) {
	srv := startWeb(t, fakeweb.Loop3())
	_, url := newManager(t, t.TempDir(), srv)
	id1 := createJob(t, url, `{"url": "http://a.test/", "max_crawls_per_node": 1}`)
	id2 := createJob(t, url, `{"url": "http://b.test/", "max_crawls_per_node": 1, "max_pages": 2}`)
	waitJob(t, url, id1, serve.JobCompleted)
	j2 := waitJob(t, url, id2, serve.JobCompleted)
	if j2.MaxPages != 2 || j2.Metrics.PagesFetched > 2 {
		t.Errorf("max_pages 2: %+v", j2)
	}
	a := do(t, "GET", url+"/crawl", "")
	var list serve.JobsAnswer
	decode(t, a, &list)
	if len(list.Jobs) != 2 || list.Jobs[0].ID != id1 || list.Jobs[1].ID != id2 {
		t.Errorf("list: %+v", list.Jobs)
	}
	a = do(t, "GET", url+"/crawl/"+id1+"/graph?format=dot", "")
	if a.code != http.StatusOK || !strings.Contains(string(a.body), "digraph") {
		t.Errorf("graph: %d %s", a.code, a.body)
	}
	a = do(t, "GET", url+"/crawl/"+id1+"/graph?format=pdf", "")
	if a.code != http.StatusBadRequest {
		t.Errorf("format=pdf: %d", a.code)
	}
}

func TestJobs_BadRequests(t *testing.T) {
	srv := startWeb(t, fakeweb.Loop3())
	dir := t.TempDir()
	_, url := newManager(t, dir, srv)
	cases := []struct {
		name, body string
		code       int
		want       string
	}{
		{"empty", ``, 400, "not JSON"},
		{"not json", `{"url": `, 400, "not JSON"},
		{"array", `["http://a.test/"]`, 400, "JSON object"},
		{"no url", `{"max_pages": 10}`, 400, `"url" is required`},
		{"ftp", `{"url": "ftp://a.test/"}`, 400, `key "url": seed "ftp://a.test/" is not an http(s) URL`},
		{"ftp as seed_url", `{"seed_url": "ftp://a.test/"}`, 400, `key "seed_url": seed "ftp://a.test/"`},
		{"unknown key", `{"url": "http://a.test/", "max_dept": 3}`, 400, `unknown key "max_dept": did you mean "max_depth"?`},
		{"unknown key, nothing near", `{"url": "http://a.test/", "colour": 3}`, 400, `unknown key "colour" (known: `},
		{"wrong type", `{"url": "http://a.test/", "max_pages": "many"}`, 400, `"max_pages"`},
		{"bad value", `{"url": "http://a.test/", "concurrent_workers": 0}`, 400, `"concurrent_workers"`},
		{"url type", `{"url": 42}`, 400, `key "url": want a string`},
		{"db_path", `{"url": "http://a.test/", "db_path": "/etc/x.bolt"}`, 400, `"db_path" cannot be set`},
		{"metrics_path", `{"url": "http://a.test/", "metrics_path": "/tmp/m"}`, 400, `"metrics_path" cannot be set`},
		{"listen", `{"url": "http://a.test/", "listen": ":9999"}`, 400, `"listen" cannot be set`},
		{"token_file", `{"url": "http://a.test/", "token_file": "/etc/passwd"}`, 400, `"token_file" cannot be set`},
		{"connect_to", `{"url": "http://a.test/", "connect_to": ["::1.2.3.4:80"]}`, 400, `"connect_to" cannot be set`},
		{"private", `{"url": "http://a.test/", "allow_private_networks": true}`, 400, `"allow_private_networks" cannot be set`},
		{"render", `{"url": "http://a.test/", "render": "auto"}`, 400, `"render" cannot be set through the API: weaver serve runs no browser`},
		{"browser", `{"url": "http://a.test/", "browser": "/bin/sh"}`, 400, `"browser" cannot be set`},
		{"json_logs", `{"url": "http://a.test/", "json_logs": true}`, 400, `"json_logs" cannot be set`},
		{"crawl_name", `{"url": "http://a.test/", "crawl_name": "x"}`, 400, `"crawl_name" cannot be set`},
		{"warc_dir absolute", `{"url": "http://a.test/", "warc_dir": "/tmp/w"}`, 400, `warc_dir "/tmp/w": an absolute path`},
		{"warc_dir ..", `{"url": "http://a.test/", "warc_dir": "../w"}`, 400, `warc_dir "../w": ".." leads out`},
		{"warc_dir inner ..", `{"url": "http://a.test/", "warc_dir": "a/../../w"}`, 400, `".." leads out`},
		{"warc_dir type", `{"url": "http://a.test/", "warc_dir": 3}`, 400, `"warc_dir"`},
		{"twice", `{"url": "http://a.test/", "max_pages": 1, "max_pages": 2}`, 400, `"max_pages" given twice`},
		{"url and seed_url", `{"url": "http://a.test/", "seed_url": "http://b.test/"}`, 400, "not both"},
		{"seed_url and url", `{"seed_url": "http://a.test/", "url": "http://b.test/"}`, 400, "not both"},
		{"url twice", `{"url": "http://a.test/", "url": "http://b.test/"}`, 400, `"url" given twice`},
		{"trailing", `{"url": "http://a.test/"} x`, 400, "trailing"},
		{"too large", `{"url": "http://a.test/", "user_agent": "` + strings.Repeat("x", serve.MaxBodyBytes) + `"}`, 413, "over"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := do(t, "POST", url+"/crawl", tc.body)
			if a.code != tc.code {
				t.Fatalf("status %d, want %d: %s", a.code, tc.code, a.body)
			}
			if msg := errorOf(t, a); !strings.Contains(msg, tc.want) {
				t.Errorf("message %q does not say %q", msg, tc.want)
			}
		})
	}
	// The known keys are those that work in a job.
	msg := errorOf(t, do(t, "POST", url+"/crawl", `{"url": "http://a.test/", "max_dept": 3}`))
	known := strings.Split(msg[strings.Index(msg, "known: ")+len("known: "):strings.LastIndex(msg, ")")], ", ")
	for _, k := range []string{"render", "browser", "json_logs", "db_path", "metrics_path", "listen", "token_file", "connect_to", "crawl_name"} {
		if slices.Contains(known, k) {
			t.Errorf("%s, which a job cannot set, is listed as known: %s", k, msg)
		}
	}
	for _, k := range []string{"url", "warc_dir", "warc_max_size", "max_pages", "scope", "pages_per_host"} {
		if !slices.Contains(known, k) {
			t.Errorf("%s is not listed as known: %s", k, msg)
		}
	}
	var list serve.JobsAnswer
	decode(t, do(t, "GET", url+"/crawl", ""), &list)
	if len(list.Jobs) != 0 {
		t.Errorf("bad requests created %d jobs", len(list.Jobs))
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Errorf("bad requests left files: %v", files)
	}
}

func TestJobs_NotFoundAndMethods(t *testing.T) {
	srv := startWeb(t, fakeweb.Loop3())
	_, url := newManager(t, t.TempDir(), srv)
	for _, c := range []struct{ method, path string }{
		{"GET", "/crawl/crawl_000000000000"},
		{"DELETE", "/crawl/nope"},
		{"GET", "/crawl/nope/graph"},
	} {
		a := do(t, c.method, url+c.path, "")
		if a.code != http.StatusNotFound {
			t.Errorf("%s %s: %d, want 404", c.method, c.path, a.code)
		}
		if msg := errorOf(t, a); !strings.Contains(msg, "no such job") {
			t.Errorf("%s %s: %q", c.method, c.path, msg)
		}
	}
	for _, c := range []struct{ method, path, allow string }{
		{"PUT", "/crawl", "GET, POST"},
		{"DELETE", "/crawl", "GET, POST"},
		{"POST", "/crawl/crawl_1", "DELETE, GET"},
		{"POST", "/crawl/crawl_1/graph", "GET"},
	} {
		a := do(t, c.method, url+c.path, "")
		if a.code != http.StatusMethodNotAllowed || a.header.Get("Allow") != c.allow {
			t.Errorf("%s %s: %d, Allow %q; want 405, Allow %q", c.method, c.path, a.code, a.header.Get("Allow"), c.allow)
		}
	}
	if a := do(t, "GET", url+"/status", ""); a.code != http.StatusNotFound {
		t.Errorf("GET /status on the job API: %d", a.code)
	}
	if a := do(t, "GET", url+"/crawl/x?graph=maybe", ""); a.code != http.StatusNotFound {
		t.Errorf("unknown id with a bad query: %d, want 404", a.code)
	}
}

// slowWeb is a web whose crawl takes seconds: long enough to act on a
// running job.
func slowWeb() *fakeweb.Web {
	return fakeweb.New(fakeweb.Config{Hosts: 400, Seed: 21, Latency: 20 * time.Millisecond, RobotsDisallowEvery: -1})
}

func TestJobs_Delete_Stops(t *testing.T) {
	w := slowWeb()
	srv := startWeb(t, w)
	_, url := newManager(t, t.TempDir(), srv)
	id := createJob(t, url, `{"url": "`+w.Seed()+`", `+groundTruth+`, "concurrent_workers": 2}`)
	eventually(t, time.Minute, "the job's first pages", func() bool {
		j := getJob(t, url, id)
		return j.Status == serve.JobRunning && j.Progress != nil && j.Progress.PagesFetched >= 3
	})
	a := do(t, "DELETE", url+"/crawl/"+id, "")
	if a.code != http.StatusOK {
		t.Fatalf("DELETE: %d %s", a.code, a.body)
	}
	var got serve.JobAnswer
	decode(t, a, &got)
	if got.Job.Status != serve.JobStopped && got.Job.Status != serve.JobCompleted {
		t.Fatalf("after DELETE: %+v", got.Job)
	}
	if got.Job.Status == serve.JobCompleted {
		t.Skip("the job completed before the stop")
	}
	if got.Job.EndedAt == nil || got.Job.Metrics == nil || got.Job.Metrics.TerminationReason != crawl.ReasonSignal {
		t.Errorf("stopped job: %+v", got.Job)
	}
	// A second DELETE leaves a final job as it is, and says so: 409
	// and why, not the job as if it had been stopped or deleted.
	if a := do(t, "DELETE", url+"/crawl/"+id, ""); a.code != http.StatusConflict ||
		!strings.Contains(string(a.body), "job already ended: "+id+" is stopped; its store ") {
		t.Errorf("second DELETE: %d %s, want 409 and the reason", a.code, a.body)
	}
	var full fullJob
	a = do(t, "GET", url+"/crawl/"+id, "")
	if err := json.Unmarshal(a.body, &full); err != nil || full.Job.Status != serve.JobStopped || len(full.Job.Nodes) == 0 {
		t.Errorf("GET after the stop: %v %.300s", err, a.body)
	}
}

// TestJobs_Resume closes the manager mid-crawl, as weaver serve does on
// SIGTERM, opens a new one on the directory, and checks that the job
// resumes to the graph an uninterrupted crawl records.
func TestJobs_Resume(t *testing.T) {
	w := slowWeb()
	srv := startWeb(t, w)
	dir := t.TempDir()
	logs := &logSink{}
	m1, err := serve.NewJobManager(serve.JobOptions{Dir: dir, Base: jobBase(srv), Log: logs.log})
	if err != nil {
		t.Fatal(err)
	}
	url1 := newServer(t, serve.NewJobHandler(m1, "test")).URL
	id := createJob(t, url1, `{"url": "`+w.Seed()+`", `+groundTruth+`, "concurrent_workers": 2, "max_pages": 100000}`)
	eventually(t, time.Minute, "the job's first pages", func() bool {
		j := getJob(t, url1, id)
		return j.Progress != nil && j.Progress.PagesFetched >= 5
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := m1.Close(ctx); err != nil {
		t.Fatal(err)
	}
	j := getJob(t, url1, id)
	if j.Status == serve.JobCompleted {
		t.Skip("the job completed before the shutdown")
	}
	if j.Status != serve.JobQueued || j.Runs != 1 || j.EndedAt != nil {
		t.Fatalf("after shutdown: %+v", j)
	}
	if a := do(t, "POST", url1+"/crawl", `{"url": "http://a.test/"}`); a.code != http.StatusServiceUnavailable {
		t.Errorf("POST while closing: %d %s", a.code, a.body)
	}

	_, url2 := newManager(t, dir, srv)
	j = waitJob(t, url2, id, serve.JobCompleted)
	if j.Runs != 2 || j.Metrics == nil || j.Metrics.TerminationReason != crawl.ReasonQueueEmpty {
		t.Errorf("resumed job: %+v", j)
	}
	var full fullJob
	a := do(t, "GET", url2+"/crawl/"+id, "")
	if err := json.Unmarshal(a.body, &full); err != nil {
		t.Fatal(err)
	}
	storetest.SameGraph(t, edgeMap(full.Job.Edges), w.ExpectedEdges(10, fakeweb.DefaultExcluded))
	if int64(len(full.Job.Nodes)) < j.Metrics.NodesDiscovered {
		t.Errorf("%d nodes, %d discovered over the runs", len(full.Job.Nodes), j.Metrics.NodesDiscovered)
	}
}

// TestJobs_MaxPagesAcrossResume: max_pages counts the pages of every run.
func TestJobs_MaxPagesAcrossResume(t *testing.T) {
	w := slowWeb()
	srv := startWeb(t, w)
	dir := t.TempDir()
	m1, err := serve.NewJobManager(serve.JobOptions{Dir: dir, Base: jobBase(srv)})
	if err != nil {
		t.Fatal(err)
	}
	url1 := newServer(t, serve.NewJobHandler(m1, "test")).URL
	id := createJob(t, url1, `{"url": "`+w.Seed()+`", `+groundTruth+`, "concurrent_workers": 1, "max_pages": 40}`)
	eventually(t, time.Minute, "the job's first pages", func() bool {
		j := getJob(t, url1, id)
		return j.Status == serve.JobCompleted || (j.Progress != nil && j.Progress.PagesFetched >= 5)
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := m1.Close(ctx); err != nil {
		t.Fatal(err)
	}
	_, url2 := newManager(t, dir, srv)
	j := waitJob(t, url2, id, serve.JobCompleted)
	if n := j.Metrics.PagesFetched + j.Metrics.PagesFailed; n != 40 {
		t.Errorf("%d pages over %d runs, want 40", n, j.Runs)
	}
}

func TestJobs_Errors(t *testing.T) {
	srv := startWeb(t, fakeweb.Loop3())
	m, _ := newManager(t, t.TempDir(), srv)
	if _, err := m.Get("crawl_missing"); !errors.Is(err, serve.ErrNoJob) {
		t.Errorf("Get: %v", err)
	}
	if _, err := m.Stop(context.Background(), "crawl_missing"); !errors.Is(err, serve.ErrNoJob) {
		t.Errorf("Stop: %v", err)
	}
	if _, err := m.Create([]byte(`{}`)); !errors.Is(err, serve.ErrBadJob) {
		t.Errorf("Create: %v", err)
	}
}

func TestMergeResults(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	runs := []crawl.Result{
		{StartTime: t0, EndTime: t0.Add(10 * time.Second), PagesFetched: 10, PagesFailed: 0, AvgFetchTimeMS: 100,
			TerminationReason: "signal", ErrorsByType: map[string]int64{"dns": 1}, TotalNodes: 50},
		{StartTime: t0.Add(time.Hour), EndTime: t0.Add(time.Hour + 10*time.Second), PagesFetched: 20, PagesFailed: 10, AvgFetchTimeMS: 400,
			TerminationReason: "queue_empty", ErrorsByType: map[string]int64{"dns": 2, "timeout": 3}, TotalNodes: 90},
	}
	got := serve.MergeResults(runs)
	if !got.StartTime.Equal(t0) || !got.EndTime.Equal(t0.Add(time.Hour+10*time.Second)) {
		t.Errorf("times %v %v", got.StartTime, got.EndTime)
	}
	if got.PagesFetched != 30 || got.PagesFailed != 10 || got.TotalNodes != 90 || got.TerminationReason != "queue_empty" {
		t.Errorf("merged %+v", got)
	}
	if got.ErrorsByType["dns"] != 3 || got.ErrorsByType["timeout"] != 3 {
		t.Errorf("errors %v", got.ErrorsByType)
	}
	if got.PagesPerSecond != 1.5 { // 30 pages in 20 s of running
		t.Errorf("pages/s %v, want 1.5", got.PagesPerSecond)
	}
	if got.AvgFetchTimeMS != 325 { // (10×100 + 30×400) / 40
		t.Errorf("avg fetch %d ms, want 325", got.AvgFetchTimeMS)
	}
	if z := serve.MergeResults(nil); z.PagesFetched != 0 {
		t.Errorf("no runs: %+v", z)
	}
}

// TestJobs_CreateUnreadableDir: a job directory that cannot be read (here
// a file where the directory was) fails POST /crawl with a 500 naming the
// error; asking for another id, as for one already taken, looped for ever.
func TestJobs_CreateUnreadableDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "jobs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m, _ := newManager(t, dir, startWeb(t, fakeweb.Loop3()))
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := m.Create([]byte(`{"url": "http://a.test/"}`))
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a directory") {
			t.Errorf("Create: %v, want the directory's error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Create did not return")
	}
}
