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
	targets    []target
	robots     *robotsRecord // fetched robots.txt, to cache

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

// parse hashes the body that process kept, and for an HTML answer from the
// page's own host extracts title, description and the selected targets.
// A redirect to another host is recorded as one link to that host.
func (c *Crawler) parse(w *parser, p *page) {
	if p.body == nil {
		return
	}
	defer p.dropBody()
	data := p.body.Bytes()
	w.h.Reset()
	w.h.Write(data)
	p.hash = hex.EncodeToString(w.h.Sum(nil))
	p.bytes = int64(len(data))
	p.targets, p.title, p.desc = nil, "", ""
	w.sel.reset(p.lease.Host, c.cfg.MaxOutboundLinks, c.exclude)
	finalHost, _ := graph.HostOf(p.final)
	switch {
	case p.status >= 300:
	case finalHost != "" && finalHost != p.lease.Host:
		w.sel.add(p.final)
	case isHTML(p.ctype):
		// An in-memory body has no read error to report.
		info, _ := w.ex.Page(bytes.NewReader(data), p.final, w.sel.add)
		p.title = info.Title
		p.desc = info.Description
		if p.desc == "" {
			p.desc = p.title
		}
	}
	p.targets = append([]target(nil), w.sel.picked...)
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
