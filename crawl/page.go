package crawl

import (
	"bytes"
	"encoding/hex"
	"hash"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weaver-crawler/weaver/crawl/extract"
	"github.com/weaver-crawler/weaver/crawl/pick"
	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// page is one lease's outcome, carried from the worker to the commit.
type page struct {
	lease    frontier.Lease
	worker   int
	returned bool // stopped before finishing: the lease goes back to the queue

	kind     ErrorKind // "" for a page answered with 2xx/3xx
	err      string
	fetched  bool // an HTTP answer was received for the page
	disallow bool // robots.txt forbids the page
	forGood  bool // failed in a way asking again in this run will not mend
	// firstCrawl: the host's first page answered in this run (set by the
	// commit, which reads the node's last crawl).
	firstCrawl bool
	status     int
	ctype      string
	server     string
	bytes      int64
	took       time.Duration // the page's requests, redirects and retries included
	wait       time.Duration // parked between the host's requests: delays, retries
	hash       string
	title      string
	desc       string
	targets    []target       // selected from all the host's pages, each with its weight
	targetAt   map[string]int // index in targets by host
	pages      int            // pages of the host answered in this crawl of it, home page included
	pagesBad   int            // pages after the home page that failed
	warc       *Capture       // the home page's final exchange (--warc): its Ref goes to the node
	captures   []*Capture     // every exchange of the host's crawl, in order, written with its commit (--warc)
	redirected bool           // the home page redirected to another host
	// --render: pages rendered and renders failed, their time, and
	// whether the home page was rendered.
	renders, renderFailures int
	renderTook              time.Duration
	homeRendered            bool
	canonical               string        // the home page's <link rel=canonical>
	directives              string        // the home page's robots directives (meta and X-Robots-Tag)
	robots                  *robotsRecord // fetched robots.txt, to cache

	// body is the final answer's (capped) body, kept by the fetch for the
	// parse stage, which hashes and extracts it and gives it back.
	body  *bytes.Buffer
	final *url.URL // the URL that answered, after redirects

	forwarded bool // the commit forwarded links to other shards

	// Revisits (issue 27): the home page's validators, whether it was
	// answered 304 to a conditional request (notModified), and whether
	// the crawl changed something (set by the commit).
	etag, lastModified string
	notModified        bool
	changed            bool
	revisit            bool  // the host was crawled before (set by the commit)
	savedBytes         int64 // the last crawl's body size (set by the commit)

	// filled by the commit, read once it is durable
	nodesCreated, edgesCreated, linksAdded int64
	hostIDs                                []hostID // the targets' node ids
}

// robotsRecord is a cached robots.txt outcome in the robots bucket.
type robotsRecord struct {
	Fetched time.Time `msgpack:"t"`
	Rules   kv.Bytes  `msgpack:"r"` // robots.Rules.MarshalBinary
	// MaxAge is the answer's Cache-Control max-age when shorter than the
	// cache's TTL (RFC 9309 §2.4: standard HTTP caching applies); 0: none.
	MaxAge time.Duration `msgpack:"m,omitempty"`
}

// fresh reports whether the record may still be used at now: younger
// than the TTL (24 h by default, RFC 9309 §2.4) and than its max-age.
func (r *robotsRecord) fresh(now time.Time, ttl time.Duration) bool {
	if r.MaxAge > 0 {
		ttl = min(ttl, r.MaxAge)
	}
	return now.Sub(r.Fetched) < ttl
}

// maxAge reads Cache-Control's max-age (0 when absent or bad); no-store
// and no-cache count as 0 seconds, i.e. one second.
func maxAge(cc string) time.Duration {
	for _, part := range strings.Split(cc, ",") {
		part = strings.TrimSpace(strings.ToLower(part))
		if part == "no-store" || part == "no-cache" {
			return time.Second
		}
		if v, ok := strings.CutPrefix(part, "max-age="); ok {
			if n, err := strconv.Atoi(strings.Trim(v, `"`)); err == nil && n >= 0 {
				return max(time.Duration(n)*time.Second, time.Second)
			}
		}
	}
	return 0
}

// parser is a parse stage's state, reused from page to page.
type parser struct {
	ex  extract.Extractor
	sel selector
	h   hash.Hash
	// anchors holds, with anchors_per_edge, the first links of the page
	// to each other host, up to anchors_per_edge of them by host.
	anchors map[string][]graph.Anchor
}

// noteAnchor keeps link l of the page at pageURL as an example of its
// host's edge, while that host has fewer than n and not the same URL.
func (w *parser) noteAnchor(l extract.Link, source, pageURL string, n int) {
	h, err := graph.HostOf(l.URL)
	if err != nil || h == source {
		return
	}
	list := w.anchors[h]
	if len(list) >= n {
		return
	}
	to := l.URL.String()
	for i := range list {
		if list[i].URL == to {
			return
		}
	}
	if w.anchors == nil {
		w.anchors = map[string][]graph.Anchor{}
	}
	w.anchors[h] = append(list, graph.Anchor{Page: pageURL, URL: to, Text: l.Text, Rel: l.RelAttr})
}

// redirectAnchor is the example link of a page of p that redirected to
// another host: from the URL that answered with the redirect when it was
// not followed (out of scope), else from the home page's URL when it is
// the home page that redirected ("" for another page, whose URL the
// redirects followed replaced).
func (p *page) redirectAnchor(t *task) graph.Anchor {
	a := graph.Anchor{URL: p.final.String(), Redirect: true}
	switch {
	case t.outRedirect:
		a.Page = t.url
	case t.pageNo == 0:
		a.Page = p.lease.URL
	}
	return a
}

// readBody keeps the (capped) body of the final answer for parse. A read
// error fails the attempt as a streaming read would (a reset is retried).
func (p *page) readBody(body io.Reader, r *response) error {
	if p.body == nil {
		p.body = bodyBufs.Get().(*bytes.Buffer)
	}
	p.body.Reset()
	p.final = r.finalURL
	_, err := p.body.ReadFrom(body)
	return err
}

// dropBody gives the body's buffer back; a large one is not kept.
func (p *page) dropBody() {
	if p.body == nil {
		return
	}
	if p.body.Cap() <= 256<<10 {
		bodyBufs.Put(p.body)
	}
	p.body = nil
}

var bodyBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// parse reads the page a step fetched: the home page's hash, title,
// description, canonical URL and robots directives, and for an HTML answer
// from the host itself the selected targets, each marked typed when every
// link to it read was rel nofollow, ugc or sponsored (a redirect to
// another host is one link to that host); with pages_per_host above 1,
// also the host's own links, in DOM order, as pages to fetch next. A page
// whose robots meta tag or X-Robots-Tag for weaver says nofollow (or none)
// gives no edge and no page to follow, and noindex keeps the home page's
// title and description out of the store, unless robots are ignored.
func (c *Crawler) parse(w *parser, t *task) {
	p := t.p
	nAnchors := c.cfg.AnchorsPerEdge
	clear(w.anchors)
	if t.outRedirect {
		w.sel.reset(p.lease.Host, c.cfg.MaxOutboundLinks, c.exclude)
		w.sel.add(p.final)
		if t.pageNo == 0 {
			p.redirected = true
		}
		if nAnchors > 0 {
			w.redirectAnchor(p, t)
		}
		p.addTargets(w.sel.picked(), true, w.anchors, nAnchors)
		return
	}
	if p.body == nil || p.notModified {
		return
	}
	defer p.dropBody()
	data := p.body.Bytes()
	home := t.pageNo == 0
	if home {
		w.h.Reset()
		w.h.Write(data)
		p.hash = hex.EncodeToString(w.h.Sum(nil))
		p.bytes = int64(len(data))
		p.title, p.desc = "", ""
	}
	w.sel.reset(p.lease.Host, c.cfg.MaxOutboundLinks, c.exclude)
	more := c.cfg.PagesPerHost > 1
	var inner []*url.URL
	finalHost, _ := graph.HostOf(p.final)
	robots := extract.RobotsTag(t.robotsTag, "weaver")
	redirect := false
	switch {
	case t.status >= 300:
	case finalHost != "" && finalHost != p.lease.Host:
		w.sel.add(p.final)
		redirect = true
		if nAnchors > 0 {
			w.redirectAnchor(p, t)
		}
		if home {
			// The body is another host's: it says nothing of this one
			// (no content hash, so no mirror of the target).
			p.redirected = true
			p.hash = ""
		}
	case extract.IsHTML(t.ctype):
		full := false
		// An in-memory body has no read error to report.
		doc := data
		if t.rendered != nil {
			doc = t.rendered
		}
		w.ex.AnchorText = nAnchors > 0
		pageURL := ""
		if nAnchors > 0 {
			pageURL = p.final.String()
		}
		info, _ := w.ex.LinksBytes(doc, p.final, func(l extract.Link) bool {
			if nAnchors > 0 {
				w.noteAnchor(l, p.lease.Host, pageURL, nAnchors)
			}
			if more && len(inner) < maxInnerLinks {
				if h, err := graph.HostOf(l.URL); err == nil && h == p.lease.Host {
					inner = append(inner, l.URL)
				}
			}
			if !full {
				full = !w.sel.addLink(l.URL, l.Rel.Typed())
			}
			return more || !full // the host's own links are wanted to the end
		})
		robots = info.Robots.Merge(robots)
		if home {
			p.title, p.desc = info.Title, info.Description
			if p.desc == "" {
				p.desc = p.title
			}
			p.canonical = info.Canonical
		}
	}
	if home && !p.redirected {
		p.directives = robots.List
		if robots.NoIndex && !c.cfg.IgnoreRobots {
			p.title, p.desc = "", ""
		}
	}
	if robots.NoFollow && !c.cfg.IgnoreRobots {
		return
	}
	p.addTargets(w.sel.picked(), redirect, w.anchors, nAnchors)
	for _, u := range inner {
		t.queuePage(u)
	}
}

// maxInnerLinks bounds the same-host links one page adds to the host's
// queue of pages.
const maxInnerLinks = 1000

// addTargets adds one page's selected targets: a page adds at most 1 to
// the weight of a target, so a target's weight is the number of the
// host's pages that link to it. Each target also takes the page's example
// links to it (anchors, by host) while it has fewer than n.
func (p *page) addTargets(picked []pick.Target, redirect bool, anchors map[string][]graph.Anchor, n int) {
	for _, t := range picked {
		i, ok := p.targetAt[t.Host]
		if !ok {
			if p.targetAt == nil {
				// Room for this page's targets at once: a page of 40 links
				// grew the slice seven times.
				p.targetAt = make(map[string]int, len(picked))
				p.targets = slices.Grow(p.targets, len(picked))
			}
			i = len(p.targets)
			p.targetAt[t.Host] = i
			p.targets = append(p.targets, target{host: t.Host, scheme: t.Scheme})
		}
		p.targets[i].weight++
		if t.Typed {
			p.targets[i].nofollow++
		}
		if redirect {
			p.targets[i].redirect++
		}
		if tg := &p.targets[i]; n > 0 && len(tg.anchors) < n {
			for _, a := range anchors[t.Host] {
				if len(tg.anchors) < n {
					tg.anchors = append(tg.anchors, a)
				}
			}
		}
	}
}

// redirectAnchor keeps the redirect of a page of p to another host as
// the example link of that host's edge.
func (w *parser) redirectAnchor(p *page, t *task) {
	h, err := graph.HostOf(p.final)
	if err != nil {
		return
	}
	if w.anchors == nil {
		w.anchors = map[string][]graph.Anchor{}
	}
	w.anchors[h] = append(w.anchors[h][:0], p.redirectAnchor(t))
}
