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
	// disallowed is the page robots.txt forbids when it is not the
	// lease's own (a redirect's); disallowWhy says why when robots.txt
	// could not be read (after a redirect to another host).
	disallowed, disallowWhy string
	forGood                 bool // failed in a way asking again in this run will not mend
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
	// robotsCaptures are robots.txt's exchanges (--warc), written with the
	// robots.txt record they gave, whichever transaction writes it: the
	// page's commit, or a park's or a give-back's before it (a resumed
	// crawl uses the record and never asks robots.txt again).
	robotsCaptures []*Capture
	redirected     bool   // the home page redirected to another host
	redirectTo     string // where: the Location it named
	tlsProblem     string // with --insecure: what the home page's connection would have been refused for
	hsts           bool   // the home page's answer over https said Strict-Transport-Security
	home           string // the URL that answered the first page, after the redirects within the host
	// --render: pages rendered and renders failed, their time, and
	// whether the home page was rendered.
	renders, renderFailures int
	renderTook              time.Duration
	homeRendered            bool
	canonical               string        // the home page's <link rel=canonical>
	directives              string        // the home page's robots directives (meta and X-Robots-Tag)
	robots                  *robotsRecord // fetched robots.txt, to cache
	robotsOf                string        // another host whose own robots.txt it is (a redirect's), cached for it too

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
	gen := t.pageNo + 1
	if t.frameGen > 0 {
		gen = t.frameGen // a frame's links are its page's
	}
	if t.redirectTo != nil {
		// A redirect to another host: the page's one link.
		w.sel.reset(p.lease.Host, c.cfg.MaxOutboundLinks, c.exclude)
		if t.pageNo == 0 {
			p.redirected = true
		}
		p.addRedirect(w, t.redirectTo, t.url, gen, nAnchors, c.exclude)
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
	var inner, frames []*url.URL
	robots := extract.RobotsTag(t.robotsTag, "weaver")
	var refresh *url.URL
	framesetPage := false
	switch {
	case t.status >= 300:
	case t.isHTML:
		full := false
		// An in-memory body has no read error to report.
		var doc []byte
		if t.rendered != nil {
			doc = t.rendered // the browser decoded it
			w.ex.Query = nil
		} else {
			var enc extract.Encoding
			doc, enc = w.ex.Decoded(data, t.ctype) // UTF-8, as a browser reads the bytes
			w.ex.Query = enc.QueryEncoding()       // a link's query in the page's encoding
		}
		w.ex.AnchorText = nAnchors > 0
		w.ex.Scripting = t.rendered != nil // a <noscript> is markup where no script ran
		pageURL := ""
		if nAnchors > 0 {
			pageURL = p.final.String()
		}
		info, _ := w.ex.LinksBytes(doc, p.final, func(l extract.Link) bool {
			if nAnchors > 0 {
				w.noteAnchor(l, p.lease.Host, pageURL, nAnchors)
			}
			wantInner := more && len(inner) < maxInnerLinks
			wantFrame := l.Frame && gen == 1 && len(frames) < maxFrames // a frame of the home page (or of its frames)
			if wantInner || wantFrame {
				if h, err := graph.HostOf(l.URL); err == nil && h == p.lease.Host {
					if wantFrame {
						frames = append(frames, l.URL)
					}
					if wantInner {
						inner = append(inner, l.URL)
					}
				}
			}
			if !full {
				full = !w.sel.addLink(l.URL, l.Rel.Typed(), l.Frame)
			}
			return more || !full // the host's own links are wanted to the end
		})
		robots = info.Robots.Merge(robots)
		refresh = info.Refresh
		framesetPage = info.Frameset
		if t.refreshHeader != "" {
			// A Refresh header comes before the document's own.
			refresh = w.ex.Refresh([]byte(t.refreshHeader), p.final, p.final)
		}
		if home {
			p.title, p.desc = info.Title, info.Description
			if p.desc == "" {
				p.desc = p.title
			}
			p.canonical = info.Canonical
		}
	}
	if home {
		p.directives = robots.List
		if robots.NoIndex && !c.cfg.IgnoreRobots {
			p.title, p.desc = "", ""
		}
	}
	t.refresh = nil
	if t.navigated != nil {
		// The rendered page's scripts sent the browser to another host:
		// a redirect, as a refresh is.
		p.addRedirect(w, t.navigated, p.final.String(), gen, nAnchors, c.exclude)
	}
	if refresh != nil {
		// A refresh is a redirect that keeps the page: to another host an
		// edge, and that host's own crawl; within the host the page's
		// next step (follow). Robots directives are about links: a
		// browser follows a refresh whatever they say.
		if h, err := graph.HostOf(refresh); err == nil && h != p.lease.Host {
			p.addRedirect(w, refresh, p.final.String(), gen, nAnchors, c.exclude)
		} else if err == nil {
			t.refresh = refresh
		}
	}
	if robots.NoFollow && !c.cfg.IgnoreRobots {
		return
	}
	p.addTargets(w.sel.picked(), gen, w.anchors, nAnchors)
	if framesetPage {
		// A frameset's content is in its frames: those of the host are
		// fetched as part of the page, their links the page's.
		for _, u := range frames {
			t.queueFrame(u)
		}
	}
	for _, u := range inner {
		t.queuePage(u)
	}
}

// maxInnerLinks bounds the same-host links one page adds to the host's
// queue of pages.
const maxInnerLinks = 1000

// addTargets adds the selected targets of page gen (the host's pages are
// numbered from 1): a page adds at most 1 to the weight of a target, so a
// target's weight is the number of the host's pages that link to it (or
// redirect to it); the documents a page's refreshes lead to are the same
// page. Each target also takes the page's example links to it (anchors,
// by host) while it has fewer than n.
func (p *page) addTargets(picked []pick.Target, gen int, anchors map[string][]graph.Anchor, n int) {
	for _, t := range picked {
		tg := p.targetOf(t.Host, t.Scheme, len(picked))
		switch {
		case tg.page != gen:
			tg.page, tg.typed = gen, t.Typed
			tg.weight++
			if t.Typed {
				tg.nofollow++
			}
		case tg.typed && !t.Typed:
			// The page counted already, but not every link of it is typed.
			tg.typed = false
			tg.nofollow--
		}
		if t.Frame && tg.framePage != gen {
			tg.framePage = gen
			tg.frame++
		}
		tg.addAnchors(anchors[t.Host], n)
	}
}

// targetOf is the page's target host, added if new (with room for size
// more at once: a page of 40 links grew the slice seven times).
func (p *page) targetOf(host, scheme string, size int) *target {
	i, ok := p.targetAt[host]
	if !ok {
		if p.targetAt == nil {
			p.targetAt = make(map[string]int, size)
			p.targets = slices.Grow(p.targets, size)
		}
		i = len(p.targets)
		p.targetAt[host] = i
		p.targets = append(p.targets, target{host: host, scheme: scheme})
	}
	return &p.targets[i]
}

// addAnchors keeps example links while the target has fewer than n.
func (tg *target) addAnchors(as []graph.Anchor, n int) {
	for _, a := range as {
		if len(tg.anchors) >= n {
			return
		}
		tg.anchors = append(tg.anchors, a)
	}
}

// addRedirect counts page gen's redirect (a 3xx or a refresh) from
// pageURL to u, on another host: a target with redirect counted, whatever
// max_outbound_links (a redirect is where the page goes, not one of its
// links), unless the host is excluded. The target is queued with u as its
// first page.
func (p *page) addRedirect(w *parser, u *url.URL, pageURL string, gen, n int, x *excluder) {
	host, err := graph.HostOf(u)
	if err != nil || host == p.lease.Host || x.excluded(host) {
		return
	}
	v := *u
	v.Host = host // as a request sends it: IDNA, lower case, no default port
	u = &v
	tg := p.targetOf(host, u.Scheme, 1)
	tg.home = tg.home || gen == 1
	if tg.page != gen {
		tg.page, tg.typed = gen, false
		tg.weight++
	} else if tg.typed {
		tg.typed = false
		tg.nofollow--
	}
	if tg.redirectPage != gen {
		tg.redirectPage = gen
		tg.redirect++
	}
	if tg.first == "" {
		tg.first = u.String()
	}
	if n > 0 && len(tg.anchors) < n {
		tg.anchors = append(tg.anchors, graph.Anchor{Page: pageURL, URL: u.String(), Redirect: true})
	}
}
