package crawl

import (
	"net/url"
	"time"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// A living graph (issue 27). A host is fetched once per crawl: a link to
// a host already asked is an edge, never a second fetch. With a revisit
// policy (revisit_after_ms) every answered host gets a due time in the
// revisit schedule (frontier.Schedule); a claim moves the hosts that are
// due into the frontier, in its own transaction, so a host is never
// fetched before it is due, whatever stops the process. Its interval adapts to what each crawl
// found, as Nutch's AdaptiveFetchSchedule does: unchanged (the same links
// and reading of the page, see sameReading; or a 304) doubles it (up
// to revisit_max_ms), changed halves it (not below half the first
// interval nor the politeness delay).

// asked reports whether a host was ever asked for (answered, failed or
// refused by its robots.txt): such a host is fetched again only when due.
func asked(crawlCount int, status graph.Status) bool {
	if crawlCount > 0 {
		return true
	}
	switch status {
	case graph.StatusDiscovered, graph.StatusExcludedByLimit, graph.StatusOutOfScope, "":
		return false
	}
	return true
}

// capped reports whether a host has had the crawls max_crawls_per_node
// allows over the store's life.
func (c *Crawler) capped(crawlCount int) bool {
	return c.cfg.MaxCrawlsPerNode > 0 && crawlCount >= c.cfg.MaxCrawlsPerNode
}

// mayFetch reports whether node may be fetched at now, not capped and:
// never asked; or with a revisit policy, due; or without one, not asked
// in this run (a host a known seed re-queued, seed 000 §7).
func (c *Crawler) mayFetch(n *graph.Node, now time.Time) bool {
	if c.capped(n.CrawlCount) {
		return false
	}
	if !asked(n.CrawlCount, n.Status) {
		return true
	}
	if c.cfg.revisit() > 0 {
		return !n.NextDue.IsZero() && !n.NextDue.After(now)
	}
	return !c.askedThisRun(n)
}

// askedThisRun reports whether node's host was asked in this run.
func (c *Crawler) askedThisRun(n *graph.Node) bool {
	if n.CrawlCount > 0 && !n.LastCrawl.Before(time.Unix(0, c.started.Load())) {
		return true
	}
	c.failedMu.Lock()
	defer c.failedMu.Unlock()
	return c.tried[n.ID]
}

// noteTried remembers a host that failed or was disallowed in this run.
func (c *Crawler) noteTried(id uint64) {
	c.failedMu.Lock()
	c.tried[id] = true
	c.failedMu.Unlock()
}

// record writes what a crawl of n (the node as it was before, old)
// found into its history and, with a revisit policy, its next due time.
// It returns whether the crawl changed something, for the run's counters.
func (c *Crawler) record(tx *kv.Tx, old, n *graph.Node, p *page, links []graph.Link, now time.Time) (changed bool, err error) {
	if p.fetched {
		prev, hasPrev, err := graph.LatestCrawl(tx, n.ID)
		if err != nil {
			return false, err
		}
		cr := graph.Crawl{At: now, NotModified: p.notModified, Links: links}
		graph.SortLinks(cr.Links)
		switch {
		case p.notModified:
		case !hasPrev:
			// A first crawl: changed when an older weaver crawled the
			// host before and its content differs.
			changed = old.CrawlCount > 0 && old.ContentHash != n.ContentHash
		default:
			changed = !sameReading(old, n) || !graph.SameLinks(prev.Links, cr.Links)
		}
		cr.Changed = changed
		var prevp *graph.Crawl
		if hasPrev {
			prevp = &prev
		}
		if err := graph.PutCrawl(tx, n.ID, cr, prevp); err != nil {
			return false, err
		}
		if changed {
			n.Changes++
			n.LastChange = now
		}
		if p.notModified {
			n.NotModified++
		}
	}
	if c.cfg.revisit() <= 0 || !c.owns(n.Host) {
		return changed, nil
	}
	iv := time.Duration(n.IntervalMS) * time.Millisecond
	switch {
	case iv <= 0:
		iv = c.cfg.revisit()
	case !p.fetched:
	case changed:
		iv = max(iv/2, c.cfg.revisitMin())
	default:
		iv = min(2*iv, c.cfg.revisitMax())
	}
	iv = max(iv, c.cfg.delay())
	if !old.NextDue.IsZero() {
		if err := frontier.Unschedule(tx, n.ID, old.NextDue); err != nil {
			return changed, err
		}
	}
	n.IntervalMS = iv.Milliseconds()
	n.NextDue = now.Add(iv)
	if c.capped(n.CrawlCount) {
		n.NextDue = time.Time{}
		return changed, nil
	}
	url := n.Home // "" for the home page, which promoteDue makes by the node's scheme
	if url == "" && !p.fetched && p.lease.URL != frontier.HomeURL(n.Scheme, n.Host) {
		url = p.lease.URL // a seed's own path, not answered this time
	}
	return changed, frontier.Schedule(tx, n.ID, n.NextDue, url)
}

// sameReading reports whether a crawl of a host read its page as the
// crawl before did (old): the same title, description, canonical, robots
// directives and status. With the same out-links (the hosts and their
// typed counts), the revisit is unchanged, whatever else its bytes do:
// the real web's pages carry a CSRF token, a timestamp or an ad slot that
// differ at every answer, and a graph that did not change should not be
// fetched as if it had (issue 52).
func sameReading(old, n *graph.Node) bool {
	return old.Title == n.Title && old.Description == n.Description && old.Canonical == n.Canonical &&
		old.RobotsDirectives == n.RobotsDirectives && old.HTTPStatus == n.HTTPStatus && old.RedirectTo == n.RedirectTo
}

// promoteDue queues, at their depth, up to limit hosts whose due time has
// come, and returns the earliest due time left (zero when none).
func (c *Crawler) promoteDue(tx *kv.Tx, now time.Time, limit int) (time.Time, error) {
	due, next, err := frontier.TakeDue(tx, now, limit)
	if err != nil {
		return next, err
	}
	for _, d := range due {
		n, ok, err := graph.Get(tx, d.Node)
		if err != nil {
			return next, err
		}
		if !ok || !c.owns(n.Host) || c.exclude.excluded(n.Host) {
			continue
		}
		url := d.URL
		if url == "" {
			url = frontier.HomeURL(n.Scheme, n.Host)
		}
		if _, err := frontier.Requeue(tx, frontier.Entry{NodeID: d.Node, Host: n.Host, URL: url, Depth: n.Depth}); err != nil {
			return next, err
		}
	}
	return next, nil
}

// nextDueAt is the earliest due time the last claim saw (zero: none).
func (c *Crawler) nextDueAt() time.Time {
	if ns := c.nextDue.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// homeOf is the URL a crawl of n asks first: where the redirects within
// the host led its last crawl (graph.Node.Home), else its home page.
func homeOf(n *graph.Node) string {
	if n.Home != "" {
		return n.Home
	}
	return frontier.HomeURL(n.Scheme, n.Host)
}

// noteHome records on n the URL that answered its first page (home; ""
// when none did): its scheme becomes n's, and the URL n's Home when it is
// not the home page by that scheme.
func noteHome(n *graph.Node, home string) {
	if home == "" {
		return
	}
	u, err := url.Parse(home)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return
	}
	n.Scheme, n.Home = u.Scheme, home
	if home == frontier.HomeURL(u.Scheme, n.Host) {
		n.Home = ""
	}
}
