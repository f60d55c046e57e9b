package crawl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"time"

	"github.com/weaver-crawler/weaver/crawl/extract"
	"github.com/weaver-crawler/weaver/crawl/robots"
	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// stage is how far a host's crawl has come.
type stage uint8

const (
	stageStart  stage = iota // leased, nothing asked yet
	stageRobots              // asking robots.txt
	stagePage                // asking the page
	stageRender              // rendering the page fetched (--render)
)

// task is one leased host's crawl, made of steps of one HTTP request each
// (robots.txt, the page, each redirect hop, each retry). Between steps the
// host is parked until its gate opens, and the worker takes another host:
// no worker ever sleeps on one host. A task belongs to the dispatcher
// while parked and to one worker while it runs a step.
type task struct {
	p     *page
	stage stage

	url     string // what the next step asks
	host    string // url's host: whose gate the step waits for
	hops    int    // redirects followed in this stage
	attempt int    // retries of this request

	pageNo    int      // the page being fetched: 0 the home page, then 1, 2, ...
	status    int      // the current page's answer
	ctype     string   // its Content-Type (sniffed from the body when missing or unreadable)
	isHTML    bool     // ctype is HTML's (extract.ContentType)
	robotsTag []string // its X-Robots-Tag headers
	// redirectTo: the page redirected to another host (a 3xx), where its
	// crawl ends: the redirect is the page's one link, and that host's
	// crawl its own (queued as a linked host is).
	redirectTo *url.URL
	// refresh: the page's meta refresh (or Refresh header) names another
	// page of the host, to follow as a redirect once the page is parsed.
	refresh       *url.URL
	refreshHeader string          // the answer's Refresh header, a meta refresh the page need not carry
	refreshed     []string        // the URLs this page's refreshes led to, a loop's guard
	navigated     *url.URL        // --render: another host the page's scripts sent the browser to
	robotsChain   []string        // the URLs robots.txt's redirects led to, a loop's guard
	reached       bool            // a request to the lease's host got an answer
	otherTried    bool            // the other scheme was tried (otherScheme)
	jar           *cookiejar.Jar  // the cookies the host set during this lease (nil: none yet)
	rendered      []byte          // the current page's DOM after --render, parsed instead of its HTML
	warcPrev      *WarcRef        // where the home page was recorded by the last crawl (--warc)
	cond          validators      // the home page's validators from the last crawl: a conditional request
	queue         []string        // the host's own pages found so far and not yet fetched, in order
	frames        []string        // the home page's frames of the host (a frameset's), not yet fetched
	framesTaken   int             // frames queued in this lease, at most maxFrames
	framesDone    int             // of the pages fetched (pageNo), the frames: not pages_per_host's
	frameGen      int             // the current document is a frame of page frameGen (0: it is not)
	seen          map[string]bool // pages queued or fetched (URL without fragment)
	rules         *robots.Rules   // kept for the pages after the home page

	readyAt  time.Time     // the next step may not start before
	parkedAt time.Time     // when the task was last parked (zero: never)
	persist  bool          // the park is written to the store (see parkCommit)
	delay    time.Duration // robots.txt's Crawl-delay for the host, 0 if none
	body     []byte        // robots.txt's body, read by the step that asked it

	done bool // the current page is finished: it goes to parse (then the next page, or the commit)
	// netFault: the step that finished the page failed in a way that may
	// be the crawler's own network (see netwatch): the page is held until
	// the web is seen answering, or given back if the crawl pauses.
	netFault bool
	failedAt time.Time // when that step failed
	index    int       // in the dispatcher's heap; -1 when not in it
}

func newTask(l frontier.Lease, worker int) *task {
	return &task{p: &page{lease: l, worker: worker}, url: l.URL, host: l.Host, readyAt: l.NotBefore, index: -1}
}

// pageKey is u as the host's pages are told apart: without fragment,
// its host as the lease's (lower case, no default port).
func (t *task) pageKey(u *url.URL) string {
	v := *u
	v.Fragment, v.RawFragment = "", ""
	v.Host = t.p.lease.Host
	if t.seen == nil {
		t.seen = map[string]bool{t.p.lease.URL: true}
	}
	return v.String()
}

// queuePage adds one of the host's own links to its pages to fetch.
func (t *task) queuePage(u *url.URL) {
	s := t.pageKey(u)
	if !t.seen[s] {
		t.seen[s] = true
		t.queue = append(t.queue, s)
	}
}

// maxFrames bounds the frames of a frameset home page fetched as part of
// it: a frameset of 1,000 frames costs five fetches.
const maxFrames = 5

// queueFrame adds a frame of the host, of a frameset home page, to the
// documents fetched as part of that page: at most maxFrames in a lease,
// never the page itself or one already queued or fetched (a frame that
// frames itself is fetched once).
func (t *task) queueFrame(u *url.URL) {
	if t.framesTaken >= maxFrames {
		return
	}
	s := t.pageKey(u)
	if !t.seen[s] && s != t.url {
		t.seen[s] = true
		t.frames = append(t.frames, s)
		t.framesTaken++
	}
}

// nextPage makes the host's next document t's next step, after its
// parse: first the home page's frames (a frameset's, queueFrame), then
// while fewer than pages_per_host pages were tried, the next queued page.
// Only what robots.txt allows is asked (a disallowed page is not fetched
// and does not count), each taken from max_pages: a frame counts there
// as a fetch, and not toward pages_per_host. It reports whether there is
// one.
func (c *Crawler) nextPage(t *task) bool {
	p := t.p
	if p.returned || !p.fetched || p.kind != "" || p.disallow || p.redirected {
		return false
	}
	for len(t.frames) > 0 {
		next := t.frames[0]
		t.frames = t.frames[1:]
		if !c.takePage(t, next) {
			continue
		}
		t.framesDone++
		c.startDocument(t, next, 1)
		return true
	}
	t.frames = nil
	for c.cfg.PagesPerHost > 1 && t.pageNo-t.framesDone+1 < c.cfg.PagesPerHost && len(t.queue) > 0 {
		next := t.queue[0]
		t.queue = t.queue[1:]
		if !c.takePage(t, next) {
			continue
		}
		c.startDocument(t, next, 0)
		return true
	}
	return false
}

// takePage reports whether robots.txt allows the lease's page u and
// max_pages has room for it, which it then takes. A full max_pages ends
// the lease's documents.
func (c *Crawler) takePage(t *task, u string) bool {
	if t.rules != nil && !t.rules.Allowed(c.cfg.UserAgent, u) {
		return false
	}
	if c.cfg.MaxPages > 0 && c.stats.claimed.Add(1) > int64(c.cfg.MaxPages) {
		c.stats.claimed.Add(-1)
		t.frames, t.queue = nil, nil
		return false
	}
	return true
}

// startDocument makes u, a page of the lease's host (a frame of page
// frameGen when frameGen > 0), t's next step.
func (c *Crawler) startDocument(t *task, u string, frameGen int) {
	t.pageNo++
	t.frameGen = frameGen
	t.stage, t.url, t.host, t.hops, t.attempt, t.done, t.redirectTo, t.rendered = stagePage, u, t.p.lease.Host, 0, 0, false, nil, nil
	t.netFault, t.refresh, t.refreshed, t.navigated = false, nil, nil, nil
	t.readyAt = c.gate.nextAt(t.host)
}

// follow makes the refresh of the page just parsed, to a page of the same
// host, the page's next step, as a redirect within the host is: through
// robots.txt and the host's gate, at most maxRedirects hops, never to a
// page the chain fetched already. The document it leads to is the same
// page: its links count with the first's (a target once), its title and
// answer replace the first's. It reports whether there is one.
func (c *Crawler) follow(t *task) bool {
	u, p := t.refresh, t.p
	t.refresh = nil
	if u == nil || p.returned || p.kind != "" || t.hops >= maxRedirects || t.status >= 300 || !c.allows(t, u) {
		return false
	}
	to := u.String()
	if to == t.url || slices.Contains(t.refreshed, to) {
		return false
	}
	t.refreshed = append(t.refreshed, t.url)
	t.hops++
	if t.pageNo > 0 {
		p.pages-- // the page is counted once, at its last document's answer
	}
	t.stage, t.url, t.host, t.attempt, t.done, t.redirectTo, t.rendered, t.navigated = stagePage, to, p.lease.Host, 0, false, nil, nil, nil
	t.netFault, t.status, t.ctype, t.isHTML, t.robotsTag, t.refreshHeader = false, 0, "", false, nil, ""
	t.readyAt = c.gate.nextAt(t.host)
	return true
}

// step runs t's next request (after the checks of a task's start) and
// leaves t either done or with the time its next step may start.
func (c *Crawler) step(ctx context.Context, worker int, t *task) {
	t.p.worker = worker
	if t.stage == stageStart {
		c.start(t)
		if t.done {
			c.gate.release(t.host) // held for a request that was not made
			return
		}
	}
	switch t.stage {
	case stageRobots:
		c.setWorker(worker, WorkerRobots, t.p.lease.Host)
	case stageRender:
		c.setWorker(worker, WorkerRendering, t.p.lease.Host)
		c.renderStep(ctx, t)
		return
	default:
		c.setWorker(worker, WorkerFetching, t.p.lease.Host)
	}
	c.request(ctx, t)
}

// start makes the checks that need no request: the URL, a private address
// named literally, and robots.txt from the store's cache.
func (c *Crawler) start(t *task) {
	p := t.p
	u, err := url.Parse(p.lease.URL)
	if err != nil {
		c.fail(t, KindOther, fmt.Errorf("bad URL: %w", err))
		return
	}
	if !c.cfg.AllowPrivateNetworks && forbiddenHost(u.Hostname()) {
		c.fail(t, KindRefused, fmt.Errorf("%w: %s", ErrRefusedAddress, u.Hostname()))
		return
	}
	t.stage = stagePage
	// A host crawled before is asked conditionally when one page is
	// fetched per crawl: a 304 says its page, and so its links, are as
	// the last crawl read them.
	conditional := c.cfg.PagesPerHost == 1 && c.cfg.Render != RenderAlways
	if c.archive != nil || conditional {
		err := c.store.View(func(tx *kv.Tx) error {
			if c.archive == nil {
				// Most hosts were never crawled: their head says so
				// without decoding the whole node.
				if h, ok, err := graph.GetHead(tx, p.lease.NodeID); err != nil || !ok || h.CrawlCount == 0 {
					return err
				}
			}
			n, ok, err := graph.Get(tx, p.lease.NodeID)
			if err != nil || !ok {
				return err
			}
			if ref, ok := ParseWarcRef(n.Warc); ok && c.archive != nil {
				t.warcPrev = &ref
			}
			if conditional && n.CrawlCount > 0 && n.Status == graph.StatusCrawled && graph.HasCrawls(tx, n.ID) {
				t.cond = validators{etag: n.ETag, lastModified: n.LastModified}
			}
			return nil
		})
		if err != nil {
			// The store cannot be read: the page goes back, and the
			// crawl ends as for a failed commit.
			p.returned, t.done = true, true
			select {
			case c.fatal <- fmt.Errorf("%w: reading %s: %w", ErrStoreFailed, p.lease.Host, err):
			default:
			}
			return
		}
	}
	if c.cfg.IgnoreRobots {
		return
	}
	if rules := c.cachedRobots(p.lease.Host); rules != nil {
		c.obey(t, rules)
		return
	}
	t.stage = stageRobots
	t.url = (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/robots.txt"}).String()
	t.robotsChain = append(t.robotsChain[:0], t.url)
}

// cachedRobots returns host's robots.txt rules from the store's cache when
// younger than the TTL, or nil.
func (c *Crawler) cachedRobots(host string) *robots.Rules {
	r, _ := c.cachedRobotsRecord(host)
	return r
}

// cachedRobotsRecord is cachedRobots with the cache's record.
func (c *Crawler) cachedRobotsRecord(host string) (*robots.Rules, *robotsRecord) {
	var rec robotsRecord
	var found bool
	err := c.store.View(func(tx *kv.Tx) error {
		var err error
		found, err = tx.Get(kv.BucketRobots, []byte(host), &rec)
		return err
	})
	if err != nil || !found || !rec.fresh(c.now(), c.cfg.robotsTTL()) {
		return nil, nil
	}
	var r robots.Rules
	if err := r.UnmarshalBinary(rec.Rules); err != nil {
		return nil, nil
	}
	return &r, &rec
}

// obey applies robots.txt's rules to the page: a disallowed page ends the
// task; else the page is the next step, after the host's delay (raised by
// a Crawl-delay).
func (c *Crawler) obey(t *task, rules *robots.Rules) {
	p := t.p
	t.rules = rules // for the redirects and the pages after the home page
	t.robotsChain = nil
	if !rules.Allowed(c.cfg.UserAgent, p.lease.URL) {
		p.disallow = true
		t.done = true
		return
	}
	if d := rules.CrawlDelay(c.cfg.UserAgent); d > 0 {
		t.delay = d
		c.gate.setDelay(p.lease.Host, d)
	}
	t.stage, t.url, t.host, t.hops, t.attempt = stagePage, p.lease.URL, p.lease.Host, 0, 0
	t.readyAt = c.gate.nextAt(t.host)
}

// fail ends the task with a failure of kind (robots.txt's failures are the
// page's: the host could not be reached).
func (c *Crawler) fail(t *task, kind ErrorKind, err error) {
	t.done = true
	t.netFault, t.failedAt = netFault(kind, err), c.now()
	// A page that failed gives no link: not even what a body cut short
	// had brought before the failure.
	t.p.dropBody()
	t.rendered, t.redirectTo, t.refresh = nil, nil, nil
	if t.pageNo > 0 {
		// A page after the home page failed: the host's crawl goes on.
		t.p.pagesBad++
		t.status, t.ctype, t.isHTML = 0, "", false
		return
	}
	t.p.kind, t.p.err = kind, string(kind)+": "+err.Error()
	if kind.IsCertificate() || kind == KindTLS {
		t.p.err += " (--insecure accepts it, recording the problem on the node)"
	}
	t.p.forGood = forGood(kind, err)
	t.done = true
}

// request asks t.url once. A redirect, a retry or robots.txt's answer
// leaves the next step in t; a final answer or failure ends the task.
func (c *Crawler) request(ctx context.Context, t *task) {
	p := t.p
	var read func(io.Reader, *response) error
	if t.stage == stageRobots {
		read = func(r io.Reader, _ *response) error {
			var err error
			t.body, err = io.ReadAll(io.LimitReader(r, robots.MaxBodyBytes))
			return err
		}
	} else {
		read = p.readBody
	}
	timeout := c.cfg.timeout() + time.Duration(t.attempt)*2*time.Second
	start := time.Now()
	var prev *WarcRef
	var cond validators
	if t.stage == stagePage && t.pageNo == 0 {
		prev = t.warcPrev
		if t.hops == 0 {
			cond = t.cond
		}
	}
	resp, err := c.get(ctx, ask{url: t.url, timeout: timeout, prev: prev, cond: cond, jar: &t.jar}, func(body io.Reader, r *response) error {
		if r.status >= 500 || r.status == http.StatusTooManyRequests {
			return nil // retried or recorded; the body is not wanted
		}
		return read(body, r)
	})
	took := time.Since(start)
	if t.delay > 0 {
		c.gate.setDelay(t.host, t.delay)
	}
	c.gate.done(t.host)
	if t.stage == stagePage {
		p.took += took
	}
	if ctx.Err() != nil {
		p.returned, t.done = true, true
		return
	}
	if err == nil && resp.capture != nil {
		if t.stage == stageRobots {
			p.robotsCaptures = append(p.robotsCaptures, resp.capture)
		} else {
			p.captures = append(p.captures, resp.capture)
		}
	}
	switch {
	case err == nil:
		t.reached = t.reached || t.host == p.lease.Host
		if u, perr := url.Parse(t.url); perr == nil {
			charge, _ := c.net.answered(u.Scheme, u.Host, start)
			c.toParse(charge)
		}
	case !errors.Is(err, ErrArchive):
		if kind := classify(err); netFault(kind, err) {
			c.net.failed(t.host)
		}
	}
	switch {
	case errors.Is(err, ErrArchive):
		p.returned, t.done = true, true
		select {
		case c.fatal <- fmt.Errorf("%w: %s: %w", ErrStoreFailed, t.url, err):
		default:
		}
	case err != nil:
		kind := classify(err)
		if kind.retryable() && t.attempt < c.cfg.RetryAttempts {
			c.logf("WARN", "Worker %d failed to fetch %s (%s, retry %d/%d)", p.worker, t.host, kind, t.attempt+1, c.cfg.RetryAttempts)
			c.retry(t, 0)
			return
		}
		if c.otherScheme(t, kind, err) {
			return
		}
		if t.stage == stageRobots && t.host != p.lease.Host {
			c.robotsUnreachable(t, kind, err)
			return
		}
		c.fail(t, kind, err)
	case isRedirect(resp.status) && resp.location != "":
		c.redirect(t, resp)
	case isRedirect(resp.status) && t.stage == stagePage:
		c.answered(t, resp)
		if t.pageNo == 0 {
			p.err = "redirect without a Location"
		}
	case resp.status >= 500 || resp.status == http.StatusTooManyRequests:
		if resp.retryAfter <= maxRetryAfter && t.attempt < c.cfg.RetryAttempts {
			c.logf("WARN", "%s answered %d (retry %d/%d)", t.host, resp.status, t.attempt+1, c.cfg.RetryAttempts)
			c.retry(t, resp.retryAfter)
			return
		}
		c.answered(t, resp)
	default:
		c.answered(t, resp)
	}
}

// retry parks t for retry_delay (or the server's longer Retry-After), and
// longer if its host's gate says so.
func (c *Crawler) retry(t *task, retryAfter time.Duration) {
	c.stats.retries.Add(1)
	t.attempt++
	t.readyAt = c.now().Add(max(c.cfg.retryDelay(), retryAfter))
	if g := c.gate.nextAt(t.host); g.After(t.readyAt) {
		t.readyAt = g
	}
	t.persist = true
}

// answered takes a final answer: robots.txt's rules decide the page's
// step; the page's answer ends the task.
func (c *Crawler) answered(t *task, resp *response) {
	p := t.p
	if t.stage == stageRobots {
		c.robotsRules(t, resp.status, t.body, resp.cacheControl)
		return
	}
	t.done = true
	ctype, isHTML := resp.contentType, false
	if p.body != nil && resp.status < 300 {
		// A type missing or unreadable is sniffed from the body, as a
		// browser does and as the import does.
		ctype, isHTML = extract.ContentType(ctype, p.body.Bytes())
	}
	t.status, t.ctype, t.isHTML, t.robotsTag = resp.status, ctype, isHTML, resp.robotsTag
	t.refreshHeader = resp.refresh
	if t.pageNo > 0 {
		if resp.status >= 400 {
			p.pagesBad++
		} else {
			p.pages++
		}
	} else {
		p.fetched = true
		p.pages = 1
		if resp.status < 400 && len(t.refreshed) == 0 {
			p.home = t.url // where the redirects within the host led
		}
		p.warc = resp.capture
		p.status, p.ctype, p.server = resp.status, ctype, resp.server
		// The home page's answer speaks for the host's TLS: its
		// certificate checked (--insecure) and its HSTS read for it only.
		p.tlsProblem, p.hsts = "", false
		if resp.tls != nil {
			p.hsts = hstsOn(resp.sts)
			if c.cfg.Insecure {
				p.tlsProblem = c.tlsProblem(resp.tls, resp.finalURL.Hostname())
			}
		}
		p.etag, p.lastModified = resp.validators.etag, resp.validators.lastModified
		if resp.status == http.StatusNotModified && t.hops == 0 && t.cond != (validators{}) {
			// Not modified: no body, no parse; the commit keeps the
			// page and its links as the last crawl read them.
			p.notModified = true
			p.dropBody()
			return
		}
		if resp.status >= 400 {
			p.kind = KindHTTP
			p.err = fmt.Sprintf("HTTP %d", resp.status)
		}
	}
	if p.returned || resp.status >= 500 || resp.status == http.StatusTooManyRequests {
		p.dropBody()
		return
	}
	if c.wantsRender(t) {
		t.stage, t.done, t.attempt = stageRender, false, 0
		t.readyAt = c.gate.nextAt(t.host)
	}
}

// robotsRules takes robots.txt's answer (status and body, after its
// redirects) as the host's rules, cached for the host, and makes the
// page the next step if they allow it.
func (c *Crawler) robotsRules(t *task, status int, body []byte, cacheControl string) {
	p := t.p
	c.stats.robotsFetched.Add(1)
	rules := robots.FromResponse(status, body)
	t.body = nil
	if data, err := rules.MarshalBinary(); err == nil {
		p.robots = &robotsRecord{Fetched: c.now(), Rules: data, MaxAge: maxAge(cacheControl)}
		t.persist = true
		// A redirect to another host's own robots.txt (apex to www, as
		// most sites send it) has read that host's rules too: they are
		// cached for it, which saves it the same request.
		if u, err := url.Parse(t.url); err == nil && t.host != p.lease.Host && u.Path == "/robots.txt" && u.RawQuery == "" {
			p.robotsOf = t.host
		}
	}
	c.obey(t, rules)
}

// robotsUnreachable ends a host whose robots.txt redirected to another
// host that could not be reached: the host itself answered, so it has not
// failed, but its rules are unknown, which RFC 9309 §2.3.1.4 takes as a
// complete disallow. Nothing is cached: the next crawl asks again.
func (c *Crawler) robotsUnreachable(t *task, kind ErrorKind, err error) {
	t.done = true
	t.netFault, t.failedAt = netFault(kind, err), c.now()
	t.p.disallow = true
	t.p.disallowWhy = fmt.Sprintf("robots.txt unreachable at %s: %s: %v", t.url, kind, err)
}

// otherScheme makes the other scheme t's next step when the host's first
// connection (its robots.txt, or its page when robots.txt came from the
// cache) was refused or reset: a host whose port 80 is closed may answer
// on 443, and the reverse (issue 53). Not after a timeout or an HTTP
// answer, not while the crawl is paused for an outage, not on a port of
// the URL's own, not when the proxy refused (the host said nothing), and
// not from https to http for a host that sent HSTS. The node then records
// the scheme that answered (noteHome), and its robots.txt and later
// fetches use it. It reports whether it did.
func (c *Crawler) otherScheme(t *task, kind ErrorKind, err error) bool {
	p := t.p
	if t.otherTried || t.reached || t.hops > 0 || t.pageNo > 0 || t.host != p.lease.Host ||
		(kind != KindConnect && kind != KindReset) || c.net.current() != netUp || viaProxy(err) {
		return false
	}
	cur, err := url.Parse(t.url)
	if err != nil || cur.Port() != "" {
		return false
	}
	home, err := url.Parse(p.lease.URL)
	if err != nil || home.Port() != "" {
		return false
	}
	other := map[string]string{"http": "https", "https": "http"}[cur.Scheme]
	if other == "" || (other == "http" && c.sentHSTS(p.lease.NodeID)) {
		return false
	}
	t.otherTried = true
	c.logf("INFO", "%s refused %s (%s): trying %s", t.host, cur.Scheme, kind, other)
	cur.Scheme, home.Scheme = other, other
	t.url, p.lease.URL = cur.String(), home.String()
	if t.stage == stageRobots {
		t.robotsChain = append(t.robotsChain[:0], t.url)
	}
	t.attempt, t.done, t.netFault = 0, false, false
	t.readyAt = c.gate.nextAt(t.host)
	return true
}

// sentHSTS reports whether the host's last answer over https said
// Strict-Transport-Security: a browser would not ask it over http.
func (c *Crawler) sentHSTS(id uint64) bool {
	var hsts bool
	_ = c.store.View(func(tx *kv.Tx) error {
		n, ok, err := graph.Get(tx, id)
		hsts = err == nil && ok && n.HSTS
		return nil
	})
	return hsts
}
