package crawl

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/weaver-crawler/weaver/crawl/robots"
	"github.com/weaver-crawler/weaver/graph"
)

// Renderer runs a page's scripts in a browser and gives back its DOM
// (package render's Pool, with --render auto or always). The crawl hands
// it pages it has fetched already, so a rendered page costs its host no
// second request; what the page's scripts load comes back through the
// crawl's RenderPolicy and transport.
type Renderer interface {
	// Shell reports whether a page's raw HTML looks like a JavaScript
	// shell: no link at all and a script, or an empty mount element.
	Shell(html []byte) bool
	// Render renders page. An error wrapping ErrRenderLost means the
	// browser died under the page: it is rendered again.
	Render(ctx context.Context, page RenderPage) (RenderResult, error)
}

// RenderPage is a fetched page to render.
type RenderPage struct {
	URL    string      // after its redirects
	Status int         // its HTTP status
	Header http.Header // its response headers
	Body   []byte      // as fetched (capped)
}

// RenderResult is a rendered page.
type RenderResult struct {
	HTML     []byte // the rendered DOM (capped)
	FinalURL string // what its links resolve against
	// Navigated is where the page's scripts (or a refresh) tried to send
	// the browser once the page had come, "" when nowhere: to another host
	// it is the page's redirect there, an edge and that host's own crawl.
	Navigated string
	Took      time.Duration // the render's time
}

// ErrRenderLost wraps a render that failed because the browser was lost.
var ErrRenderLost = errors.New("crawl: browser lost during the render")

// ErrRobotsDisallowed refuses a rendered page's request that robots.txt
// disallows.
var ErrRobotsDisallowed = errors.New("crawl: robots.txt disallows it")

// Render modes (config render).
const (
	RenderNever  = "never"
	RenderAuto   = "auto"
	RenderAlways = "always"
)

// maxRenderTries is how often a page whose browser was lost is rendered.
const maxRenderTries = 3

// wantsRender reports whether the page t just fetched is to be rendered:
// an HTML answer of its own host, with --render always, or auto and a
// shell.
func (c *Crawler) wantsRender(t *task) bool {
	if c.renderer == nil || c.cfg.Render == RenderNever || t.p.body == nil || t.status >= 300 || !t.isHTML {
		return false
	}
	if h, err := graph.HostOf(t.p.final); err != nil || h != t.p.lease.Host {
		return false
	}
	return c.cfg.Render == RenderAlways || c.renderer.Shell(t.p.body.Bytes())
}

// renderStep renders the page t fetched (its host's gate passed: the
// page's scripts come a delay after the page). A lost browser renders it
// again; any other failure keeps the raw HTML, counted as a failure.
func (c *Crawler) renderStep(ctx context.Context, t *task) {
	p := t.p
	host := p.lease.Host
	if t.rules != nil {
		c.renderRules.Store(host, t.rules)
		defer c.renderRules.Delete(host)
	}
	h := http.Header{}
	h.Set("Content-Type", t.ctype)
	res, err := c.renderer.Render(ctx, RenderPage{URL: p.final.String(), Status: t.status, Header: h, Body: p.body.Bytes()})
	c.gate.done(host)
	if ctx.Err() != nil {
		p.returned, t.done = true, true
		return
	}
	if err != nil {
		t.attempt++
		if errors.Is(err, ErrRenderLost) && t.attempt < maxRenderTries {
			c.logf("WARN", "Rendering %s: %v (again)", p.final, err)
			t.readyAt = c.now()
			return
		}
		c.logf("WARN", "Rendering %s failed: %v (its HTML is used as fetched)", p.final, err)
		p.renderFailures++
		t.done = true
		return
	}
	p.renders++
	p.renderTook += res.Took
	t.rendered = res.HTML
	if u, err := url.Parse(res.FinalURL); err == nil && res.FinalURL != "" {
		if fh, err := graph.HostOf(u); err == nil && fh == host {
			p.final = u
		}
	}
	if t.pageNo == 0 {
		p.homeRendered = true
	}
	if u, err := url.Parse(res.Navigated); err == nil && res.Navigated != "" {
		if h, err := graph.HostOf(u); err == nil && h != host {
			t.navigated = u
		}
	}
	t.done = true
}

// RenderPolicy is the check of every request a rendered page's scripts
// make (render.Config.Policy): robots.txt of the request's host, as the
// crawl knows it (the page's own host's rules, or the store's cache;
// a host whose robots.txt the crawl has not read is allowed).
func (c *Crawler) RenderPolicy(req *http.Request) error {
	if c.cfg.IgnoreRobots {
		return nil
	}
	host, err := graph.HostOf(req.URL)
	if err != nil {
		return err
	}
	var rules *robots.Rules
	if v, ok := c.renderRules.Load(host); ok {
		rules = v.(*robots.Rules)
	} else {
		rules = c.cachedRobots(host)
	}
	if rules != nil && !rules.Allowed(c.cfg.UserAgent, req.URL.String()) {
		return ErrRobotsDisallowed
	}
	return nil
}
