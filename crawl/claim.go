package crawl

import (
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/weaver-crawler/weaver/crawl/robots"
	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// claimResult is what one claim transaction found.
type claimResult struct {
	leases  []frontier.Lease
	queued  uint64    // entries still queued after the claim
	nextDue time.Time // with a revisit policy: the earliest host due later (zero: none)
	dropped int64     // entries dropped without an attempt (see judge)
	err     error
}

// claim leases up to n entries in a group transaction, and hands them out
// as soon as that transaction is applied, without waiting for its fsync: a
// page commits only while its lease is in the store (commitPage checks),
// so if the claim's group then fails to commit, no page of its leases is
// ever written. A failed commit is also sent to fatal.
//
// A group that waits for room (a full disk) runs again on the store as it
// was, after its leases were handed out: the claim then makes the same
// leases, by the time it first read and the verdicts it first gave.
func (c *Crawler) claim(n int, fatal chan<- error) <-chan claimResult {
	out := make(chan claimResult, 1)
	var res atomic.Pointer[claimResult] // the last run's; the writer goroutine writes it
	now := c.now()
	type verdict struct {
		v       frontier.Verdict
		skipped bool
	}
	verdicts := map[uint64]verdict{} // the writer goroutine's
	applied, done := c.store.CommitApplied(func(tx *kv.Tx) error {
		r := &claimResult{}
		var err error
		if c.cfg.revisit() > 0 {
			if r.nextDue, err = c.promoteDue(tx, now, 4*n+256); err != nil {
				return err
			}
		}
		r.leases, err = frontier.Claim(tx, n, 4*n+256, now, func(e *frontier.Entry) frontier.Verdict {
			v, ok := verdicts[e.NodeID]
			if !ok {
				v.v, v.skipped = c.judge(tx, e)
				verdicts[e.NodeID] = v
			}
			if v.skipped {
				r.dropped++
			}
			return v.v
		})
		r.queued = frontier.Len(tx)
		res.Store(r)
		return err
	})
	go func() {
		if err := <-applied; err != nil {
			out <- claimResult{err: err}
			return
		}
		out <- *res.Load()
		if err := <-done; err != nil {
			c.storeFailed(fatal, fmt.Errorf("%w: claim: %w", ErrStoreFailed, err))
		}
	}()
	return out
}

// judge decides about a queued entry. A host that may not be fetched now
// (asked before and not due, or crawled max_crawls_per_node times: see
// mayFetch) is dropped, and so, without an attempt and without using up
// max_pages, is a host that cannot be fetched: its robots.txt, still in
// the cache, disallows the page, or it failed for good in this run (see
// page.forGood). A host waiting for its delay is taken all the same: it
// is parked, not left in the queue to be scanned again.
//
// skipped reports a drop that leaves a page not asked for (pages_skipped):
// not one of a host crawled enough.
func (c *Crawler) judge(tx *kv.Tx, e *frontier.Entry) (v frontier.Verdict, skipped bool) {
	now := c.now()
	node, ok, err := graph.Get(tx, e.NodeID)
	if err != nil || !ok || !c.mayFetch(&node, now) {
		return frontier.Drop, false
	}
	if c.gaveUp(e.NodeID) {
		return frontier.Drop, true
	}
	// A host due for a revisit goes through its crawl even when its
	// cached robots.txt disallows it: the commit then schedules it again.
	due := c.cfg.revisit() > 0 && !node.NextDue.IsZero()
	if node.Status == graph.StatusRobotsDisallow && !c.cfg.IgnoreRobots && !due {
		var rec robotsRecord
		if ok, err := tx.Get(kv.BucketRobots, []byte(e.Host), &rec); err == nil && ok && rec.fresh(now, c.cfg.robotsTTL()) {
			var r robots.Rules
			if r.UnmarshalBinary(rec.Rules) == nil && !r.Allowed(c.cfg.UserAgent, e.URL) {
				return frontier.Drop, true
			}
		}
	}
	return frontier.Take, false
}

// gaveUp reports whether node's host failed for good in this run.
func (c *Crawler) gaveUp(node uint64) bool {
	c.failedMu.Lock()
	defer c.failedMu.Unlock()
	return c.failed[node]
}

// forGood reports whether a failure will not pass by asking again in this
// run: the name does not exist, the address is private, the host
// redirects without end, or its certificate is refused.
func forGood(kind ErrorKind, err error) bool {
	if kind.IsCertificate() { // a refused certificate is the host's verdict
		return true
	}
	var dnsErr *net.DNSError
	switch kind {
	case KindRefused, KindRedirects:
		return true
	case KindDNS:
		return errors.As(err, &dnsErr) && dnsErr.IsNotFound
	}
	return false
}

// claimAhead is the most leases claimed and not yet opened: enough to
// cover a claim's round trip through the group writer (the group before
// it, and its own run) at full speed, so that workers never wait for a
// lease. A claim is made when fewer than half are left.
func (c *Crawler) claimAhead() int { return max(16*c.cfg.ConcurrentWorkers, 128) }

// maxInflight bounds the pages finished whose commit is not yet durable:
// what a slow disk may hold in memory before the dispatcher stops handing
// out steps.
func (c *Crawler) maxInflight() int { return max(32*c.cfg.ConcurrentWorkers, 512) }
