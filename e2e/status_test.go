package e2e_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/serve"
)

// TestStatus_IdleStore: weaver status on a finished crawl's store.
func TestStatus_IdleStore(t *testing.T) {
	t.Parallel()
	w := fakeweb.Loop3()
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	if r := weaver(t, dir, crawlArgs(srv, db, "--max-crawls-per-node", "1", w.Seed())...); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s", r.code, r.stderr)
	}
	m := metrics(t, db+".metrics")
	r := weaver(t, dir, "status", "--db", db)
	if r.code != 0 {
		t.Fatalf("status: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"Store:", "Nodes:", "Crawled nodes:", "Edges:", "Total weight:", "Frontier:", "Leases:",
		"Robots cached:", "Last crawl:", "Frontier by depth", "Top 10 hosts by in-weight"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, r.stdout)
		}
	}
	r = weaver(t, dir, "status", "--db", db, "--json")
	var rep serve.Status
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 {
		t.Fatalf("--json: exit %d, %v\n%s", r.code, err, r.stdout)
	}
	if rep.Store.Nodes != m.TotalNodes || rep.Store.Edges != m.TotalEdges || rep.Store.TotalWeight != m.TotalWeight ||
		rep.Store.FrontierSize != m.FrontierSize || rep.Crawl != nil || rep.Store.LastCrawl == nil {
		t.Errorf("status %+v, metrics.log %+v", rep.Store, m)
	}
}

// TestStatus_RunningCrawl: while weaver crawl --listen holds the store,
// weaver status asks it and shows the live figures too.
func TestStatus_RunningCrawl(t *testing.T) {
	t.Parallel()
	sc := startSlowCrawl(t)
	dir := filepath.Dir(sc.db)
	r := weaver(t, dir, "status", "--db", sc.db)
	if r.code != 0 {
		t.Fatalf("status: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"Nodes:", "Live crawl (http://127.0.0.1:", "State:              running", "Workers:", "fetching 1"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, r.stdout)
		}
	}
	r = weaver(t, dir, "status", "--db", sc.db, "--json")
	var rep serve.Status
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 {
		t.Fatalf("--json: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if rep.Crawl == nil || !rep.Crawl.Running || rep.Store.Nodes < 2 {
		t.Errorf("report: %+v", rep)
	}
	sc.stop(t)
}

// TestStatus_InUseWithoutListen: a crawl without --listen is asked all
// the same (issue 51): it serves this machine's readers on a loopback port
// of its own, its token in the file beside the store (a process that
// serves no API is the unit test's, cmd/weaver TestStatus_InUse_NoListen).
func TestStatus_InUseWithoutListen(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 20, Seed: 5, RobotsDisallowEvery: -1,
		Faults: map[string]fakeweb.Fault{"slow.drip.test": fakeweb.SlowDrip}})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	p := start(t, dir, crawlArgs(srv, db, "--max-outbound-links", "1", "--ignore-robots", "--timeout", "60s", "--retries", "0", w.Seed())...)
	p.poll(t, "the crawl to start", func() bool { return strings.Contains(p.out.String(), "Starting crawl from") })
	r := weaver(t, dir, "status", "--db", db)
	if r.code != 0 || !strings.Contains(r.stdout, "Nodes:") || !strings.Contains(r.stdout, "Workers") {
		t.Errorf("exit %d, want the running crawl's status\n%s%s", r.code, r.stdout, r.stderr)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t); code != 0 {
		t.Errorf("crawl exit %d\n%s", code, p.out.String())
	}
}
