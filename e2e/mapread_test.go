package e2e_test

import (
	"encoding/json"
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

// The map people can read (issue 29, item 7) and the hosts changed
// recently (issue 27) on it.

// graphElement is the page's embedded graph (#weaver-graph).
var graphElement = regexp.MustCompile(`(?s)(<script id="weaver-graph" type="application/json">)(.*?)(</script>)`)

// storedNode is what the fixture gives a host: the store's layout
// (weaver layout: community, x, y) and its change history.
type storedNode struct {
	X, Y       float64
	Community  int
	Changes    int
	LastChange time.Time
}

// storedLayoutPage writes into the map page at page (weaver export --html)
// the fields of a stored layout on every node: a planted picture of 12
// communities of hosts, each around its own centre on a circle. Five
// hosts changed: three an hour before the newest crawl, two three days
// before. It returns the nodes by key (the node's id), and the newest
// crawl.
//
// The store's layout comes from weaver layout (another change); until
// export writes it, the test writes community, x and y into the page
// itself, with the names the export gives them.
func storedLayoutPage(t *testing.T, page string) (nodes map[string]storedNode, newest time.Time) {
	t.Helper()
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	m := graphElement.FindSubmatchIndex(html)
	if m == nil {
		t.Fatal("no #weaver-graph in the page")
	}
	var g map[string]any
	if err := json.Unmarshal(html[m[4]:m[5]], &g); err != nil {
		t.Fatalf("the page's graph: %v", err)
	}
	list, _ := g["nodes"].([]any)
	if len(list) < 100 {
		t.Fatalf("%d nodes in the page", len(list))
	}
	for _, n := range list {
		if c, err := time.Parse(time.RFC3339, fmt.Sprint(n.(map[string]any)["last_crawl"])); err == nil && c.After(newest) {
			newest = c
		}
	}
	if newest.IsZero() {
		t.Fatal("no node has a last_crawl")
	}
	rnd := rand.New(rand.NewPCG(29, 7))
	out := map[string]storedNode{}
	for i, v := range list {
		n := v.(map[string]any)
		c := i % 12
		angle := 2 * math.Pi * float64(c) / 12
		r := 30 * math.Sqrt(rnd.Float64())
		a := 2 * math.Pi * rnd.Float64()
		sn := storedNode{Community: 100 + c, X: 200*math.Cos(angle) + r*math.Cos(a), Y: 200*math.Sin(angle) + r*math.Sin(a)}
		n["community"], n["x"], n["y"] = sn.Community, sn.X, sn.Y
		switch {
		case i >= 20 && i < 23:
			sn.Changes, sn.LastChange = 3, newest.Add(-time.Hour)
		case i >= 23 && i < 25:
			sn.Changes, sn.LastChange = 1, newest.Add(-72*time.Hour)
		}
		if sn.Changes > 0 {
			n["changes"], n["last_change"] = sn.Changes, sn.LastChange.Format(time.RFC3339)
		}
		out[fmt.Sprint(n["id"])] = sn
	}
	data, err := json.Marshal(g) // escapes <, > and &: safe inside <script>
	if err != nil {
		t.Fatal(err)
	}
	html = slices.Concat(html[:m[4]], data, html[m[5]:])
	if err := os.WriteFile(page, html, 0o644); err != nil {
		t.Fatal(err)
	}
	return out, newest
}

// labelBox is a label's box in the page, as weaverMap.labelBoxes() gives
// it, and whether another element covers it.
type labelBox struct {
	Key            string
	X0, Y0, X1, Y1 float64
	Covered        bool
}

// checkLabels fails the test when two of the labels the page drew
// intersect, or when the screenshot img lacks the text inside a box that
// nothing covers (the boxes are where the labels are), and returns how
// many there are.
func checkLabels(t *testing.T, b *browser, when string, img image.Image) int {
	t.Helper()
	var boxes []labelBox
	// Covered: another element (a notice, a panel) lies over the box's
	// middle, so the screenshot cannot show its text.
	b.eval(`weaverMap.labelBoxes().map((l) => {
		const e = document.elementFromPoint((l.x0 + l.x1) / 2, (l.y0 + l.y1) / 2);
		return {...l, covered: !e || !document.getElementById('graph').contains(e)};
	})`, &boxes)
	for i, p := range boxes {
		for _, q := range boxes[i+1:] {
			if p.X0 < q.X1 && q.X0 < p.X1 && p.Y0 < q.Y1 && q.Y0 < p.Y1 {
				t.Errorf("%s: the labels of %s %v and %s %v intersect", when, p.Key, p, q.Key, q)
			}
		}
		if p.Covered {
			continue
		}
		// Ink: near-black pixels (the labels are black; no palette colour,
		// link or ring is that dark where it is drawn once).
		ink := 0
		for y := int(p.Y0); y < int(math.Ceil(p.Y1)); y++ {
			for x := int(p.X0); x < int(math.Ceil(p.X1)); x++ {
				r, g, bl, _ := img.At(x, y).RGBA()
				if max(r, g, bl)>>8 < 60 {
					ink++
				}
			}
		}
		if ink < 10 {
			t.Errorf("%s: the box of %s's label %v holds %d dark pixels: no text drawn there", when, p.Key, p, ink)
		}
	}
	return len(boxes)
}

// wholeFrame waits for a frame drawn after now, the camera at rest.
func (b *browser) wholeFrame(what string) {
	b.t.Helper()
	var frames int
	b.eval(`(() => { const n = +(document.getElementById('stats').dataset.fullFrames || 0); weaverMap.renderer.refresh(); return n; })()`, &frames)
	b.waitFor(what, fmt.Sprintf(`(() => { const d = document.getElementById('stats').dataset;
		return +(d.fullFrames || 0) > %d && d.moving === 'false' && !weaverMap.renderer.getCamera().isAnimated(); })()`, frames), 30*time.Second)
}

// TestMap_StoredLayout: a graph that comes with the store's layout
// (community, x, y on every node) is drawn at those positions at once,
// with no layout of the page's own, coloured by those communities, each
// its own colour of the palette; its labels do not overlap, at load and
// zoomed in (the boxes the page reports are disjoint, and the screenshot
// has the text inside them); the legend is docked beside the map, covers
// no host, and folds; hosts changed in the last day are ringed, and the
// legend's choice widens that to any time. In a small window the legend
// starts folded.
func TestMap_StoredLayout(t *testing.T) {
	t.Parallel()
	b := newBrowserWith(t, 1280, 800)
	page, hosts, _, _ := exportedMap(t, 300)
	fixture, newest := storedLayoutPage(t, page)
	b.open("file://"+page, "#stats")
	b.waitFor("the graph", `document.getElementById('stats').dataset.state === 'done'`, 30*time.Second)
	var got struct {
		Layout  string
		Running bool
		Nodes   map[string]struct {
			X, Y  float64
			Color string
		}
		Colour string
	}
	b.eval(`({layout: document.getElementById('stats').dataset.layout, running: weaverMap.layoutRunning(),
		nodes: Object.fromEntries(weaverMap.graph.mapNodes((k, a) => [k, {x: a.x, y: a.y, color: a.color}])),
		colour: document.getElementById('colour').value})`, &got)
	if got.Layout != "stored" || got.Running {
		t.Errorf("layout %q, ForceAtlas2 running %v: want the stored layout, and no layout run", got.Layout, got.Running)
	}
	if len(got.Nodes) != hosts {
		t.Fatalf("%d nodes on the map, want %d", len(got.Nodes), hosts)
	}
	colourOf := map[int]string{}
	for k, n := range got.Nodes {
		f := fixture[k]
		if n.X != f.X || n.Y != f.Y {
			t.Errorf("node %s at (%g, %g), want the stored (%g, %g)", k, n.X, n.Y, f.X, f.Y)
		}
		if c, ok := colourOf[f.Community]; ok && c != n.Color {
			t.Errorf("community %d has colours %s and %s", f.Community, c, n.Color)
		}
		colourOf[f.Community] = n.Color
	}
	var palette []string
	b.eval(`weaverMap.palette`, &palette)
	distinct := map[string]bool{}
	for _, c := range colourOf {
		distinct[c] = true
		if !slices.Contains(palette, c) {
			t.Errorf("colour %s is not one of the palette's", c)
		}
	}
	if len(colourOf) != 12 || len(distinct) != 12 || got.Colour != "community" {
		t.Errorf("%d communities in %d colours, coloured by %q: want 12 in 12, by community", len(colourOf), len(distinct), got.Colour)
	}

	// Labels, at load and zoomed in.
	b.wholeFrame("a whole frame")
	atLoad := checkLabels(t, b, "at load", b.shot("stored-load"))
	b.eval(`weaverMap.renderer.getCamera().setState({x: 0.5, y: 0.5, ratio: 0.45, angle: 0}), true`, nil)
	b.wholeFrame("a whole frame zoomed in")
	zoomed := checkLabels(t, b, "zoomed in", b.shot("stored-zoomed"))
	if atLoad < 8 || zoomed < 8 {
		t.Errorf("%d labels at load, %d zoomed in: want at least 8", atLoad, zoomed)
	}
	var renderer string
	b.eval(`document.getElementById('stats').dataset.renderer`, &renderer)
	t.Logf("labels (%s): %d at load, %d zoomed in, none over another", renderer, atLoad, zoomed)

	// The legend beside the map: no host under it, at the whole graph's
	// view, open and folded.
	b.eval(`weaverMap.renderer.getCamera().setState({x: 0.5, y: 0.5, ratio: 1, angle: 0}), true`, nil)
	legendClear := func(when string) (width float64) {
		var g struct {
			Legend, Graph struct{ Left, Top, Right, Bottom float64 }
			Under         []string
		}
		b.eval(`(() => {
			const rect = (id) => { const r = document.getElementById(id).getBoundingClientRect(); return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; };
			const l = rect('legend'), g = rect('graph'), r = weaverMap.renderer;
			const under = weaverMap.graph.filterNodes((k) => {
				const p = r.framedGraphToViewport(r.getNodeDisplayData(k));
				const x = g.left + p.x, y = g.top + p.y;
				return x >= l.left && x <= l.right && y >= l.top && y <= l.bottom;
			});
			return {legend: l, graph: g, under};
		})()`, &g)
		if len(g.Under) > 0 {
			t.Errorf("%s: %d hosts under the legend (%v)", when, len(g.Under), g.Under[:min(5, len(g.Under))])
		}
		if g.Graph.Left < g.Legend.Right-0.5 {
			t.Errorf("%s: the map starts at %g, under the legend (to %g)", when, g.Graph.Left, g.Legend.Right)
		}
		return g.Legend.Right - g.Legend.Left
	}
	b.wholeFrame("a whole frame of the whole graph")
	open := legendClear("legend open")
	b.must("folding the legend", chromedp.Click(chromedp.ID("legend-toggle")))
	b.wholeFrame("a whole frame, the legend folded")
	folded := legendClear("legend folded")
	if folded >= open/4 {
		t.Errorf("the legend is %g px wide open and %g folded", open, folded)
	}
	b.must("opening the legend", chromedp.Click(chromedp.ID("legend-toggle")))

	// Changed hosts: ringed in the last day, and at any time when asked.
	want := func(within time.Duration) []string {
		var keys []string
		for k, n := range fixture {
			if n.Changes > 0 && (within == 0 || !n.LastChange.Before(newest.Add(-within))) {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		return keys
	}
	changed := func() (keys []string, rings int) {
		b.wholeFrame("a whole frame")
		b.eval(`weaverMap.changed()`, &keys)
		slices.Sort(keys)
		var s string
		b.eval(`document.getElementById('stats').dataset.rings`, &s)
		rings, _ = strconv.Atoi(s)
		return keys, rings
	}
	if keys, rings := changed(); !slices.Equal(keys, want(24*time.Hour)) || rings != len(keys) {
		t.Errorf("ringed in the last day: %v (%d rings drawn), want %v", keys, rings, want(24*time.Hour))
	}
	if got := b.text("#legend-changed"); !regexp.MustCompile(`(?s)Changed on a revisit.*3 hosts`).MatchString(got) {
		t.Errorf("the legend's changed hosts: %q", got)
	}
	ringMeasure(t, b, b.shot("stored-rings"))
	b.must("ringing changes of any time", chromedp.SetValue(chromedp.ID("changed-within"), "0"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('changed-within').dispatchEvent(new Event('change'))`))
	if keys, _ := changed(); !slices.Equal(keys, want(0)) {
		t.Errorf("ringed at any time: %v, want %v", keys, want(0))
	}

	// A small window: the legend starts folded.
	b.must("a small window", chromedp.EmulateViewport(600, 700))
	b.open("file://"+page, "#stats")
	b.waitFor("the graph", `document.getElementById('stats').dataset.state === 'done'`, 30*time.Second)
	var state string
	b.eval(`document.getElementById('legend').dataset.open`, &state)
	if state != "false" {
		t.Errorf("in a 600×700 window the legend is open (%q): want it folded", state)
	}
	b.shot("stored-small")
}

// ringMeasure checks the rings in img: on the circle where a ringed host's
// ring is drawn, most pixels are dark; on the same circle around hosts
// not ringed, few are.
func ringMeasure(t *testing.T, b *browser, img image.Image) {
	t.Helper()
	var nodes []struct {
		Key    string
		X, Y   float64
		R      float64
		Ringed bool
	}
	b.eval(`(() => {
		const r = weaverMap.renderer, G = weaverMap.graph, g = document.getElementById('graph').getBoundingClientRect();
		const ringed = new Set(weaverMap.changed());
		return G.mapNodes((k) => {
			const d = r.getNodeDisplayData(k), p = r.framedGraphToViewport(d);
			const size = r.scaleSize ? r.scaleSize(d.size) : d.size / r.sizeRatio();
			return {key: k, x: g.left + p.x, y: g.top + p.y, r: size, ringed: ringed.has(k)};
		});
	})()`, &nodes)
	dark := func(x, y, r float64) float64 {
		n, d := 0, 0
		for i := range 72 {
			a := 2 * math.Pi * float64(i) / 72
			px, py := x+(r+3.5)*math.Cos(a), y+(r+3.5)*math.Sin(a)
			// The darkest pixel within half a pixel of the circle.
			best := uint32(255)
			for _, dx := range []float64{-0.5, 0, 0.5} {
				for _, dy := range []float64{-0.5, 0, 0.5} {
					cr, cg, cb, _ := img.At(int(px+dx), int(py+dy)).RGBA()
					best = min(best, max(cr, cg, cb)>>8)
				}
			}
			n++
			if best < 90 {
				d++
			}
		}
		return float64(d) / float64(n)
	}
	var ringed, plain []float64
	for _, n := range nodes {
		if n.X < n.R+10 || n.Y < n.R+10 || n.X > float64(img.Bounds().Dx())-n.R-10 || n.Y > float64(img.Bounds().Dy())-n.R-10 {
			continue
		}
		if n.Ringed {
			ringed = append(ringed, dark(n.X, n.Y, n.R))
		} else {
			plain = append(plain, dark(n.X, n.Y, n.R))
		}
	}
	if len(ringed) == 0 || len(plain) == 0 {
		t.Fatalf("%d ringed hosts and %d others in view", len(ringed), len(plain))
	}
	slices.Sort(ringed)
	slices.Sort(plain)
	if ringed[0] < 0.7 {
		t.Errorf("a ringed host's ring is dark at %.0f%% of its circle, want at least 70%% (all: %.2f)", 100*ringed[0], ringed)
	}
	if med := plain[len(plain)/2]; med > 0.2 {
		t.Errorf("around hosts not ringed, the circle is dark at %.0f%% (median), want at most 20%%", 100*med)
	}
	t.Logf("rings: dark at %.0f%%–%.0f%% of the circle around %d ringed hosts, %.0f%% (median) around %d others",
		100*ringed[0], 100*ringed[len(ringed)-1], len(ringed), 100*plain[len(plain)/2], len(plain))
}

// TestMap_LiveChanged: the live map of a crawl with a revisit policy, on
// a web whose volatile hosts publish a new edition with other links every
// 400 ms, rings exactly the hosts whose crawls found them changed, and
// says so in its legend.
func TestMap_LiveChanged(t *testing.T) {
	t.Parallel()
	b := newBrowserWith(t, 1000, 700)
	l, srv := startLiving(t, fakeweb.LivingConfig{Hosts: 8, Volatile: 3, Period: 400 * time.Millisecond})
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	p := start(t, dir, livingArgs(srv, db, "--delay", "0", "--revisit", "200ms", "--revisit-max", "800ms",
		"--max-duration", "60s", "--listen", "127.0.0.1:0", l.Seed())...)
	a := listenAPI(t, p, db)
	b.open(a.base+"/", "#stats")
	var volatile []string
	for i := 1; i <= 3; i++ {
		volatile = append(volatile, l.Host(i))
	}
	b.waitFor("the volatile hosts ringed", `(() => {
		const G = weaverMap.graph, hosts = weaverMap.changed().map((k) => G.getNodeAttribute(k, 'host')).sort();
		return document.getElementById('stats').dataset.changed === '3' && JSON.stringify(hosts) === `+jsString(mustJSON(t, volatile))+`;
	})()`, 30*time.Second)
	if got := b.text("#legend-changed"); !regexp.MustCompile(`3 hosts`).MatchString(got) {
		t.Errorf("the legend's changed hosts: %q, want 3 hosts", got)
	}
	var hidden bool
	b.eval(`document.getElementById('legend-changed').hidden`, &hidden)
	if hidden {
		t.Error("the legend hides the changed hosts")
	}
	if s := b.stats(); s.State != "live" {
		t.Errorf("the map is %q, want live", s.State)
	}
	b.shot("live-changed")
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
