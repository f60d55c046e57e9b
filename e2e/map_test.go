package e2e_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/png"
	"maps"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/serve"
)

var updateMapPNG = flag.Bool("update-map-png", false, "write docs/map.png from TestMap_ExportHTML (make map-png)")

// storeCounts is what a running crawl's /status says its store holds.
func storeCounts(a api, bearer string) (nodes, edges int) {
	a.t.Helper()
	var st serve.Status
	if bearer == "" {
		a.json("GET", "/status", "", http.StatusOK, &st)
	} else {
		code, body, _ := request(a.t, nil, "GET", a.base+"/status", map[string]string{"Authorization": "Bearer " + bearer}, "")
		if code != http.StatusOK {
			a.t.Fatalf("GET /status with the token: %d %s", code, body)
		}
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			a.t.Fatal(err)
		}
	}
	return int(st.Store.Nodes), int(st.Store.Edges)
}

// TestMap_LiveCrawl: the map page of `weaver crawl --listen` shows the
// store's graph, node for node, and grows with the crawl by updates, never
// a reload.
//
// One worker crawls a slow web (250 ms a page). The seed's first link is
// slow-a.drip.test, which answers a byte a second: it holds the only
// worker until the 10 s timeout, so the graph stands still while the map
// must catch up with it exactly; then the crawl goes on and the map must
// grow.
func TestMap_LiveCrawl(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	w := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 11, Latency: 250 * time.Millisecond, RobotsDisallowEvery: -1,
		Faults: map[string]fakeweb.Fault{"slow-a.drip.test": fakeweb.SlowDrip}})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	p := start(t, dir, crawlArgs(srv, db, "--listen", "127.0.0.1:0", "--workers", "1", "--ignore-robots",
		"--max-crawls-per-node", "1", "--timeout", "10s", "--retries", "0", w.Seed())...)
	a := listenAPI(t, p, db)
	b.open(a.base+"/", "#stats")

	// While the worker waits for the slow host, the map equals the store.
	var nodes, edges int
	var s stats
	deadline := time.Now().Add(9 * time.Second)
	for {
		nodes, edges = storeCounts(a, "")
		s = b.stats()
		if nodes > 1 && s.Nodes == nodes && s.Edges == edges {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the map shows %v; the store holds %d nodes and %d edges", s, nodes, edges)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if s.State != "live" {
		t.Errorf("state %q, want live", s.State)
	}
	t.Logf("stalled crawl: the map shows %v, the store %d nodes and %d edges", s, nodes, edges)

	// Then it grows, update by update.
	seen := []int{s.Nodes}
	deadline = time.Now().Add(45 * time.Second)
	for len(seen) < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("the map did not grow: node counts %v, store %d nodes", seen, nodes)
		}
		time.Sleep(300 * time.Millisecond)
		s = b.stats()
		nodes, _ = storeCounts(a, "")
		if s.Nodes > nodes {
			t.Fatalf("the map shows %d nodes, more than the store's %d", s.Nodes, nodes)
		}
		if last := seen[len(seen)-1]; s.Nodes < last {
			t.Fatalf("the map shrank from %d to %d nodes", last, s.Nodes)
		} else if s.Nodes > last {
			seen = append(seen, s.Nodes)
		}
	}
	if s.FullLoads != 1 {
		t.Errorf("%d full loads, want 1: the map must grow by updates", s.FullLoads)
	}
	t.Logf("the map grew: %v nodes (%v)", seen, s)
	// A small crawl's hosts are drawn small: every one that fits is named
	// all the same, not only the biggest (issue 51: one label of 50).
	var labels int
	b.eval(`weaverMap.labelBoxes().length`, &labels)
	t.Logf("%d labels on the map of %d hosts", labels, s.Nodes)
	if want := min(s.Nodes/2, 8); labels < want {
		t.Errorf("%d labels on a map of %d hosts, want at least %d", labels, s.Nodes, want)
	}
}

// TestMap_ExportHTML: weaver export --html writes one file that a browser
// opens from disk, with no server, and that shows every host of the
// store; its labels do not overlap; clicking a host shows its title; the
// search finds a host. It
// takes the screenshot of the README (docs/map.png, with
// -update-map-png).
func TestMap_ExportHTML(t *testing.T) {
	b := newBrowser(t)
	// make demo's web: topics of sites, as the real web is made.
	w := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 1, Topics: 8})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	if r := fixture(t, dir, crawlArgs(srv, db, "--max-depth", "0", w.Seed())...); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s", r.code, r.stderr)
	}
	page := filepath.Join(dir, "map.html")
	if r := weaver(t, dir, "export", "--db", db, "--html", page); r.code != 0 {
		t.Fatalf("export --html: exit %d\n%s", r.code, r.stderr)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, remote := range []string{`src="http`, `href="http`, `src="//`, "@import"} {
		if bytes.Contains(html, []byte(remote)) {
			t.Errorf("map.html refers to %s...: it must need no network", remote)
		}
	}
	ns, es := nodes(t, db), edges(t, db)

	b.open("file://"+page, "#stats")
	b.waitFor("the graph", `document.getElementById('stats').dataset.state === 'done'`, 30*time.Second)
	s := b.stats()
	if s.Nodes != len(ns) || s.Edges != len(es) {
		t.Errorf("the map shows %v; the store holds %d nodes and %d edges", s, len(ns), len(es))
	}
	var hosts []string
	b.eval(`weaverMap.graph.mapNodes((k, a) => a.host)`, &hosts)
	for h := range ns {
		if !slices.Contains(hosts, h) {
			t.Errorf("host %s of the store is not on the map", h)
		}
	}
	if *updateMapPNG {
		// The picture: the layout at rest.
		b.waitFor("the layout to settle", `!weaverMap.layoutRunning()`, 40*time.Second)
	}

	// The labels drawn, at load and zoomed in: none over another, and
	// the text in each box (issue 40: the labels of the layout the export
	// computed, not a planted one as TestMap_StoredLayout's).
	for _, zoom := range []struct {
		name  string
		ratio float64
	}{{"at load", 1}, {"zoomed in", 0.4}} {
		b.eval(fmt.Sprintf(`weaverMap.renderer.getCamera().setState({x: 0.5, y: 0.5, ratio: %g, angle: 0}), true`, zoom.ratio), nil)
		b.wholeFrame("a whole frame " + zoom.name)
		if n := checkLabels(t, b, zoom.name, b.shot("export-"+strings.ReplaceAll(zoom.name, " ", "-"))); n < 8 {
			t.Errorf("%s: %d labels, want at least 8", zoom.name, n)
		} else {
			t.Logf("%s: %d labels, none over another", zoom.name, n)
		}
	}
	b.eval(`weaverMap.renderer.getCamera().setState({x: 0.5, y: 0.5, ratio: 1, angle: 0}), true`, nil)

	// Click the biggest host: the panel shows its title.
	var big struct{ Key, Host string }
	big.Key, big.Host = b.clickBiggestHost()
	b.waitFor("the clicked host's panel", `document.querySelector('#info h2')?.textContent === `+jsString(big.Host), 10*time.Second)
	if got, want := b.text("#info .title"), ns[big.Host].Title; want == "" || got != want {
		t.Errorf("clicked %s: title %q, want %q", big.Host, got, want)
	}
	if got := b.text("#info"); !strings.Contains(got, "Linked from") || !strings.Contains(got, "crawled") {
		t.Errorf("the panel lacks the host's status or links: %q", got)
	}
	// The export carries ranks: the map sizes hosts by PageRank and shows it.
	if got := b.text("#info"); strings.Contains(got, "not computed") || !strings.Contains(got, "harmonic") {
		t.Errorf("the panel lacks the host's ranks: %q", got)
	}
	if got := b.text("#legend"); !strings.Contains(got, "Node size: PageRank") {
		t.Errorf("the legend: %q, want sizes by PageRank", got)
	}

	// Search another host by a part of its name.
	var other string
	for h, n := range ns {
		if h != big.Host && n.Title != "" && (other == "" || h < other) {
			other = h
		}
	}
	b.must("typing a search", chromedp.Click(chromedp.ID("search")), chromedp.SendKeys(chromedp.ID("search"), other))
	b.waitFor("the search results", `[...document.querySelectorAll('#search-results li')].some((li) => li.textContent === `+jsString(other)+`)`, 10*time.Second)
	b.must("choosing the first result", chromedp.SendKeys(chromedp.ID("search"), kb.Enter))
	b.waitFor("the found host's panel", `document.querySelector('#info h2')?.textContent === `+jsString(other), 10*time.Second)
	if got, want := b.text("#info .title"), ns[other].Title; got != want {
		t.Errorf("found %s: title %q, want %q", other, got, want)
	}

	// Registrable domains instead of hosts, coloured by domain, and back
	// to hosts coloured by community (the default with this many domains).
	domains := map[string]bool{}
	for _, n := range ns {
		domains[n.Domain] = true
	}
	b.eval(`weaverMap.setView('domains'), true`, nil)
	b.must("colouring by domain", chromedp.SetValue(chromedp.ID("colour"), "domain"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('colour').dispatchEvent(new Event('change'))`))
	if s := b.stats(); s.Nodes != len(domains) {
		t.Errorf("domains: the map shows %v, want %d domains", s, len(domains))
	}
	if got := b.text("#legend"); !strings.Contains(got, "Registrable domains") {
		t.Errorf("the legend by domain: %q", got)
	}
	b.eval(`weaverMap.setView('hosts'), true`, nil)
	b.must("colouring by community", chromedp.SetValue(chromedp.ID("colour"), "community"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('colour').dispatchEvent(new Event('change'))`))
	if s := b.stats(); s.Nodes != len(ns) {
		t.Errorf("back to hosts: the map shows %v, want %d", s, len(ns))
	}
	if got := b.text("#legend"); !strings.Contains(got, "Communities") {
		t.Errorf("the legend by community: %q", got)
	}

	// The screenshot, always into the test's directory, and into docs/
	// when asked: the whole map, its links, nothing chosen.
	b.must("leaving the search", chromedp.SendKeys(chromedp.ID("search"), kb.Escape),
		chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`))
	b.eval(`weaverMap.select(null), weaverMap.renderer.getCamera().setState({x: 0.5, y: 0.5, ratio: 1, angle: 0}), true`, nil)
	b.wholeFrame("a whole frame of the whole map")
	shot := b.screenshot()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil || img.Bounds().Dx() < 800 || img.Bounds().Dy() < 600 {
		t.Fatalf("screenshot: %v, %v", err, img)
	}
	if err := os.WriteFile(filepath.Join(t.TempDir(), "map.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
	if *updateMapPNG {
		if err := os.WriteFile(filepath.Join("..", "docs", "map.png"), shot, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote docs/map.png (%d bytes)", len(shot))
	}
}

// TestMap_Token: behind a token the page opens with ?token= (the browser
// keeps the session cookie and the page's requests carry it) and shows the
// store's graph; without it the page is refused.
func TestMap_Token(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	_, _, base := startTokenCrawl(t)
	if code, body, _ := request(t, nil, "GET", base+"/", nil, ""); code != http.StatusUnauthorized {
		t.Errorf("GET / without the token: %d %s, want 401", code, body)
	}
	if code, _, _ := request(t, nil, "GET", base+"/map/data", nil, ""); code != http.StatusUnauthorized {
		t.Errorf("GET /map/data without the token: %d, want 401", code)
	}
	b.open(base+"/?token="+testToken, "#stats")
	var loc string
	b.eval(`document.location.toString()`, &loc)
	if strings.Contains(loc, testToken) {
		t.Errorf("the token stayed in the address bar: %s", loc)
	}
	a := api{t: t, base: base}
	deadline := time.Now().Add(30 * time.Second)
	for {
		nodes, edges := storeCounts(a, testToken)
		s := b.stats()
		if s.State == "live" && nodes > 0 && s.Nodes == nodes && s.Edges == edges {
			t.Logf("with a token: %v", s)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the map shows %v; the store holds %d nodes and %d edges", s, nodes, edges)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The live page asks for the ranks too, with the same cookie.
	b.waitFor("sizes by PageRank", `document.getElementById('legend').textContent.includes('Node size: PageRank')`, 30*time.Second)
}

// TestMap_Serve: weaver serve lists its jobs at /, each with a link to its
// map, which shows the job's whole graph once the job has ended. The job's
// store has no layout: the page draws the hosts at once, placed by
// community (the topics of the fake web are together in the first frame,
// not a hairball for ForceAtlas2 to untangle), lays them out, and stops
// by itself, its labels none over another; the layout button says what a
// click does ("Stop layout" while it runs, "Run layout" from the moment
// it stops) and does it.
func TestMap_Serve(t *testing.T) {
	b := newBrowser(t)
	w := fakeweb.New(fakeweb.Config{Hosts: 80, Seed: 3, Topics: 4})
	srv := startWeb(t, w)
	dir := t.TempDir()
	p := start(t, dir, "serve", "--listen", "127.0.0.1:0", "--dir", filepath.Join(dir, "jobs"), "--connect-to", srv.ConnectTo())
	a := jobAPI(t, p)
	var created serve.CreatedAnswer
	a.json("POST", "/crawl", fmt.Sprintf(`{"url": %q, "max_depth": 0, "politeness_delay_ms": 0, "max_crawls_per_node": 1}`, w.Seed()),
		http.StatusCreated, &created)
	var job fullJob
	p.poll(t, "the job to complete", func() bool {
		a.json("GET", "/crawl/"+created.JobID, "", http.StatusOK, &job)
		return job.Job.Status == serve.JobCompleted
	})
	b.open(a.base+"/", "#jobs")
	b.must("following the job's map link", chromedp.Click(chromedp.CSS(`a[href="crawl/`+created.JobID+`/map"]`)),
		chromedp.WaitReady(chromedp.ID("stats")))
	b.waitFor("the job's graph", `document.getElementById('stats').dataset.state === 'done'`, 30*time.Second)
	if s := b.stats(); s.Nodes != len(job.Job.Nodes) || s.Edges != len(job.Job.Edges) || len(job.Job.Nodes) < 10 {
		t.Errorf("the job's map shows %v; the job has %d nodes and %d edges", s, len(job.Job.Nodes), len(job.Job.Edges))
	}

	// The first frame: soon, every host, the topics together.
	b.waitFor("the first frame", `weaverMap.firstFrame() !== null`, 10*time.Second)
	var first struct {
		MS    float64
		Hosts int
		At    map[string][2]float64
	}
	b.eval(`weaverMap.firstFrame()`, &first)
	var hostOf map[string]string
	b.eval(`Object.fromEntries(weaverMap.graph.mapNodes((k, a) => [k, a.host]))`, &hostOf)
	topic := map[string]int{}
	for k, h := range hostOf {
		topic[k] = w.Topic(h)
	}
	together := spread(first.At, topic)
	t.Logf("first frame %.0f ms after the page started loading: %d hosts, topics together %.2f (1: at random)", first.MS, first.Hosts, together)
	if first.MS > 5000 || first.Hosts != len(job.Job.Nodes) {
		t.Errorf("the first frame came %.0f ms after the page started loading, with %d hosts: want every host (%d) within 5 s",
			first.MS, first.Hosts, len(job.Job.Nodes))
	}
	if together > 0.6 {
		t.Errorf("in the first frame, hosts of a topic lie %.2f as far apart as any two hosts: want the topics together (at most 0.6)", together)
	}

	// The layout button, while the layout runs, the moment it stops by
	// itself, and clicked.
	type button struct {
		Running bool
		Text    string
		T       float64
	}
	read := func() button {
		var got button
		b.eval(`({running: weaverMap.layoutRunning(), text: document.getElementById('layout').textContent, t: performance.now()})`, &got)
		return got
	}
	says := func(got button, when string) {
		t.Helper()
		if want := map[bool]string{true: "Stop layout", false: "Run layout"}[got.Running]; got.Text != want {
			t.Errorf("%s: the layout button reads %q, want %q", when, got.Text, want)
		}
	}
	got := read()
	if !got.Running {
		t.Fatalf("no layout runs %.0f ms after the start on a store without one", got.T)
	}
	says(got, "while the layout runs")
	for got.Running {
		// It stops once the hosts settle (4-10 s here, at a load average
		// up to 15), at the latest when its 15 s are up: the limit is for
		// a layout that never stops, not a figure.
		if got.T > 20000 {
			t.Fatalf("the layout still runs %.0f ms after the page started: its time is 15 s", got.T)
		}
		time.Sleep(50 * time.Millisecond)
		got = read()
		says(got, fmt.Sprintf("%.0f ms after the start", got.T))
	}
	t.Logf("the layout stopped by itself by %.0f ms", got.T)
	// The job's map lays its labels out as the exported map does.
	b.wholeFrame("a whole frame after the layout")
	if n := checkLabels(t, b, "the job's map", b.shot("job-map")); n < 5 {
		t.Errorf("the job's map: %d labels, want at least 5", n)
	} else {
		t.Logf("the job's map: %d labels, none over another", n)
	}
	b.must("clicking Run layout", chromedp.Click(chromedp.ID("layout")))
	if got = read(); !got.Running {
		t.Error("Run layout clicked: no layout runs")
	}
	says(got, "after Run layout")
	// Stop layout is clicked in the page's own thread, with a look at
	// the layout just before: a re-run layout of settled hosts stops by
	// itself within 1.5 s, and under load that passed between the look
	// above and a chromedp click (its round trips), which then started the
	// layout again ("Stop layout clicked: the layout still runs").
	var stop struct {
		Reran, Before, After bool
		Text                 string
	}
	b.eval(`(() => {
		const b = document.getElementById('layout');
		const reran = !weaverMap.layoutRunning();
		if (reran) b.click(); // it settled by itself: Run layout again
		const before = weaverMap.layoutRunning();
		b.click();
		return {reran, before, after: weaverMap.layoutRunning(), text: b.textContent};
	})()`, &stop)
	if stop.Reran {
		t.Log("the layout run by the click settled before Stop layout: run again in the page")
	}
	if !stop.Before || stop.After {
		t.Errorf("Stop layout clicked: running %v before the click and %v after it, want true and false", stop.Before, stop.After)
	}
	if stop.Text != "Run layout" {
		t.Errorf("after Stop layout: the layout button reads %q, want \"Run layout\"", stop.Text)
	}
	if got = read(); got.Running {
		t.Error("Stop layout clicked: the layout runs again")
	}
}

// spread is how far apart the hosts of a group lie: the mean distance
// between two hosts of one group over the mean distance between any two
// (1 for hosts placed at random, 0 for each group on one spot). Hosts
// without a group (-1) are left out.
func spread(at map[string][2]float64, group map[string]int) float64 {
	var keys []string
	for k := range at {
		if group[k] >= 0 {
			keys = append(keys, k)
		}
	}
	var in, all float64
	var nin, nall int
	for i, p := range keys {
		for _, q := range keys[i+1:] {
			d := math.Hypot(at[p][0]-at[q][0], at[p][1]-at[q][1])
			all += d
			nall++
			if group[p] == group[q] {
				in += d
				nin++
			}
		}
	}
	if nin == 0 || all == 0 {
		return 1
	}
	return (in / float64(nin)) / (all / float64(nall))
}

// TestMap_BigGraph_LevelOfDetail: on a graph big enough for the page's
// level of detail (more than 20,000 links, more than 5,000 hosts), a real
// drag and a real wheel zoom draw frames with fewer hosts and no links,
// and once the camera stops the whole graph is drawn again and a host can
// be clicked (the picking buffer is back). It runs on both of the page's
// renderers: sigma on WebGL, and the 2D canvas of a browser without WebGL
// (Chromium without a GPU offers WebGL or not by version and flags: the
// canvas is what a user of such a browser sees).
func TestMap_BigGraph_LevelOfDetail(t *testing.T) {
	store, ns, es := mapStore(t, 6000)
	storeLayout(t, store)
	dir := t.TempDir()
	page := filepath.Join(dir, "map.html")
	if r := weaver(t, dir, "export", "--db", store, "--html", page); r.code != 0 {
		t.Fatalf("export --html: exit %d\n%s", r.code, r.stderr)
	}
	for _, tc := range []struct {
		renderer string
		flags    []string
	}{
		{"webgl", []string{"enable-unsafe-swiftshader"}}, // WebGL on software where this Chromium needs asking
		{"canvas", []string{"disable-3d-apis"}},
	} {
		t.Run(tc.renderer, func(t *testing.T) {
			t.Parallel()
			b := newBrowserWith(t, 1400, 900, tc.flags...)
			// Loading 6,000 hosts on software WebGL beside the race-built
			// unit tests on 2 cores took 62 s once in CI (load 4.6): the
			// limits are for a hung page, not a figure (the map's speed
			// is BenchmarkMap_PanZoom_20kHosts's).
			b.openWithin(3*time.Minute, "file://"+page, "#stats")
			b.waitFor("the graph", `document.getElementById('stats').dataset.state === 'done'`, 3*time.Minute)
			if st := b.stats(); st.Nodes != ns || st.Edges != es {
				t.Fatalf("the map shows %v, want %d nodes and %d edges", st, ns, es)
			}
			var renderer string
			b.eval(`document.getElementById('stats').dataset.renderer`, &renderer)
			if renderer != tc.renderer {
				if tc.renderer == "webgl" && os.Getenv("CI") == "" {
					t.Skipf("this Chromium offers no WebGL (the map draws on %q)", renderer)
				}
				t.Fatalf("the map draws with %q, want %q", renderer, tc.renderer)
			}
			b.eval(`weaverMap.stopLayout(), true`, nil)
			var lod bool
			b.eval(`weaverMap.renderer.lod && weaverMap.renderer.getSetting('hideEdgesOnMove')`, &lod)
			if !lod {
				t.Fatalf("no level of detail with %d hosts and %d links", ns, es)
			}
			var box struct{ X, Y, W, H float64 }
			b.eval(`(() => { const r = document.getElementById('graph').getBoundingClientRect(); return {x: r.left, y: r.top, w: r.width, h: r.height}; })()`, &box)
			cx, cy := box.X+box.W/2, box.Y+box.H/2
			held := func(p *input.DispatchMouseEventParams) { p.Button, p.Buttons = input.MouseButtonLeft, 1 }
			for _, move := range []struct {
				name    string
				actions []chromedp.Action[chromedp.Void]
			}{
				{"a drag", []chromedp.Action[chromedp.Void]{
					chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, cx, cy, held, chromedp.ClickCount(1)),
					chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, cx+40, cy+10, held),
					chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, cx+80, cy+20, held),
					chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, cx+120, cy+30, held),
					chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, cx+120, cy+30, held, chromedp.ClickCount(1)),
				}},
				{"a wheel zoom", []chromedp.Action[chromedp.Void]{
					chromedp.MouseEvent(input.DispatchMouseEventTypeMouseWheel, cx, cy, func(p *input.DispatchMouseEventParams) {
						p.DeltaX, p.DeltaY = 1, -300 // a zero deltaX would be left out, which CDP refuses
					}),
				}},
			} {
				// The page reports the frames it draws, by kind (stats'
				// data-lod-frames and data-full-frames).
				var before struct{ LOD, Full int }
				b.eval(`(() => { const d = document.getElementById('stats').dataset; return {lod: +(d.lodFrames || 0), full: +(d.fullFrames || 0)}; })()`, &before)
				b.must(move.name, move.actions...)
				b.waitFor("the whole graph after "+move.name, fmt.Sprintf(`(() => { const d = document.getElementById('stats').dataset;
					return +(d.lodFrames || 0) > %d && +(d.fullFrames || 0) > %d && d.moving === 'false'; })()`, before.LOD, before.Full), 90*time.Second)
			}
			key, host := b.clickBiggestHost()
			b.waitFor("the clicked host's panel", `document.getElementById('info').dataset.node === '`+key+`'`, 30*time.Second)
			t.Logf("%s: %d hosts, %d links: clicked %s after the moves", tc.renderer, ns, es, host)
		})
	}
}

var mapShots = flag.String("map-shots", "", "a directory where the map's tests leave their screenshots (PNG), to look at")

// shot takes a screenshot of the page, into the test's directory and, with
// -map-shots DIR, into DIR/name.png, and returns it decoded.
func (b *browser) shot(name string) image.Image {
	b.t.Helper()
	raw := b.screenshot()
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := b.t.TempDir()
	if *mapShots != "" {
		dir = *mapShots
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), raw, 0o644); err != nil {
		b.t.Fatal(err)
	}
	return img
}

// exportedMap writes the map page (weaver export --html) of a store of n
// hosts of the fake web, and returns its path with the store's counts of
// hosts, links and registrable domains; exportFlags are added to the export.
func exportedMap(t *testing.T, n int, exportFlags ...string) (page string, hosts, links, domains int) {
	t.Helper()
	store, hosts, links := mapStore(t, n)
	dir := t.TempDir()
	page = filepath.Join(dir, "map.html")
	if r := weaver(t, dir, append([]string{"export", "--db", store, "--html", page}, exportFlags...)...); r.code != 0 {
		t.Fatalf("export --html: exit %d\n%s", r.code, r.stderr)
	}
	ds := map[string]bool{}
	for _, nd := range nodes(t, store) {
		ds[nd.Domain] = true
	}
	return page, hosts, links, len(ds)
}

// noWebGL is what the page must say in a browser without WebGL: what is
// missing, what to try, and what works without it.
var noWebGL = []string{"no WebGL", "hardware acceleration", "--graphml", "--sqlite"}

// colouredPixels counts the pixels of img, below the toolbar, that are
// neither grey nor white: the hosts drawn.
func colouredPixels(img image.Image) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y + 60; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			hi, lo := max(r, g, bl)>>8, min(r, g, bl)>>8
			if hi-lo > 60 {
				n++
			}
		}
	}
	return n
}

// TestMap_NoWebGL: in a browser without WebGL (chromium --disable-3d-apis,
// as on remote desktops and some VMs) the exported page and the live page
// of a crawl draw the map on a 2D canvas, and say why, with what to try
// and the exports that work without the map, instead of "Loading…"
// forever or a JavaScript error; hosts can be clicked, and the live map
// grows.
func TestMap_NoWebGL(t *testing.T) {
	b := newBrowserWith(t, 1280, 800, "disable-3d-apis")
	page, hosts, links, _ := exportedMap(t, 300)
	b.open("file://"+page, "#stats")
	b.waitFor("the graph", `document.getElementById('stats').dataset.state === 'done'`, 30*time.Second)
	var renderer string
	b.eval(`document.getElementById('stats').dataset.renderer`, &renderer)
	if renderer != "canvas" {
		t.Fatalf("without WebGL the page draws with %q, want canvas", renderer)
	}
	msg := b.text("#notice")
	for _, want := range noWebGL {
		if !strings.Contains(msg, want) {
			t.Errorf("the notice lacks %q: %q", want, msg)
		}
	}
	if got := b.text("#message"); got != "" {
		t.Errorf("the page says %q", got)
	}
	if s := b.stats(); s.Nodes != hosts || s.Edges != links {
		t.Errorf("the stats say %v, want %d hosts and %d links", s, hosts, links)
	}
	b.waitFor("the layout to settle", `!weaverMap.layoutRunning()`, 40*time.Second)
	// A stored layout needs no settling: wait for a whole frame drawn at
	// rest before the picture is taken (CI once took it before any).
	b.wholeFrame("a whole frame without WebGL")
	img := b.shot("nowebgl-export")
	if n := colouredPixels(img); n < 20000 {
		t.Errorf("%d coloured pixels: the hosts are not drawn", n)
	}
	if n := checkLabels(t, b, "without WebGL", img); n < 5 {
		t.Errorf("%d labels drawn without WebGL", n)
	}
	b.must("opening the notice", chromedp.Click(chromedp.CSS("#notice summary")))
	b.shot("nowebgl-notice")
	b.must("closing the notice", chromedp.Click(chromedp.CSS("#notice .close")))
	key, host := b.clickBiggestHost()
	b.waitFor("the clicked host's panel", `document.getElementById('info').dataset.node === '`+key+`'`, 10*time.Second)
	b.wholeFrame("a whole frame with the host chosen")
	b.shot("nowebgl-clicked")
	t.Logf("without WebGL: clicked %s", host)

	w := fakeweb.New(fakeweb.Config{Hosts: 60, Seed: 3, Latency: 50 * time.Millisecond})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	p := start(t, dir, crawlArgs(srv, db, "--listen", "127.0.0.1:0", "--workers", "1", w.Seed())...)
	a := listenAPI(t, p, db)
	b.open(a.base+"/", "#stats")
	b.waitFor("three updates", `+document.getElementById('stats').dataset.updates >= 3`, 30*time.Second)
	b.eval(`document.getElementById('stats').dataset.renderer`, &renderer)
	if s := b.stats(); s.Nodes == 0 || s.State == "loading" || renderer != "canvas" {
		t.Errorf("the live page without WebGL: %v, drawn with %q", s, renderer)
	}
	if msg := b.text("#notice"); !strings.Contains(msg, "this graph as GraphML") {
		t.Errorf("the live page's notice: %q", msg)
	}
	b.eval(`new Promise((r) => setTimeout(() => r(true), 1000))`, nil)
	b.shot("nowebgl-live")
}

// TestMap_Toolbar: in a window 1280 pixels wide, and narrower, the page
// has no horizontal scrollbar and every control of the toolbar sits
// whole in the toolbar (no wrapped button); down to 800 pixels, all on
// one line; the map starts below the toolbar.
func TestMap_Toolbar(t *testing.T) {
	b := newBrowserWith(t, 1280, 800)
	page, _, _, _ := exportedMap(t, 300)
	b.open("file://"+page, "#stats")
	b.waitFor("the graph", `document.getElementById('stats').dataset.state === 'done'`, 30*time.Second)
	// The longest counts a page shows.
	b.eval(`document.getElementById('stats').textContent = '196,000 hosts · 1,960,000 links (weight ≥ 12) · crawl ended · disconnected (Failed to fetch)', true`, nil)
	for _, width := range []int64{1280, 1024, 800, 600, 400} {
		b.must("a window "+fmt.Sprint(width)+" wide", chromedp.EmulateViewport(width, 800))
		b.eval(`new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`, nil)
		var got struct {
			ScrollWidth, ClientWidth int
			Bad                      []string
		}
		b.eval(`((oneLine) => {
			const doc = document.scrollingElement || document.documentElement;
			const bar = document.getElementById('bar').getBoundingClientRect();
			const bad = [];
			let line = null;
			for (const e of document.querySelectorAll('#bar button, #bar select, #bar input, #bar h1, #bar label')) {
				const r = e.getBoundingClientRect();
				if (r.width === 0) continue; // left out at this width
				const lh = parseFloat(getComputedStyle(e).lineHeight) || 18;
				const name = e.id || e.tagName + ':' + e.textContent.trim().slice(0, 20);
				if (r.left < bar.left || r.right > bar.right + 0.5) bad.push(name + ' outside the bar (' + r.left + '..' + r.right + ')');
				if (r.top < bar.top || r.bottom > bar.bottom) bad.push(name + ' above or below the bar');
				if (e.tagName === 'BUTTON' && r.height > 1.8 * lh + 8) bad.push(name + ' wraps (' + r.height + ' px high)');
				const mid = (r.top + r.bottom) / 2;
				if (line === null) line = mid;
				else if (oneLine && Math.abs(mid - line) > 4) bad.push(name + ' on another line');
			}
			const graph = document.getElementById('graph').getBoundingClientRect();
			if (graph.top < bar.bottom - 1.5) bad.push('the map starts at ' + graph.top + ', under the toolbar (to ' + bar.bottom + ')');
			return {scrollWidth: doc.scrollWidth, clientWidth: doc.clientWidth, bad};
		})(`+fmt.Sprint(width >= 800)+`)`, &got)
		if got.ScrollWidth > got.ClientWidth {
			t.Errorf("%d px: the document is %d px wide, the window %d: a horizontal scrollbar", width, got.ScrollWidth, got.ClientWidth)
		}
		for _, bad := range got.Bad {
			t.Errorf("%d px: %s", width, bad)
		}
		b.shot(fmt.Sprintf("toolbar-%d", width))
	}
}

// TestMap_LinksVisible: at the default zoom the links between hosts stand
// out from the background: their configured colour, laid on the page's
// background, has a contrast of at least 1.6:1, and so do the pixels drawn
// halfway along them.
func TestMap_LinksVisible(t *testing.T) {
	t.Parallel()
	b := newBrowserWith(t, 1280, 800)
	page, _, _, _ := exportedMap(t, 300)
	b.open("file://"+page, "#stats")
	b.waitFor("the graph", `document.getElementById('stats').dataset.state === 'done'`, 30*time.Second)
	b.waitFor("the layout to settle", `!weaverMap.layoutRunning()`, 40*time.Second)
	b.eval(`weaverMap.renderer.getCamera().setState({x: 0.5, y: 0.5, ratio: 1, angle: 0}), true`, nil)
	b.wholeFrame("a whole frame at the camera's home")
	var cfg struct {
		Colour     string
		Background string
		Mids       [][2]float64
	}
	// The middles of the links between hosts at least 60 px apart, where
	// no host is drawn.
	b.eval(`(() => {
		const r = weaverMap.renderer, G = weaverMap.graph;
		const box = document.getElementById('graph').getBoundingClientRect();
		const mids = [];
		G.forEachEdge((e, a, s, t) => {
			const p = r.framedGraphToViewport(r.getNodeDisplayData(s)), q = r.framedGraphToViewport(r.getNodeDisplayData(t));
			if (Math.hypot(p.x - q.x, p.y - q.y) < 60) return;
			const m = {x: (p.x + q.x) / 2, y: (p.y + q.y) / 2};
			if (m.x < 20 || m.y < 20 || m.x > box.width - 20 || m.y > box.height - 20) return;
			if (r.getNodeAtPosition(m) !== null) return;
			mids.push([box.left + m.x, box.top + m.y]);
		});
		return {colour: weaverMap.edgeColour(), background: getComputedStyle(document.body).backgroundColor, mids: mids.slice(0, 200)};
	})()`, &cfg)
	img := b.shot("links")
	bga := parseCSSColour(t, cfg.Background)
	bg := [3]float64{bga[0], bga[1], bga[2]}
	c := parseCSSColour(t, cfg.Colour)
	onBg := [3]float64{}
	for i := range onBg {
		onBg[i] = c[i]*c[3] + bg[i]*(1-c[3])
	}
	if r := contrast(onBg, bg); r < 1.5 {
		t.Errorf("links are drawn %s on %s: contrast %.2f:1, want at least 1.5:1", cfg.Colour, cfg.Background, r)
	} else {
		t.Logf("links are drawn %s on %s: contrast %.2f:1", cfg.Colour, cfg.Background, r)
	}
	if len(cfg.Mids) < 20 {
		t.Fatalf("only %d links to sample", len(cfg.Mids))
	}
	// The darkest pixel within 1 px of each middle (a 1-px line falls
	// between pixels), and the median of them.
	var rs []float64
	for _, m := range cfg.Mids {
		best := 1.0
		for dx := -1; dx <= 1; dx++ {
			for dy := -1; dy <= 1; dy++ {
				r, g, bl, _ := img.At(int(m[0])+dx, int(m[1])+dy).RGBA()
				px := [3]float64{float64(r>>8) / 255, float64(g>>8) / 255, float64(bl>>8) / 255}
				best = max(best, contrast(px, bg))
			}
		}
		rs = append(rs, best)
	}
	slices.Sort(rs)
	if med := rs[len(rs)/2]; med < 1.6 {
		t.Errorf("halfway along %d links the median contrast is %.2f:1, want at least 1.6:1", len(rs), med)
	} else {
		t.Logf("halfway along %d links the median contrast is %.2f:1", len(rs), med)
	}
}

// parseCSSColour reads #rrggbb, #rrggbbaa, rgb() and rgba() into red,
// green, blue and alpha in [0, 1].
func parseCSSColour(t *testing.T, s string) [4]float64 {
	t.Helper()
	var r, g, b int
	a := 1.0
	switch {
	case strings.HasPrefix(s, "#") && (len(s) == 7 || len(s) == 9):
		var ai int
		if _, err := fmt.Sscanf(s[1:7], "%02x%02x%02x", &r, &g, &b); err != nil {
			t.Fatalf("colour %q: %v", s, err)
		}
		if len(s) == 9 {
			if _, err := fmt.Sscanf(s[7:], "%02x", &ai); err != nil {
				t.Fatalf("colour %q: %v", s, err)
			}
			a = float64(ai) / 255
		}
	case strings.HasPrefix(s, "rgba("):
		if _, err := fmt.Sscanf(s, "rgba(%d, %d, %d, %g)", &r, &g, &b, &a); err != nil {
			t.Fatalf("colour %q: %v", s, err)
		}
	case strings.HasPrefix(s, "rgb("):
		if _, err := fmt.Sscanf(s, "rgb(%d, %d, %d)", &r, &g, &b); err != nil {
			t.Fatalf("colour %q: %v", s, err)
		}
	default:
		t.Fatalf("colour %q: not #rrggbb[aa], rgb() or rgba()", s)
	}
	return [4]float64{float64(r) / 255, float64(g) / 255, float64(b) / 255, a}
}

// contrast is the WCAG contrast ratio of two sRGB colours.
func contrast(x, y [3]float64) float64 {
	lum := func(c [3]float64) float64 {
		var l [3]float64
		for i, v := range c {
			if v <= 0.03928 {
				l[i] = v / 12.92
			} else {
				l[i] = math.Pow((v+0.055)/1.055, 2.4)
			}
		}
		return 0.2126*l[0] + 0.7152*l[1] + 0.0722*l[2]
	}
	a, b := lum(x), lum(y)
	if a < b {
		a, b = b, a
	}
	return (a + 0.05) / (b + 0.05)
}

// TestMap_CommunityColours: on a graph with more registrable domains than
// the page has distinct colours, hosts are coloured by Louvain community
// by default, the same on every load; colouring by domain can be chosen
// instead, and a graph of few domains is coloured by domain.
func TestMap_CommunityColours(t *testing.T) {
	b := newBrowserWith(t, 1280, 800)
	// --no-layout: a graph without positions or communities (as an older
	// export, or a live crawl's first answers): the page finds both.
	page, _, _, domains := exportedMap(t, 300, "--no-layout")
	var palette int
	colours := func() map[string]string {
		t.Helper()
		b.open("file://"+page, "#stats")
		b.waitFor("the graph", `document.getElementById('stats').dataset.state === 'done'`, 30*time.Second)
		b.eval(`weaverMap.palette.length`, &palette)
		var c map[string]string
		b.eval(`Object.fromEntries(weaverMap.graph.mapNodes((k, a) => [k, a.color]))`, &c)
		return c
	}
	first := colours()
	// No layout in the export: the page lays the graph out itself.
	var layout string
	b.eval(`document.getElementById('stats').dataset.layout`, &layout)
	if layout != "force" {
		t.Errorf("a graph without positions: layout %q, want force", layout)
	}
	if domains <= palette {
		t.Fatalf("%d domains, not more than the %d colours", domains, palette)
	}
	if got := b.text("#legend h3"); got != "Communities" {
		t.Errorf("%d domains: the legend is %q, want Communities", domains, got)
	}
	var choice string
	b.eval(`document.getElementById('colour').value`, &choice)
	if choice != "community" {
		t.Errorf("%d domains: colour by %q, want community", domains, choice)
	}
	distinct := map[string]bool{}
	for _, c := range first {
		distinct[c] = true
	}
	if len(distinct) < 3 {
		t.Errorf("%d colours for %d hosts by community", len(distinct), len(first))
	}
	b.waitFor("the layout to settle", `!weaverMap.layoutRunning()`, 40*time.Second)
	b.shot("community")
	if again := colours(); !maps.Equal(first, again) {
		t.Errorf("the colours by community differ from one load to the next")
	}
	b.must("colouring by domain", chromedp.SetValue(chromedp.ID("colour"), "domain"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('colour').dispatchEvent(new Event('change'))`))
	if got := b.text("#legend h3"); got != "Registrable domains" {
		t.Errorf("coloured by domain: the legend is %q", got)
	}

	few, _, _, fewDomains := exportedMap(t, 8, "--no-layout")
	b.open("file://"+few, "#stats")
	b.waitFor("the graph", `document.getElementById('stats').dataset.state === 'done'`, 30*time.Second)
	b.eval(`document.getElementById('colour').value`, &choice)
	if fewDomains > palette || choice != "domain" {
		t.Errorf("%d domains: colour by %q, want domain", fewDomains, choice)
	}
}
