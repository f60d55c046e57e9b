package fakeweb_test

import (
	"bytes"
	"crypto/sha256"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

// TestSites_ServedMatchesModel crawls a web of sites over HTTP with a
// reference crawler written here, from the served bytes only (robots.txt,
// status codes, Location, X-Robots-Tag, markup parsed by x/net/html), and
// checks that it records what ExpectedSites computes from the model, for
// several page counts, outbound limits and scopes.
func TestSites_ServedMatchesModel(t *testing.T) {
	w := fakeweb.NewSites(fakeweb.SitesConfig{Seed: 3})
	srv := mustStart(t, w)
	c := client(t, srv)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	acUK := regexp.MustCompile(`\.ac\.uk$`)
	for _, tc := range []struct {
		name  string
		pages int
		max   int
		scope func(string) bool
	}{
		{"one page", 1, 10, nil},
		{"four pages", 4, 10, nil},
		{"all pages, two links", 10, 2, nil},
		{"ac.uk scope", 4, 0, acUK.MatchString},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := referenceCrawl(t, c, w.Seed(), tc.pages, tc.max, tc.scope)
			want := w.ExpectedSites(tc.pages, tc.max, tc.scope)
			if !reflect.DeepEqual(got.Nodes, want.Nodes) {
				for h, n := range want.Nodes {
					if got.Nodes[h] != n {
						t.Errorf("node %s: served %+v, model %+v", h, got.Nodes[h], n)
					}
				}
				for h, n := range got.Nodes {
					if _, ok := want.Nodes[h]; !ok {
						t.Errorf("node %s: served %+v, not in the model", h, n)
					}
				}
			}
			if !reflect.DeepEqual(got.Edges, want.Edges) {
				for k, e := range want.Edges {
					if got.Edges[k] != e {
						t.Errorf("edge %s→%s: served %+v, model %+v", k[0], k[1], got.Edges[k], e)
					}
				}
				for k, e := range got.Edges {
					if _, ok := want.Edges[k]; !ok {
						t.Errorf("edge %s→%s: served %+v, not in the model", k[0], k[1], e)
					}
				}
			}
		})
	}
}

// TestSites_Features: the default web has every feature issue 20 tests,
// reachable from the seed.
func TestSites_Features(t *testing.T) {
	w := fakeweb.NewSites(fakeweb.SitesConfig{})
	exp := w.ExpectedSites(6, 10, nil)
	count := map[string]int{}
	for h, n := range exp.Nodes {
		count["status "+n.Status]++
		if n.MirrorOf != "" {
			count["mirror"]++
			if strings.TrimPrefix(h, "mirror.") != strings.TrimPrefix(n.MirrorOf, "www.") && h != strings.TrimPrefix(n.MirrorOf, "www.") {
				t.Errorf("%s is a mirror of %s", h, n.MirrorOf)
			}
		}
		if n.PagesFetched > 1 {
			count["several pages"]++
		}
		if n.PagesFetched > 1 && n.PagesFetched < 6 {
			count["pages cut by robots or nofollow"]++
		}
		if n.Status == "crawled" && n.Title == "" {
			count["noindex or redirect"]++
		}
		if n.Robots != "" {
			count["robots "+n.Robots]++
		}
		if n.Canonical != "" {
			count["canonical"]++
		}
	}
	for _, e := range exp.Edges {
		if e.Nofollow > 0 {
			count["nofollow edge"]++
		}
		if e.Nofollow > 0 && e.Nofollow < e.Weight {
			count["partly nofollow edge"]++
		}
		if e.Redirect > 0 {
			count["redirect edge"]++
		}
		if e.Weight > 1 {
			count["weight above 1"]++
		}
	}
	for _, k := range []string{"status crawled", "status robots_disallowed", "mirror", "several pages",
		"pages cut by robots or nofollow", "noindex or redirect", "robots noindex", "robots noarchive", "robots nofollow",
		"canonical", "nofollow edge", "partly nofollow edge", "redirect edge", "weight above 1"} {
		if count[k] == 0 {
			t.Errorf("no %s in the default web: %v", k, count)
		}
	}
	// Every regular host is reached; a mirror is not when its original's
	// home page is nofollow (host 23).
	for _, h := range w.Hosts()[:24] {
		if _, ok := exp.Nodes[h]; !ok {
			t.Errorf("%s is not reached from the seed", h)
		}
	}
	scoped := w.ExpectedSites(6, 10, regexp.MustCompile(`\.ac\.uk$`).MatchString)
	out := 0
	for h, n := range scoped.Nodes {
		if n.Status == "out_of_scope" {
			out++
			for k := range scoped.Edges {
				if k[0] == h {
					t.Errorf("out-of-scope %s has an out-edge to %s", h, k[1])
				}
			}
		}
	}
	if out == 0 {
		t.Error("no out_of_scope node with an ac.uk scope")
	}
	// A page count of one is the seed-000 crawl: home pages only.
	for h, n := range w.ExpectedSites(1, 10, nil).Nodes {
		if n.PagesFetched > 1 {
			t.Errorf("%s: %d pages with pages_per_host 1", h, n.PagesFetched)
		}
	}
	if !reflect.DeepEqual(fakeweb.NewSites(fakeweb.SitesConfig{}).ExpectedSites(4, 3, nil), w.ExpectedSites(4, 3, nil)) {
		t.Error("two webs of one config differ")
	}
}

// referenceCrawl is ExpectedSites' rules applied to what the server
// sends.
func referenceCrawl(t *testing.T, c *http.Client, seed string, pagesPerHost, maxOutbound int, inScope func(string) bool) fakeweb.Expected {
	t.Helper()
	exp := fakeweb.Expected{Nodes: map[string]fakeweb.ExpectedNode{}, Edges: map[[2]string]fakeweb.ExpectedEdge{}}
	su, _ := url.Parse(seed)
	order := []string{su.Host}
	seen := map[string]bool{su.Host: true}
	homes := map[string][32]byte{}
	for q := 0; q < len(order); q++ {
		host := order[q]
		if inScope != nil && !inScope(host) {
			exp.Nodes[host] = fakeweb.ExpectedNode{Status: "out_of_scope"}
			continue
		}
		_, _, robots := get(t, c, "http://"+host+"/robots.txt")
		disallowed := func(path string) bool {
			forWeaver := strings.Contains(string(robots), "User-agent: weaver\nDisallow: /\n")
			return forWeaver || strings.HasPrefix(path, "/private/")
		}
		if disallowed("/") {
			exp.Nodes[host] = fakeweb.ExpectedNode{Status: "robots_disallowed"}
			continue
		}
		node := fakeweb.ExpectedNode{Status: "crawled"}
		queue, queued := []string{"/"}, map[string]bool{"/": true}
		for len(queue) > 0 && node.PagesFetched < pagesPerHost {
			path := queue[0]
			queue = queue[1:]
			if disallowed(path) {
				continue
			}
			status, hdr, body := get(t, c, "http://"+host+path)
			node.PagesFetched++
			if status == http.StatusMovedPermanently {
				loc, _ := url.Parse(hdr.Get("Location"))
				k := [2]string{host, loc.Host}
				e := exp.Edges[k]
				e.Weight++
				e.Redirect++
				exp.Edges[k] = e
				if !seen[loc.Host] {
					seen[loc.Host] = true
					order = append(order, loc.Host)
				}
				break
			}
			p := parseSitePage(t, body)
			header := hdr.Get("X-Robots-Tag")
			nofollow := p.meta == "nofollow" || header == "weaver: nofollow"
			if path == "/" {
				homes[host] = sha256.Sum256(body)
				node.Canonical, node.Title = p.canonical, p.title
				if p.meta == "noindex" {
					node.Title = ""
				}
				node.Robots = p.meta
				if h := strings.TrimPrefix(header, "weaver: "); h != "" && !strings.Contains(h, ":") {
					if node.Robots != "" {
						node.Robots += ","
					}
					node.Robots += h
				}
			}
			if nofollow {
				continue
			}
			type pick struct {
				host  string
				typed bool
			}
			var picked []pick
			at := map[string]int{}
			for _, l := range p.links {
				u, err := url.Parse("http://" + host + path)
				if err != nil {
					t.Fatal(err)
				}
				u, err = u.Parse(l.href)
				if err != nil {
					t.Fatal(err)
				}
				if u.Host == host {
					if !queued[u.Path] {
						queued[u.Path] = true
						queue = append(queue, u.Path)
					}
					continue
				}
				if len(picked) == maxOutbound && maxOutbound > 0 {
					continue // only same-host links are read on
				}
				typed := l.rel != "" && l.rel != "noopener"
				if k, ok := at[u.Host]; ok {
					if k >= 0 {
						picked[k].typed = picked[k].typed && typed
					}
					continue
				}
				if fakeweb.DefaultExcluded(u.Host) {
					at[u.Host] = -1
					continue
				}
				at[u.Host] = len(picked)
				picked = append(picked, pick{u.Host, typed})
			}
			for _, pk := range picked {
				k := [2]string{host, pk.host}
				e := exp.Edges[k]
				e.Weight++
				if pk.typed {
					e.Nofollow++
				}
				exp.Edges[k] = e
				if !seen[pk.host] {
					seen[pk.host] = true
					order = append(order, pk.host)
				}
			}
		}
		exp.Nodes[host] = node
	}
	first := map[[32]byte]string{}
	for _, h := range order {
		sum, ok := homes[h]
		if !ok {
			continue
		}
		if f, ok := first[sum]; ok {
			n := exp.Nodes[h]
			n.MirrorOf = f
			exp.Nodes[h] = n
		} else {
			first[sum] = h
		}
	}
	return exp
}

type sitePageParsed struct {
	title, meta, canonical string
	links                  []struct{ href, rel string }
}

// parseSitePage reads a page with x/net/html's parser.
func parseSitePage(t *testing.T, body []byte) sitePageParsed {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var p sitePageParsed
	attr := func(n *html.Node, k string) string {
		for _, a := range n.Attr {
			if a.Key == k {
				return a.Val
			}
		}
		return ""
	}
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		switch n.Data {
		case "title":
			if n.FirstChild != nil {
				p.title = n.FirstChild.Data
			}
		case "meta":
			if attr(n, "name") == "robots" {
				p.meta = attr(n, "content")
			}
		case "link":
			if attr(n, "rel") == "canonical" {
				p.canonical = attr(n, "href")
			}
		case "a":
			p.links = append(p.links, struct{ href, rel string }{attr(n, "href"), attr(n, "rel")})
		}
	}
	return p
}
