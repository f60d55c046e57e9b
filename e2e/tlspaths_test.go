package e2e_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
)

// The user-visible paths over HTTPS besides the crawl itself (tls_test.go):
// WARC, rendering and the cluster.

// TestTLS_WARC: a crawl with --warc of a web served over HTTPS (HTTP/2,
// plain http redirected) records every exchange so that warcio.js reads
// each HTTP message as HTTP/1.x with its digests right, the https URI as
// target, and the protocols in WARC-Protocol (h2 and tls/1.3 for each
// request that came over TLS, http/1.1 for each redirect) with the TLS
// cipher suite in WARC-Cipher-Suite; weaver import of the files gives the
// crawl's graph.
func TestTLS_WARC(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 20, Seed: 61, RobotsDisallowEvery: -1, CrawlDelayEvery: -1})
	m := webMode{"https", true}
	srv, trust := m.start(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	warcs := filepath.Join(dir, "warcs")
	r := weaver(t, dir, crawlArgs(srv, db, append(trust, "--max-depth", "0", "--max-crawls-per-node", "1", "--warc", warcs, m.seed(w))...)...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	want := w.ExpectedEdges(10, excluded)
	storetest.SameGraph(t, edges(t, db), want)
	h2, redirects := checkTLSLog(t, w)

	files, _ := filepath.Glob(filepath.Join(warcs, "*.warc.gz"))
	protocols := map[string]int{}
	ciphers, https := 0, 0
	for _, rep := range warcioCheck(t, files) {
		for _, e := range rep.Errors {
			t.Errorf("%s: %s", filepath.Base(rep.File), e)
		}
		for k, v := range rep.Protocols {
			protocols[k] += v
		}
		ciphers += rep.Ciphers
		https += rep.HTTPS
	}
	// One response record per request the web saw, each with the
	// protocols it came over.
	if protocols["h2 tls/1.3"] != h2 || protocols["http/1.1"] != redirects || len(protocols) != 2 {
		t.Errorf("WARC-Protocol of the response records: %v; want %d \"h2 tls/1.3\" and %d \"http/1.1\" (the web's request log)", protocols, h2, redirects)
	}
	if ciphers != h2 || https != h2 {
		t.Errorf("%d response records name a cipher suite, %d are of an https URI; want %d each", ciphers, https, h2)
	}
	t.Logf("%d response records over h2 and tls/1.3, %d redirects over http/1.1", h2, redirects)

	fresh := filepath.Join(dir, "imported.bolt")
	if r := weaver(t, dir, "import", "--db", fresh, warcs); r.code != 0 {
		t.Fatalf("import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	storetest.SameGraph(t, edges(t, fresh), want)
}

// TestTLS_Render: --render auto over HTTPS with --ca-file: the shells'
// pages and scripts are fetched by weaver over TLS (the browser makes no
// connection: every request it makes is fetched with the crawl's
// transport, which trusts the CA), and the whole expected graph comes out.
func TestTLS_Render(t *testing.T) {
	t.Parallel()
	browser := chromiumPath(t)
	w := fakeweb.New(fakeweb.Config{Hosts: 12, Seed: 83, ShellEvery: 4, RobotsDisallowEvery: -1})
	m := webMode{"https", true}
	srv, trust := m.start(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	r := weaver(t, dir, crawlArgs(srv, db, append(trust, "--max-depth", "0", "--max-crawls-per-node", "1",
		"--render", "auto", "--browser", browser, m.seed(w))...)...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	storetest.SameGraph(t, edges(t, db), w.ExpectedEdges(10, excluded))
	rendered := 0
	for h, n := range nodes(t, db) {
		if n.CrawlCount == 0 {
			continue
		}
		if isShell := w.Shell(h) != fakeweb.NoShell; n.Rendered() != isShell {
			t.Errorf("%s: rendered %v, shell %v", h, n.Rendered(), isShell)
		} else if isShell {
			rendered++
		}
	}
	mt := metrics(t, db+".metrics")
	if rendered == 0 || mt.PagesRendered != int64(rendered) || mt.RenderFailures != 0 {
		t.Errorf("%d shells rendered; pages_rendered %d, render_failures %d", rendered, mt.PagesRendered, mt.RenderFailures)
	}
	scripts := 0
	for _, rq := range w.Requests() {
		if rq.Path == "/app.js" && rq.TLS {
			scripts++
		}
	}
	if scripts != rendered {
		t.Errorf("%d scripts fetched over TLS for %d shells rendered", scripts, rendered)
	}
	t.Logf("%d shells rendered over https, their scripts fetched over TLS", rendered)
	checkTLSLog(t, w)
}

// TestTLS_Cluster: two shards crawl a web served over HTTPS (HTTP/2, plain
// http redirected), each with --ca-file; their merged stores hold the
// web's graph, each shard fetched pages over TLS, and no home page was
// fetched twice across the cluster.
func TestTLS_Cluster(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 60, Seed: 67})
	m := webMode{"https", true}
	srv, trust := m.start(t, w)
	ns := startNATS(t)
	dir := t.TempDir()
	var dbs []string
	var procs []*shardProc
	for k := range 2 {
		db := filepath.Join(dir, fmt.Sprintf("s%d.bolt", k))
		dbs = append(dbs, db)
		args := crawlArgs(srv, db, append(trust, "--max-depth", "0", "--max-crawls-per-node", "1",
			"--cluster", ns.URL(), "--shard", fmt.Sprintf("%d/2", k), m.seed(w))...)
		procs = append(procs, startShard(t, dir, nil, args...))
	}
	waitShards(t, procs, 2*time.Minute)
	for k, db := range dbs {
		if mt := metrics(t, db+".metrics"); mt.TerminationReason != "queue_empty" || mt.PagesFetched == 0 || mt.PagesFailed != 0 {
			t.Errorf("shard %d: termination_reason %q, %d pages fetched, %d failed", k, mt.TerminationReason, mt.PagesFetched, mt.PagesFailed)
		}
	}
	storetest.SameGraph(t, edges(t, mergeShards(t, dir, dbs)), w.ExpectedEdges(10, excluded))
	checkTLSLog(t, w)
	home := map[string]int{}
	for _, rq := range w.Requests() {
		if rq.Path == "/" && rq.TLS {
			home[rq.Host]++
		}
	}
	for h, n := range home {
		if n > 1 {
			t.Errorf("%s's home page fetched %d times over TLS across the cluster", h, n)
		}
	}
}
