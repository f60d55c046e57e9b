package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/weaver-crawler/weaver/internal/tooltest"
)

// chromiumPath is Debian's chromium, or whatever chromium is on PATH. It
// skips the test when there is none, and fails it under CI=true, where
// .ci/run installs it.
func chromiumPath(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	tooltest.Missing(t, "chromium is not installed (apt-get install chromium)")
	return ""
}

// browser is a headless chromium driven over the DevTools protocol, with
// the JavaScript errors of its pages collected.
type browser struct {
	t   testing.TB
	ctx context.Context

	mu     sync.Mutex // guards errors
	errors []string
}

// newBrowser starts a headless chromium with a fresh profile and a
// 1400×900 window; the test's cleanup closes it and fails the test if a
// page threw an exception.
func newBrowser(t testing.TB) *browser {
	t.Helper()
	return newBrowserWith(t, 1400, 900)
}

// newBrowserWith is newBrowser with a window of width×height and more
// command-line flags (such as "disable-3d-apis", a browser without WebGL).
func newBrowserWith(t testing.TB, width, height int, flags ...string) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	}
	for _, f := range flags {
		opts = append(opts, chromedp.Flag(f, true))
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	b := &browser{t: t, ctx: ctx}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, e := range b.errors {
			t.Errorf("the page threw: %s", e)
		}
	})
	// The first Run starts the browser, and must not have a time limit
	// (it would be the browser's); a failing start ends in the allocator's
	// own timeout.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	err := chromedp.Listen(ctx, func(ev any) {
		var d *runtime.ExceptionDetails
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			d = ev.ExceptionDetails
		case runtime.EventExceptionThrown:
			d = ev.ExceptionDetails
		default:
			return
		}
		msg := "exception"
		if d != nil {
			msg = fmt.Sprintf("%s at %s:%d:%d", d.Text, d.URL, d.LineNumber+1, d.ColumnNumber+1)
			if d.Exception != nil && d.Exception.Description != "" {
				msg += ": " + d.Exception.Description
			}
		}
		b.mu.Lock()
		b.errors = append(b.errors, msg)
		b.mu.Unlock()
	})
	if err != nil {
		t.Fatalf("listening to the page: %v", err)
	}
	return b
}

// do runs actions with a time limit.
func (b *browser) do(timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	return chromedp.Do(ctx, actions...)
}

// must runs actions or fails the test.
func (b *browser) must(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := b.do(time.Minute, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// open loads url and waits for an element matched by a CSS selector.
func (b *browser) open(url, selector string) {
	b.t.Helper()
	b.openWithin(time.Minute, url, selector)
}

// openWithin is open with a time limit other than a minute.
func (b *browser) openWithin(timeout time.Duration, url, selector string) {
	b.t.Helper()
	if err := b.do(timeout, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS(selector))); err != nil {
		b.t.Fatalf("opening %s: %v", url, err)
	}
}

// eval evaluates a JavaScript expression, awaiting a promise, into v
// (JSON-decoded; nil: the value is dropped).
func (b *browser) eval(expr string, v any) {
	b.t.Helper()
	b.evalWithin(time.Minute, expr, v)
}

// evalWithin is eval with a time limit other than a minute.
func (b *browser) evalWithin(timeout time.Duration, expr string, v any) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	if v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			b.t.Fatalf("evaluating %s: %v (%s)", expr, err, raw)
		}
	}
}

// stats is what the map says it draws (#stats); stats fails the test when
// the map reports an error.
type stats struct {
	Nodes     int    `json:"nodes"`
	Edges     int    `json:"edges"`
	State     string `json:"state"`
	FullLoads int    `json:"fullLoads"`
	Updates   int    `json:"updates"`
	Error     string `json:"error"`
	Text      string `json:"text"`
}

func (s stats) String() string {
	return fmt.Sprintf("%d nodes, %d edges, %s, %d updates (%d full): %q", s.Nodes, s.Edges, s.State, s.Updates, s.FullLoads, s.Text)
}

func (b *browser) stats() stats {
	b.t.Helper()
	var s stats
	b.eval(`(() => { const d = document.getElementById('stats').dataset;
		return {nodes: +d.nodes, edges: +d.edges, state: d.state, fullLoads: +(d.fullLoads || 0),
			updates: +(d.updates || 0), error: d.error || '', text: document.getElementById('stats').textContent}; })()`, &s)
	if s.Error != "" {
		b.t.Errorf("the map says: %s", s.Error)
	}
	return s
}

// waitFor evaluates cond (a JavaScript expression) every 100 ms until it
// is true, or fails the test after timeout.
func (b *browser) waitFor(what, cond string, timeout time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var ok bool
		b.eval("!!("+cond+")", &ok)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("timed out after %v waiting for %s; the map shows %v", timeout, what, b.stats())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// text returns the text of the element matched by a CSS selector, or ""
// when there is none.
func (b *browser) text(selector string) string {
	b.t.Helper()
	var s string
	b.eval(`(() => { const e = document.querySelector(`+jsString(selector)+`); return e ? e.textContent : ''; })()`, &s)
	return s
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// clickBiggestHost stops the layout, so that nodes stay where they are,
// and clicks the biggest node that nothing covers at its centre (sigma
// picks the node under the pointer from a picking buffer, which the test
// asks first). It returns the node's key and host.
func (b *browser) clickBiggestHost() (key, host string) {
	b.t.Helper()
	var pick struct {
		Key, Host string
		X, Y      float64
	}
	// A node is picked from the last whole frame: wait until the page
	// reports one drawn after the layout stopped (the positions final).
	var frames int
	b.eval(`(() => { weaverMap.stopLayout(); const n = +(document.getElementById('stats').dataset.fullFrames || 0);
		weaverMap.renderer.refresh(); return n; })()`, &frames)
	b.waitFor("a whole frame after the layout stopped", fmt.Sprintf(`(() => { const d = document.getElementById('stats').dataset;
		return +(d.fullFrames || 0) > %d && d.moving === 'false'; })()`, frames), 30*time.Second)
	b.eval(`(() => {
		const r = weaverMap.renderer, G = weaverMap.graph;
		const box = document.getElementById('graph').getBoundingClientRect();
		const keys = G.nodes().sort((a, b) => G.getNodeAttribute(b, 'size') - G.getNodeAttribute(a, 'size'));
		for (const k of keys.slice(0, 100)) {
			const p = r.framedGraphToViewport(r.getNodeDisplayData(k));
			if (p.x < 0 || p.y < 0 || p.x > box.width || p.y > box.height) continue;
			if (r.getNodeAtPosition(p) === k) return {key: k, host: G.getNodeAttribute(k, 'host'), x: box.left + p.x, y: box.top + p.y};
		}
		return {key: '', host: '', x: 0, y: 0};
	})()`, &pick)
	if pick.Key == "" {
		b.t.Fatal("no node of the map can be clicked at its centre")
	}
	b.must("clicking node "+pick.Key, chromedp.MouseClickXY(pick.X, pick.Y))
	return pick.Key, pick.Host
}

// screenshot returns a PNG of the viewport.
func (b *browser) screenshot() []byte {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	return png
}
