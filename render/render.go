package render

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Config configures a Pool. Browser and Transport are required.
type Config struct {
	// Browser is the path of the chromium or Chrome program (see FindBrowser).
	Browser string
	// Transport fetches every request of the browser: the page, its
	// redirects, its scripts, its XHRs. It does not follow redirects (the
	// browser does, and each hop comes back through the Transport). The
	// crawl passes its own, which applies --connect-to, the proxy variables
	// and the private-address refusal after DNS.
	Transport http.RoundTripper
	// Policy, when not nil, sees every request that the pool's own rules
	// (see the package documentation) let through, before the Transport;
	// an error refuses the request (robots.txt, per-host delay, hosts that
	// may not load). It may change the request's headers. InfoOf tells it
	// which page the request is for and what it is. It must honour the
	// request's context. It is called from several goroutines at once (a
	// page's scripts load together), never for the page given to
	// RenderPage.
	Policy func(req *http.Request) error
	// UserAgent is the User-Agent of the browser (navigator.userAgent) and
	// of every request it makes; "" means "weaver".
	UserAgent string
	// Tabs is the most pages rendered at once; 0 means 2.
	Tabs int
	// Timeout bounds one Render, from the tab's opening to the snapshot; 0
	// means 15 s.
	Timeout time.Duration
	// Settle is the longest a render waits, after the page has loaded, for
	// it to go quiet before it takes the DOM as it is; 0 means 5 s.
	Settle time.Duration
	// Quiet is how long the page must stay quiet (no DOM change, no request
	// in flight, no pending setTimeout of 5 s or less) to be taken; 0 means
	// 500 ms.
	Quiet time.Duration
	// MaxBodyBytes caps the page itself (each document response the
	// browser is given) and Result.HTML; 0 means 1 MiB.
	MaxBodyBytes int64
	// MaxScriptBytes caps each other response (scripts, XHR, fetch): an
	// app's bundle is often bigger than its page, and a cut script is a
	// syntax error. 0 means 8 MiB.
	MaxScriptBytes int64
	// MaxPageBytes caps the bytes of all the responses of one page; a
	// request past it is refused. 0 means 32 MiB.
	MaxPageBytes int64
	// MaxRequests caps the requests of one page (the page and its redirects
	// included); the rest are refused. 0 means 100.
	MaxRequests int
	// MaxRSS replaces the browser, once its renders in flight are done,
	// when its processes use more than this many bytes of memory (their
	// proportional set sizes summed, see Pool.RSS); 0 means 1 GiB,
	// negative never.
	MaxRSS int64
	// MaxRenders replaces the browser after this many renders; 0 means
	// 1,000, negative never.
	MaxRenders int
	// StartTimeout bounds the start of the browser; 0 means 30 s.
	StartTimeout time.Duration
	// Logf, when not nil, receives the pool's own events (browser started,
	// replaced, lost).
	Logf func(format string, args ...any)
}

func (c *Config) fill() error {
	if c.Browser == "" {
		return fmt.Errorf("%w: no browser (see FindBrowser)", ErrConfig)
	}
	if c.Transport == nil {
		return fmt.Errorf("%w: no transport: the browser has no network of its own", ErrConfig)
	}
	if c.UserAgent == "" {
		c.UserAgent = "weaver"
	}
	if c.Tabs <= 0 {
		c.Tabs = 2
	}
	if c.Timeout <= 0 {
		c.Timeout = 15 * time.Second
	}
	if c.Settle <= 0 {
		c.Settle = 5 * time.Second
	}
	if c.Quiet <= 0 {
		c.Quiet = 500 * time.Millisecond
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 1 << 20
	}
	if c.MaxScriptBytes <= 0 {
		c.MaxScriptBytes = 8 << 20
	}
	if c.MaxPageBytes <= 0 {
		c.MaxPageBytes = 32 << 20
	}
	if c.MaxRequests <= 0 {
		c.MaxRequests = 100
	}
	if c.MaxRSS == 0 {
		c.MaxRSS = 1 << 30
	}
	if c.MaxRenders == 0 {
		c.MaxRenders = 1000
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = 30 * time.Second
	}
	return nil
}

// Result is a rendered page.
type Result struct {
	// HTML is the outerHTML of the rendered document, at most
	// Config.MaxBodyBytes bytes.
	HTML []byte
	// Truncated reports that HTML was cut to Config.MaxBodyBytes.
	Truncated bool
	// FinalURL is the URL the links of HTML resolve against: the page's URL
	// after its redirects and whatever history.pushState made of it (an
	// http or https URL of the same origin; else the URL after redirects).
	FinalURL string
	// Status is the HTTP status of the page (after its redirects).
	Status int
	// Took is how long the render took, tab included.
	Took time.Duration
	// Settled reports that the page went quiet (see Config.Quiet) before
	// it was taken; false means it was taken at the end of Config.Settle.
	Settled bool
	// Fetches lists the requests of the page, in the order they came: what
	// was fetched and what was refused, and why.
	Fetches []Fetch
	// Navigated is where the page's main frame tried to go once it had
	// come (a script's location change, a refresh): the first such http(s)
	// URL, without fragment, "" when none. The navigation is refused (the
	// page stays); a crawler records it as the page's redirect.
	Navigated string
}

// Fetch is one request the browser made for a page.
type Fetch struct {
	URL    string // without the fragment
	Type   string // the DevTools resource type: Document, Script, XHR, Fetch, Image, ...
	Status int    // the HTTP status; 0 when not fetched
	Bytes  int    // body bytes given to the browser
	Err    error  // nil when fetched; else the rule (ErrNotLoaded), the Policy's or the Transport's error
}

// ErrNotLoaded is the Fetch.Err of a request the pool's own rules refused.
var ErrNotLoaded = errors.New("render: not loaded")

// RequestInfo describes a request the Policy sees.
type RequestInfo struct {
	Page string // the URL given to Render
	Type string // the DevTools resource type: Document, Script, XHR or Fetch
}

type infoKey struct{}

// InfoOf returns what the request the Policy was given is for; ok is false
// for a request that does not come from a Pool.
func InfoOf(req *http.Request) (info RequestInfo, ok bool) {
	info, ok = req.Context().Value(infoKey{}).(RequestInfo)
	return info, ok
}

// Pool renders pages in one browser, at most Config.Tabs at once. It is
// safe for concurrent use.
type Pool struct {
	cfg   Config
	tabs  chan struct{} // a slot per tab that may be open
	fence *fence

	mu      sync.Mutex // guards cur, closed, starts, and every browser's refs, renders, timeouts, retiring
	cur     *browser   // the browser new renders go to; nil before the first and after a loss
	closed  bool
	starts  int            // browsers started
	startMu sync.Mutex     // held while a browser starts, so only one does
	wg      sync.WaitGroup // renders in flight, for Close
}

// New returns a Pool. The browser starts at the first Render. It returns an
// error wrapping ErrConfig for an unusable Config, and the error of the
// fence's listener.
func New(cfg Config) (*Pool, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	f, err := startFence()
	if err != nil {
		return nil, err
	}
	return &Pool{cfg: cfg, tabs: make(chan struct{}, cfg.Tabs), fence: f}, nil
}

// Render loads the page at rawURL in a tab and returns its rendered DOM. It
// waits for a free tab first (as long as ctx allows).
//
// It returns an error wrapping ErrRefused when the page itself was refused
// (by the Policy: the Policy's error is wrapped too), ErrFetch when the
// Transport failed to fetch it (its error wrapped too, so
// errors.Is(err, crawl.ErrRefusedAddress) works), ErrTimeout when the page
// took longer than Config.Timeout, ErrBrowserLost when the browser died
// during the render (render it again), ErrStart when no browser could be
// started, ErrClosed after Close, or ctx's error.
func (p *Pool) Render(ctx context.Context, rawURL string) (Result, error) {
	return p.RenderPage(ctx, Page{URL: rawURL})
}

// Page is a page already fetched, for RenderPage.
type Page struct {
	URL    string      // the page's URL, after its redirects
	Status int         // its HTTP status; 0 means 200
	Header http.Header // its response headers (Content-Type, Content-Security-Policy, ...)
	Body   []byte      // its body, as fetched (decoded, capped); nil: fetch the page
}

// RenderPage is Render for a page the caller has fetched already: the
// browser is given pg instead of fetching pg.URL again (neither the Policy
// nor the Transport sees that request), so rendering a page costs its host
// no second request. Everything else the page loads is fetched as in
// Render. It returns Render's errors.
func (p *Pool) RenderPage(ctx context.Context, pg Page) (Result, error) {
	rawURL := pg.URL
	select {
	case p.tabs <- struct{}{}:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	defer func() { <-p.tabs }()
	b, err := p.acquire(ctx)
	if err != nil {
		return Result{}, err
	}
	start := time.Now()
	res, err := p.renderIn(ctx, b, &pg)
	res.Took = time.Since(start)
	p.release(b, errors.Is(err, ErrTimeout))
	if err != nil && b.dead() && ctx.Err() == nil {
		p.logf("render: the browser died while rendering %s: %v", rawURL, err)
		return res, fmt.Errorf("%w: %s: %w", ErrBrowserLost, rawURL, err)
	}
	return res, err
}

// acquire returns the browser to render in, starting one if there is none
// or the current one died or retires.
func (p *Pool) acquire(ctx context.Context) (*browser, error) {
	p.startMu.Lock()
	defer p.startMu.Unlock()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	if b := p.cur; b != nil && !b.retiring && !b.dead() {
		b.refs++
		p.wg.Add(1)
		p.mu.Unlock()
		return b, nil
	}
	if old := p.cur; old != nil {
		p.cur = nil
		old.retiring = true
		if old.refs == 0 {
			go old.close()
		}
	}
	p.mu.Unlock()

	b, err := startBrowser(ctx, &p.cfg, p.fence.addr())
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		go b.close()
		return nil, ErrClosed
	}
	p.starts++
	p.logf("render: browser %d started (pid %d)", p.starts, b.pid())
	p.cur = b
	b.refs++
	p.wg.Add(1)
	return b, nil
}

// maxTimeouts is how many renders in a row may time out before the browser
// is replaced: one hostile page costs one timeout, but a browser that no
// longer answers would cost every page one.
const maxTimeouts = 3

// release ends a render in b, and retires b when it is lost, leaks, has
// rendered enough, or timed out maxTimeouts times in a row.
func (p *Pool) release(b *browser, timedOut bool) {
	defer p.wg.Done()
	p.mu.Lock()
	b.refs--
	b.renders++
	if timedOut {
		b.timeouts++
	} else {
		b.timeouts = 0
	}
	renders, wedged := b.renders, b.timeouts >= maxTimeouts
	enough := p.cfg.MaxRenders > 0 && renders >= p.cfg.MaxRenders
	measure := !b.retiring && renders%10 == 0 && p.cfg.MaxRSS > 0
	p.mu.Unlock()
	retire := ""
	switch {
	case wedged:
		retire = fmt.Sprintf("%d renders in a row timed out", maxTimeouts)
	case enough:
		retire = fmt.Sprintf("after %d renders", renders)
	case measure:
		// Reading /proc costs a few ms: every tenth render is often enough.
		if rss := b.rss(); rss > p.cfg.MaxRSS {
			retire = fmt.Sprintf("its processes use %d MiB", rss>>20)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if retire != "" && !b.retiring {
		p.logf("render: replacing the browser (pid %d): %s", b.pid(), retire)
		b.retiring = true
		if p.cur == b {
			p.cur = nil
		}
	}
	if (b.retiring || b.dead()) && b.refs == 0 {
		if p.cur == b {
			p.cur = nil
		}
		go b.close()
	}
}

// RSS returns the memory of the current browser's processes in bytes: their
// proportional set sizes summed, so a page they share counts once (their
// resident sets where /proc has no smaps_rollup); 0 when none runs.
func (p *Pool) RSS() int64 {
	p.mu.Lock()
	b := p.cur
	p.mu.Unlock()
	if b == nil {
		return 0
	}
	return b.rss()
}

// PID returns the process id of the current browser, 0 when none runs.
func (p *Pool) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == nil {
		return 0
	}
	return p.cur.pid()
}

// Starts returns how many browsers the pool has started.
func (p *Pool) Starts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts
}

// Escaped returns the requests that escaped the interception and reached
// the pool's fence (which refused them all), such as "GET
// http://clients2.google.com/..." or "CONNECT update.googleapis.com:443".
func (p *Pool) Escaped() []string { return p.fence.escaped() }

// Close waits for the renders in flight, stops the browser and the fence.
// It returns the fence's close error.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	p.wg.Wait()
	p.startMu.Lock() // no browser is starting
	p.mu.Lock()
	b := p.cur
	p.cur = nil
	p.mu.Unlock()
	p.startMu.Unlock()
	if b != nil {
		b.close()
	}
	return p.fence.close()
}

func (p *Pool) logf(format string, args ...any) {
	if p.cfg.Logf != nil {
		p.cfg.Logf(format, args...)
	}
}

// chromedpErrorf quiets chromedp's own error logs (a tab closed under a
// hung page logs a few), which the pool reports through its errors.
func chromedpErrorf(string, ...any) {}
