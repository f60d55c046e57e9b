package fakeweb

import (
	"crypto/sha256"
	"html"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// SitesConfig describes a web of sites: hosts with several pages each,
// typed links, robots meta tags and headers, robots.txt path rules, home
// pages that redirect to other hosts, and mirror hosts (issue 20). The
// zero value gives 24 hosts of 6 pages from seed 0 with every feature.
//
// Each "Every" field picks hosts by their number i (0 is the seed, which
// none of them changes except PrivateEvery); 0 means the default given,
// a negative value never.
type SitesConfig struct {
	// Hosts is the number of regular hosts; 0 means 24. Mirrors come on
	// top. Host i is www.uni-i.ac.uk (i%3 == 0), lab-i.ac.uk (1) or
	// www.shop-i.com (2), each alone in its registrable domain.
	Hosts int
	// Pages is the number of pages of a host, its home page included; 0
	// means 6. They are /, /p1, /p2, ... (/private/p2 on PrivateEvery
	// hosts). The home page links to /p1, /p2 and /p3; page /pk links to
	// / or /p(k-1), /p(k+2) and /p(k+3), those that exist, so a
	// breadth-first walk in DOM order finds them as / [p1 p2 p3] p4 p5 ...
	Pages int
	// Links is the number of links to other hosts drawn for each page; 0
	// means 4. Targets are regular hosts drawn at random (never the page's
	// own host nor a mirror), so a page may link to one host twice. The
	// home page of host i links first to host i+1 (a chain through the
	// web), and every home page also links to www.facebook.com (excluded by
	// default) and every inner page to itself by absolute URL.
	Links int
	// Seed determines the links and their rel attributes.
	Seed int64
	// Latency is how long every response waits before its first byte.
	Latency time.Duration
	// TypedEvery: about one link to another host in N has a rel of
	// nofollow, ugc, sponsored or "nofollow noopener", in turn; and one
	// page in four repeats one of its links with the opposite kind (typed
	// after plain or plain after typed). 0 means 3.
	TypedEvery int
	// MetaNofollowEvery: hosts i%N == N-1 have <meta name="robots"
	// content="nofollow"> on page 2, and hosts i%2N == 2N-1 on the home
	// page too. 0 means 4.
	MetaNofollowEvery int
	// MetaNoindexEvery: hosts i%N == 1 have <meta name="robots"
	// content="noindex"> on the home page. 0 means 5.
	MetaNoindexEvery int
	// HeaderEvery: hosts i%N == 2 answer page 1 with "X-Robots-Tag:
	// weaver: nofollow" and the home page with "X-Robots-Tag: googlebot:
	// nofollow" (not weaver's); hosts i%N == 3 answer the home page with
	// "X-Robots-Tag: noarchive". 0 means 7.
	HeaderEvery int
	// PrivateEvery: hosts i%N == 0 have their page 2 at /private/p2, which
	// every host's robots.txt disallows. 0 means 3.
	PrivateEvery int
	// MirrorEvery: hosts i%N == N-1 have a mirror host (www.x → x, other
	// names → mirror.<name>) serving the same pages: the same home page
	// bytes, linked only from the original's home page (its first link to
	// another host), so it is always seen after it. 0 means 6.
	MirrorEvery int
	// RedirectEvery: hosts i%N == N/2 answer / with a 301 to host i+1's
	// home page. 0 means 8.
	RedirectEvery int
	// DisallowEvery: hosts i%N == N-1 (i > 0) disallow / for weaver in
	// robots.txt. 0 means 10.
	DisallowEvery int
}

// sitePage is one page of a site.
type sitePage struct {
	path     string
	title    string
	links    []siteLink // in document order
	meta     string     // content of <meta name="robots">, "" for none
	header   string     // X-Robots-Tag value, "" for none
	redirect int32      // host whose home page / redirects to; -1 for none
}

// siteLink is one <a> of a site page.
type siteLink struct {
	path   string // a same-host page ("/p3") when host is siteSelf or siteSame
	host   int32  // a site, or siteSame (relative link), siteSelf (absolute link to the serving host), siteExcluded
	rel    string // rel attribute, "" for none
	mirror bool   // the link to the host's mirror
}

const (
	siteSame     = -1
	siteSelf     = -2
	siteExcluded = -3
)

// siteInfo is what a kindSite host holds.
type siteInfo struct {
	pages     []sitePage // shared by a host and its mirror
	origin    int32      // for a mirror, the host it copies; else -1
	canonical string     // <link rel="canonical"> of the home page, "" for none
	disallow  bool       // robots.txt disallows / for weaver
}

func every(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// NewSites generates a web of sites from cfg; see SitesConfig. Equal
// configs give identical webs. Host 0, www.uni-0.ac.uk, is the seed.
func NewSites(cfg SitesConfig) *Web {
	hosts := max(every(cfg.Hosts, 24), 2)
	pages := max(every(cfg.Pages, 6), 1)
	links := max(every(cfg.Links, 4), 0)
	typed := every(cfg.TypedEvery, 3)
	metaNF := every(cfg.MetaNofollowEvery, 4)
	metaNI := every(cfg.MetaNoindexEvery, 5)
	header := every(cfg.HeaderEvery, 7)
	private := every(cfg.PrivateEvery, 3)
	mirror := every(cfg.MirrorEvery, 6)
	redirect := every(cfg.RedirectEvery, 8)
	disallow := every(cfg.DisallowEvery, 10)
	is := func(i, n, k int) bool { return n > 0 && i%n == k }

	w := newWeb(Config{Seed: cfg.Seed, Latency: cfg.Latency})
	for i := range hosts {
		var name string
		switch i % 3 {
		case 0:
			name = "www.uni-" + strconv.Itoa(i) + ".ac.uk"
		case 1:
			name = "lab-" + strconv.Itoa(i) + ".ac.uk"
		default:
			name = "www.shop-" + strconv.Itoa(i) + ".com"
		}
		w.sites = append(w.sites, site{name: name, kind: kindSite, title: "Site " + strconv.Itoa(i),
			desc: "Host " + strconv.Itoa(i) + " of a web of sites."})
	}
	r := newRNG(cfg.Seed, streamGraph, 1)
	kinds := []string{"nofollow", "ugc", "sponsored", "nofollow noopener"}
	typedCount, mirrors := 0, 0
	for i := range hosts {
		info := &siteInfo{origin: -1, disallow: i > 0 && is(i, disallow, disallow-1)}
		if i%2 == 0 {
			info.canonical = "http://" + w.sites[i].name + "/"
		}
		hasMirror := i > 0 && is(i, mirror, mirror-1)
		path := func(k int) string {
			switch {
			case k == 0:
				return "/"
			case k == 2 && is(i, private, 0):
				return "/private/p2"
			}
			return "/p" + strconv.Itoa(k)
		}
		for k := range pages {
			p := sitePage{path: path(k), redirect: -1, title: "Page " + strconv.Itoa(k) + " of site " + strconv.Itoa(i)}
			if k == 0 {
				p.title = w.sites[i].title
			}
			same := func(to int) {
				if to >= 0 && to < pages {
					p.links = append(p.links, siteLink{path: path(to), host: siteSame})
				}
			}
			if k == 0 {
				same(1)
				same(2)
				same(3)
				if hasMirror {
					// Mirrors are appended after the regular hosts, in order.
					p.links = append(p.links, siteLink{host: int32(hosts + mirrors), mirror: true})
				}
				p.links = append(p.links, siteLink{host: int32((i + 1) % hosts)})
			} else {
				same(k - 1)
				same(k + 2)
				same(k + 3)
				p.links = append(p.links, siteLink{path: path(k), host: siteSelf})
			}
			for range links {
				t := r.intn(hosts - 1)
				if t >= i {
					t++
				}
				l := siteLink{host: int32(t)}
				if typed > 0 && r.intn(typed) == 0 {
					l.rel = kinds[typedCount%len(kinds)]
					typedCount++
				}
				p.links = append(p.links, l)
			}
			if n := len(p.links); n > 0 && r.intn(4) == 0 {
				// Repeat a link to another host with the opposite kind.
				for j := n - 1; j >= 0; j-- {
					if l := p.links[j]; l.host >= 0 && !l.mirror {
						if l.rel == "" {
							l.rel = "ugc"
						} else {
							l.rel = ""
						}
						p.links = append(p.links, l)
						break
					}
				}
			}
			if k == 0 {
				p.links = append(p.links, siteLink{host: siteExcluded})
			}
			switch {
			case k == 0 && i > 0 && is(i, metaNF*2, metaNF*2-1) && metaNF > 0:
				p.meta = "nofollow"
			case k == 0 && is(i, metaNI, 1):
				p.meta = "noindex"
			case k == 2 && is(i, metaNF, metaNF-1):
				p.meta = "nofollow"
			}
			switch {
			case k == 1 && is(i, header, 2):
				p.header = "weaver: nofollow"
			case k == 0 && is(i, header, 2):
				p.header = "googlebot: nofollow"
			case k == 0 && is(i, header, 3):
				p.header = "noarchive"
			}
			if k == 0 && i > 0 && redirect > 0 && is(i, redirect, redirect/2) {
				p.redirect = int32((i + 1) % hosts)
			}
			info.pages = append(info.pages, p)
		}
		if hasMirror {
			mirrors++
		}
		w.sites[i].pages = info
	}
	for i := range hosts {
		if i == 0 || !is(i, mirror, mirror-1) {
			continue
		}
		name := w.sites[i].name
		if m, ok := strings.CutPrefix(name, "www."); ok {
			name = m
		} else {
			name = "mirror." + name
		}
		orig := w.sites[i].pages
		w.sites = append(w.sites, site{name: name, kind: kindSite, title: w.sites[i].title, desc: w.sites[i].desc,
			pages: &siteInfo{pages: orig.pages, origin: int32(i), canonical: orig.canonical, disallow: orig.disallow}})
	}
	w.buildIndex()
	return w
}

// sitePageAt returns the page of site i at path, or nil.
func (w *Web) sitePageAt(i int, path string) *sitePage {
	info := w.sites[i].pages
	for k := range info.pages {
		if info.pages[k].path == path {
			return &info.pages[k]
		}
	}
	return nil
}

// siteHref is how l is written on a page served by host i.
func (w *Web) siteHref(i int, l siteLink) string {
	switch l.host {
	case siteSame:
		return l.path
	case siteSelf:
		return "http://" + w.sites[i].name + l.path
	case siteExcluded:
		return "https://www.facebook.com/sharer.php?u=weaver"
	}
	return "http://" + w.sites[l.host].name + "/"
}

// renderSitePage writes page p as served by host i, and its hrefs. A
// home page never names its own host, so a mirror's is the same bytes.
func (w *Web) renderSitePage(i int, p *sitePage) ([]byte, []string) {
	s := &w.sites[i]
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>" + html.EscapeString(p.title) + "</title>\n")
	if p.path == "/" {
		b.WriteString("<meta name=\"description\" content=\"" + html.EscapeString(s.desc) + "\">\n")
		if c := s.pages.canonical; c != "" {
			b.WriteString("<link rel=\"canonical\" href=\"" + c + "\">\n")
		}
	}
	if p.meta != "" {
		b.WriteString("<meta name=\"robots\" content=\"" + p.meta + "\">\n")
	}
	b.WriteString("</head>\n<body>\n<h1>" + html.EscapeString(p.title) + "</h1>\n<ul>\n")
	var hrefs []string
	for k, l := range p.links {
		href := w.siteHref(i, l)
		hrefs = append(hrefs, href)
		b.WriteString("<li><a")
		if l.rel != "" {
			b.WriteString(" rel=\"" + l.rel + "\"")
		}
		b.WriteString(" href=\"" + html.EscapeString(href) + "\">link " + strconv.Itoa(k) + "</a></li>\n")
	}
	b.WriteString("</ul>\n</body>\n</html>\n")
	return []byte(b.String()), hrefs
}

// siteReply answers a request to site i.
func (w *Web) siteReply(i int, path string) reply {
	info := w.sites[i].pages
	if path == "/robots.txt" {
		if info.disallow {
			return textReply(http.StatusOK, robotsDisallowText)
		}
		return textReply(http.StatusOK, robotsPlainText)
	}
	p := w.sitePageAt(i, path)
	if p == nil {
		return notFound()
	}
	if p.redirect >= 0 {
		return redirectReply(http.StatusMovedPermanently, "http://"+w.sites[p.redirect].name+"/")
	}
	return reply{http.StatusOK, func(rw http.ResponseWriter, _ *http.Request) {
		if p.header != "" {
			rw.Header().Set("X-Robots-Tag", p.header)
		}
		body, _ := w.renderSitePage(i, p)
		writeBody(rw, http.StatusOK, "text/html; charset=utf-8", body)
	}}
}

// ExpectedNode is what a correct crawl records of a host of a web of sites.
type ExpectedNode struct {
	// Status is "crawled", "robots_disallowed" (robots.txt disallows /)
	// or "out_of_scope".
	Status string
	// PagesFetched is how many of its pages were fetched.
	PagesFetched int
	// Title is the home page's title; "" when its robots directives say
	// noindex or it redirected to another host.
	Title string
	// Canonical is the home page's <link rel="canonical">.
	Canonical string
	// Robots are the home page's robots directives for weaver: the meta
	// tag's, then the X-Robots-Tag header's, each once ("noindex",
	// "noarchive"; never "googlebot: ..." ones).
	Robots string
	// MirrorOf is the host of the mirror group's first host when this
	// host is a copy, else "".
	MirrorOf string
}

// ExpectedEdge is what a correct crawl records of an edge.
type ExpectedEdge struct {
	Weight   int // fetched pages of the source that link to the target (a redirect counts as one)
	Nofollow int // of them, pages whose links to the target seen before the selection was complete were all typed
	Redirect int // of them, redirects of the home page to the target
}

// Expected is the host graph a correct crawl of a web of sites records.
type Expected struct {
	Nodes map[string]ExpectedNode
	Edges map[[2]string]ExpectedEdge
}

// Weights returns the edges' weights, in the form ExpectedEdges returns.
func (e Expected) Weights() map[[2]string]int {
	out := make(map[[2]string]int, len(e.Edges))
	for k, v := range e.Edges {
		out[k] = v.Weight
	}
	return out
}

// ExpectedSites computes, from the web's own model and not by running
// weaver, the host graph a correct crawl of a NewSites web records when it
// starts from Seed with --pages-per-host pagesPerHost (at least 1),
// --max-outbound-links maxOutbound (0 or less: unlimited), --scope
// inScope (nil: every host) and otherwise default settings that do not
// bind here (each host crawled once, depth and subdomain limits too high
// to matter, the default exclusions). The rules it applies (issue 20):
//
//  1. Hosts are crawled breadth-first from the seed; every host a kept
//     link names is a node. A host outside the scope is a node with status
//     out_of_scope: never fetched, no out-edges, its links never followed.
//  2. A crawl of a host fetches its home page, then more of its pages
//     breadth-first in document order of the same-host links of the pages
//     fetched, until pagesPerHost are fetched or none is left. A page
//     robots.txt disallows (/private/) is not fetched and does not count.
//     A home page disallowed for weaver leaves the host robots_disallowed
//     with no page. A home page that redirects to another host is one
//     page; it gives the edge to that host (weight 1, redirect 1) and no
//     more pages, title, canonical or robots, and is no mirror.
//  3. A page whose robots meta tag (name robots or weaver) or X-Robots-Tag
//     header for weaver says nofollow gives no edges and its links are not
//     followed, neither to other hosts nor to pages of its host.
//  4. Per page, seed 000's selection: links in document order, other hosts
//     only, excluded hosts dropped (a host is judged at its first link),
//     each host once, the first maxOutbound hosts; reading stops at the
//     link that picks the last one. Each selected host gets 1 of weight
//     from the page, and 1 of nofollow when every link to it that was read
//     had rel nofollow, ugc or sponsored.
//  5. Crawled hosts (not redirected) with the same home page bytes are a
//     mirror group; each copy's MirrorOf is the group's first host by
//     first-seen time, which here is always the original (its mirror is
//     linked from its home page only).
func (w *Web) ExpectedSites(pagesPerHost, maxOutbound int, inScope func(host string) bool) Expected {
	pagesPerHost = max(pagesPerHost, 1)
	exp := Expected{Nodes: map[string]ExpectedNode{}, Edges: map[[2]string]ExpectedEdge{}}
	seed := w.sites[w.seedIndex].name
	order := []string{seed} // discovery order
	seen := map[string]bool{seed: true}
	discover := func(h string) {
		if !seen[h] {
			seen[h] = true
			order = append(order, h)
		}
	}
	homeHash := map[string][32]byte{}
	for q := 0; q < len(order); q++ {
		host := order[q]
		i, ok := w.index[host]
		if inScope != nil && !inScope(host) {
			exp.Nodes[host] = ExpectedNode{Status: "out_of_scope"}
			continue
		}
		if !ok || w.sites[i].kind != kindSite {
			exp.Nodes[host] = ExpectedNode{Status: "discovered"} // not in this web: never the case for NewSites
			continue
		}
		info := w.sites[i].pages
		if info.disallow {
			exp.Nodes[host] = ExpectedNode{Status: "robots_disallowed"}
			continue
		}
		node := ExpectedNode{Status: "crawled"}
		home := &info.pages[0]
		if home.redirect >= 0 {
			to := w.sites[home.redirect].name
			node.PagesFetched = 1
			exp.Nodes[host] = node
			e := exp.Edges[[2]string{host, to}]
			e.Weight++
			e.Redirect++
			exp.Edges[[2]string{host, to}] = e
			discover(to)
			continue
		}
		queue := []string{"/"}
		queued := map[string]bool{"/": true}
		for len(queue) > 0 && node.PagesFetched < pagesPerHost {
			path := queue[0]
			queue = queue[1:]
			if strings.HasPrefix(path, "/private/") {
				continue
			}
			p := w.sitePageAt(i, path)
			node.PagesFetched++
			robots := directives(p.meta, p.header)
			if path == "/" {
				body, _ := w.renderSitePage(i, p)
				homeHash[host] = sha256.Sum256(body)
				node.Canonical, node.Robots = info.canonical, robots.list
				if !robots.noindex {
					node.Title = p.title
				}
			}
			if robots.nofollow {
				continue
			}
			for _, l := range p.links {
				if (l.host == siteSame || l.host == siteSelf) && !queued[l.path] {
					queued[l.path] = true
					queue = append(queue, l.path)
				}
			}
			for _, t := range w.selectSite(i, p, maxOutbound) {
				k := [2]string{host, t.host}
				e := exp.Edges[k]
				e.Weight++
				if t.typed {
					e.Nofollow++
				}
				exp.Edges[k] = e
				discover(t.host)
			}
		}
		exp.Nodes[host] = node
	}
	// Mirrors: the first host of each group of equal home pages, in
	// discovery order.
	first := map[[32]byte]string{}
	for _, host := range order {
		h, ok := homeHash[host]
		if !ok {
			continue
		}
		if f, ok := first[h]; ok {
			n := exp.Nodes[host]
			n.MirrorOf = f
			exp.Nodes[host] = n
			continue
		}
		first[h] = host
	}
	return exp
}

// siteTarget is a host a page selects, and whether every link to it that
// was read was typed.
type siteTarget struct {
	host  string
	typed bool
}

// selectSite applies rule 4 of ExpectedSites to page p of host i.
func (w *Web) selectSite(i int, p *sitePage, maxOutbound int) []siteTarget {
	var out []siteTarget
	seen := map[string]int{} // host → position in out, or -1 when excluded
	for _, l := range p.links {
		var h string
		switch l.host {
		case siteSame, siteSelf:
			continue
		case siteExcluded:
			h = "www.facebook.com"
		default:
			h = w.sites[l.host].name
		}
		if h == w.sites[i].name {
			continue // a mirror's link to itself
		}
		typed := l.rel != ""
		if at, ok := seen[h]; ok {
			if at >= 0 {
				out[at].typed = out[at].typed && typed
			}
			continue
		}
		if DefaultExcluded(h) {
			seen[h] = -1
			continue
		}
		seen[h] = len(out)
		out = append(out, siteTarget{host: h, typed: typed})
		if maxOutbound > 0 && len(out) == maxOutbound {
			break
		}
	}
	return out
}

// robotsSeen is what a page's meta tag and X-Robots-Tag header tell weaver.
type robotsSeen struct {
	noindex, nofollow bool
	list              string
}

// directives reads the simple robots values NewSites writes: a meta
// content of one directive, and a header of one directive, for everyone or
// for "name:".
func directives(meta, header string) robotsSeen {
	var r robotsSeen
	add := func(d string) {
		switch d {
		case "":
			return
		case "nofollow":
			r.nofollow = true
		case "noindex":
			r.noindex = true
		}
		if r.list != "" {
			r.list += ","
		}
		r.list += d
	}
	add(meta)
	if agent, d, ok := strings.Cut(header, ":"); ok {
		if strings.TrimSpace(agent) == "weaver" {
			add(strings.TrimSpace(d))
		}
	} else {
		add(header)
	}
	return r
}
