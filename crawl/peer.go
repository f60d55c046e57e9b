package crawl

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// Peer joins a crawl to the other shards of a cluster. Package cluster
// implements it over NATS JetStream; crawl knows nothing of how links
// travel, only which hosts are its own.
type Peer interface {
	// Owns reports whether this shard crawls host: its frontier, robots.txt
	// and subdomain cap. Every shard answers the same for the same host.
	Owns(host string) bool
	// Forward records, in the page's own transaction, a link to a host
	// another shard owns: a transactional outbox, published once the
	// transaction is durable.
	Forward(tx *kv.Tx, l Link) error
	// Forwarded is called after a transaction that called Forward is
	// durable, so that the outbox is drained without polling.
	Forwarded()
	// Done is closed when the whole cluster has nothing left to do; the
	// crawl then ends with queue_empty. Until then a shard whose own queue
	// is empty waits for links from the others.
	Done() <-chan struct{}
	// RoundOver reports whether the cluster's last crawl on this store
	// ended (all shards quiescent). Only then does a known seed with an
	// empty frontier start another round (seed 000 §7): while a crawl is
	// under way an empty frontier means this shard waits for links.
	RoundOver(tx *kv.Tx) bool
	// Status is the cluster's part of /status, /metrics and weaver status.
	Status() ClusterStatus
}

// ClusterStatus is what a shard knows of its cluster.
type ClusterStatus struct {
	Crawl     string `json:"crawl"`     // the cluster crawl's name
	Shard     int    `json:"shard"`     // K
	Shards    int    `json:"shards"`    // N
	Connected bool   `json:"connected"` // to the NATS server, now
	// Outbox is the links committed here for other shards and not yet
	// acknowledged by the stream.
	Outbox uint64 `json:"outbox"`
	// Published and Consumed are this shard's cumulative messages: links
	// handed to the stream (each counted once, whatever retries it took)
	// and links from other shards applied to this shard's frontier.
	Published uint64 `json:"published"`
	Consumed  uint64 `json:"consumed"`
	// ShardsIdle and ShardsBusy are the shards' published states as last
	// read (a shard not yet started is neither).
	ShardsIdle int  `json:"shards_idle"`
	ShardsBusy int  `json:"shards_busy"`
	Done       bool `json:"done"` // the whole cluster is quiescent
}

// Link is a link to a host one shard of a cluster forwards to the shard
// that owns it (Peer.Forward, Crawler.Admit).
type Link struct {
	Host   string // the host, normalised
	Scheme string // of the link: "http" or "https"
	// First is the page of the host to crawl first: a redirect's target
	// when it is not the home page; "" for the home page.
	First string
	Depth int // hops from a seed
	// SeedRedirects is, for a link at depth 0 that a seed's chain of
	// redirects made, its place in that chain (graph.Node.SeedRedirects).
	SeedRedirects int
}

// forward hands l, a link to a host that another shard owns (whose node's
// head here is dst), to the peer, once per (host, depth): the owner's
// frontier decides whether to queue it.
func (c *Crawler) forward(tx *kv.Tx, l Link, dst *graph.Head) (bool, error) {
	if frontier.Forwarded(tx, dst.ID, l.Depth) {
		return false, nil
	}
	l.Scheme = dst.Scheme
	if err := c.peer.Forward(tx, l); err != nil {
		return false, err
	}
	return true, frontier.MarkForwarded(tx, dst.ID, l.Depth)
}

// firstPage is u as a frontier entry's first page of host: "" for its home
// page by scheme (what a Peer sends without a URL).
func firstPage(u, scheme, host string) string {
	if u == frontier.HomeURL(scheme, host) {
		return ""
	}
	return u
}

// inScope reports whether host may be fetched under --scope.
func (c *Crawler) inScope(host string) bool { return c.scope == nil || c.scope.MatchString(host) }

// owns reports whether this crawl fetches host (always, outside a cluster).
func (c *Crawler) owns(host string) bool { return c.peer == nil || c.peer.Owns(host) }

// Admit queues a link that another shard found to host (which this shard
// owns) at depth hops from a seed, in the caller's transaction, exactly as
// a link found by this shard's own page would be: the node is created or
// updated, the depth limit, crawl count and subdomain cap are applied, and
// the frontier's dedup decides. A host crawled already at a greater depth
// brings the hosts it links to closer (see relax), which may forward links
// to other shards. It reports whether an entry was queued. Call Wake, and
// the peer's Forwarded, once the transaction is durable.
func (c *Crawler) Admit(tx *kv.Tx, l Link) (bool, error) {
	scheme, first, depth := l.Scheme, l.First, l.Depth
	h, err := graph.NormalizeHost(l.Host, scheme)
	if err != nil {
		return false, err
	}
	if first != "" {
		// Only a page of the host itself is its first page.
		if u, err := url.Parse(first); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			first = ""
		} else if fh, err := graph.HostOf(u); err != nil || fh != h {
			first = ""
		}
	}
	now := c.now()
	dst, created, err := graph.EnsureHeadAt(tx, h, scheme, depth, now)
	if err != nil {
		return false, err
	}
	wasDeeper := created || dst.Depth > 0
	queued, _, err := c.target(tx, h, first, &dst, created, depth, now)
	if err == nil && depth == 0 && l.SeedRedirects > 0 && wasDeeper {
		err = markSeedRedirect(tx, dst.ID, min(l.SeedRedirects, maxRedirects))
	}
	return queued, err
}

// limitText names the limit that leaves host, reached at depth, out: the
// node's error, so that excluded_by_limit says which.
func (c *Crawler) limitText(host string, depth int, byDepth bool) string {
	if byDepth {
		return fmt.Sprintf("excluded by max_depth %d (the host is %d links from the nearest seed)", c.cfg.MaxDepth, depth)
	}
	return fmt.Sprintf("excluded by max_subdomains_per_root %d (%s has that many hosts already)", c.cfg.MaxSubdomainsPerRoot, graph.RegistrableDomain(host))
}

// Wake tells a running crawl that entries were queued from outside (Admit,
// AddSeeds): a dispatcher waiting for work claims again.
func (c *Crawler) Wake() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// target applies one link to host, whose node's head is dst (already
// ensured), at depth: last-seen and depth updates, then the frontier when
// the host may be crawled again. When the link brings the host closer to a
// seed than its node says and the host was crawled, the hosts it links to
// are brought closer too (see relax). It reports whether an entry was
// queued for host, and whether a link went to another shard's outbox.
// first is the page of host to crawl first when it is queued ("": its
// home page).
func (c *Crawler) target(tx *kv.Tx, host, first string, dst *graph.Head, created bool, depth int, now time.Time) (queued, forwarded bool, err error) {
	queued, lowered, err := c.admit(tx, host, first, dst, created, depth, now)
	if err != nil || !lowered {
		return queued, false, err
	}
	forwarded, err = c.relax(tx, dst.ID, depth, now)
	return queued, forwarded, err
}

// admit is target for host alone. The node itself is read and rewritten
// only when something a user sees changed. It reports whether an entry
// was queued, and whether the node's depth was lowered.
func (c *Crawler) admit(tx *kv.Tx, host, first string, dst *graph.Head, created bool, depth int, now time.Time) (queued, lowered bool, err error) {
	// last-seen is kept to the minute.
	changed := !created && now.Sub(dst.LastSeen) > time.Minute
	limit := "" // the error a host left out gets: which limit; "-" to clear it
	status := dst.Status
	if !created && depth < dst.Depth {
		changed = true
	}
	if !c.inScope(host) {
		// An edge and a node, never fetched, never queued, not counted
		// by the subdomain cap. A host crawled before keeps its status.
		if status == graph.StatusDiscovered || status == graph.StatusExcludedByLimit {
			status, changed = graph.StatusOutOfScope, true
		}
	} else if !asked(dst.CrawlCount, dst.Status) && !c.capped(dst.CrawlCount) && (created || tx.GetRaw(kv.BucketLeases, kv.U64(dst.ID)) == nil) {
		// A host asked for before, or being fetched now, is not fetched
		// again for this link (issue 27: one fetch of a host per crawl).
		// A node created for this link has no lease, mark or entry yet.
		// A host queued nearer is within every limit already, whatever
		// depth this link has: past max_depth too.
		if queuedNearer(tx, dst, created, depth) {
			if !changed {
				return false, false, nil
			}
			lowered, err := rewrite(tx, host, dst, created, depth, now, status, "")
			return false, lowered, err
		}
		admitted, byDepth := false, c.cfg.MaxDepth > 0 && depth > c.cfg.MaxDepth
		if !byDepth {
			if admitted, err = c.admitSubdomain(tx, host, depth); err != nil {
				return false, false, err
			}
		}
		if admitted {
			push := frontier.Push
			if created {
				push = frontier.PushNew
			}
			if first == "" {
				first = frontier.HomeURL(dst.Scheme, host)
			}
			ok, err := push(tx, frontier.Entry{NodeID: dst.ID, Host: host, URL: first, Depth: depth})
			if err != nil {
				return false, false, err
			}
			queued = ok
			if status == graph.StatusExcludedByLimit {
				status, changed, limit = graph.StatusDiscovered, true, "-"
			}
		} else if status == graph.StatusDiscovered {
			status, changed, limit = graph.StatusExcludedByLimit, true, c.limitText(host, depth, byDepth)
		}
	}
	if !changed {
		return queued, false, nil
	}
	lowered, err = rewrite(tx, host, dst, created, depth, now, status, limit)
	return queued, lowered, err
}

// queuedNearer reports whether dst, a host never asked for and not created
// by this link, is queued at depth or nearer: a link at depth then queues
// nothing and changes nothing of the limiter. A host never asked for is
// queued only once the subdomain limiter admits it, and leaves the queue
// when it gives its place up (admitSubdomain): it is admitted. One lookup
// instead of the limiter's and the frontier's for most links of a crawl to
// hosts it has found already.
func queuedNearer(tx *kv.Tx, dst *graph.Head, created bool, depth int) bool {
	if created || dst.Status != graph.StatusDiscovered {
		return false
	}
	at, ok := frontier.QueuedAt(tx, dst.ID)
	return ok && at <= depth
}

// rewrite writes admit's changes to dst's node: last seen, status, the
// limit's word in its error (limit; "-" clears it) and a nearer depth. It
// reports whether the depth was lowered.
func rewrite(tx *kv.Tx, host string, dst *graph.Head, created bool, depth int, now time.Time, status graph.Status, limit string) (lowered bool, err error) {
	n, ok, err := graph.Get(tx, dst.ID)
	if err == nil && !ok {
		err = fmt.Errorf("crawl: node %d (%s) vanished", dst.ID, host)
	}
	if err != nil {
		return false, err
	}
	n.LastSeen, n.Status = now, status
	switch {
	case limit == "-" && strings.HasPrefix(n.Error, "excluded by "):
		n.Error = "" // in again: the limit's word is stale
	case limit != "" && limit != "-":
		n.Error = limit
	}
	if !created && depth < n.Depth {
		n.Depth, lowered = depth, true
	}
	return lowered, graph.Put(tx, &n)
}
