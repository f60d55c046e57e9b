package crawl

import (
	"fmt"
	"net/url"
	"slices"

	"github.com/weaver-crawler/weaver/graph"
)

// A redirect's hops are asked as the page itself is: each through the
// rules of the host it goes to (robots.txt, the host's gate), and a hop to
// another host ends the page there, as a link to that host.

// redirect takes a redirect's answer: robots.txt's are followed as RFC
// 9309 says (robotsRedirect); a page's ends the page when it goes to
// another host (leave), and is the page's next step when it stays on the
// host, through robots.txt and the host's gate.
func (c *Crawler) redirect(t *task, resp *response) {
	if t.stage == stageRobots {
		c.robotsRedirect(t, resp)
		return
	}
	loc, host, err := location(t.url, resp.location)
	if err != nil {
		// The redirect is the page's answer, and it names no page.
		c.answered(t, resp)
		if t.pageNo == 0 {
			t.p.err = err.Error()
		}
		return
	}
	if host != t.p.lease.Host {
		c.leave(t, resp, loc)
		return
	}
	t.hops++
	if t.hops > maxRedirects {
		c.fail(t, KindRedirects, errTooManyRedirects)
		return
	}
	if !c.allows(t, loc) {
		c.disallowHop(t, loc)
		return
	}
	t.url, t.attempt = loc.String(), 0
	t.readyAt = c.gate.nextAt(t.host)
}

// location resolves a redirect's Location against the URL that sent it:
// an http(s) URL without fragment, and its host.
func location(from, loc string) (*url.URL, string, error) {
	base, err := url.Parse(from)
	if err != nil {
		return nil, "", err
	}
	u, err := base.Parse(loc)
	if err != nil {
		return nil, "", fmt.Errorf("redirect to %q: %w", loc, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, "", fmt.Errorf("redirect to unsupported protocol scheme %q", u.Scheme)
	}
	host, err := graph.HostOf(u)
	if err != nil {
		return nil, "", fmt.Errorf("redirect to %q: %w", loc, err)
	}
	u.Fragment, u.RawFragment = "", ""
	u.Host = host // as a request sends it: IDNA, lower case, no default port
	return u, host, nil
}

// leave ends the page at a redirect to another host: the redirect is the
// page's link to it (parse), and the host is queued as a linked host is,
// loc its first page. The page's answer is the redirect.
func (c *Crawler) leave(t *task, resp *response, loc *url.URL) {
	p := t.p
	t.done, t.redirectTo = true, loc
	t.status, t.ctype, t.isHTML = resp.status, "", false
	if t.pageNo > 0 {
		p.pages++
		return
	}
	p.fetched, p.pages = true, 1
	p.status, p.ctype, p.server = resp.status, resp.contentType, resp.server
	p.warc = resp.capture
	p.redirectTo = loc.String()
}

// allows reports whether robots.txt (the host's, as this lease read it)
// lets the crawl ask for u, a page of the lease's host.
func (c *Crawler) allows(t *task, u *url.URL) bool {
	return c.cfg.IgnoreRobots || t.rules == nil || t.rules.Allowed(c.cfg.UserAgent, u.String())
}

// disallowHop ends a page whose redirect within its host leads to a page
// robots.txt disallows: never asked. The home page is then the host's
// disallow; a later page is not counted, as a disallowed link is not.
func (c *Crawler) disallowHop(t *task, u *url.URL) {
	t.done = true
	if t.pageNo == 0 {
		t.p.disallow, t.p.disallowed = true, u.String()
	}
}

// robotsRedirect follows a redirect of robots.txt, to any host and outside
// --scope (fetching robots.txt is not crawling, and no edge): RFC 9309
// §2.3.1.2 asks for at least five. More than maxRedirects, a loop or a
// Location that names no http(s) URL is "unavailable", which allows.
func (c *Crawler) robotsRedirect(t *task, resp *response) {
	t.hops++
	loc, host, err := location(t.url, resp.location)
	if err != nil || t.hops > maxRedirects || slices.Contains(t.robotsChain, loc.String()) {
		c.robotsRules(t, resp.status, nil, resp.cacheControl)
		return
	}
	if host != t.p.lease.Host && loc.Path == "/robots.txt" && loc.RawQuery == "" {
		if rules, rec := c.cachedRobotsRecord(host); rules != nil {
			// That host's own robots.txt (apex to www), read before and
			// fresh: the same answer, not asked again. It is the host's
			// until the record it was read from expires.
			t.p.robots, t.persist = rec, true
			c.obey(t, rules)
			return
		}
	}
	t.robotsChain = append(t.robotsChain, loc.String())
	t.url, t.host, t.attempt = loc.String(), host, 0
	t.readyAt = c.gate.nextAt(host)
}
