package crawl

import (
	"bytes"
	"encoding/hex"
	"hash"
	"io"
	"mime"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/weaver-crawler/weaver/crawl/extract"
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
	robots     *robotsRecord  // fetched robots.txt, to cache

	// body is the final answer's (capped) body, kept by the fetch for the
	// parse stage, which hashes and extracts it and gives it back.
	body  *bytes.Buffer
	final *url.URL // the URL that answered, after redirects

	forwarded bool // the commit forwarded links to other shards

	// filled by the commit, read once it is durable
	nodesCreated, edgesCreated, linksAdded int64
}

// robotsRecord is a cached robots.txt outcome in the robots bucket.
type robotsRecord struct {
	Fetched time.Time `msgpack:"t"`
	Rules   kv.Bytes  `msgpack:"r"` // robots.Rules.MarshalBinary
}

// parser is a parse stage's state, reused from page to page.
type parser struct {
	ex  extract.Extractor
	sel selector
	h   hash.Hash
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

// parse reads the page a step fetched: the home page's hash, title and
// description, and for an HTML answer from the host itself the selected
// targets (a redirect to another host is one link to that host); with
// pages_per_host above 1, also the host's own links, in DOM order, as
// pages to fetch next. A page whose <meta name=robots> says nofollow (or
// none) gives no edge and no page to follow, unless robots are ignored.
func (c *Crawler) parse(w *parser, t *task) {
	p := t.p
	if p.body == nil {
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
	nofollow := false
	switch {
	case t.status >= 300:
	case finalHost != "" && finalHost != p.lease.Host:
		w.sel.add(p.final)
	case isHTML(t.ctype):
		add := w.sel.add
		if more {
			full := false
			add = func(u *url.URL) bool {
				if h, err := graph.HostOf(u); err == nil && h == p.lease.Host && len(inner) < maxInnerLinks {
					inner = append(inner, u)
				}
				if !full {
					full = !w.sel.add(u)
				}
				return true // the host's own links are wanted to the end
			}
		}
		// An in-memory body has no read error to report.
		info, _ := w.ex.Page(bytes.NewReader(data), p.final, add)
		nofollow = info.NoFollow && !c.cfg.IgnoreRobots
		if home {
			p.title = info.Title
			p.desc = info.Description
			if p.desc == "" {
				p.desc = p.title
			}
		}
	}
	if nofollow {
		return
	}
	p.addTargets(w.sel.picked)
	for _, u := range inner {
		t.queuePage(u)
	}
}

// maxInnerLinks bounds the same-host links one page adds to the host's
// queue of pages.
const maxInnerLinks = 1000

// addTargets adds one page's selected targets: a page adds at most 1 to
// the weight of a target, so a target's weight is the number of the
// host's pages that link to it.
func (p *page) addTargets(picked []target) {
	for _, t := range picked {
		if i, ok := p.targetAt[t.host]; ok {
			p.targets[i].weight++
			continue
		}
		if p.targetAt == nil {
			p.targetAt = map[string]int{}
		}
		p.targetAt[t.host] = len(p.targets)
		t.weight = 1
		p.targets = append(p.targets, t)
	}
}

// isHTML reports whether a Content-Type is (or may be) HTML: a missing one
// is parsed too, as browsers sniff.
func isHTML(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.Contains(strings.ToLower(ct), "html")
	}
	return mt == "text/html" || mt == "application/xhtml+xml"
}
