package e2e_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/kv"
)

// TestShow_Anchors: a crawl of the three-host loop with --anchors 2 keeps
// each link's page, URL and text; weaver show lists the host's record and
// its links in and out with them, as text and as JSON; weaver check and
// merge take the store's anchors; an unknown host is one line naming it
// and the host meant (exit 2).
func TestShow_Anchors(t *testing.T) {
	t.Parallel()
	w := fakeweb.Loop3()
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	weaverOK(t, dir, crawlArgs(srv, db, "--ignore-robots", "--anchors", "2", w.Seed())...)

	r := weaverOK(t, dir, "show", "--db", db, "B.test")
	for _, want := range []string{
		"b.test (node ", "Status:", "crawled, HTTP 200", "Title:", "Loop B", "PageRank:", "(#", "of 3)",
		"Links out (1 host, weight 1)", "c.test", `"Next" http://b.test/ → http://c.test/`,
		"Links in (1 host, weight 1)", "a.test", `"Next" http://a.test/ → http://b.test/`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "no example links kept") {
		t.Errorf("show says no anchors were kept:\n%s", r.stdout)
	}

	r = weaverOK(t, dir, "show", "--db", db, "--json", "http://a.test/some/page")
	var rep export.HostReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	want := graph.Anchor{Page: "http://a.test/", URL: "http://b.test/", Text: "Next"}
	if rep.Host != "a.test" || rep.Status != "crawled" || rep.CrawlCount != 1 || rep.Ranks == nil || rep.Ranks.Of != 3 ||
		!rep.Anchors || rep.Crawls != 1 || len(rep.History) != 1 {
		t.Errorf("report: %+v", rep)
	}
	if len(rep.Out.Links) != 1 || rep.Out.Links[0].Host != "b.test" || rep.Out.Links[0].Weight != 1 ||
		len(rep.Out.Links[0].Anchors) != 1 || rep.Out.Links[0].Anchors[0] != want {
		t.Errorf("out: %+v, want one link to b.test with %+v", rep.Out, want)
	}
	if len(rep.In.Links) != 1 || rep.In.Links[0].Host != "c.test" || rep.In.Total != 1 {
		t.Errorf("in: %+v", rep.In)
	}

	// --limit 0 on one link: nothing left out; --no-ranks: no ranks.
	r = weaverOK(t, dir, "show", "--db", db, "--json", "--no-ranks", "--limit", "0", "c.test")
	rep = export.HostReport{}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Ranks != nil || rep.Out.Left != 0 {
		t.Errorf("--no-ranks --limit 0: %v %+v", err, rep)
	}

	r = weaver(t, dir, "show", "--db", db, "d.test")
	if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 ||
		!strings.Contains(r.stderr, "d.test") || !strings.Contains(r.stderr, "not in the store") || !strings.Contains(r.stderr, "did you mean") {
		t.Errorf("unknown host: exit %d\n%s", r.code, r.stderr)
	}

	// The anchors survive a merge, and the checks pass on both stores. A
	// store merged with its copy holds each crawl once (merge joins crawl
	// histories crawl by crawl): the weight stays 1.
	weaverOK(t, dir, "check", "--db", db)
	cp := filepath.Join(dir, "copy.bolt")
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "merged.bolt")
	weaverOK(t, dir, "merge", "-o", out, db, cp)
	weaverOK(t, dir, "check", "--db", out)
	r = weaverOK(t, dir, "show", "--db", out, "--json", "a.test")
	rep = export.HostReport{}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Out.Links) != 1 || len(rep.Out.Links[0].Anchors) != 1 || rep.Out.Links[0].Anchors[0] != want || rep.Out.Links[0].Weight != 1 {
		t.Errorf("merged: %v %+v", err, rep.Out)
	}
}

// TestShow_RunningCrawl: weaver show asks a running crawl through its
// status API (GET /host), and an unknown host is the same one-line error.
func TestShow_RunningCrawl(t *testing.T) {
	t.Parallel()
	sc := startSlowCrawl(t)
	dir := filepath.Dir(sc.db)
	seed := strings.TrimSuffix(strings.TrimPrefix(sc.w.Seed(), "http://"), "/")
	r := weaverOK(t, dir, "show", "--db", sc.db, "--json", seed)
	var rep export.HostReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	if rep.Host != seed || rep.Status != "crawled" || rep.Ranks == nil || rep.Out.Total != 1 || rep.Out.Links[0].Host != "slow-a.drip.test" {
		t.Errorf("report: %+v", rep)
	}
	r = weaverOK(t, dir, "show", "--db", sc.db, "slow-a.drip.test")
	if !strings.Contains(r.stdout, "slow-a.drip.test (node ") || !strings.Contains(r.stdout, "Links in (1 host, weight 1)") {
		t.Errorf("show:\n%s", r.stdout)
	}
	r = weaver(t, dir, "show", "--db", sc.db, "nowhere.test")
	if r.code != 2 || !strings.Contains(r.stderr, "host nowhere.test: not in the store") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("unknown host: exit %d\n%s", r.code, r.stderr)
	}
	code, body := sc.api.do("GET", "/host?h="+url.QueryEscape("bad host!"), "")
	if code != http.StatusBadRequest || !strings.Contains(string(body), "bad host!") {
		t.Errorf("GET /host?h=bad host!: %d %s", code, body)
	}
	code, _ = sc.api.do("GET", "/host?h="+seed+"&limit=x", "")
	if code != http.StatusBadRequest {
		t.Errorf("limit=x: %d", code)
	}
	sc.stop(t)
}

// TestShow_AnchorsFollowTheGraph: on a web of several pages per host with
// typed links and cross-host redirects, --anchors 3 leaves the graph as
// the model says (the same as without anchors) and gives every edge
// between 1 and 3 example links, each from a page of its source host to
// its target, typed links with their rel, redirects as redirects.
func TestShow_AnchorsFollowTheGraph(t *testing.T) {
	t.Parallel()
	w := fakeweb.NewSites(fakeweb.SitesConfig{Hosts: 30, Seed: 29})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	weaverOK(t, dir, crawlArgs(srv, db, "--max-depth", "0", "--max-crawls-per-node", "1", "--max-outbound-links", "3",
		"--pages-per-host", "4", "--anchors", "3", w.Seed())...)
	sameHostGraph(t, db, w.ExpectedSites(4, 3, nil))
	s, err := kv.Open(db, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hostOf := func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil {
			return "?"
		}
		h, _ := graph.HostOf(u)
		return h
	}
	var edgesSeen, typed, redirects int
	s.View(func(tx *kv.Tx) error {
		hosts := map[uint64]string{}
		graph.ForEachNode(tx, func(n *graph.Node) error { hosts[n.ID] = n.Host; return nil })
		return graph.ForEachEdge(tx, func(e *graph.Edge) error {
			edgesSeen++
			list, err := graph.GetAnchors(tx, e.From, e.To)
			from, to := hosts[e.From], hosts[e.To]
			if err != nil || len(list) < min(int(e.Weight), 3) || len(list) > 3 {
				t.Errorf("%s→%s (weight %d): %d anchors, %v", from, to, e.Weight, len(list), err)
			}
			for _, a := range list {
				if hostOf(a.URL) != to || ((!a.Redirect || a.Page != "") && hostOf(a.Page) != from) {
					t.Errorf("%s→%s: anchor %+v", from, to, a)
				}
				if e.Redirect == e.Weight && !a.Redirect {
					t.Errorf("%s→%s redirects only, anchor %+v", from, to, a)
				}
				if e.Nofollow == e.Weight && e.Redirect == 0 {
					typed++
					if !strings.Contains(a.Rel, "nofollow") && !strings.Contains(a.Rel, "ugc") && !strings.Contains(a.Rel, "sponsored") {
						t.Errorf("%s→%s is typed, anchor %+v", from, to, a)
					}
				}
				if a.Redirect {
					redirects++
				}
			}
			return nil
		})
	})
	if edgesSeen < 20 || typed == 0 || redirects == 0 {
		t.Errorf("the fixture lacks what it tests: %d edges, %d typed anchors, %d redirects", edgesSeen, typed, redirects)
	}
}
