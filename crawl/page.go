package crawl

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/weaver-crawler/weaver/crawl/extract"
	"github.com/weaver-crawler/weaver/crawl/robots"
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
	status   int
	ctype    string
	server   string
	bytes    int64
	took     time.Duration
	hash     string
	title    string
	desc     string
	targets  []target
	robots   *robotsRecord // fetched robots.txt, to cache

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

// process fetches one lease: robots.txt, then the page, whose body is kept
// for parse. Parsing is not done here, so that a worker's next fetch does
// not wait for the link extraction of its last page.
func (c *Crawler) process(ctx context.Context, worker int, l frontier.Lease) *page {
	p := c.fetchPage(ctx, worker, l)
	if p.returned || !p.fetched || p.status >= 500 || p.status == http.StatusTooManyRequests {
		p.dropBody() // an earlier attempt's, or none: such answers are not read
	}
	return p
}

func (c *Crawler) fetchPage(ctx context.Context, worker int, l frontier.Lease) *page {
	p := &page{lease: l, worker: worker}
	u, err := url.Parse(l.URL)
	if err != nil {
		p.kind, p.err = KindOther, "bad URL: "+err.Error()
		return p
	}
	if !c.cfg.AllowPrivateNetworks && forbiddenHost(u.Hostname()) {
		p.kind, p.err = KindRefused, ErrRefusedAddress.Error()
		return p
	}
	if !c.cfg.IgnoreRobots {
		c.setWorker(worker, WorkerRobots, l.Host)
		rules, kind, err := c.robotsFor(ctx, u, p)
		if ctx.Err() != nil {
			p.returned = true
			return p
		}
		if err != nil {
			p.kind, p.err = kind, string(kind)+": "+err.Error()
			return p
		}
		if !rules.Allowed(c.cfg.UserAgent, l.URL) {
			p.disallow = true
			return p
		}
		if d := rules.CrawlDelay(c.cfg.UserAgent); d > 0 {
			c.gate.setDelay(l.Host, d)
		}
	}
	c.setWorker(worker, WorkerFetching, l.Host)
	start := time.Now()
	resp, kind, err := c.fetchWithRetries(ctx, l.Host, l.URL, p.readBody)
	p.took = time.Since(start)
	c.fetchHist.observe(p.took)
	if ctx.Err() != nil {
		p.returned = true
		return p
	}
	if err != nil {
		p.kind, p.err = kind, string(kind)+": "+err.Error()
		return p
	}
	p.fetched = true
	p.status, p.ctype, p.server = resp.status, resp.contentType, resp.server
	if kind == KindHTTP || resp.status >= 400 {
		p.kind = KindHTTP
		p.err = fmt.Sprintf("HTTP %d", resp.status)
	}
	return p
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

// robotsFor returns host's robots.txt rules: from the store's cache when
// younger than the TTL, else fetched (through the host's politeness gate).
// A transport failure reaching the host is returned as the host's failure
// and not cached; HTTP answers are cached, the 5xx ones as disallow-all
// (RFC 9309 §2.3.1).
func (c *Crawler) robotsFor(ctx context.Context, page *url.URL, p *page) (*robots.Rules, ErrorKind, error) {
	host := p.lease.Host
	var rec robotsRecord
	var found bool
	err := c.store.View(func(tx *kv.Tx) error {
		var err error
		found, err = tx.Get(kv.BucketRobots, []byte(host), &rec)
		return err
	})
	if err == nil && found && c.now().Sub(rec.Fetched) < c.cfg.robotsTTL() {
		var r robots.Rules
		if err := r.UnmarshalBinary(rec.Rules); err == nil {
			return &r, "", nil
		}
	}
	robotsURL := &url.URL{Scheme: page.Scheme, Host: page.Host, Path: "/robots.txt"}
	var body []byte
	resp, kind, err := c.fetchWithRetries(ctx, host, robotsURL.String(), func(r io.Reader, resp *response) error {
		var err error
		body, err = io.ReadAll(io.LimitReader(r, robots.MaxBodyBytes))
		return err
	})
	if err != nil {
		return nil, kind, err
	}
	c.stats.robotsFetched.Add(1)
	rules := robots.FromResponse(resp.status, body)
	if data, err := rules.MarshalBinary(); err == nil {
		p.robots = &robotsRecord{Fetched: c.now(), Rules: data}
	}
	return rules, "", nil
}
