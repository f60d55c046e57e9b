package fakeweb

import (
	"crypto/sha256"
	"strings"
)

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
	c := &sitesCrawl{
		w: w, pagesPerHost: max(pagesPerHost, 1), maxOutbound: maxOutbound,
		exp:  Expected{Nodes: map[string]ExpectedNode{}, Edges: map[[2]string]ExpectedEdge{}},
		seen: map[string]bool{}, homeHash: map[string][32]byte{},
	}
	c.discover(w.sites[w.seedIndex].name)
	for q := 0; q < len(c.order); q++ {
		host := c.order[q]
		c.exp.Nodes[host] = c.crawl(host, inScope)
	}
	c.markMirrors()
	return c.exp
}

// sitesCrawl is ExpectedSites at work: the graph so far and the hosts in
// the order the crawl finds them.
type sitesCrawl struct {
	w                         *Web
	pagesPerHost, maxOutbound int
	exp                       Expected
	order                     []string            // discovery order
	seen                      map[string]bool     // the hosts in order
	homeHash                  map[string][32]byte // the home page's SHA-256, by crawled host (not redirected)
}

// discover adds host to the crawl's queue, once.
func (c *sitesCrawl) discover(host string) {
	if !c.seen[host] {
		c.seen[host] = true
		c.order = append(c.order, host)
	}
}

// link counts a page of from that links to to (typed: every link to it
// read was typed) or redirects to it, and discovers to.
func (c *sitesCrawl) link(from, to string, typed, redirect bool) {
	k := [2]string{from, to}
	e := c.exp.Edges[k]
	e.Weight++
	if typed {
		e.Nofollow++
	}
	if redirect {
		e.Redirect++
	}
	c.exp.Edges[k] = e
	c.discover(to)
}

// crawl returns the node of host by rules 1 and 2, counting the edges of
// the pages it fetches.
func (c *sitesCrawl) crawl(host string, inScope func(host string) bool) ExpectedNode {
	w := c.w
	i, ok := w.index[host]
	if inScope != nil && !inScope(host) {
		return ExpectedNode{Status: "out_of_scope"}
	}
	if !ok || w.sites[i].kind != kindSite {
		return ExpectedNode{Status: "discovered"} // not in this web: never the case for NewSites
	}
	info := w.sites[i].pages
	if info.disallow {
		return ExpectedNode{Status: "robots_disallowed"}
	}
	node := ExpectedNode{Status: "crawled"}
	if home := &info.pages[0]; home.redirect >= 0 {
		node.PagesFetched = 1
		c.link(host, w.sites[home.redirect].name, false, true)
		return node
	}
	c.fetchPages(i, host, &node)
	return node
}

// fetchPages fetches the pages of host i breadth-first, as rule 2 says,
// and counts them, their edges (rules 3 and 4) and the home page's facts
// in node.
func (c *sitesCrawl) fetchPages(i int, host string, node *ExpectedNode) {
	w := c.w
	queue := []string{"/"}
	queued := map[string]bool{"/": true}
	for len(queue) > 0 && node.PagesFetched < c.pagesPerHost {
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
			c.homeHash[host] = sha256.Sum256(body)
			node.Canonical, node.Robots = w.sites[i].pages.canonical, robots.list
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
		for _, t := range w.selectSite(i, p, c.maxOutbound) {
			c.link(host, t.host, t.typed, false)
		}
	}
}

// markMirrors applies rule 5: the first host of each group of equal home
// pages, in discovery order, is the one the others copy.
func (c *sitesCrawl) markMirrors() {
	first := map[[32]byte]string{}
	for _, host := range c.order {
		h, ok := c.homeHash[host]
		if !ok {
			continue
		}
		if f, ok := first[h]; ok {
			n := c.exp.Nodes[host]
			n.MirrorOf = f
			c.exp.Nodes[host] = n
			continue
		}
		first[h] = host
	}
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
