package e2e_test

import (
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
)

// closedPort returns a loopback address nothing listens on: a connection
// to it is refused.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// notFoundServer answers 404 with an empty page to every request.
func notFoundServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotFound)
	}), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// retryArgs are the flags of a fast crawl of every host of a web, to
// which the --connect-to rules of hosts made to fail are put first.
func retryArgs(db string, srv *fakeweb.Server, failing []string, extra ...string) []string {
	args := []string{"crawl", "--db", db, "--metrics", db + ".metrics", "--delay", "0", "--quiet", "--retry-delay", "10ms",
		"--workers", "4", "--max-depth", "0", "--max-crawls-per-node", "1", "--ignore-robots"}
	for _, r := range failing {
		args = append(args, "--connect-to", r)
	}
	return append(append(args, "--connect-to", srv.ConnectTo()), extra...)
}

// TestRetryFailed_ByCause crawls a web in which some hosts at depth 1
// fail — two by DNS, three refusing connections, one answering 404 — as
// hosts lost to an outage were before weaver paused for it. Then
// --retry-failed=dns, with those names resolving again and the others
// still failing, requeues the DNS failures only; then --retry-failed, with
// the whole web up, requeues the rest and the store holds exactly the
// graph of an uninterrupted crawl, no host failed; then --retry-failed
// again finds nothing to requeue and changes nothing.
func TestRetryFailed_ByCause(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 200, Seed: 53, RobotsDisallowEvery: -1, CrawlDelayEvery: -1})
	srv := startWeb(t, w)
	want := w.ExpectedEdges(10, excluded)
	u, _ := url.Parse(w.Seed())
	seedHost := u.Hostname()

	// The seed's targets that have targets of their own, in name order.
	out := map[string]int{}
	for e := range want {
		out[e[0]]++
	}
	var depth1 []string
	for e := range want {
		if e[0] == seedHost && out[e[1]] > 0 {
			depth1 = append(depth1, e[1])
		}
	}
	sort.Strings(depth1)
	if len(depth1) < 6 {
		t.Fatalf("the seed %s links to %d hosts with links, want 6", seedHost, len(depth1))
	}
	dnsHosts, connHosts, httpHost := depth1[:2], depth1[2:5], depth1[5]
	refused, notFound := closedPort(t), notFoundServer(t)
	var dnsRules, otherRules []string
	for _, h := range dnsHosts {
		dnsRules = append(dnsRules, h+"::"+h+".onion:") // Go resolves no .onion name
	}
	for _, h := range connHosts {
		otherRules = append(otherRules, h+"::"+refused)
	}
	otherRules = append(otherRules, httpHost+"::"+notFound)

	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	// 1. The web with its failing hosts.
	if r := weaver(t, dir, retryArgs(db, srv, append(append([]string{}, dnsRules...), otherRules...), w.Seed())...); r.code != 0 {
		t.Fatalf("first crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	ns := nodes(t, db)
	wantStatus := func(hosts []string, st graph.Status, cause string) {
		t.Helper()
		for _, h := range hosts {
			if n := ns[h]; n.Status != st || !strings.HasPrefix(strings.ToLower(n.Error), cause) || n.FailCount < 1 && st != graph.StatusHTTPError {
				t.Errorf("%s: status %s, error %q, fail_count %d; want %s, %s…", h, n.Status, n.Error, n.FailCount, st, cause)
			}
		}
	}
	wantStatus(dnsHosts, graph.StatusDNSError, "dns")
	wantStatus(connHosts, graph.StatusFetchError, "connect")
	wantStatus([]string{httpHost}, graph.StatusHTTPError, "http 404")
	if got := edges(t, db); len(got) >= len(want) {
		t.Fatalf("the first crawl recorded %d edges of %d: the failing hosts lost none", len(got), len(want))
	}

	// 2. The names resolve again; the other hosts still fail.
	r := weaver(t, dir, retryArgs(db, srv, otherRules, "--retry-failed=dns")...)
	if r.code != 0 {
		t.Fatalf("--retry-failed=dns: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "Retry failed (dns): requeued 2 failed hosts at their depth (dns 2)") {
		t.Errorf("--retry-failed=dns did not say it requeued the 2 DNS failures:\n%s", r.stdout)
	}
	ns = nodes(t, db)
	for _, h := range dnsHosts {
		if n := ns[h]; n.Status != graph.StatusCrawled || n.FailCount != 0 || n.Error != "" || n.Depth != 1 {
			t.Errorf("%s after --retry-failed=dns: status %s, fail_count %d, error %q, depth %d; want crawled, 0, none, 1",
				h, n.Status, n.FailCount, n.Error, n.Depth)
		}
	}
	wantStatus(connHosts, graph.StatusFetchError, "connect")
	wantStatus([]string{httpHost}, graph.StatusHTTPError, "http 404")

	// 3. The whole web is up: every failure is requeued.
	r = weaver(t, dir, retryArgs(db, srv, nil, "--retry-failed")...)
	if r.code != 0 {
		t.Fatalf("--retry-failed: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "requeued 4 failed hosts at their depth (connect 3, http 1)") {
		t.Errorf("--retry-failed did not say it requeued 3 connect and 1 http failures:\n%s", r.stdout)
	}
	storetest.SameGraph(t, edges(t, db), want)
	noHostFailed(t, db)

	// 4. Nothing failed: said, and nothing changes.
	r = weaver(t, dir, retryArgs(db, srv, nil, "--retry-failed")...)
	if r.code != 0 || !strings.Contains(r.stdout, "Retry failed (dns,connect,tls,http,other): no failed host to requeue") {
		t.Errorf("--retry-failed on a store without failures: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	storetest.SameGraph(t, edges(t, db), want)
	noHostFailed(t, db)
}

// TestRetryFailed_WebAwayFromStart crawls a fresh store while the web is
// away (nothing answers, so nothing tells an outage from failing hosts:
// the seed fails, exit 1), then --retry-failed with the web up crawls the
// graph of an uninterrupted crawl. A bad cause is a usage error that
// changes nothing.
func TestRetryFailed_WebAwayFromStart(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 150, Seed: 59, RobotsDisallowEvery: -1, CrawlDelayEvery: -1})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	away := []string{"::" + closedPort(t)}
	if r := weaver(t, dir, retryArgs(db, srv, away, w.Seed())...); r.code != 1 || !strings.Contains(r.stderr, "nothing could be fetched") {
		t.Fatalf("crawl with the web away: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := weaver(t, dir, retryArgs(db, srv, nil, "--retry-failed=dns,bogus")...); r.code != 2 || !strings.Contains(r.stderr, `unknown cause "bogus"`) {
		t.Errorf("--retry-failed=dns,bogus: exit %d, want 2 naming the cause\n%s", r.code, r.stderr)
	}
	if r := weaver(t, dir, retryArgs(db, srv, nil, "--retry-failed", "dns")...); r.code != 2 || !strings.Contains(r.stderr, "--retry-failed=dns") {
		t.Errorf("--retry-failed dns: exit %d, want 2 pointing at --retry-failed=dns\n%s", r.code, r.stderr)
	}
	r := weaver(t, dir, retryArgs(db, srv, nil, "--retry-failed=connect")...)
	if r.code != 0 || !strings.Contains(r.stdout, "requeued 1 failed host at its depth (connect 1)") {
		t.Fatalf("--retry-failed=connect: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	storetest.SameGraph(t, edges(t, db), w.ExpectedEdges(10, excluded))
	noHostFailed(t, db)
}
