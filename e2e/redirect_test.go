package e2e_test

import (
	"fmt"
	"maps"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/serve"
)

// Issue 50: every request through the rules of the host it goes to, every
// redirect an edge, every page fetched once. The web is fakeweb's
// RedirectCases, each case a seed; the scope keeps cdn.other.example (a
// robots.txt's CDN) out, so that fetching robots.txt there is seen not to
// be crawling it.
var redirectScope = []string{"--scope", `\.test$`, "--scope", `^10\.`}

// wantNode is what a case's host must record.
type wantNode struct {
	status     graph.Status
	http       int
	redirectTo string
	err        string // a part of its error
	depth      int
}

// redirectNodes are the hosts the cases make, each with what a polite,
// exact crawl records (fakeweb.RedirectCases says why, host by host).
var redirectNodes = map[string]wantNode{
	"src.test":          {status: graph.StatusCrawled, http: 301, redirectTo: "http://noentry.test/"},
	"noentry.test":      {status: graph.StatusRobotsDisallow},
	"samehost.test":     {status: graph.StatusRobotsDisallow, err: "http://samehost.test/private/"},
	"tofb.test":         {status: graph.StatusCrawled, http: 302, redirectTo: "http://www.facebook.com/"},
	"apex.test":         {status: graph.StatusCrawled, http: 301, redirectTo: "http://www.apex.test/"},
	"www.apex.test":     {status: graph.StatusCrawled, http: 200},
	"to403.test":        {status: graph.StatusCrawled, http: 301, redirectTo: "http://www.waf403.test/"},
	"www.waf403.test":   {status: graph.StatusHTTPError, http: 403},
	"refresh.test":      {status: graph.StatusCrawled, http: 200},
	"target.test":       {status: graph.StatusCrawled, http: 200},
	"linked.test":       {status: graph.StatusHTTPError, http: 404, depth: 1},
	"refresh2.test":     {status: graph.StatusCrawled, http: 200},
	"target2.test":      {status: graph.StatusCrawled, http: 200},
	"landed.test":       {status: graph.StatusHTTPError, http: 404, depth: 1},
	"reload.test":       {status: graph.StatusCrawled, http: 200},
	"refreshsame.test":  {status: graph.StatusCrawled, http: 200},
	"enlinked.test":     {status: graph.StatusHTTPError, http: 404, depth: 1},
	"robotscdn.test":    {status: graph.StatusCrawled, http: 200},
	"robotsloop.test":   {status: graph.StatusCrawled, http: 200},
	"robotschain.test":  {status: graph.StatusRobotsDisallow},
	"cookie.test":       {status: graph.StatusCrawled, http: 200},
	"cut.test":          {status: graph.StatusFetchError, err: "reset: unexpected EOF"},
	"loopa.test":        {status: graph.StatusCrawled, http: 301, redirectTo: "http://loopb.test/"},
	"loopb.test":        {status: graph.StatusCrawled, http: 301, redirectTo: "http://loopa.test/"},
	"sameloop.test":     {status: graph.StatusFetchError, err: "redirects: too many redirects"},
	"emptyloc.test":     {status: graph.StatusCrawled, http: 301, err: "redirect without a Location"},
	"relloc.test":       {status: graph.StatusCrawled, http: 200},
	"idnloc.test":       {status: graph.StatusCrawled, http: 301, redirectTo: "http://xn--e1afmkfd.test/"},
	"xn--e1afmkfd.test": {status: graph.StatusCrawled, http: 200},
	"ftploc.test":       {status: graph.StatusCrawled, http: 301, err: `unsupported protocol scheme "ftp"`},
	"privloc.test":      {status: graph.StatusCrawled, http: 301, redirectTo: "http://10.9.9.9/"},
	"10.9.9.9":          {status: graph.StatusRefused},
	"badgzip.test":      {status: graph.StatusFetchError, err: "encoding: content encoding gzip"},
	"chain50.test":      {status: graph.StatusFetchError, err: "redirects: too many redirects"},
	"pages.test":        {status: graph.StatusCrawled, http: 200},
	"deflate.test":      {status: graph.StatusCrawled, http: 200},
	"xhop8.test":        {status: graph.StatusCrawled, http: 200, depth: 2},
}

func init() {
	// xhop1.test → … → xhop8.test: a seed's chain of redirects is a seed's
	// for five hops, then each hop is one of depth.
	for k := 1; k < 8; k++ {
		from, to := fmt.Sprintf("xhop%d.test", k), fmt.Sprintf("xhop%d.test", k+1)
		redirectNodes[from] = wantNode{status: graph.StatusCrawled, http: 301, redirectTo: "http://" + to + "/", depth: max(k-6, 0)}
		redirectEdges[[2]string{from, to}] = fakeweb.ExpectedEdge{Weight: 1, Redirect: 1}
	}
}

// redirectEdges are the edges of the cases: weight, redirect.
var redirectEdges = map[[2]string]fakeweb.ExpectedEdge{
	{"src.test", "noentry.test"}:          {Weight: 1, Redirect: 1},
	{"apex.test", "www.apex.test"}:        {Weight: 1, Redirect: 1},
	{"www.apex.test", "target.test"}:      {Weight: 1, Redirect: 0},
	{"to403.test", "www.waf403.test"}:     {Weight: 1, Redirect: 1},
	{"refresh.test", "target.test"}:       {Weight: 1, Redirect: 1},
	{"refresh.test", "linked.test"}:       {Weight: 1, Redirect: 0},
	{"refresh2.test", "target2.test"}:     {Weight: 1, Redirect: 1},
	{"target2.test", "landed.test"}:       {Weight: 1, Redirect: 0},
	{"refreshsame.test", "linked.test"}:   {Weight: 1, Redirect: 0},
	{"refreshsame.test", "enlinked.test"}: {Weight: 1, Redirect: 0},
	{"robotscdn.test", "target.test"}:     {Weight: 1, Redirect: 0},
	{"robotsloop.test", "target.test"}:    {Weight: 1, Redirect: 0},
	{"cookie.test", "target.test"}:        {Weight: 1, Redirect: 0},
	{"loopa.test", "loopb.test"}:          {Weight: 1, Redirect: 1},
	{"loopb.test", "loopa.test"}:          {Weight: 1, Redirect: 1},
	{"relloc.test", "target.test"}:        {Weight: 1, Redirect: 0},
	{"idnloc.test", "xn--e1afmkfd.test"}:  {Weight: 1, Redirect: 1},
	{"privloc.test", "10.9.9.9"}:          {Weight: 1, Redirect: 1},
	{"deflate.test", "target.test"}:       {Weight: 1},
}

// TestRedirects_PoliteAndExact crawls every case and checks the request
// log (no page of a host before its robots.txt, none it disallows, none
// of an excluded host, each page answered once) and the graph: each
// node's status, answer and redirect, each edge with its redirects, and
// no node for what was never linked (leak.test behind disallowed pages,
// cutlink.test in a body cut short, the CDN of a robots.txt).
func TestRedirects_PoliteAndExact(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 3, Scripts: fakeweb.RedirectCases()})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "r.bolt")
	args := append(crawlArgs(srv, db, "--workers", "4"), redirectScope...)
	r := weaver(t, dir, append(args, fakeweb.RedirectSeeds()...)...)
	if r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	checkPolite(t, w.Requests(), true)
	checkRedirectGraph(t, db, redirectEdges)
}

// checkPolite checks a crawl's requests of the cases' web; once, that no
// page was answered twice (a crawl without revisits).
func checkPolite(t *testing.T, reqs []fakeweb.Request, once bool) {
	t.Helper()
	// Paths robots.txt disallows, by host, and the requests that are a
	// robots.txt's redirects (not pages).
	disallowed := map[string][]string{"noentry.test": {"/"}, "samehost.test": {"/private/"}, "robotschain.test": {"/"}}
	robotsHop := map[string]bool{"cdn.other.example /robots/robotscdn.txt": true}
	for i := 1; i <= 5; i++ {
		robotsHop[fmt.Sprintf("robotschain.test /r/%d", i)] = true
	}
	askedRobots := map[string]bool{}
	answered := map[string]int{}
	for _, q := range reqs {
		hp := q.Host + " " + q.Path
		switch {
		case q.Path == "/robots.txt":
			askedRobots[q.Host] = true
			continue
		case robotsHop[hp]:
			continue
		case !askedRobots[q.Host]:
			t.Errorf("%s asked before its robots.txt", hp)
		case slices.Contains(disallowed[q.Host], q.Path):
			t.Errorf("%s asked, which its robots.txt disallows", hp)
		case fakeweb.DefaultExcluded(q.Host):
			t.Errorf("%s asked: an excluded host", hp)
		case q.Host == "10.9.9.9":
			t.Errorf("%s asked: a private address", hp)
		}
		if q.Status >= 200 && q.Status < 300 && q.Host != "cut.test" {
			answered[hp]++
		}
	}
	if !once {
		return
	}
	for hp, n := range answered {
		if n > 1 {
			t.Errorf("%s answered %d times, want once", hp, n)
		}
	}
	if answered["www.apex.test /"] != 1 || answered["target.test /"] != 1 {
		t.Errorf("www.apex.test / answered %d times, target.test / %d, want once each", answered["www.apex.test /"], answered["target.test /"])
	}
}

// checkRedirectGraph checks the store's nodes against redirectNodes
// (every case host; no leak.test, cutlink.test, CDN or facebook node)
// and its edges against want, with their redirect counts.
func checkRedirectGraph(t *testing.T, db string, want map[[2]string]fakeweb.ExpectedEdge) {
	t.Helper()
	got := nodes(t, db)
	for h, wn := range redirectNodes {
		n, ok := got[h]
		switch {
		case !ok:
			t.Errorf("%s: no node", h)
			continue
		case n.Status != wn.status || n.HTTPStatus != wn.http || n.RedirectTo != wn.redirectTo:
			t.Errorf("%s: %s, HTTP %d, redirect %q (%s); want %s, HTTP %d, redirect %q", h, n.Status, n.HTTPStatus, n.RedirectTo, n.Error, wn.status, wn.http, wn.redirectTo)
		case !strings.Contains(n.Error, wn.err):
			t.Errorf("%s: error %q, want it to say %q", h, n.Error, wn.err)
		case n.Depth != wn.depth:
			t.Errorf("%s: depth %d, want %d (a seed's redirect is a seed)", h, n.Depth, wn.depth)
		}
	}
	for _, h := range []string{"leak.test", "cutlink.test", "cdn.other.example", "www.facebook.com", "files.test"} {
		if _, ok := got[h]; ok {
			t.Errorf("%s is a node: nothing recorded links to it", h)
		}
	}
	facts := edgeFacts(t, db)
	for k, e := range facts {
		if w, ok := want[k]; !ok || e != w {
			t.Errorf("edge %s → %s: %+v; want %+v (present: %v)", k[0], k[1], e, w, ok)
		}
	}
	for k := range want {
		if _, ok := facts[k]; !ok {
			t.Errorf("no edge %s → %s", k[0], k[1])
		}
	}
}

// TestRedirects_PagesPerHost: with --pages-per-host, a later page's
// redirect to another host ends that page only: pages.test's /go is an
// edge (redirect 1) to target3.test and /about still gives its link.
func TestRedirects_PagesPerHost(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 3, Scripts: fakeweb.RedirectCases()})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "p.bolt")
	args := append(crawlArgs(srv, db, "--pages-per-host", "3"), redirectScope...)
	r := weaver(t, dir, append(args, fakeweb.RedirectSeeds()...)...)
	if r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	checkPolite(t, w.Requests(), true)
	want := maps.Clone(redirectEdges)
	want[[2]string{"pages.test", "target3.test"}] = fakeweb.ExpectedEdge{Weight: 1, Redirect: 1}
	want[[2]string{"pages.test", "aboutlinked.test"}] = fakeweb.ExpectedEdge{Weight: 1}
	checkRedirectGraph(t, db, want)
	if n := nodes(t, db)["pages.test"]; n.PagesFetched != 3 {
		t.Errorf("pages.test: %d pages fetched, want 3 (/, /go's redirect, /about)", n.PagesFetched)
	}
}

// TestRedirects_KillResume: a crawl of the cases with a politeness delay
// (so that kills land inside redirect chains and between a robots.txt
// and its page), killed at random instants and resumed, records the graph
// an uninterrupted crawl records.
func TestRedirects_KillResume(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 3, Scripts: fakeweb.RedirectCases()})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "k.bolt")
	args := append(crawlArgs(srv, db, "--workers", "3", "--delay", "150ms"), redirectScope...)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	kills := 0
	for round := 0; round < 12; round++ {
		a := args
		if !seeded(t, db) {
			a = append(slices.Clone(a), fakeweb.RedirectSeeds()...)
		}
		var d time.Duration
		if kills < 3 {
			d = time.Duration(200+rng.Intn(900)) * time.Millisecond
		}
		killed, err := interrupt(t, dir, a, d, os.Kill)
		if killed {
			kills++
			t.Logf("round %d: killed after %v", round, d)
			continue
		}
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if m := metrics(t, db+".metrics"); m.TerminationReason == "queue_empty" {
			break
		}
	}
	if kills == 0 {
		t.Log("no kill landed before the crawl ended")
	}
	checkRedirectGraph(t, db, redirectEdges)
}

// TestRedirects_ApexWeb: the bundled web with every second host reached
// through a twin name that redirects to it (robots.txt included), crawled
// whole, records the fake web's ground truth (each twin an edge to its
// host) and answers no page twice: the twin's crawl ends at its redirect,
// its host's is its own.
func TestRedirects_ApexWeb(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 300, Topics: 8, Seed: 1, ApexEvery: 2})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "a.bolt")
	r := weaver(t, dir, crawlArgs(srv, db, "--max-depth", "0", "--max-subdomains-per-root", "0", w.Seed())...)
	if r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := w.ExpectedEdges(10, excluded)
	twins := 0
	for k := range want {
		if w.Twin(k[0]) == k[1] {
			twins++
		}
	}
	if twins < 100 {
		t.Fatalf("the web has %d twins' redirects, want about 150", twins)
	}
	if got := edges(t, db); !maps.Equal(got, want) {
		t.Errorf("graph: %d edges, want the ground truth's %d", len(got), len(want))
	}
	answered := map[string]int{}
	for _, q := range w.Requests() {
		// robots.txt is not counted: a twin's redirect to its host's own
		// robots.txt is answered from the cache, but may come while the
		// host's own fetch of it is not yet committed.
		if q.Status >= 200 && q.Status < 300 && q.Path != "/robots.txt" {
			if answered[q.Host+" "+q.Path]++; answered[q.Host+" "+q.Path] == 2 {
				t.Errorf("%s %s answered twice", q.Host, q.Path)
			}
		}
	}
}

// TestRedirects_Cluster: two shards crawling the cases, merged, record the
// graph one process records: a redirect's target is crawled by the shard
// that owns it, from the first page the redirect named, at the depth (and
// place in a seed's chain of redirects) the redirect gave it.
func TestRedirects_Cluster(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 3, Scripts: fakeweb.RedirectCases()})
	srv := startWeb(t, w)
	ns := startNATS(t)
	dir := t.TempDir()
	var dbs []string
	var procs []*shardProc
	for k := range 2 {
		db := filepath.Join(dir, fmt.Sprintf("s%d.bolt", k))
		dbs = append(dbs, db)
		args := append(crawlArgs(srv, db, "--cluster", ns.URL(), "--shard", fmt.Sprintf("%d/2", k)), redirectScope...)
		procs = append(procs, startShard(t, dir, nil, append(args, fakeweb.RedirectSeeds()...)...))
	}
	waitShards(t, procs, 3*time.Minute)
	checkPolite(t, w.Requests(), true)
	checkRedirectGraph(t, mergeShards(t, dir, dbs), redirectEdges)
}

// TestRedirects_Revisit: under --revisit each crawl of a host that
// redirects is that redirect again (its edge's every page a redirect),
// and every request still goes through the rules of its host.
func TestRedirects_Revisit(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 3, Scripts: fakeweb.RedirectCases()})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "v.bolt")
	args := append(crawlArgs(srv, db, "--revisit", "1s", "--max-duration", "5s"), redirectScope...)
	if r := weaver(t, dir, append(args, fakeweb.RedirectSeeds()...)...); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	checkPolite(t, w.Requests(), false)
	facts := edgeFacts(t, db)
	revisited := 0
	for k, want := range redirectEdges {
		e, ok := facts[k]
		switch {
		case !ok:
			t.Errorf("no edge %s → %s", k[0], k[1])
		case want.Redirect > 0 && e.Redirect != e.Weight, want.Redirect == 0 && e.Redirect != 0:
			t.Errorf("edge %s → %s: %+v, want every page a redirect or none (%+v)", k[0], k[1], e, want)
		case e.Weight > 1:
			revisited++
		}
	}
	if revisited == 0 {
		t.Errorf("no edge was seen by more than one crawl in 5 s of revisits every second")
	}
	got := nodes(t, db)
	for h, wn := range redirectNodes {
		if n := got[h]; n.Status != wn.status || n.RedirectTo != wn.redirectTo {
			t.Errorf("%s: %s, redirect %q; want %s, redirect %q", h, n.Status, n.RedirectTo, wn.status, wn.redirectTo)
		}
	}
}

// TestRedirects_ServeJob: a job of weaver serve crawls by the same rules:
// src.test's redirect is an edge to noentry.test, whose page robots.txt
// forbids and no request asks for; apex.test's is an edge to
// www.apex.test, whose home page is fetched once.
func TestRedirects_ServeJob(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 3, Scripts: fakeweb.RedirectCases()})
	srv := startWeb(t, w)
	dir := t.TempDir()
	p := start(t, dir, "serve", "--listen", "127.0.0.1:0", "--dir", filepath.Join(dir, "jobs"), "--connect-to", srv.ConnectTo())
	a := jobAPI(t, p)
	for _, seed := range []string{"http://src.test/", "http://apex.test/"} {
		var created serve.CreatedAnswer
		a.json("POST", "/crawl", fmt.Sprintf(`{"url": %q, "max_depth": 1, "politeness_delay_ms": 0, "retry_delay_ms": 10}`, seed), http.StatusCreated, &created)
		var full fullJob
		p.poll(t, "the job to complete", func() bool {
			a.json("GET", "/crawl/"+created.JobID, "", http.StatusOK, &full)
			return full.Job.Status == serve.JobCompleted || full.Job.Status == serve.JobFailed
		})
		got := map[string]string{}
		for _, n := range full.Job.Nodes {
			got[n.Host] = fmt.Sprintf("%s %d", n.Status, n.HTTPStatus)
		}
		var edges []string
		for _, e := range full.Job.Edges {
			edges = append(edges, fmt.Sprintf("%s→%s %d", e.From, e.To, e.Weight))
		}
		slices.Sort(edges)
		want := map[string][]string{
			"http://src.test/":  {"src.test→noentry.test 1"},
			"http://apex.test/": {"apex.test→www.apex.test 1", "www.apex.test→target.test 1"},
		}[seed]
		if !slices.Equal(edges, want) {
			t.Errorf("job of %s: edges %v, want %v (nodes %v)", seed, edges, want, got)
		}
	}
	checkPolite(t, w.Requests(), true)
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.out.String())
	}
}
