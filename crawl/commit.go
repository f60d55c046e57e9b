package crawl

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// commitPage writes one page's whole result in the caller's transaction.
func (c *Crawler) commitPage(tx *kv.Tx, p *page) error {
	id := p.lease.NodeID
	if p.returned {
		_, err := frontier.Return(tx, id)
		return err
	}
	p.nodesCreated, p.edgesCreated, p.linksAdded = 0, 0, 0
	p.hostIDs = p.hostIDs[:0]
	now := c.now()
	if tx.GetRaw(kv.BucketLeases, kv.U64(id)) == nil {
		return fmt.Errorf("%w: node %d (%s)", errLeaseLost, id, p.lease.Host)
	}
	if c.archive != nil && len(p.robotsCaptures)+len(p.captures) > 0 {
		// The page's exchanges are written and on disk before the page is
		// in the store, and gone if it never is.
		if err := c.archive.Write(tx, append(p.robotsCaptures, p.captures...)); err != nil {
			return fmt.Errorf("%w: %w", ErrArchive, err)
		}
	}
	n, ok, err := graph.Get(tx, id)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("crawl: leased node %d (%s) does not exist", id, p.lease.Host)
	}
	old := n
	p.revisit, p.savedBytes = n.CrawlCount > 0, n.Bytes
	n.LastSeen = now
	// The lease's depth is the host's when it was queued; a page committed
	// since may have found it closer (see relax), or this lease closer
	// than the host's last crawl.
	lowered := p.lease.Depth < n.Depth
	n.Depth = min(n.Depth, p.lease.Depth)
	if err := c.noteOutcome(tx, &n, p, now); err != nil {
		return err
	}
	if p.fetched && p.notModified {
		// 304: the host links as its last crawl did.
		if err := c.lastTargets(tx, p); err != nil {
			return err
		}
	}
	before := graph.GetCounts(tx)
	chain := -1 // a seed's redirect is a seed, while its chain is short
	if n.Depth == 0 && n.SeedRedirects < maxRedirects {
		chain = n.SeedRedirects
	}
	links, err := c.commitTargets(tx, p, n.Depth+1, chain, now)
	if err != nil {
		return err
	}
	p.changed, err = c.record(tx, &old, &n, p, links, now)
	if err != nil {
		return err
	}
	if err := graph.Put(tx, &n); err != nil {
		return err
	}
	if lowered {
		// Crawled before at a greater depth: the links it recorded then
		// are as close as the host now is.
		fw, err := c.relax(tx, id, n.Depth, now)
		if err != nil {
			return err
		}
		p.forwarded = p.forwarded || fw
	}
	after := graph.GetCounts(tx)
	p.nodesCreated = int64(after.Nodes - before.Nodes)
	p.edgesCreated = int64(after.Edges - before.Edges)
	p.linksAdded = int64(after.Weight - before.Weight)
	if err := putRobots(tx, p.lease.Host, p.robotsOf, p.robots); err != nil {
		return err
	}
	held, err := frontier.Release(tx, id)
	if err == nil && !held {
		// The claim that leased it never committed (its group failed after
		// the leases were handed out): nothing of this page may be written.
		err = fmt.Errorf("%w: node %d (%s)", errLeaseLost, id, p.lease.Host)
	}
	return err
}

// putRobots caches rec (nil: nothing) as host's robots.txt and, when its
// redirects led to another host's own robots.txt (of, "" for none), as
// that host's too, unless it has a record as fresh.
func putRobots(tx *kv.Tx, host, of string, rec *robotsRecord) error {
	if rec == nil {
		return nil
	}
	if err := tx.Put(kv.BucketRobots, []byte(host), rec); err != nil || of == "" {
		return err
	}
	var old robotsRecord
	if ok, err := tx.Get(kv.BucketRobots, []byte(of), &old); err != nil || (ok && !old.Fetched.Before(rec.Fetched)) {
		return err
	}
	return tx.Put(kv.BucketRobots, []byte(of), rec)
}

// noteOutcome records on n, the page's node, what its fetch found: a
// disallow, a failure, or an answer (a 304 leaves the page as the last
// crawl read it).
func (c *Crawler) noteOutcome(tx *kv.Tx, n *graph.Node, p *page, now time.Time) error {
	switch {
	case p.disallow:
		c.noteTried(p.lease.NodeID)
		n.Status = graph.StatusRobotsDisallow
		switch {
		case p.disallowWhy != "":
			n.Error = p.disallowWhy
		case p.disallowed != "":
			n.Error = "robots.txt disallows " + p.disallowed + " (a redirect of " + p.lease.URL + ")"
		default:
			n.Error = "robots.txt disallows " + p.lease.URL
		}
		return nil
	case !p.fetched:
		c.noteTried(p.lease.NodeID)
		n.FailCount++
		n.Status = p.kind.status()
		n.Error = p.err
		return nil
	}
	// nodes_crawled counts hosts: a host's first page in this run.
	p.firstCrawl = n.LastCrawl.Before(time.Unix(0, c.started.Load()))
	n.CrawlCount++
	n.LastCrawl = now
	n.FetchMS, n.Error = p.took.Milliseconds(), p.err
	if p.notModified {
		// 304: the page is as the last crawl read it.
		n.Status = graph.StatusCrawled
		return nil
	}
	noteHome(n, p.home)
	n.HTTPStatus, n.ContentType, n.Server = p.status, p.ctype, p.server
	n.Bytes, n.ContentHash = p.bytes, p.hash
	n.Title, n.Description = p.title, p.desc
	n.Canonical, n.RobotsDirectives, n.PagesFetched = p.canonical, p.directives, p.pages
	n.ETag, n.LastModified = p.etag, p.lastModified
	n.RedirectTo = p.redirectTo
	n.TLSProblem = p.tlsProblem
	if strings.HasPrefix(p.home, "https:") {
		n.HSTS = p.hsts // an http answer says nothing of it
	}
	if p.warc != nil {
		n.Warc = p.warc.Ref.String()
	}
	n.RenderMS = 0
	if p.homeRendered {
		n.RenderMS = max(p.renderTook.Milliseconds(), 1)
	}
	n.Status = graph.StatusCrawled
	if p.kind == KindHTTP {
		n.Status = graph.StatusHTTPError
	}
	if !p.redirected {
		if _, err := graph.NoteContentHash(tx, n); err != nil {
			return err
		}
	}
	return nil
}

// commitTargets writes the page's edges to its targets, at depth, each
// target's node made if new, and queued (or forwarded to the shard that
// owns it). chain is, for a page of a seed (or of a seed's redirect) that
// may pass depth 0 on to where its home page redirected, its own place in
// the seed's chain of redirects; -1 when it may not. It returns the links
// a fetched page records in its crawl history.
func (c *Crawler) commitTargets(tx *kv.Tx, p *page, depth, chain int, now time.Time) ([]graph.Link, error) {
	id := p.lease.NodeID
	p.forwarded = false
	var links []graph.Link
	if p.fetched {
		links = make([]graph.Link, 0, len(p.targets))
	}
	// The page's edges are written together, in key order, after the
	// loop (graph.AddEdges): one walk of the page's key range instead of
	// a lookup per link.
	adds := make([]graph.EdgeAdd, 0, len(p.targets))
	for _, t := range p.targets {
		d := depth
		seedHop := t.home && chain >= 0
		if seedHop {
			// A seed's redirect: where the URL the user named leads.
			d = 0
		}
		dst, created, err := c.ensureHead(tx, p, t.host, t.scheme, d, now)
		if err != nil {
			return nil, err
		}
		wasDeeper := created || dst.Depth > 0
		if dst.ID == id {
			continue // never a self-loop
		}
		adds = append(adds, graph.EdgeAdd{To: dst.ID, Weight: t.weight, Nofollow: t.nofollow, Redirect: t.redirect, Frame: t.frame})
		if err := graph.AddAnchors(tx, id, dst.ID, t.anchors, c.cfg.AnchorsPerEdge); err != nil {
			return nil, err
		}
		if p.fetched {
			links = append(links, graph.Link{To: dst.ID, Weight: t.weight, Nofollow: t.nofollow, Redirect: t.redirect, Frame: t.frame})
		}
		var fw bool
		if !c.owns(t.host) {
			// The edge is this shard's (it owns the source); the target's
			// node here is a stub, and its owner decides about queueing.
			l := Link{Host: t.host, First: t.first, Depth: d}
			if seedHop && wasDeeper {
				l.SeedRedirects = chain + 1
			}
			fw, err = c.forward(tx, l, &dst)
		} else {
			_, fw, err = c.target(tx, t.host, t.first, &dst, created, d, now)
		}
		if err != nil {
			return nil, err
		}
		if seedHop && wasDeeper && dst.ID != id {
			if err := markSeedRedirect(tx, dst.ID, chain+1); err != nil {
				return nil, err
			}
		}
		p.forwarded = p.forwarded || fw
	}
	return links, graph.AddEdges(tx, id, adds, now)
}

// markSeedRedirect records on node id, brought to depth 0 by a seed's
// chain of redirects, its place in that chain (graph.Node.SeedRedirects).
func markSeedRedirect(tx *kv.Tx, id uint64, hop int) error {
	n, ok, err := graph.Get(tx, id)
	if err != nil || !ok || n.Depth != 0 || n.SeedRedirects == hop {
		return err
	}
	n.SeedRedirects = hop
	return graph.Put(tx, &n)
}

// lastTargets makes a 304's targets those of the host's last crawl.
func (c *Crawler) lastTargets(tx *kv.Tx, p *page) error {
	prev, ok, err := graph.LatestCrawl(tx, p.lease.NodeID)
	if err != nil || !ok {
		return err
	}
	p.targets = p.targets[:0]
	for _, l := range prev.Links {
		dst, ok, err := graph.Get(tx, l.To)
		if err != nil {
			return err
		}
		if ok {
			p.targets = append(p.targets, target{host: dst.Host, scheme: dst.Scheme, weight: l.Weight, nofollow: l.Nofollow, redirect: l.Redirect, frame: l.Frame})
		}
	}
	return nil
}

// errLeaseLost fails a page commit whose lease is not in the store.
var errLeaseLost = errors.New("crawl: lease not held")

// account adds a durably committed page to the run's counters.
func (c *Crawler) account(p *page) {
	if p.returned {
		return
	}
	c.hostIDs.add(p.hostIDs)
	c.stats.nodesCreated.Add(p.nodesCreated)
	c.stats.edgesCreated.Add(p.edgesCreated)
	c.stats.linksRecorded.Add(p.linksAdded)
	c.stats.fetchNanos.Add(int64(p.took))
	c.stats.waitNanos.Add(int64(p.wait))
	if p.took > 0 {
		c.fetchHist.observe(p.took)
	}
	if p.forGood {
		c.failedMu.Lock()
		c.failed[p.lease.NodeID] = true
		c.failedMu.Unlock()
	}
	if p.fetched {
		c.stats.answered.Add(1)
		if p.revisit {
			c.stats.revisits.Add(1)
			if p.changed {
				c.stats.changed.Add(1)
			}
			if p.notModified {
				c.stats.notModified.Add(1)
				c.stats.bytesSaved.Add(p.savedBytes)
			}
		}
	}
	switch {
	case p.disallow:
		c.stats.robotsDisallowed.Add(1)
	case p.kind != "":
		c.stats.pagesFailed.Add(1)
		c.stats.addError(p.kind)
	default:
		c.stats.pagesFetched.Add(1)
	}
	// The pages after the home page (pages_per_host).
	if p.pages > 1 {
		c.stats.pagesFetched.Add(int64(p.pages - 1))
		c.stats.answered.Add(int64(p.pages - 1))
	}
	c.stats.pagesFailed.Add(int64(p.pagesBad))
	c.stats.pagesRendered.Add(int64(p.renders))
	c.stats.renderFailures.Add(int64(p.renderFailures))
	if p.fetched && p.firstCrawl {
		c.stats.nodesCrawled.Add(1)
	}
}
