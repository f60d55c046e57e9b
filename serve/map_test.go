package serve_test

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/layout"
	"github.com/weaver-crawler/weaver/serve"
)

// mapData is GET map/data's answer.
type mapData struct {
	Cursor string `json:"cursor"`
	Full   bool   `json:"full"`
	Live   bool   `json:"live"`
	NextMS int64  `json:"next_ms"`
	Total  struct {
		Nodes uint64 `json:"nodes"`
		Edges uint64 `json:"edges"`
	} `json:"total"`
	Nodes []struct {
		ID         uint64 `json:"id"`
		Host       string `json:"host"`
		Domain     string `json:"domain"`
		Title      string `json:"title"`
		Status     string `json:"status"`
		HTTPStatus int    `json:"http_status"`
		CrawlCount int    `json:"crawl_count"`
		Depth      int    `json:"depth"`
		// The deeper host graph's fields (issue 20).
		Canonical    string `json:"canonical"`
		Robots       string `json:"robots"`
		MirrorOf     uint64 `json:"mirror_of"`
		PagesFetched int    `json:"pages_fetched"`
		RenderMS     int64  `json:"render_ms"`
		// The store's layout, when it holds one.
		Community *uint32  `json:"community"`
		X         *float64 `json:"x"`
		Y         *float64 `json:"y"`
	} `json:"nodes"`
	Edges [][3]uint64 `json:"edges"`
}

func getMapData(t *testing.T, url string) mapData {
	t.Helper()
	a := do(t, "GET", url, "")
	if a.code != http.StatusOK || !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET %s: %d %s %s", url, a.code, a.header.Get("Content-Type"), a.body)
	}
	var d mapData
	decode(t, a, &d)
	return d
}

func (d mapData) hosts() map[string]bool {
	out := map[string]bool{}
	for _, n := range d.Nodes {
		out[n.Host] = true
	}
	return out
}

// TestCrawlHandler_MapPage: GET / is the map page, polling map/data, with
// a policy that lets only its own script run.
func TestCrawlHandler_MapPage(t *testing.T) {
	f := newLoopFixture(t)
	a := do(t, "GET", f.url+"/", "")
	if a.code != http.StatusOK || a.header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /: %d %s", a.code, a.header.Get("Content-Type"))
	}
	body := string(a.body)
	for _, want := range []string{`<div id="stats"`, `{"live":true,"data":"map/data","graph":"graph"}`, "weaver map: weaver.bolt"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	csp := a.header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'sha256-") || !strings.Contains(csp, "worker-src blob:") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	if a := do(t, "POST", f.url+"/", ""); a.code != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d, want 405", a.code)
	}
	if a := do(t, "GET", f.url+"/index.html", ""); a.code != http.StatusNotFound {
		t.Errorf("GET /index.html: %d, want 404 (only / is the page)", a.code)
	}
}

// TestCrawlHandler_MapData_Delta: without since the answer is the whole
// graph; with the cursor it holds only what was written since, and
// written later than the cursor always comes.
func TestCrawlHandler_MapData_Delta(t *testing.T) {
	f := newLoopFixture(t)
	full := getMapData(t, f.url+"/map/data")
	if !full.Full || len(full.Nodes) != 3 || len(full.Edges) != 3 || full.Total.Nodes != 3 || full.Total.Edges != 3 {
		t.Fatalf("full answer: full %t, %d nodes, %d edges, total %+v", full.Full, len(full.Nodes), len(full.Edges), full.Total)
	}
	if full.Live {
		t.Error("live is true for a crawl that ended")
	}
	if full.NextMS < 1000 {
		t.Errorf("next_ms %d, want at least 1000", full.NextMS)
	}
	for _, e := range full.Edges {
		if e[2] != 1 {
			t.Errorf("edge %v: weight %d, want 1", e, e[2])
		}
	}
	for _, n := range full.Nodes {
		if n.Status != "crawled" || n.Title == "" || n.CrawlCount != 1 || n.HTTPStatus != 200 || n.Domain == "" {
			t.Errorf("node %+v", n)
		}
	}
	cursor, err := strconv.ParseInt(full.Cursor, 10, 64)
	if err != nil || cursor <= 0 {
		t.Fatalf("cursor %q", full.Cursor)
	}

	// Nothing written since: at most what was stamped at the cursor itself.
	same := getMapData(t, f.url+"/map/data?since="+full.Cursor)
	if same.Full || len(same.Nodes) >= 3 || len(same.Edges) >= 3 || same.Cursor != full.Cursor {
		t.Errorf("unchanged store: full %t, %d nodes, %d edges, cursor %s (was %s)", same.Full, len(same.Nodes), len(same.Edges), same.Cursor, full.Cursor)
	}

	// A page commit a second later: a new host linked from an old one.
	later := time.Unix(0, cursor).Add(time.Second)
	var from uint64
	err = f.s.Update(func(tx *kv.Tx) error {
		src := full.Nodes[0]
		from = src.ID
		n, _, err := graph.Ensure(tx, "new.example.org", "http", later)
		if err != nil {
			return err
		}
		return graph.AddEdge(tx, src.ID, n.ID, 1, later)
	})
	if err != nil {
		t.Fatal(err)
	}
	// The answer holds the new host and edge, and again what was stamped
	// at the cursor (same), nothing else.
	d := getMapData(t, f.url+"/map/data?since="+full.Cursor)
	if d.Full || !d.hosts()["new.example.org"] || len(d.Nodes) != len(same.Nodes)+1 {
		t.Errorf("after a commit: nodes %v, want new.example.org and %v", d.hosts(), same.hosts())
	}
	newEdge := false
	for _, e := range d.Edges {
		newEdge = newEdge || e[0] == from && e[2] == 1
	}
	if !newEdge || len(d.Edges) != len(same.Edges)+1 {
		t.Errorf("after a commit: edges %v, want the new one and %v", d.Edges, same.Edges)
	}
	if d.Total.Nodes != 4 || d.Total.Edges != 4 {
		t.Errorf("total %+v, want 4 nodes and 4 edges", d.Total)
	}
	if want := strconv.FormatInt(later.UnixNano(), 10); d.Cursor != want {
		t.Errorf("cursor %s, want %s (the commit's time)", d.Cursor, want)
	}
	// A weight that grows comes again with its new weight.
	again := later.Add(time.Second)
	err = f.s.Update(func(tx *kv.Tx) error {
		return graph.AddEdge(tx, full.Edges[0][0], full.Edges[0][1], 1, again)
	})
	if err != nil {
		t.Fatal(err)
	}
	d2 := getMapData(t, f.url+"/map/data?since="+d.Cursor)
	found := false
	for _, e := range d2.Edges {
		if e[0] == full.Edges[0][0] && e[1] == full.Edges[0][1] {
			found = e[2] == 2
		}
	}
	if !found {
		t.Errorf("a heavier edge: %v, want %v with weight 2", d2.Edges, full.Edges[0][:2])
	}
}

// TestCrawlHandler_MapData_Layout: once the store holds a layout (weaver
// layout), every host of it comes with its community and position, in
// the whole graph and in an update; a host found since has none, and a
// store without a layout gives none.
func TestCrawlHandler_MapData_Layout(t *testing.T) {
	f := newLoopFixture(t)
	for _, n := range getMapData(t, f.url+"/map/data").Nodes {
		if n.Community != nil || n.X != nil || n.Y != nil {
			t.Errorf("no layout stored: node %s has community %v, x %v, y %v", n.Host, n.Community, n.X, n.Y)
		}
	}
	var st *layout.Stored
	err := f.s.Update(func(tx *kv.Tx) error {
		var err error
		if st, err = layout.ComputeStored(context.Background(), tx, layout.Options{}); err != nil {
			return err
		}
		return layout.Save(tx, st)
	})
	if err != nil {
		t.Fatal(err)
	}
	check := func(d mapData, what string) {
		t.Helper()
		laidOut := 0
		for _, n := range d.Nodes {
			c, x, y, ok := st.Lookup(n.ID)
			if ok {
				laidOut++
			}
			switch {
			case !ok && (n.Community != nil || n.X != nil || n.Y != nil):
				t.Errorf("%s: node %s, not laid out, has community %v, x %v, y %v", what, n.Host, n.Community, n.X, n.Y)
			case ok && (n.Community == nil || n.X == nil || n.Y == nil):
				t.Errorf("%s: node %s lacks its layout (%d, %g, %g)", what, n.Host, c, x, y)
			case ok && (*n.Community != c || *n.X != x || *n.Y != y):
				t.Errorf("%s: node %s at (%d, %g, %g), want the stored (%d, %g, %g)", what, n.Host, *n.Community, *n.X, *n.Y, c, x, y)
			}
		}
		if laidOut == 0 {
			t.Errorf("%s: no node of the layout in %v", what, d.hosts())
		}
	}
	full := getMapData(t, f.url+"/map/data")
	if len(full.Nodes) != 3 {
		t.Fatalf("%d nodes, want 3", len(full.Nodes))
	}
	check(full, "the whole graph")
	cursor, err := strconv.ParseInt(full.Cursor, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	later := time.Unix(0, cursor).Add(time.Second)
	err = f.s.Update(func(tx *kv.Tx) error {
		n, _, err := graph.Ensure(tx, "new.example.org", "http", later)
		if err != nil {
			return err
		}
		return graph.AddEdge(tx, full.Nodes[2].ID, n.ID, 1, later)
	})
	if err != nil {
		t.Fatal(err)
	}
	d := getMapData(t, f.url+"/map/data?since="+full.Cursor)
	if !d.hosts()["new.example.org"] {
		t.Fatalf("the update lacks the new host: %v", d.hosts())
	}
	check(d, "an update")
}

func TestCrawlHandler_MapData_Errors(t *testing.T) {
	f := newLoopFixture(t)
	for q, want := range map[string]string{
		"?since=yesterday": "since",
		"?since=-5":        "since",
		"?from=3":          "from",
	} {
		a := do(t, "GET", f.url+"/map/data"+q, "")
		if a.code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", q, a.code)
			continue
		}
		if msg := errorOf(t, a); !strings.Contains(msg, want) {
			t.Errorf("%s: %q does not name %q", q, msg, want)
		}
	}
	if a := do(t, "POST", f.url+"/map/data", ""); a.code != http.StatusMethodNotAllowed {
		t.Errorf("POST /map/data: %d, want 405", a.code)
	}
}

// TestCrawlHandler_MapData_Big: an answer larger than what is built in
// memory goes through a spool file and arrives whole; the file is gone.
func TestCrawlHandler_MapData_Big(t *testing.T) {
	f := newLoopFixture(t)
	now := time.Now()
	title := strings.Repeat("a long title ", 40)
	err := f.s.Update(func(tx *kv.Tx) error {
		for i := range 12_000 {
			n, _, err := graph.Ensure(tx, "host-"+strconv.Itoa(i)+".example.net", "http", now)
			if err != nil {
				return err
			}
			n.Title = title
			if err := graph.Put(tx, &n); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	d := getMapData(t, f.url+"/map/data")
	if len(d.Nodes) != 12_003 || d.Total.Nodes != 12_003 {
		t.Fatalf("%d nodes, total %d, want 12,003", len(d.Nodes), d.Total.Nodes)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(f.s.Path()), ".*download*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	// With the disk all but full, the big answer is refused (it would be
	// spooled) and a small update still comes (from memory).
	err = f.s.Update(func(tx *kv.Tx) error {
		_, _, err := graph.Ensure(tx, "late.example.net", "http", now.Add(time.Second))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	serve.SetFreeSpace(t, func(string) (int64, error) { return 1 << 20, nil })
	if a := do(t, "GET", f.url+"/map/data", ""); a.code != http.StatusInsufficientStorage {
		t.Errorf("the whole graph on a full disk: %d, want 507", a.code)
	}
	u := getMapData(t, f.url+"/map/data?since="+strconv.FormatInt(now.Add(time.Second).UnixNano(), 10))
	if u.Full || len(u.Nodes) != 1 || !u.hosts()["late.example.net"] {
		t.Errorf("an update on a full disk: full %t, nodes %v", u.Full, u.hosts())
	}
}

// TestJobHandler_Maps: GET / lists the jobs with a link to each map, and a
// finished job's map data is its whole graph, not live.
func TestJobHandler_Maps(t *testing.T) {
	w := fakeweb.Loop3()
	srv := startWeb(t, w)
	m, url := newManager(t, t.TempDir(), srv)

	a := do(t, "GET", url+"/", "")
	if a.code != http.StatusOK || !strings.Contains(string(a.body), "No jobs yet") {
		t.Fatalf("GET / without jobs: %d %s", a.code, a.body)
	}
	a = do(t, "POST", url+"/crawl", `{"url": "`+w.Seed()+`", "max_depth": 0, "politeness_delay_ms": 0}`)
	var created serve.CreatedAnswer
	decode(t, a, &created)
	eventually(t, time.Minute, "the job to complete", func() bool {
		j, err := m.Get(created.JobID)
		return err == nil && j.Status == serve.JobCompleted
	})
	a = do(t, "GET", url+"/", "")
	if a.code != http.StatusOK || !strings.Contains(string(a.body), `href="crawl/`+created.JobID+`/map"`) {
		t.Errorf("GET /: %d, no link to the job's map:\n%s", a.code, a.body)
	}
	a = do(t, "GET", url+"/crawl/"+created.JobID+"/map", "")
	if a.code != http.StatusOK || !strings.Contains(string(a.body), `"data":"map/data"`) {
		t.Errorf("GET /crawl/{id}/map: %d", a.code)
	}
	d := getMapData(t, url+"/crawl/"+created.JobID+"/map/data")
	if !d.Full || d.Live || len(d.Nodes) != 3 || len(d.Edges) != 3 {
		t.Errorf("job map data: full %t, live %t, %d nodes, %d edges", d.Full, d.Live, len(d.Nodes), len(d.Edges))
	}
	for _, path := range []string{"/crawl/crawl_nothere/map", "/crawl/crawl_nothere/map/data"} {
		if a := do(t, "GET", url+path, ""); a.code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, a.code)
		}
	}
}

// TestCrawlHandler_MapData_Ranks: with ranks=true the answer carries the
// PageRank and harmonic centrality of every host, kept between requests.
func TestCrawlHandler_MapData_Ranks(t *testing.T) {
	f := newLoopFixture(t)
	var d struct {
		Nodes []struct {
			ID uint64 `json:"id"`
		} `json:"nodes"`
		Ranks [][3]float64 `json:"ranks"`
	}
	a := do(t, "GET", f.url+"/map/data?ranks=true", "")
	if err := json.Unmarshal(a.body, &d); err != nil || a.code != http.StatusOK {
		t.Fatalf("%d %s: %v", a.code, a.body, err)
	}
	if len(d.Ranks) != 3 {
		t.Fatalf("ranks %v, want 3", d.Ranks)
	}
	sum := 0.0
	for _, r := range d.Ranks {
		// The loop a → b → c → a, weights 2: every host ranks 1/3 and is
		// reached by one host in one hop and one in two.
		if math.Abs(r[1]-1.0/3) > 1e-5 || math.Abs(r[2]-1.5) > 1e-9 {
			t.Errorf("host %v: pagerank %v, harmonic %v; want 1/3 and 1.5", r[0], r[1], r[2])
		}
		sum += r[1]
	}
	if math.Abs(sum-1) > 1e-5 {
		t.Errorf("PageRank sums to %v", sum)
	}
	if a := do(t, "GET", f.url+"/map/data", ""); strings.Contains(string(a.body), `"ranks"`) {
		t.Error("ranks without ranks=true")
	}
	if a := do(t, "GET", f.url+"/map/data?ranks=maybe", ""); a.code != http.StatusBadRequest {
		t.Errorf("ranks=maybe: %d, want 400", a.code)
	}
}

// BenchmarkMapData_20kHosts: what one poll of the map costs the crawl's
// process on a store of 20,000 hosts and 200,000 links: the whole graph
// (a page's first load), and an update when nothing changed (every poll
// after it scans the store all the same).
//
//	go test ./serve -run '^$' -bench MapData -benchtime 20x
func BenchmarkMapData_20kHosts(b *testing.B) {
	w := fakeweb.Loop3()
	srv, err := w.Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	s := storetest.MustOpen(b)
	cfg := crawl.Defaults()
	cfg.DBPath, cfg.MetricsPath = s.Path(), filepath.Join(b.TempDir(), "metrics.log")
	cfg.ConnectTo, cfg.AllowPrivateNetworks, cfg.Quiet = []string{srv.ConnectTo()}, true, true
	c, err := crawl.New(cfg, s, crawl.Options{})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	err = s.Update(func(tx *kv.Tx) error {
		ids := make([]uint64, 20_000)
		for i := range ids {
			n, _, err := graph.Ensure(tx, "host-"+strconv.Itoa(i)+".example.net", "http", now)
			if err != nil {
				return err
			}
			n.Title, n.Status, n.HTTPStatus, n.CrawlCount = "Host "+strconv.Itoa(i), graph.StatusCrawled, 200, 1
			if err := graph.Put(tx, &n); err != nil {
				return err
			}
			ids[i] = n.ID
		}
		for i := range ids {
			for k := 1; k <= 10; k++ {
				if err := graph.AddEdge(tx, ids[i], ids[(i+1+(i*7+k*k*13)%(len(ids)-1))%len(ids)], uint64(1+k%3), now); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(serve.NewCrawlHandler(c, s, func() {}, "bench"))
	defer ts.Close()
	get := func(url string) []byte {
		resp, err := http.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %d %v", url, resp.StatusCode, err)
		}
		return body
	}
	var full struct {
		Cursor string `json:"cursor"`
		NextMS int64  `json:"next_ms"`
	}
	if err := json.Unmarshal(get(ts.URL+"/map/data"), &full); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, query string }{
		{"whole-graph", ""},
		{"update-nothing-new", "?since=" + strconv.FormatInt(now.Add(time.Second).UnixNano(), 10)},
	} {
		b.Run(c.name, func(b *testing.B) {
			var size int
			for b.Loop() {
				size = len(get(ts.URL + "/map/data" + c.query))
			}
			b.ReportMetric(float64(size), "bytes")
		})
	}
}
