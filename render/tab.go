package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"golang.org/x/net/html"
	"golang.org/x/net/publicsuffix"
)

// initScript runs in every document before the page's own scripts. It
// makes the dialogs and window.open no-ops (a dialog would stop the page;
// the browser refuses popups anyway), and keeps what tells the pool the
// page has gone quiet: the time of the last DOM change and the number of
// pending short timers (an app that builds its links after a setTimeout
// is not done yet).
const initScript = `(() => {
  const noop = () => undefined;
  window.alert = noop; window.print = noop;
  window.confirm = () => false; window.prompt = () => null;
  window.open = () => null;
  let last = performance.now();
  const live = new Set();
  const st = window.setTimeout, ct = window.clearTimeout;
  window.setTimeout = function (fn, ms, ...args) {
    if (typeof fn !== 'function' || ms > 5000) return st.call(window, fn, ms, ...args);
    let id;
    id = st.call(window, function () { live.delete(id); last = performance.now(); return fn.apply(this, args); }, ms);
    live.add(id);
    return id;
  };
  window.clearTimeout = function (id) { live.delete(id); return ct.call(window, id); };
  const mark = () => { last = performance.now(); };
  new MutationObserver(mark).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  Object.defineProperty(window, '__weaverQuiet', {value: () => [live.size, performance.now() - last]});
})();`

// pollScript says whether the page has loaded, how many short timers are
// pending and how long ago the DOM last changed, in ms.
const pollScript = `(() => {
  const q = typeof window.__weaverQuiet === 'function' ? window.__weaverQuiet() : [0, 1e9];
  return [document.readyState === 'complete' ? 1 : 0, q[0], Math.round(q[1])];
})()`

// snapshotScript returns location.href and the document's outerHTML, cut to
// %d characters (each at least a byte, so the cut never loses a byte that
// MaxBodyBytes would keep).
const snapshotScript = `(() => {
  const e = document.documentElement;
  let h = e ? e.outerHTML : '';
  const cut = h.length > %d;
  if (cut) h = h.slice(0, %d);
  return [location.href, h, cut ? '1' : ''];
})()`

// maxRedirects is the most redirects the page itself may take.
const maxRedirects = 5

// run is one render: the rules and the record of its requests.
type run struct {
	p      *Pool
	ctx    context.Context // the render's scope: its deadline ends the fetches
	page   string          // the URL given to Render
	tabCtx context.Context // the tab, for the Fetch commands

	inflight atomic.Int32 // requests being fetched
	lastNet  atomic.Int64 // UnixNano of the last request's start or end

	mu          sync.Mutex // guards the fields below
	fetches     []Fetch
	requests    int
	bytes       int64 // body bytes given to the browser so far
	mainFrame   cdp.FrameID
	docs        int             // main-frame document requests
	docDone     bool            // the page's final document was given to the browser
	docErr      error           // why the page itself failed
	docURL      *url.URL        // the page's URL after redirects
	navigated   string          // the first navigation refused once the page had come
	docStatus   int             // the HTTP status of the page's last document response
	site        string          // registrable domain of docURL's host
	scriptHosts map[string]bool // hosts the page's HTML names in <script src>
	given       *Page           // the page's response, from RenderPage; nil once used
}

func (p *Pool) renderIn(ctx context.Context, b *browser, given *Page) (Result, error) {
	rawURL := given.URL
	if given.Body == nil {
		given = nil
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Result{}, fmt.Errorf("%w: %q is not an http or https URL", ErrRefused, rawURL)
	}
	dctx, dcancel := context.WithTimeout(b.ctx, p.cfg.Timeout)
	defer dcancel()
	stop := context.AfterFunc(ctx, dcancel)
	defer stop()
	tctx, tcancel := chromedp.NewContext(dctx, chromedp.WithNewBrowserContext())
	defer tcancel()

	r := &run{p: p, ctx: tctx, page: u.String(), tabCtx: tctx, site: site(u.Hostname()), docURL: u, given: given}
	r.lastNet.Store(time.Now().UnixNano())

	// Subscribe before anything can pause: the subscription opens the tab.
	paused := chromedp.Events(tctx, fetch.RequestPaused)
	dialogs := chromedp.Events(tctx, page.JavascriptDialogOpening)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer tcancel() // ends the loops below before wg.Wait
	wg.Go(func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			r.inflight.Add(1)
			r.lastNet.Store(time.Now().UnixNano())
			wg.Go(func() { r.serve(ev) })
		}
	})
	wg.Go(func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			_, _ = chromedp.Call(tctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	})

	res, err := r.load(rawURL)
	r.mu.Lock()
	res.Fetches = slices.Clone(r.fetches)
	res.Status = r.docStatus
	res.Navigated = r.navigated
	docErr := r.docErr
	r.mu.Unlock()
	if err == nil {
		err = docErr
	}
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil:
		return res, ctx.Err()
	case dctx.Err() != nil && !b.dead():
		return res, fmt.Errorf("%w: %s after %v: %w", ErrTimeout, rawURL, p.cfg.Timeout, err)
	case docErr != nil:
		return res, docErr
	}
	return res, fmt.Errorf("render: %s: %w", rawURL, err)
}

// load navigates the tab to rawURL, waits for the page to settle and takes
// its DOM.
func (r *run) load(rawURL string) (Result, error) {
	var res Result
	cfg := &r.p.cfg
	ctx := r.tabCtx
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
		return res, fmt.Errorf("fetch.enable: %w", err)
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: initScript}); err != nil {
		return res, fmt.Errorf("page.addScriptToEvaluateOnNewDocument: %w", err)
	}
	nav, err := chromedp.Call(ctx, page.Navigate, page.NavigateParams{URL: r.page})
	if err != nil {
		return res, fmt.Errorf("page.navigate: %w", err)
	}
	if nav.ErrorText != "" {
		r.mu.Lock()
		if r.docErr == nil {
			r.docErr = fmt.Errorf("%w: %s: %s", ErrFetch, rawURL, nav.ErrorText)
		}
		r.mu.Unlock()
		return res, nil
	}

	// Wait for the load, then for quiet, at most Settle after the load.
	var settleBy time.Time
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		state, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](pollScript))
		if err != nil {
			return res, fmt.Errorf("waiting for the page: %w", err)
		}
		now := time.Now()
		if len(state) == 3 && state[0] == 1 {
			if settleBy.IsZero() {
				settleBy = now.Add(cfg.Settle)
			}
			netQuiet := r.inflight.Load() == 0 && now.Sub(time.Unix(0, r.lastNet.Load())) >= cfg.Quiet
			if netQuiet && state[1] == 0 && time.Duration(state[2])*time.Millisecond >= cfg.Quiet {
				res.Settled = true
				break
			}
			if now.After(settleBy) {
				break
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return res, ctx.Err()
		}
	}

	n := cfg.MaxBodyBytes
	snap, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](fmt.Sprintf(snapshotScript, n, n)))
	if err != nil || len(snap) != 3 {
		return res, fmt.Errorf("reading the DOM: %w", err)
	}
	res.HTML = []byte(snap[1])
	res.Truncated = snap[2] != ""
	if int64(len(res.HTML)) > n {
		res.HTML, res.Truncated = res.HTML[:n], true
	}
	r.mu.Lock()
	final := r.docURL
	r.mu.Unlock()
	res.FinalURL = final.String()
	if loc, err := url.Parse(snap[0]); err == nil && loc.Scheme == final.Scheme && loc.Host == final.Host {
		loc.Fragment, loc.RawFragment = "", ""
		res.FinalURL = loc.String()
	}
	return res, nil
}

// serve answers one paused request: refused, or fetched by the Transport
// and given to the browser.
func (r *run) serve(ev fetch.EventRequestPaused) {
	defer func() {
		r.lastNet.Store(time.Now().UnixNano())
		r.inflight.Add(-1)
	}()
	f := Fetch{Type: string(ev.ResourceType)}
	if ev.Request != nil {
		f.URL = ev.Request.URL
	}
	isDoc, err := r.admit(ev)
	if err == nil {
		err = r.fetch(ev, isDoc, &f)
	}
	if err != nil {
		f.Err = err
		// A document refused with any other reason than Aborted would
		// commit Chrome's error page in place of the page.
		reason := network.ErrorReasonBlockedByClient
		switch {
		case ev.ResourceType == network.ResourceTypeDocument:
			reason = network.ErrorReasonAborted
		case !errors.Is(err, ErrNotLoaded):
			reason = network.ErrorReasonAccessDenied
		}
		_, _ = chromedp.Call(r.tabCtx, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: reason})
	}
	r.mu.Lock()
	r.fetches = append(r.fetches, f)
	r.mu.Unlock()
}

// admit applies the pool's own rules to a request (see the package
// documentation); isDoc reports the page itself or one of its redirects.
func (r *run) admit(ev fetch.EventRequestPaused) (isDoc bool, err error) {
	req := ev.Request
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	if req == nil {
		return false, fmt.Errorf("%w: no request", ErrNotLoaded)
	}
	if r.requests > r.p.cfg.MaxRequests {
		return false, fmt.Errorf("%w: more than %d requests", ErrNotLoaded, r.p.cfg.MaxRequests)
	}
	// A CORS preflight (OPTIONS with Access-Control-Request-Method) only
	// asks whether the request that follows may be made.
	preflight := req.Method == http.MethodOptions && headerOf(req.Headers, "Access-Control-Request-Method") != ""
	if req.Method != http.MethodGet && req.Method != http.MethodHead && !preflight {
		return false, fmt.Errorf("%w: method %s", ErrNotLoaded, req.Method)
	}
	u, perr := url.Parse(req.URL)
	if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false, fmt.Errorf("%w: not an http(s) URL", ErrNotLoaded)
	}
	host := strings.ToLower(u.Hostname())
	switch ev.ResourceType {
	case network.ResourceTypeDocument:
		if r.mainFrame == "" {
			r.mainFrame = ev.FrameID
		}
		switch {
		case ev.FrameID != r.mainFrame:
			return false, fmt.Errorf("%w: frames are not loaded", ErrNotLoaded)
		case r.docDone:
			if r.navigated == "" {
				v := *u
				v.Fragment, v.RawFragment = "", ""
				r.navigated = v.String()
			}
			return false, fmt.Errorf("%w: the page navigates away", ErrNotLoaded)
		case r.docs > maxRedirects:
			r.docErr = fmt.Errorf("%w: %s: more than %d redirects", ErrFetch, r.page, maxRedirects)
			return false, r.docErr
		}
		r.docs++
		r.docURL, r.site = u, site(host)
		return true, nil
	case network.ResourceTypeScript:
		if site(host) != r.site && !r.scriptHosts[host] {
			return false, fmt.Errorf("%w: third-party script host %s", ErrNotLoaded, host)
		}
	case network.ResourceTypeXHR, network.ResourceTypeFetch, network.ResourceTypePreflight:
		if site(host) != r.site {
			return false, fmt.Errorf("%w: third-party host %s", ErrNotLoaded, host)
		}
	default:
		return false, fmt.Errorf("%w: %s", ErrNotLoaded, ev.ResourceType)
	}
	if !r.docDone {
		return false, fmt.Errorf("%w: before the page", ErrNotLoaded)
	}
	return false, nil
}

// hopByHop are the response headers the browser must not see: the body it
// is given is whole and decoded.
var hopByHop = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Transfer-Encoding": true, "Content-Length": true,
	"Content-Encoding": true, "Trailer": true, "Upgrade": true, "Proxy-Connection": true,
}

// fetch fetches the request with the Policy and the Transport and gives
// the response to the browser.
func (r *run) fetch(ev fetch.EventRequestPaused, isDoc bool, f *Fetch) error {
	req, err := r.newRequest(ev)
	if err != nil {
		return err
	}
	resp, err := r.roundTrip(req, isDoc)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := r.readBody(req, resp, isDoc)
	if err != nil {
		return err
	}
	f.Status, f.Bytes = resp.StatusCode, len(body)
	r.mu.Lock()
	r.bytes += int64(len(body))
	r.mu.Unlock()
	if isDoc {
		if err := r.takeDoc(req, resp, body); err != nil {
			return err
		}
	}
	return r.fulfill(ev, resp, body)
}

// newRequest is the paused request as weaver makes it: the browser's
// headers but its cookies and Accept-Encoding, weaver's User-Agent.
func (r *run) newRequest(ev fetch.EventRequestPaused) (*http.Request, error) {
	ctx := context.WithValue(r.ctx, infoKey{}, RequestInfo{Page: r.page, Type: string(ev.ResourceType)})
	req, err := http.NewRequestWithContext(ctx, ev.Request.Method, ev.Request.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotLoaded, err)
	}
	for k, v := range ev.Request.Headers {
		if s, ok := v.(string); ok {
			req.Header.Set(k, s)
		}
	}
	// The Transport decodes what it asked to be encoded; cookies stay in
	// the browser's own (fresh) context.
	req.Header.Del("Accept-Encoding")
	req.Header.Del("Cookie")
	req.Header.Set("User-Agent", r.p.cfg.UserAgent)
	return req, nil
}

// roundTrip answers req: with the Page given to RenderPage for the
// navigation to it, else through the Policy and the Transport. A failure
// of the document's is the render's error too.
func (r *run) roundTrip(req *http.Request, isDoc bool) (*http.Response, error) {
	cfg := &r.p.cfg
	r.mu.Lock()
	given := r.given
	if isDoc && given != nil && r.docs == 1 { // the navigation to the page
		r.given = nil // a reload (there should be none) is fetched
	} else {
		given = nil
	}
	r.mu.Unlock()
	if given != nil {
		return given.response(req), nil
	}
	if cfg.Policy != nil {
		if err := cfg.Policy(req); err != nil {
			if isDoc {
				r.setDocErr(fmt.Errorf("%w: %s: %w", ErrRefused, req.URL, err))
			}
			return nil, err
		}
	}
	resp, err := cfg.Transport.RoundTrip(req)
	if err != nil {
		if isDoc {
			r.setDocErr(fmt.Errorf("%w: %s: %w", ErrFetch, req.URL, err))
		}
		return nil, err
	}
	return resp, nil
}

// readBody reads the response's body, up to the limit of its kind and
// what the page may still take.
func (r *run) readBody(req *http.Request, resp *http.Response, isDoc bool) ([]byte, error) {
	cfg := &r.p.cfg
	limit := cfg.MaxScriptBytes
	if isDoc {
		limit = cfg.MaxBodyBytes
	}
	r.mu.Lock()
	limit = min(limit, cfg.MaxPageBytes-r.bytes)
	r.mu.Unlock()
	if limit <= 0 {
		return nil, fmt.Errorf("%w: more than %d bytes for the page", ErrNotLoaded, cfg.MaxPageBytes)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil && len(body) == 0 {
		if isDoc {
			r.setDocErr(fmt.Errorf("%w: %s: %w", ErrFetch, req.URL, err))
		}
		return nil, err
	}
	return body, nil
}

// takeDoc records the document's response: its status and, unless it is
// a redirect, that the page has come and the hosts its scripts may come
// from. A document that is not HTML is refused.
func (r *run) takeDoc(req *http.Request, resp *http.Response, body []byte) error {
	redirect := resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Header.Get("Location") != ""
	ct := strings.ToLower(resp.Header.Get("Content-Type"))
	if !redirect && ct != "" && !strings.Contains(ct, "html") {
		r.setDocErr(fmt.Errorf("%w: %s: not HTML (%s)", ErrRefused, req.URL, ct))
		return fmt.Errorf("%w: not HTML", ErrNotLoaded)
	}
	r.mu.Lock()
	r.docStatus = resp.StatusCode
	if !redirect {
		r.docDone = true
		r.scriptHosts = scriptHosts(body, req.URL)
	}
	r.mu.Unlock()
	return nil
}

// fulfill gives the browser the response, without its hop-by-hop headers.
func (r *run) fulfill(ev fetch.EventRequestPaused, resp *http.Response, body []byte) error {
	var hdrs []*fetch.HeaderEntry
	for k, vs := range resp.Header {
		if hopByHop[k] {
			continue
		}
		for _, v := range vs {
			hdrs = append(hdrs, &fetch.HeaderEntry{Name: k, Value: v})
		}
	}
	_, err := chromedp.Call(r.tabCtx, fetch.FulfillRequest, fetch.FulfillRequestParams{
		RequestID:       ev.RequestID,
		ResponseCode:    int64(resp.StatusCode),
		ResponseHeaders: hdrs,
		Body:            body,
	})
	if err != nil {
		return fmt.Errorf("fetch.fulfillRequest: %w", err)
	}
	return nil
}

func (r *run) setDocErr(err error) {
	r.mu.Lock()
	if r.docErr == nil {
		r.docErr = err
	}
	r.mu.Unlock()
}

// site returns the registrable domain of host, or host itself when it has
// none (an IP address, localhost, a public suffix).
func site(host string) string {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if d, err := publicsuffix.EffectiveTLDPlusOne(host); err == nil {
		return d
	}
	return host
}

// scriptHosts returns the hosts of the <script src> of a page.
func scriptHosts(page []byte, base *url.URL) map[string]bool {
	hosts := map[string]bool{}
	z := html.NewTokenizer(bytes.NewReader(page))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return hosts
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		name, more := z.TagName()
		switch string(name) {
		case "base":
			for more {
				var k, v []byte
				k, v, more = z.TagAttr()
				if string(k) == "href" {
					if b, err := base.Parse(strings.TrimSpace(string(v))); err == nil {
						base = b
					}
				}
			}
		case "script":
			for more {
				var k, v []byte
				k, v, more = z.TagAttr()
				if string(k) == "src" {
					if u, err := base.Parse(strings.TrimSpace(string(v))); err == nil && u.Hostname() != "" {
						hosts[strings.ToLower(u.Hostname())] = true
					}
				}
			}
		}
	}
}

// response makes the response to req from a Page given to RenderPage.
func (pg *Page) response(req *http.Request) *http.Response {
	status := pg.Status
	if status == 0 {
		status = http.StatusOK
	}
	h := pg.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "text/html; charset=utf-8")
	}
	return &http.Response{
		StatusCode:    status,
		Status:        http.StatusText(status),
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(pg.Body)),
		ContentLength: int64(len(pg.Body)),
		Request:       req,
	}
}

// headerOf returns the value of a DevTools request header, whatever its case.
func headerOf(h network.Headers, name string) string {
	for k, v := range h {
		if s, ok := v.(string); ok && strings.EqualFold(k, name) {
			return s
		}
	}
	return ""
}
