package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/serve"
)

// loopFixture is a finished crawl of the three-host loop behind a status
// API: 3 pages (each host once: one fetch of a host per crawl, issue 27),
// 3 nodes, 3 edges of weight 1.
type loopFixture struct {
	c     *crawl.Crawler
	s     *kv.Store
	url   string
	stops atomic.Int32
}

func newLoopFixture(t *testing.T) *loopFixture {
	t.Helper()
	w := fakeweb.Loop3()
	srv := startWeb(t, w)
	s := storetest.MustOpen(t)
	c, err := crawl.New(testConfig(t, srv, s), s, crawl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Prepare([]string{w.Seed()}); err != nil {
		t.Fatal(err)
	}
	// Run again while entries are left: crawl's dispatcher can take the
	// result of a claim made before a page's commit for the final word and
	// end with queue_empty while the page queued more (reported; see
	// dispatch). The counters add up over the runs of one Crawler.
	for run := 0; ; run++ {
		res, err := c.Run(context.Background())
		if err != nil || run == 5 {
			t.Fatalf("loop crawl: %+v, %v", res, err)
		}
		if res.FrontierSize == 0 {
			break
		}
		t.Logf("run %d ended %s with %d entries queued", run, res.TerminationReason, res.FrontierSize)
	}
	if st := c.Status(); st.PagesFetched != 3 {
		t.Fatalf("loop crawl fetched %d pages, want 3", st.PagesFetched)
	}
	f := &loopFixture{c: c, s: s}
	f.url = newServer(t, serve.NewCrawlHandler(c, s, func() { f.stops.Add(1) }, "test")).URL
	return f
}

func TestCrawlHandler_Status(t *testing.T) {
	f := newLoopFixture(t)
	a := do(t, "GET", f.url+"/status", "")
	if a.code != http.StatusOK {
		t.Fatalf("status %d: %s", a.code, a.body)
	}
	var st serve.Status
	decode(t, a, &st)
	if !filepath.IsAbs(st.DBPath) || filepath.Base(st.DBPath) != filepath.Base(f.s.Path()) {
		t.Errorf("db_path %q, want the absolute path of %s", st.DBPath, f.s.Path())
	}
	if st.Version != "test" || st.Listen == "" {
		t.Errorf("version %q, listen %q", st.Version, st.Listen)
	}
	sum := st.Store
	if sum.Nodes != 3 || sum.CrawledNodes != 3 || sum.Edges != 3 || sum.TotalWeight != 3 || sum.FrontierSize != 0 || sum.Leases != 0 {
		t.Errorf("store: %+v", sum)
	}
	if sum.RobotsCached != 3 || sum.LastCrawl == nil || sum.Created.IsZero() || sum.NodesByStatus["crawled"] != 3 {
		t.Errorf("robots %d, last crawl %v, created %v, by status %v", sum.RobotsCached, sum.LastCrawl, sum.Created, sum.NodesByStatus)
	}
	want := []serve.HostWeight{
		{Host: "a.test", InWeight: 1, InHosts: 1, Status: "crawled"},
		{Host: "b.test", InWeight: 1, InHosts: 1, Status: "crawled"},
		{Host: "c.test", InWeight: 1, InHosts: 1, Status: "crawled"},
	}
	if len(sum.TopHosts) != 3 {
		t.Fatalf("top hosts: got %+v, want %+v", sum.TopHosts, want)
	}
	for i := range want {
		if sum.TopHosts[i] != want[i] {
			t.Errorf("top host %d: got %+v, want %+v", i, sum.TopHosts[i], want[i])
		}
	}
	c := st.Crawl
	if c == nil {
		t.Fatal("no live crawl status")
	}
	if c.Running || c.PagesFetched != 3 || c.TerminationReason != crawl.ReasonQueueEmpty || len(c.Workers) != 3 || c.Fetch.Count == 0 || c.FetchP50MS <= 0 {
		t.Errorf("crawl: %+v", c)
	}
}

// scrape parses GET /metrics with Prometheus's own text parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	a := do(t, "GET", url+"/metrics", "")
	if a.code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", a.code, a.body)
	}
	if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q, want the text format", ct)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(a.body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, a.body)
	}
	return fams
}

// value is the value of the family's metric whose labels include want.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, want ...string) float64 {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("metric %s missing", name)
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(want); i += 2 {
			found := false
			for _, l := range m.Label {
				if l.GetName() == want[i] && l.GetValue() == want[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		}
	}
	t.Fatalf("metric %s%v missing", name, want)
	return 0
}

func TestCrawlHandler_Metrics(t *testing.T) {
	f := newLoopFixture(t)
	fams := scrape(t, f.url)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"weaver_pages_fetched_total", nil, 3},
		{"weaver_pages_failed_total", nil, 0},
		{"weaver_errors_total", []string{"type", "timeout"}, 0},
		{"weaver_errors_total", []string{"type", "dns"}, 0},
		{"weaver_robots_fetched_total", nil, 3},
		{"weaver_frontier_size", nil, 0},
		{"weaver_leases", nil, 0},
		{"weaver_nodes", nil, 3},
		{"weaver_edges", nil, 3},
		{"weaver_edge_weight_total", nil, 3},
		{"weaver_workers", []string{"state", "stopped"}, 3},
		{"weaver_workers", []string{"state", "fetching"}, 0},
		{"weaver_crawl_running", nil, 0},
		{"weaver_paused", []string{"reason", "network_unreachable"}, 0},
		{"weaver_paused", []string{"reason", "disk_full"}, 0},
		{"weaver_pauses_total", []string{"reason", "network_unreachable"}, 0},
		{"weaver_pauses_total", []string{"reason", "disk_full"}, 0},
		{"weaver_paused_seconds_total", []string{"reason", "disk_full"}, 0},
		{"weaver_pages_pardoned_total", nil, 0},
	} {
		if got := value(t, fams, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v: got %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if ty := fams["weaver_pages_fetched_total"].GetType(); ty != dto.MetricType_COUNTER {
		t.Errorf("weaver_pages_fetched_total is a %v", ty)
	}
	h := fams["weaver_fetch_seconds"]
	if h == nil || h.GetType() != dto.MetricType_HISTOGRAM || len(h.Metric) != 1 {
		t.Fatalf("weaver_fetch_seconds: %v", h)
	}
	hist := h.Metric[0].Histogram
	// The text format adds the +Inf bucket, which holds every sample.
	if hist.GetSampleCount() < 3 || len(hist.Bucket) != len(crawl.FetchBuckets)+1 {
		t.Fatalf("histogram: count %d, %d buckets, want ≥ 3 and %d", hist.GetSampleCount(), len(hist.Bucket), len(crawl.FetchBuckets)+1)
	}
	if inf := hist.Bucket[len(hist.Bucket)-1]; !math.IsInf(inf.GetUpperBound(), 1) || inf.GetCumulativeCount() != hist.GetSampleCount() {
		t.Errorf("+Inf bucket: le %v count %d, want %d", inf.GetUpperBound(), inf.GetCumulativeCount(), hist.GetSampleCount())
	}
	for i, b := range hist.Bucket[:len(crawl.FetchBuckets)] {
		if b.GetUpperBound() != crawl.FetchBuckets[i] || (i > 0 && b.GetCumulativeCount() < hist.Bucket[i-1].GetCumulativeCount()) {
			t.Errorf("bucket %d: le %v count %d", i, b.GetUpperBound(), b.GetCumulativeCount())
		}
	}
	if _, ok := fams["go_goroutines"]; !ok {
		t.Error("no Go runtime metrics")
	}
}

func TestCrawlHandler_Graph(t *testing.T) {
	f := newLoopFixture(t)
	t.Run("json", func(t *testing.T) {
		for _, q := range []string{"", "?format=json", "?format=JSON&min_weight=1&crawled_only=true"} {
			a := do(t, "GET", f.url+"/graph"+q, "")
			if a.code != http.StatusOK || !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
				t.Fatalf("%s: %d %s", q, a.code, a.header.Get("Content-Type"))
			}
			var g struct {
				Nodes []json.RawMessage `json:"nodes"`
				Edges []json.RawMessage `json:"edges"`
			}
			if err := json.Unmarshal(a.body, &g); err != nil || len(g.Nodes) != 3 || len(g.Edges) != 3 {
				t.Errorf("%s: %d nodes, %d edges, %v", q, len(g.Nodes), len(g.Edges), err)
			}
		}
	})
	t.Run("min_weight", func(t *testing.T) {
		a := do(t, "GET", f.url+"/graph?format=json&min_weight=3", "")
		var g struct {
			Edges []json.RawMessage `json:"edges"`
		}
		if err := json.Unmarshal(a.body, &g); err != nil || len(g.Edges) != 0 {
			t.Errorf("min_weight=3 kept %d edges (%v)", len(g.Edges), err)
		}
	})
	t.Run("graphml", func(t *testing.T) {
		a := do(t, "GET", f.url+"/graph?format=graphml", "")
		if a.code != http.StatusOK || !strings.HasPrefix(a.header.Get("Content-Type"), "application/graphml+xml") {
			t.Fatalf("%d %s", a.code, a.header.Get("Content-Type"))
		}
		var doc struct {
			Graph struct {
				Nodes []struct{} `xml:"node"`
				Edges []struct{} `xml:"edge"`
			} `xml:"graph"`
		}
		if err := xml.Unmarshal(a.body, &doc); err != nil || len(doc.Graph.Nodes) != 3 || len(doc.Graph.Edges) != 3 {
			t.Errorf("graphml: %d nodes, %d edges, %v", len(doc.Graph.Nodes), len(doc.Graph.Edges), err)
		}
	})
	t.Run("dot", func(t *testing.T) {
		a := do(t, "GET", f.url+"/graph?format=dot", "")
		if a.code != http.StatusOK || !strings.HasPrefix(a.header.Get("Content-Type"), "text/vnd.graphviz") {
			t.Fatalf("%d %s", a.code, a.header.Get("Content-Type"))
		}
		if !bytes.Contains(a.body, []byte("digraph")) || bytes.Count(a.body, []byte("->")) != 3 {
			t.Errorf("dot:\n%s", a.body)
		}
	})
	t.Run("errors", func(t *testing.T) {
		for q, want := range map[string]string{
			"?format=svg":             "svg",
			"?format=dot&colour=red":  "colour",
			"?min_weight=heavy":       "min_weight",
			"?crawled_only=sometimes": "crawled_only",
			"?domains=2":              "domains",
		} {
			a := do(t, "GET", f.url+"/graph"+q, "")
			if a.code != http.StatusBadRequest {
				t.Errorf("%s: status %d, want 400", q, a.code)
				continue
			}
			if msg := errorOf(t, a); !strings.Contains(msg, want) {
				t.Errorf("%s: message %q does not name %q", q, msg, want)
			}
		}
	})
}

func TestCrawlHandler_Snapshot(t *testing.T) {
	f := newLoopFixture(t)
	a := do(t, "GET", f.url+"/snapshot", "")
	if a.code != http.StatusOK || a.header.Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("%d %s", a.code, a.header.Get("Content-Type"))
	}
	if n, _ := strconv.Atoi(a.header.Get("Content-Length")); n != len(a.body) || n == 0 {
		t.Errorf("Content-Length %s, body %d bytes", a.header.Get("Content-Length"), len(a.body))
	}
	path := filepath.Join(t.TempDir(), "copy.bolt")
	if err := os.WriteFile(path, a.body, 0o600); err != nil {
		t.Fatal(err)
	}
	cp, err := kv.Open(path, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("the snapshot does not open: %v", err)
	}
	defer cp.Close()
	if err := storetest.CheckAll(cp); err != nil {
		t.Error(err)
	}
	cp.View(func(tx *kv.Tx) error {
		if c := graph.GetCounts(tx); c.Nodes != 3 || c.Edges != 3 || c.Weight != 3 {
			t.Errorf("snapshot counts %+v", c)
		}
		return nil
	})
}

func TestCrawlHandler_Seeds(t *testing.T) {
	f := newLoopFixture(t)
	a := do(t, "POST", f.url+"/seeds", `{"urls": ["http://new.test/", "https://other.test/path"]}`)
	if a.code != http.StatusOK {
		t.Fatalf("%d %s", a.code, a.body)
	}
	var got serve.SeedsAnswer
	decode(t, a, &got)
	if got.Queued != 2 {
		t.Errorf("queued %d, want 2", got.Queued)
	}
	a = do(t, "POST", f.url+"/seeds", `{"url": "http://third.test/"}`)
	decode(t, a, &got)
	if a.code != http.StatusOK || got.Queued != 1 {
		t.Errorf("single url: %d, queued %d", a.code, got.Queued)
	}
	// new.test is already queued at depth 0: not queued twice.
	a = do(t, "POST", f.url+"/seeds", `{"urls": ["http://new.test/"]}`)
	decode(t, a, &got)
	if got.Queued != 0 || len(got.Seeds) != 1 || got.Seeds[0].Queued || got.Seeds[0].Reason != "already queued at depth 0" || got.Seeds[0].Host != "new.test" {
		t.Errorf("a seed already queued: %s; want queued 0 and the reason", a.body)
	}
	f.s.View(func(tx *kv.Tx) error {
		if n := frontier.Len(tx); n != 3 {
			t.Errorf("frontier holds %d entries, want 3", n)
		}
		if _, ok := graph.Lookup(tx, "other.test"); !ok {
			t.Error("other.test is not a node")
		}
		return nil
	})
}

func TestCrawlHandler_Seeds_Errors(t *testing.T) {
	f := newLoopFixture(t)
	cases := []struct {
		name, body string
		code       int
		want       string
	}{
		{"empty", ``, 400, "empty body"},
		{"not json", `{"urls": [`, 400, "not a valid JSON"},
		{"array", `["http://a.test/"]`, 400, "not a valid JSON"},
		{"unknown field", `{"seeds": ["http://a.test/"]}`, 400, `"seeds"`},
		{"wrong type", `{"urls": "http://a.test/"}`, 400, `"urls"`},
		{"no urls", `{"urls": []}`, 400, "no seed"},
		{"ftp", `{"urls": ["http://ok.test/", "ftp://files.test/"]}`, 400, "ftp://files.test/"},
		{"relative", `{"url": "/just/a/path"}`, 400, "/just/a/path"},
		{"bad host", `{"url": "http://exa mple.test/"}`, 400, "exa mple.test"},
		{"excluded", `{"url": "https://www.facebook.com/"}`, 400, "exclude"},
		{"trailing", `{"url": "http://a.test/"} {}`, 400, "trailing"},
		{"too large", `{"urls": ["http://a.test/` + strings.Repeat("x", serve.MaxBodyBytes) + `"]}`, 413, "over"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := do(t, "POST", f.url+"/seeds", tc.body)
			if a.code != tc.code {
				t.Fatalf("status %d, want %d: %s", a.code, tc.code, a.body)
			}
			if msg := errorOf(t, a); !strings.Contains(msg, tc.want) {
				t.Errorf("message %q does not say %q", msg, tc.want)
			}
		})
	}
	f.s.View(func(tx *kv.Tx) error {
		if n := frontier.Len(tx); n != 0 {
			t.Errorf("bad requests queued %d entries", n)
		}
		return nil
	})
}

func TestCrawlHandler_Stop(t *testing.T) {
	f := newLoopFixture(t)
	a := do(t, "POST", f.url+"/stop", "")
	if a.code != http.StatusAccepted || f.stops.Load() != 1 {
		t.Fatalf("%d %s, stop called %d times", a.code, a.body, f.stops.Load())
	}
	var got serve.StopAnswer
	decode(t, a, &got)
	if !got.Stopping {
		t.Errorf("answer %s", a.body)
	}
}

// TestCrawlHandler_Stop_Running stops a real running crawl through the
// API: Run ends with termination reason "signal".
func TestCrawlHandler_Stop_Running(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 2, Latency: 20 * time.Millisecond, RobotsDisallowEvery: -1})
	srv := startWeb(t, w)
	s := storetest.MustOpen(t)
	cfg := testConfig(t, srv, s)
	cfg.MaxCrawlsPerNode, cfg.MaxDepth, cfg.ConcurrentWorkers = 1, 0, 2
	c, err := crawl.New(cfg, s, crawl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Prepare([]string{w.Seed()}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := newServer(t, serve.NewCrawlHandler(c, s, cancel, "test")).URL
	done := make(chan crawl.Result, 1)
	go func() {
		res, _ := c.Run(ctx)
		done <- res
	}()
	eventually(t, time.Minute, "the crawl's first pages", func() bool {
		var st serve.Status
		decode(t, do(t, "GET", url+"/status", ""), &st)
		return st.Crawl.PagesFetched >= 3
	})
	if a := do(t, "POST", url+"/stop", ""); a.code != http.StatusAccepted {
		t.Fatalf("%d %s", a.code, a.body)
	}
	select {
	case res := <-done:
		if res.TerminationReason != crawl.ReasonSignal && res.TerminationReason != crawl.ReasonQueueEmpty {
			t.Errorf("termination %q", res.TerminationReason)
		}
		if res.TerminationReason == crawl.ReasonQueueEmpty {
			t.Log("the crawl ended before the stop: it proved little")
		}
	case <-time.After(time.Minute):
		t.Fatal("the crawl did not stop")
	}
}

func TestCrawlHandler_MethodsAndPaths(t *testing.T) {
	f := newLoopFixture(t)
	for _, c := range []struct{ method, path, allow string }{
		{"POST", "/status", "GET"},
		{"DELETE", "/metrics", "GET"},
		{"PUT", "/graph", "GET"},
		{"POST", "/snapshot", "GET"},
		{"GET", "/seeds", "POST"},
		{"GET", "/stop", "POST"},
	} {
		a := do(t, c.method, f.url+c.path, "")
		if a.code != http.StatusMethodNotAllowed || a.header.Get("Allow") != c.allow {
			t.Errorf("%s %s: %d, Allow %q; want 405, Allow %q", c.method, c.path, a.code, a.header.Get("Allow"), c.allow)
		}
		errorOf(t, a)
	}
	a := do(t, "GET", f.url+"/nowhere", "")
	if a.code != http.StatusNotFound {
		t.Errorf("GET /nowhere: %d", a.code)
	}
	if msg := errorOf(t, a); !strings.Contains(msg, "/nowhere") {
		t.Errorf("404 message %q", msg)
	}
	if f.stops.Load() != 0 {
		t.Error("GET /stop stopped the crawl")
	}
}
