package crawl

import (
	"fmt"
	"net/url"
	"time"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// A host's depth is its distance, in links recorded, from the nearest
// seed: the hop count max_depth limits. Pages are not fetched in that
// order (a Crawl-delay, a retry or a slow server makes a host answer after
// deeper ones), so a page may reveal a shorter path to a host whose depth
// was recorded already. The page's commit then lowers the host's depth
// (admit) and, when the host was crawled at the greater depth, carries the
// decrease along the links it recorded (relax): a host left out beyond
// max_depth that is now within it is queued, and so on as far as the
// decrease reaches. A depth only ever decreases, so each host is relaxed
// at most max_depth times, and no page is fetched again for it: when the
// crawl ends, every depth is the breadth-first distance over the links
// recorded, whatever the order the pages came in.

// relax carries a lowered depth along the links recorded: from, now depth
// hops from a seed, brings each host it links to to depth+1 at most, and
// each of those that was crawled brings its own targets closer in turn.
// Hosts another shard owns are forwarded to it at their new depth. It
// reports whether it forwarded any.
func (c *Crawler) relax(tx *kv.Tx, from uint64, depth int, now time.Time) (forwarded bool, err error) {
	type reached struct {
		id    uint64
		depth int
	}
	work := []reached{{from, depth}}
	for len(work) > 0 {
		r := work[len(work)-1]
		work = work[:len(work)-1]
		redirect, hop, err := c.seedRedirect(tx, r.id, r.depth)
		if err != nil {
			return forwarded, err
		}
		for _, to := range graph.Targets(tx, r.id) {
			d := r.depth + 1
			if to == redirect {
				d = 0 // a seed's redirect is a seed (see commitTargets)
			}
			h, ok, err := graph.GetHead(tx, to)
			if err != nil {
				return forwarded, err
			}
			if !ok || d >= h.Depth {
				continue
			}
			n, ok, err := graph.Get(tx, to)
			if err == nil && !ok {
				err = fmt.Errorf("crawl: node %d vanished", to)
			}
			if err != nil {
				return forwarded, err
			}
			if !c.owns(n.Host) {
				l := Link{Host: n.Host, Depth: d}
				if d == 0 {
					l.SeedRedirects = hop
				}
				fw, err := c.forward(tx, l, &h)
				if err != nil {
					return forwarded, err
				}
				forwarded = forwarded || fw
				continue
			}
			_, lowered, err := c.admit(tx, n.Host, "", &h, false, d, now)
			if err == nil && lowered && d == 0 {
				err = markSeedRedirect(tx, to, hop)
			}
			if err != nil {
				return forwarded, err
			}
			if lowered {
				work = append(work, reached{to, d})
			}
		}
	}
	return forwarded, nil
}

// seedRedirect returns the node the home page of from redirected to, and
// that node's place in the seed's chain of redirects, when from is a seed
// (depth 0) whose chain is short enough (see graph.Node.SeedRedirects),
// else 0: that host is a seed too.
func (c *Crawler) seedRedirect(tx *kv.Tx, from uint64, depth int) (uint64, int, error) {
	if depth != 0 {
		return 0, 0, nil
	}
	n, ok, err := graph.Get(tx, from)
	if err != nil || !ok || n.RedirectTo == "" || n.SeedRedirects >= maxRedirects {
		return 0, 0, err
	}
	u, err := url.Parse(n.RedirectTo)
	if err != nil {
		return 0, 0, nil
	}
	host, err := graph.HostOf(u)
	if err != nil {
		return 0, 0, nil
	}
	id, _ := graph.Lookup(tx, host)
	return id, n.SeedRedirects + 1, nil
}

// admitSubdomain is graph.AdmitSubdomain for host reached at depth, with
// one preference where the cap decides: when host's registrable domain
// has its max_subdomains_per_root hosts already, one of them that is only
// queued (never asked, not being fetched) at a greater depth gives its
// place up and is left out by the limit instead. The cap still admits by
// arrival among hosts at the same depth.
func (c *Crawler) admitSubdomain(tx *kv.Tx, host string, depth int) (bool, error) {
	limit := c.cfg.MaxSubdomainsPerRoot
	lim, err := c.limits(tx)
	if err != nil {
		return false, err
	}
	ok, err := lim.Admit(tx, host, limit)
	if err != nil || ok || limit <= 0 {
		return ok, err
	}
	for _, other := range lim.Subdomains(tx, host) {
		id, ok := graph.Lookup(tx, other)
		if !ok {
			continue
		}
		if at, queued := frontier.QueuedAt(tx, id); !queued || at <= depth {
			continue
		}
		n, ok, err := graph.Get(tx, id)
		if err != nil {
			return false, err
		}
		if !ok || asked(n.CrawlCount, n.Status) {
			continue
		}
		if _, err := frontier.Remove(tx, id); err != nil {
			return false, err
		}
		if err := lim.Unadmit(tx, other); err != nil {
			return false, err
		}
		n.Status = graph.StatusExcludedByLimit
		n.Error = c.limitText(other, n.Depth, false)
		if err := graph.Put(tx, &n); err != nil {
			return false, err
		}
		return lim.Admit(tx, host, limit)
	}
	return false, nil
}

// limits returns the crawl's subdomain limiter, read from the store in tx,
// a write transaction, the first time.
func (c *Crawler) limits(tx *kv.Tx) (*graph.Limiter, error) {
	if c.lim == nil {
		l, err := graph.LoadLimiter(tx)
		if err != nil {
			return nil, err
		}
		c.lim = l
	}
	return c.lim, nil
}

// admitAll admits host whatever the subdomain cap: a seed, or a host the
// user named.
func (c *Crawler) admitAll(tx *kv.Tx, host string) (bool, error) {
	return c.admitUpTo(tx, host, 0)
}

// admitUpTo admits host when its domain has fewer than max hosts admitted
// (max ≤ 0: no cap), without admitSubdomain's preference for the nearer.
func (c *Crawler) admitUpTo(tx *kv.Tx, host string, max int) (bool, error) {
	lim, err := c.limits(tx)
	if err != nil {
		return false, err
	}
	return lim.Admit(tx, host, max)
}
