package e2e_test

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/layout"
)

// mapStore writes the graph that a crawl of fakeweb's web of n hosts with
// max_outbound_links 10 records (fakeweb.ExpectedEdges) straight into a
// store, every host crawled with its title and edge weights 1 to 3, and
// returns the store's path with its node and edge counts.
func mapStore(tb testing.TB, n int) (path string, nodes, edges int) {
	tb.Helper()
	w := fakeweb.New(fakeweb.Config{Hosts: n, Seed: 1})
	es := w.ExpectedEdges(10, excluded)
	path = filepath.Join(tb.TempDir(), "big.bolt")
	s, err := kv.Open(path, kv.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	now := time.Date(2025, 1, 16, 10, 0, 0, 0, time.UTC)
	err = s.Update(func(tx *kv.Tx) error {
		ids := map[string]uint64{}
		ensure := func(host string) (uint64, error) {
			if id, ok := ids[host]; ok {
				return id, nil
			}
			nd, _, err := graph.Ensure(tx, host, "http", now)
			if err != nil {
				return 0, err
			}
			nd.Title, nd.Status, nd.HTTPStatus, nd.CrawlCount, nd.LastCrawl = w.Title(host), graph.StatusCrawled, 200, 1, now
			ids[host] = nd.ID
			return nd.ID, graph.Put(tx, &nd)
		}
		for _, h := range w.Hosts() {
			if _, err := ensure(h); err != nil {
				return err
			}
		}
		// The edges go in in key order (from id, to id): in one bbolt
		// transaction a leaf grows unsplit until the commit, so random
		// keys cost a memmove of the whole leaf each (minutes for 60,000).
		type edge struct{ from, to, weight uint64 }
		var sorted []edge
		for e := range es {
			from, err := ensure(e[0])
			if err != nil {
				return err
			}
			to, err := ensure(e[1])
			if err != nil {
				return err
			}
			sorted = append(sorted, edge{from, to, 1 + uint64(len(e[0])+len(e[1]))%3})
		}
		slices.SortFunc(sorted, func(a, b edge) int {
			return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.to, b.to))
		})
		for _, e := range sorted {
			if err := graph.AddEdge(tx, e.from, e.to, e.weight, now); err != nil {
				return err
			}
		}
		nodes = len(ids)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return path, nodes, len(es)
}

// storeLayout lays out the store at path and stores the layout, as
// `weaver layout` does, in the test's own process: for a test of the map
// page on thousands of hosts, which the race-built weaver takes most of a
// minute to lay out (6,000 hosts: 45 s, 4 s without the race detector).
// An export computing a missing layout is tested on its own
// (TestExport_LaysOutOnce, TestLayout_UK1996Replay).
func storeLayout(tb testing.TB, path string) {
	tb.Helper()
	s, err := kv.Open(path, kv.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	err = s.Update(func(tx *kv.Tx) error {
		st, err := layout.ComputeStored(context.Background(), tx, layout.Options{})
		if err != nil {
			return err
		}
		return layout.Save(tx, st)
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkMap_PanZoom_20kHosts measures how smoothly the map page pans
// and zooms a graph of 20,000 hosts in headless chromium: frames per
// second (requestAnimationFrame callbacks) while the camera zooms in and
// out and pans (6 s per iteration), after the page has loaded the
// graph from an `export --html` file and its layout has run its course.
// "as-shipped" is the page as it is (with this many hosts and links it
// draws nodes as point sprites and, while the camera moves, leaves the
// links out and draws only the 5,000 biggest hosts); "edges-drawn-while-
// moving" keeps every link and every host drawn. ms/redraw-at-rest is how
// long the frame that draws the whole graph again takes once the camera
// stops.
//
// Headless chromium here has no GPU: WebGL runs on SwiftShader, on the
// CPU, so the figures are a floor; a desktop browser with a GPU does
// better.
//
//	go test ./e2e -run '^$' -bench Map_PanZoom -benchtime 1x
func BenchmarkMap_PanZoom_20kHosts(b *testing.B) {
	store, nodes, edges := mapStore(b, 20_000)
	s, err := kv.Open(store, kv.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	page := filepath.Join(b.TempDir(), "map.html")
	f, err := os.Create(page)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := export.HTML(context.Background(), f, s, export.Options{}); err != nil {
		b.Fatal(err)
	}
	f.Close()
	s.Close()
	fi, _ := os.Stat(page)
	b.Logf("%d hosts, %d edges, map.html %.1f MB", nodes, edges, float64(fi.Size())/1e6)

	br := newBrowser(b)
	start := time.Now()
	br.open("file://"+page, "#stats")
	br.waitFor("the graph", `document.getElementById('stats').dataset.state === 'done'`, 2*time.Minute)
	loaded := time.Since(start)
	if st := br.stats(); st.Nodes != nodes || st.Edges != edges {
		b.Fatalf("the map shows %v, want %d nodes and %d edges", st, nodes, edges)
	}
	br.waitFor("the layout to stop", `!weaverMap.layoutRunning()`, 2*time.Minute)
	laidOut := time.Since(start)
	var steps map[string]float64
	br.eval(`weaverMap.state.timings`, &steps)
	b.Logf("loaded and drawn in %.1f s (steps in ms: %v), layout stopped after %.1f s", loaded.Seconds(), steps, laidOut.Seconds())

	for _, c := range []struct {
		name string
		hide bool
	}{{"as-shipped", true}, {"edges-drawn-while-moving", false}} {
		b.Run(c.name, func(b *testing.B) {
			var setting bool
			br.eval(`weaverMap.renderer.getSetting('hideEdgesOnMove')`, &setting)
			if c.hide && !setting {
				b.Fatalf("the page does not hide edges on move with %d edges", edges)
			}
			br.eval(`weaverMap.renderer.setSetting('hideEdgesOnMove', `+map[bool]string{true: "true", false: "false"}[c.hide]+`), true`, nil)
			var frames, moving, settle float64
			for b.Loop() {
				var r struct{ Frames, MS, Settle float64 }
				br.evalWithin(10*time.Minute, panZoom, &r)
				frames += r.Frames
				moving += r.MS / 1000
				settle += r.Settle
			}
			fps := frames / moving
			b.ReportMetric(fps, "frames/s")
			b.ReportMetric(settle/float64(b.N)/3, "ms/redraw-at-rest")
			b.Logf("%s: %.1f frames/s over %.1f s of camera moves; %.0f ms to draw the edges again at rest (%d hosts, %d edges)",
				c.name, fps, moving, settle/float64(b.N)/3, nodes, edges)
		})
	}
	br.eval(`weaverMap.renderer.setSetting('hideEdgesOnMove', true), true`, nil)
}

// panZoom drives the camera through three 2 s moves (zoom in to a region,
// pan across, zoom out) and counts the frames drawn until the camera
// stops (a move whose frames take longer than it ends after its first);
// after each move it waits for the frame that draws the graph at rest
// (Settle, in ms, summed).
const panZoom = `(async () => {
	const cam = weaverMap.renderer.getCamera();
	cam.setState({x: 0.5, y: 0.5, ratio: 1, angle: 0});
	await new Promise((r) => setTimeout(r, 1000));
	const out = {frames: 0, ms: 0, settle: 0};
	for (const st of [{ratio: 0.3, x: 0.3, y: 0.3}, {ratio: 0.3, x: 0.7, y: 0.6}, {ratio: 1.2, x: 0.5, y: 0.5}]) {
		const done = cam.animate(st, {duration: 2000, easing: 'linear'});
		const t0 = performance.now();
		await new Promise((res) => {
			const tick = () => {
				if (!cam.isAnimated()) return res();
				out.frames++;
				requestAnimationFrame(tick);
			};
			requestAnimationFrame(tick);
		});
		out.ms += performance.now() - t0;
		const s0 = performance.now();
		await done;
		await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
		out.settle += performance.now() - s0;
	}
	return out;
})()`
