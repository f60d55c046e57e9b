package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
)

// TestRender_AutoRendersShellsOnly: on a web where some home pages are
// JavaScript shells whose script adds the links after a delay, --render
// auto gives the whole expected graph and renders the shells only;
// --render never gives no edge out of a shell, and nothing else differs.
// A shell whose script robots.txt disallows stays without links.
func TestRender_AutoRendersShellsOnly(t *testing.T) {
	browser := chromiumPath(t)
	w := fakeweb.New(fakeweb.Config{Hosts: 48, Seed: 53, ShellEvery: 8, RobotsDisallowEvery: -1,
		Shells: map[string]fakeweb.Shell{}})
	hosts := w.Hosts()
	w = fakeweb.New(fakeweb.Config{Hosts: 48, Seed: 53, ShellEvery: 8, RobotsDisallowEvery: -1,
		Shells: map[string]fakeweb.Shell{hosts[5]: fakeweb.ShellScriptDisallowed}})
	srv := startWeb(t, w)
	want := w.ExpectedEdges(10, excluded)
	shells := 0
	for _, h := range hosts {
		if w.Shell(h) != fakeweb.NoShell {
			shells++
		}
	}
	if shells < 3 {
		t.Fatalf("only %d shells: the test proves nothing", shells)
	}

	dir := t.TempDir()
	auto := filepath.Join(dir, "auto.bolt")
	r := weaver(t, dir, crawlArgs(srv, auto, "--max-depth", "0", "--max-crawls-per-node", "1", "--render", "auto", "--browser", browser, w.Seed())...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	storetest.SameGraph(t, edges(t, auto), want)
	rendered := 0
	for h, n := range nodes(t, auto) {
		if n.CrawlCount == 0 {
			continue
		}
		isShell := w.Shell(h) != fakeweb.NoShell
		if n.Rendered() != isShell {
			t.Errorf("%s: rendered %v, shell %v", h, n.Rendered(), isShell)
		}
		if n.Rendered() {
			rendered++
		}
	}
	m := metrics(t, auto+".metrics")
	if m.PagesRendered != int64(rendered) || rendered == 0 || m.RenderFailures != 0 {
		t.Errorf("pages_rendered %d, render_failures %d; %d nodes rendered", m.PagesRendered, m.RenderFailures, rendered)
	}
	for _, rq := range w.Requests() {
		if rq.Host == hosts[5] && rq.Path == "/app.js" {
			t.Errorf("%s/app.js fetched though its robots.txt disallows it", rq.Host)
		}
	}

	never := filepath.Join(dir, "never.bolt")
	if r := weaver(t, dir, crawlArgs(srv, never, "--max-depth", "0", "--max-crawls-per-node", "1", w.Seed())...); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	got := edges(t, never)
	for k, wt := range got {
		if w.Shell(k[0]) != fakeweb.NoShell {
			t.Errorf("--render never: edge %s → %s out of a shell", k[0], k[1])
		}
		if want[k] != wt {
			t.Errorf("--render never: edge %s → %s weight %d, want %d", k[0], k[1], wt, want[k])
		}
	}
	if len(got) >= len(want) {
		t.Errorf("--render never found %d edges, auto %d: the shells' links should be missing", len(got), len(want))
	}
}

// TestRender_NoBrowser_Exit2: --render without a browser exits 2 with one
// line naming --browser, and writes no store.
func TestRender_NoBrowser_Exit2(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	env := append(cleanEnv(), "PATH=/nonexistent")
	r := weaverEnv(t, dir, env, "crawl", "--db", db, "--render", "auto", "http://a.test/")
	if r.code != 2 || !strings.Contains(r.stderr, "--browser") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("exit %d, stderr %q: want 2 and one line naming --browser", r.code, r.stderr)
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a store was written")
	}
}
