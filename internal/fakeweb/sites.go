package fakeweb

import (
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
	g := newSitesGen(cfg)
	for i := range g.hosts {
		g.nameHost(i)
	}
	for i := range g.hosts {
		g.w.sites[i].pages = g.site(i)
	}
	for i := range g.hosts {
		if i > 0 && g.is(i, g.mirror, g.mirror-1) {
			g.addMirror(i)
		}
	}
	g.w.buildIndex()
	return g.w
}

// sitesGen is NewSites at work: SitesConfig with its defaults, the web
// being made and the draws.
type sitesGen struct {
	hosts, pages, links int // SitesConfig's, with their defaults
	// SitesConfig's "Every" fields, with their defaults.
	typed, metaNF, metaNI, header, private, mirror, redirect, disallow int

	w          *Web
	r          *rng
	typedCount int // typed links drawn so far, for the rel they get in turn
	mirrors    int // mirrors of the hosts made so far
}

func newSitesGen(cfg SitesConfig) *sitesGen {
	return &sitesGen{
		hosts:    max(every(cfg.Hosts, 24), 2),
		pages:    max(every(cfg.Pages, 6), 1),
		links:    max(every(cfg.Links, 4), 0),
		typed:    every(cfg.TypedEvery, 3),
		metaNF:   every(cfg.MetaNofollowEvery, 4),
		metaNI:   every(cfg.MetaNoindexEvery, 5),
		header:   every(cfg.HeaderEvery, 7),
		private:  every(cfg.PrivateEvery, 3),
		mirror:   every(cfg.MirrorEvery, 6),
		redirect: every(cfg.RedirectEvery, 8),
		disallow: every(cfg.DisallowEvery, 10),
		w:        newWeb(Config{Seed: cfg.Seed, Latency: cfg.Latency}),
		r:        newRNG(cfg.Seed, streamGraph, 1),
	}
}

// is reports whether host i is one of the "Every" n hosts that i%n == k
// picks; never for n <= 0.
func (g *sitesGen) is(i, n, k int) bool { return n > 0 && i%n == k }

// nameHost adds host i, named as SitesConfig.Hosts says.
func (g *sitesGen) nameHost(i int) {
	var name string
	switch i % 3 {
	case 0:
		name = "www.uni-" + strconv.Itoa(i) + ".ac.uk"
	case 1:
		name = "lab-" + strconv.Itoa(i) + ".ac.uk"
	default:
		name = "www.shop-" + strconv.Itoa(i) + ".com"
	}
	g.w.sites = append(g.w.sites, site{name: name, kind: kindSite, title: "Site " + strconv.Itoa(i),
		desc: "Host " + strconv.Itoa(i) + " of a web of sites."})
}

// site makes the pages of host i.
func (g *sitesGen) site(i int) *siteInfo {
	info := &siteInfo{origin: -1, disallow: i > 0 && g.is(i, g.disallow, g.disallow-1)}
	if i%2 == 0 {
		info.canonical = "http://" + g.w.sites[i].name + "/"
	}
	hasMirror := i > 0 && g.is(i, g.mirror, g.mirror-1)
	for k := range g.pages {
		info.pages = append(info.pages, g.page(i, k, hasMirror))
	}
	if hasMirror {
		g.mirrors++
	}
	return info
}

// path is the path of page k of host i.
func (g *sitesGen) path(i, k int) string {
	switch {
	case k == 0:
		return "/"
	case k == 2 && g.is(i, g.private, 0):
		return "/private/p2"
	}
	return "/p" + strconv.Itoa(k)
}

// page makes page k of host i: its links, then its robots directives and
// redirect.
func (g *sitesGen) page(i, k int, hasMirror bool) sitePage {
	p := sitePage{path: g.path(i, k), redirect: -1, title: "Page " + strconv.Itoa(k) + " of site " + strconv.Itoa(i)}
	if k == 0 {
		p.title = g.w.sites[i].title
	}
	same := func(to int) {
		if to >= 0 && to < g.pages {
			p.links = append(p.links, siteLink{path: g.path(i, to), host: siteSame})
		}
	}
	if k == 0 {
		same(1)
		same(2)
		same(3)
		if hasMirror {
			// Mirrors are appended after the regular hosts, in order.
			p.links = append(p.links, siteLink{host: int32(g.hosts + g.mirrors), mirror: true})
		}
		p.links = append(p.links, siteLink{host: int32((i + 1) % g.hosts)})
	} else {
		same(k - 1)
		same(k + 2)
		same(k + 3)
		p.links = append(p.links, siteLink{path: g.path(i, k), host: siteSelf})
	}
	g.drawLinks(&p, i)
	if k == 0 {
		p.links = append(p.links, siteLink{host: siteExcluded})
	}
	g.robots(&p, i, k)
	return p
}

// drawLinks adds to page p of host i its links to other hosts drawn at
// random, some typed, and one page in four a repeat of one of them with
// the opposite kind.
func (g *sitesGen) drawLinks(p *sitePage, i int) {
	kinds := []string{"nofollow", "ugc", "sponsored", "nofollow noopener"}
	for range g.links {
		t := g.r.intn(g.hosts - 1)
		if t >= i {
			t++
		}
		l := siteLink{host: int32(t)}
		if g.typed > 0 && g.r.intn(g.typed) == 0 {
			l.rel = kinds[g.typedCount%len(kinds)]
			g.typedCount++
		}
		p.links = append(p.links, l)
	}
	if n := len(p.links); n > 0 && g.r.intn(4) == 0 {
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
}

// robots sets the robots meta tag, X-Robots-Tag header and redirect of
// page k of host i, as SitesConfig's "Every" fields say.
func (g *sitesGen) robots(p *sitePage, i, k int) {
	metaNF, header := g.metaNF, g.header
	switch {
	case k == 0 && i > 0 && g.is(i, metaNF*2, metaNF*2-1) && metaNF > 0:
		p.meta = "nofollow"
	case k == 0 && g.is(i, g.metaNI, 1):
		p.meta = "noindex"
	case k == 2 && g.is(i, metaNF, metaNF-1):
		p.meta = "nofollow"
	}
	switch {
	case k == 1 && g.is(i, header, 2):
		p.header = "weaver: nofollow"
	case k == 0 && g.is(i, header, 2):
		p.header = "googlebot: nofollow"
	case k == 0 && g.is(i, header, 3):
		p.header = "noarchive"
	}
	if k == 0 && i > 0 && g.redirect > 0 && g.is(i, g.redirect, g.redirect/2) {
		p.redirect = int32((i + 1) % g.hosts)
	}
}

// addMirror adds the mirror of host i: www.x → x, other names →
// mirror.<name>, the same pages.
func (g *sitesGen) addMirror(i int) {
	w := g.w
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
