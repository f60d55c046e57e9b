package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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

// TestRender_HostileAndKilledBrowser: a shell whose script loads scripts
// from private addresses still renders (those requests are refused by the
// crawl's own transport, after DNS), a script that never ends costs one
// render timeout and is counted as a failure, and a browser killed
// mid-crawl is started again: the crawl ends with the whole expected
// graph.
func TestRender_HostileAndKilledBrowser(t *testing.T) {
	browser := chromiumPath(t)
	base := fakeweb.New(fakeweb.Config{Hosts: 40, Seed: 79, RobotsDisallowEvery: -1})
	hosts := base.Hosts()
	w := fakeweb.New(fakeweb.Config{Hosts: 40, Seed: 79, RobotsDisallowEvery: -1, ShellEvery: 5,
		Shells: map[string]fakeweb.Shell{hosts[3]: fakeweb.ShellPrivate, hosts[4]: fakeweb.ShellLoop}})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	args := crawlArgs(srv, db, "--max-depth", "0", "--max-crawls-per-node", "1", "--workers", "2", "--render", "auto", "--browser", browser, w.Seed())
	cmd := exec.Command(weaverBin, args...)
	cmd.Dir, cmd.Env = dir, cleanEnv()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Kill the browser (every process below weaver) once it runs.
	killed := 0
	deadline := time.Now().Add(60 * time.Second)
	for killed == 0 && time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("the crawl ended (%v) before its browser could be killed", err)
		case <-time.After(200 * time.Millisecond):
		}
		for _, pid := range descendants(cmd.Process.Pid) {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed++
			}
		}
	}
	if killed == 0 {
		t.Fatal("no browser process appeared")
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("crawl: %v", err)
		}
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		t.Fatal("the crawl did not end")
	}
	storetest.SameGraph(t, edges(t, db), w.ExpectedEdges(10, excluded))
	ns := nodes(t, db)
	if n := ns[hosts[3]]; !n.Rendered() {
		t.Errorf("%s (scripts from private addresses) was not rendered", hosts[3])
	}
	m := metrics(t, db+".metrics")
	if m.RenderFailures < 1 {
		t.Errorf("render_failures %d: the endless script should have cost one timeout", m.RenderFailures)
	}
	// The script's http://127.0.0.1:1/x.js is refused by the crawl's own
	// dialer (an address literal: before any --connect-to rule), so the
	// fake web never sees it. (Its localhost:1 twin is a name, which the
	// test's catch-all --connect-to maps to the fake web, as it would any
	// crawl's link; without such a rule the name resolves to a loopback
	// address and is refused after DNS.)
	for _, rq := range w.Requests() {
		if strings.HasPrefix(rq.Host, "127.") {
			t.Errorf("a request reached the fake web as %s%s", rq.Host, rq.Path)
		}
	}
}

// descendants lists the processes below pid, from /proc.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut at ')'.
		f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
		if len(f) > 1 {
			if pp, err := strconv.Atoi(f[1]); err == nil {
				children[pp] = append(children[pp], p)
			}
		}
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			out = append(out, c)
			walk(c)
		}
	}
	walk(pid)
	return out
}

// TestRender_ResumeKeepsBrowser: the render mode and the browser are
// stored (the browser given relative, stored absolute): a bare resume
// renders with the same browser, and one whose stored browser is gone is
// refused, naming it, before the store is touched.
func TestRender_ResumeKeepsBrowser(t *testing.T) {
	browser := chromiumPath(t)
	w := fakeweb.New(fakeweb.Config{Hosts: 24, Seed: 83, ShellEvery: 4, RobotsDisallowEvery: -1})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "weaver.bolt")
	link := filepath.Join(dir, "bin", "chromium-link")
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(browser, link); err != nil {
		t.Fatal(err)
	}
	r := weaver(t, dir, crawlArgs(srv, db, "--max-depth", "0", "--max-crawls-per-node", "1", "--max-pages", "3",
		"--render", "auto", "--browser", filepath.Join("bin", "chromium-link"), w.Seed())...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if m := metrics(t, db+".metrics"); m.TerminationReason != "max_pages" {
		t.Fatalf("first crawl ended %q, want max_pages (the test needs a crawl left to resume)", m.TerminationReason)
	}
	if set := statusSettings(t, dir, db); set["render"] != "auto" || set["browser"] != link {
		t.Fatalf("stored render %v, browser %v; want auto and %s", set["render"], set["browser"], link)
	}

	if err := os.Rename(link, link+".moved"); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(db)
	r = weaver(t, dir, "crawl")
	if r.code != 2 || !strings.Contains(r.stderr, link) || !strings.Contains(r.stderr, "stored in weaver.bolt") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("resume with the stored browser gone: exit %d, stderr %q; want 2 and one line naming %s", r.code, r.stderr, link)
	}
	if after, _ := os.ReadFile(db); string(after) != string(before) {
		t.Error("the refused resume changed the store")
	}
	if err := os.Rename(link+".moved", link); err != nil {
		t.Fatal(err)
	}

	r = weaver(t, dir, "crawl")
	if r.code != 0 || len(settingLines(r.stdout)) != 0 {
		t.Fatalf("bare resume: exit %d, setting lines %q\n%s", r.code, settingLines(r.stdout), r.stderr)
	}
	storetest.SameGraph(t, edges(t, db), w.ExpectedEdges(10, excluded))
	shells := 0
	for h, n := range nodes(t, db) {
		if n.CrawlCount > 0 && w.Shell(h) != fakeweb.NoShell {
			shells++
			if !n.Rendered() {
				t.Errorf("%s is a shell, crawled and not rendered", h)
			}
		}
	}
	if shells == 0 {
		t.Error("no shell crawled: the test proves nothing")
	}
}

// TestRender_NavigationIsARedirect: a rendered page whose script sends the
// browser to another host (location.href = the seed) records that as its
// redirect there, an edge with redirect counted; the browser never goes:
// the seed's home page is asked once, by its own crawl.
func TestRender_NavigationIsARedirect(t *testing.T) {
	browser := chromiumPath(t)
	hosts := fakeweb.New(fakeweb.Config{Hosts: 24, Seed: 53, RobotsDisallowEvery: -1}).Hosts()
	nav := hosts[3]
	w := fakeweb.New(fakeweb.Config{Hosts: 24, Seed: 53, RobotsDisallowEvery: -1, Shells: map[string]fakeweb.Shell{nav: fakeweb.ShellNavigate}})
	srv := startWeb(t, w)
	seed := hosts[0]
	dir := t.TempDir()
	db := filepath.Join(dir, "nav.bolt")
	r := weaver(t, dir, crawlArgs(srv, db, "--max-depth", "0", "--max-crawls-per-node", "1", "--render", "auto", "--browser", browser, w.Seed())...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	want := w.ExpectedEdges(10, excluded)
	want[[2]string{nav, seed}] = 1
	storetest.SameGraph(t, edges(t, db), want)
	if e := edgeFacts(t, db)[[2]string{nav, seed}]; e.Redirect != 1 {
		t.Errorf("edge %s → %s: %+v, want the navigation counted as a redirect", nav, seed, e)
	}
	home := 0
	for _, rq := range w.Requests() {
		if rq.Host == seed && rq.Path == "/" {
			home++
		}
	}
	if home != 1 {
		t.Errorf("the seed's home page asked %d times, want once (the browser never goes)", home)
	}
}
