package crawl

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
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
	node, ok, err := graph.Get(tx, e.NodeID)
	if err != nil || !ok || !c.mayFetch(&node, c.now()) {
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
		if ok, err := tx.Get(kv.BucketRobots, []byte(e.Host), &rec); err == nil && ok && rec.fresh(c.now(), c.cfg.robotsTTL()) {
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

// stepped is a worker's word that a step ended: done, the task went to
// parse, which owns it now; else it is the dispatcher's again, to park.
type stepped struct {
	t    *task
	done bool
}

// parked is the dispatcher's heap of open tasks waiting for their time,
// earliest first.
type parked []*task

func (h parked) Len() int           { return len(h) }
func (h parked) Less(i, j int) bool { return h[i].readyAt.Before(h[j].readyAt) }
func (h parked) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *parked) Push(x any) {
	t := x.(*task)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *parked) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	t.index = -1
	*h = old[:len(old)-1]
	return t
}

// dispatch is the scheduler. It keeps leases claimed ahead, opens hosts
// from them, and hands workers one step (one request) at a time: first
// the ready steps of hosts already open (so that hosts finish and the
// graph grows breadth-first), then a new host, while fewer than
// openHosts are open. A host whose next step must wait (its delay, a
// retry, a Retry-After, a Crawl-delay) is parked, and its worker takes
// another step at once. dispatch also decides when the crawl ends.
func (c *Crawler) dispatch(ctx context.Context, steps chan<- *task, back <-chan stepped, again <-chan *task, acked <-chan struct{}, fatal chan error) (string, error) {
	capacity := c.claimAhead()
	maxOpen := c.cfg.openHosts()
	var buf []frontier.Lease // claimed, not opened
	var waiting parked       // open, parked until readyAt
	running := 0             // steps handed to workers, not yet back
	committing := 0          // finished pages whose commit is not yet acknowledged
	var claiming <-chan claimResult
	queued := uint64(1) // unknown until the first claim: assume work
	claimedAll := false // max_pages reached
	// needClaim is false after a claim that found nothing, until something
	// changes what a claim could find: a committed page (it may have
	// queued hosts) or a wake.
	needClaim := true
	// ackedWhileClaiming: a page committed while a claim was outstanding.
	// The claim may have run before that page's writes (in the same group
	// or an earlier one), so an empty claim proves nothing then.
	ackedWhileClaiming := false
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	// done is the cluster's end; nil outside a cluster.
	var done <-chan struct{}
	clusterDone := false
	if c.peer != nil {
		done = c.peer.Done()
	}
	var next *task // the step offered to the workers
	defer func() { c.open.Store(0); c.parkedN.Store(0) }()
	// The network watch (netwatch): while it is not up no step is handed
	// out and no lease claimed; a probe is due on probeC or out on probing.
	probeTimer := time.NewTimer(time.Hour)
	probeTimer.Stop()
	var probeC <-chan time.Time
	var probing chan error
	pauseSaved := false // the pause is in the store, the open hosts back in the queue
	// With a revisit policy the crawl does not end when the queue is
	// empty: dueTimer wakes it when the next host is due. deadline ends
	// it after max_duration_ms.
	dueTimer := time.NewTimer(time.Hour)
	dueTimer.Stop()
	defer dueTimer.Stop()
	var deadline <-chan time.Time
	if c.cfg.MaxDurationMS > 0 {
		dl := time.NewTimer(time.Duration(c.cfg.MaxDurationMS)*time.Millisecond - c.now().Sub(time.Unix(0, c.started.Load())))
		defer dl.Stop()
		deadline = dl.C
	}
	idleSaid := time.Time{} // the due time last logged as awaited
	c.nextDue.Store(0)

	// pick chooses the next step: a parked task whose time has come (its
	// gate rechecked: a redirect may have taken its host meanwhile), else
	// a new host. It returns nil when nothing may go now.
	pick := func(now time.Time) *task {
		for waiting.Len() > 0 && !waiting[0].readyAt.After(now) {
			t := waiting[0]
			if g := c.gate.nextAt(t.host); g.After(now) {
				t.readyAt = g
				heap.Fix(&waiting, 0)
				continue
			}
			heap.Pop(&waiting)
			return t
		}
		for len(buf) > 0 && running+waiting.Len() < maxOpen {
			t := newTask(buf[0], 0)
			buf = buf[1:]
			if g := c.gate.nextAt(t.host); g.After(t.readyAt) {
				t.readyAt = g
			}
			if t.readyAt.After(now) {
				t.parkedAt = now
				heap.Push(&waiting, t)
				continue
			}
			return t
		}
		return nil
	}
	// A park is written to the store when its wait is longer than the
	// politeness delay: a shorter one is kept after a crash by the hold
	// the next run puts on every host (Prepare), so the write would buy
	// nothing but a robots.txt not asked again (it then goes with the
	// page's commit).
	park := func(t *task, now time.Time) {
		t.parkedAt = now
		if t.persist && t.readyAt.Sub(now) > c.cfg.delay() {
			c.parkCommit(t, fatal)
		}
		heap.Push(&waiting, t)
	}

	stop := func(reason string, err error) (string, error) {
		var open []*task
		if next != nil {
			open = append(open, next)
		}
		open = append(open, waiting...)
		waiting = nil
		for running > 0 {
			select {
			case s := <-back:
				running--
				if !s.done {
					open = append(open, s.t)
				}
			case t := <-again:
				open = append(open, t)
			case <-acked:
			}
		}
		if claiming != nil {
			if r := <-claiming; r.err == nil {
				buf = append(buf, r.leases...)
			}
		}
		if rerr := c.giveBack(buf, open); rerr != nil && err == nil {
			err = rerr
		}
		return reason, err
	}
	// pause gives every host open back to the queue whole, at its place,
	// uncharged, and records the pause in the same transaction, so that a
	// process killed now resumes into a probe.
	// A pause that cannot be written (a full disk) changes nothing: it is
	// made again later.
	pause := func() error {
		open := []*task(waiting)
		if next != nil {
			open = append(open, next)
		}
		if err := c.pauseBack(buf, open); err != nil {
			return err
		}
		if next != nil {
			c.gate.release(next.host)
		}
		for _, t := range open {
			c.stats.claimed.Add(-int64(1 + t.pageNo))
		}
		c.stats.claimed.Add(-int64(len(buf)))
		buf, waiting, next, pauseSaved, claimedAll = nil, nil, nil, true, false
		return nil
	}
	// full: a pause for the disk (diskwatch): no step is handed out and
	// no lease claimed; the hosts open stay open, in memory, and a
	// pause's writes wait for room.
	for {
		st := c.net.current()
		full := c.disk.paused()
		if st == netDown && !full && (!pauseSaved || len(buf) > 0 || waiting.Len() > 0 || next != nil) {
			if err := pause(); kv.IsFull(err) {
				c.disk.failed(err) // paused again once there is room
				continue
			} else if err != nil {
				return stop(ReasonError, err)
			}
		}
		if st != netUp && probing == nil && probeC == nil {
			wait := c.net.wait()
			probeTimer.Reset(wait)
			probeC = probeTimer.C
			c.net.planProbe(c.now().Add(wait))
		}
		if st == netUp && !full && claiming == nil && !claimedAll && len(buf) < capacity/2 {
			want := capacity - len(buf)
			if c.cfg.MaxPages > 0 {
				left := int64(c.cfg.MaxPages) - c.stats.claimed.Load()
				if left <= 0 {
					claimedAll = true
				}
				want = int(min(int64(want), left))
			}
			if want > 0 && needClaim {
				claiming = c.claim(want, fatal)
				ackedWhileClaiming = false
			}
		}
		if st == netUp && claiming == nil && len(buf) == 0 && running == 0 && waiting.Len() == 0 && next == nil && c.net.heldN() > 0 {
			// Pages failed and nothing else could show the web answering:
			// a probe decides whether the failures are the hosts'.
			c.net.suspect()
			continue
		}
		if st == netUp && claiming == nil && len(buf) == 0 && running == 0 && waiting.Len() == 0 && next == nil &&
			committing == 0 && (claimedAll || !needClaim) {
			if claimedAll {
				return stop(ReasonMaxPages, nil)
			}
			// With a revisit policy the crawl waits for the next due host;
			// it ends only when none is scheduled (every host capped).
			if queued == 0 && (c.peer == nil || clusterDone) && (c.cfg.revisit() <= 0 || c.nextDueAt().IsZero()) {
				return stop(ReasonQueueEmpty, nil)
			}
			// Said when the time it names changes: due times a few
			// milliseconds apart read the same to the second.
			if due := c.nextDueAt().Truncate(time.Second); c.cfg.revisit() > 0 && queued == 0 && !due.IsZero() && !due.Equal(idleSaid) {
				idleSaid = due
				c.logf("INFO", "Nothing to fetch now: the next host is due at %s", due.UTC().Format(time.RFC3339))
			}
		}
		now := c.now()
		if st == netUp && !full && next == nil && committing < c.maxInflight() {
			// The host is held from now, before the worker can have its
			// answer: a reservation after the request's done would hold
			// the host for good.
			if next = pick(now); next != nil {
				c.gate.reserve(next.host)
				if !next.parkedAt.IsZero() {
					next.p.wait += now.Sub(next.parkedAt)
					next.parkedAt = time.Time{}
				}
			}
		}
		c.open.Store(int64(running + waiting.Len()))
		c.parkedN.Store(int64(waiting.Len()))
		var out chan<- *task
		if next != nil && !full {
			out = steps
		} else if waiting.Len() > 0 && st == netUp && !full {
			timer.Reset(max(waiting[0].readyAt.Sub(now), time.Millisecond))
		}
		select {
		case out <- next:
			// The worker owns next now: nothing of it is read or written
			// here any more.
			next, running = nil, running+1
		case s := <-back:
			running--
			if s.done {
				committing++
			} else {
				park(s.t, c.now())
			}
		case t := <-again:
			// The host's next page: parsed, not committed.
			committing--
			park(t, c.now())
		case <-acked:
			committing--
			needClaim = true
			if claiming != nil {
				ackedWhileClaiming = true
			}
		case r := <-claiming:
			claiming = nil
			if r.err != nil {
				return stop(ReasonError, fmt.Errorf("%w: claim: %w", ErrStoreFailed, r.err))
			}
			buf = append(buf, r.leases...)
			c.stats.claimed.Add(int64(len(r.leases)))
			c.stats.dropped.Add(r.dropped)
			queued = r.queued
			if c.cfg.revisit() > 0 {
				c.nextDue.Store(r.nextDue.UnixNano())
				if r.nextDue.IsZero() {
					c.nextDue.Store(0)
				} else if len(r.leases) == 0 {
					dueTimer.Reset(max(r.nextDue.Sub(c.now()), time.Millisecond))
				}
			}
			if len(r.leases) == 0 && !ackedWhileClaiming {
				needClaim = false
				if queued > 0 && running+waiting.Len() == 0 {
					// Entries are queued but none could be taken (their
					// hosts are leased elsewhere, e.g. by a stopped
					// process's recovered leases being committed): look
					// again shortly instead of spinning.
					time.AfterFunc(50*time.Millisecond, c.Wake)
				}
			}
		case <-timer.C:
		case <-dueTimer.C:
			needClaim = true
		case <-deadline:
			c.logf("INFO", "max_duration reached")
			return stop(ReasonMaxDuration, nil)
		case <-c.wake:
			needClaim = true
		case <-c.net.changed:
			needClaim = true
		case <-c.disk.changed:
			needClaim = true
		case <-probeC:
			probeC = nil
			u, ok := c.net.target()
			if !ok {
				// No host has answered: nothing tells an outage from
				// failing hosts, which are charged as they always were.
				c.toParse(c.net.unprobed())
				continue
			}
			ch := make(chan error, 1)
			probing = ch
			c.net.planProbe(c.now())
			go func() { ch <- c.probe(ctx, u) }()
		case err := <-probing:
			probing = nil
			if err != nil {
				c.net.probeFailed(err)
			}
			since := c.net.pausedSince()
			charge, pardon, down := c.net.probed(err == nil)
			for _, t := range pardon {
				c.unclaim(t)
			}
			c.toParse(append(charge, pardon...))
			switch {
			case down:
				if err := pause(); kv.IsFull(err) {
					c.disk.failed(err)
				} else if err != nil {
					return stop(ReasonError, err)
				}
				c.logf("WARN", "Network unreachable since %s: %d pages failed with no answer between them, and the %v; paused: no host is charged, hosts that answered before are probed until one answers",
					c.net.pausedSince().UTC().Format(time.RFC3339), len(pardon), err)
			case err == nil && !since.IsZero():
				// A full disk keeps the pause in the store: the next run
				// then begins with a probe, which answers.
				if err := c.store.Update(func(tx *kv.Tx) error { return tx.Delete(kv.BucketMeta, []byte(metaPaused)) }); kv.IsFull(err) {
					c.disk.failed(err)
				} else if err != nil {
					return stop(ReasonError, fmt.Errorf("%w: ending the pause: %w", ErrStoreFailed, err))
				}
				pauseSaved = false
				c.logf("INFO", "Network back after a pause of %v: resuming the crawl", c.now().Sub(since).Round(time.Second))
			}
		case <-done:
			// The whole cluster is quiescent, so this shard's store holds
			// no entry or lease: the loop ends once its own claim agrees.
			clusterDone, done = true, nil
		case err := <-fatal:
			return stop(ReasonError, err)
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), ErrStopRequested) {
				c.logf("INFO", "Stop requested (POST /stop)")
				return stop(ReasonAPIStop, nil)
			}
			c.logf("INFO", "Shutdown signal received")
			return stop(ReasonSignal, nil)
		}
	}
}

// metaPaused, while the crawl is paused for its network, holds when the
// pause began: a crawl started on the store then begins by probing.
const metaPaused = "crawl.paused"

// pauseBack returns the leases claimed and the hosts open to the queue, as
// giveBack does, and records the pause, in one transaction.
func (c *Crawler) pauseBack(buf []frontier.Lease, open []*task) error {
	err := c.store.Update(func(tx *kv.Tx) error {
		if err := c.giveBackTx(tx, buf, open); err != nil {
			return err
		}
		return tx.SetMetaString(metaPaused, c.net.pausedSince().UTC().Format(time.RFC3339Nano))
	})
	if err != nil {
		return fmt.Errorf("%w: pausing: %w", ErrStoreFailed, err)
	}
	return nil
}

// probe asks u (a robots.txt that answered before) once: any HTTP answer
// says the network works. It returns what failed. The probe takes the
// whole way afresh, as a new host's fetch does: a new connection, its name
// asked of the resolver, not of the DNS cache — an idle connection or a
// cached address would answer while the resolver is away.
func (c *Crawler) probe(ctx context.Context, u string) error {
	ctx, cancel := context.WithTimeout(withFreshDNS(ctx), c.cfg.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("probe of %s: %w", u, err)
	}
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	req.Close = true
	resp, err := c.probeClient.Do(req)
	if err != nil {
		return fmt.Errorf("probe of %s: %w", u, err)
	}
	resp.Body.Close()
	return nil
}

// parkCommit writes a parked task's robots.txt (fetched by its last step)
// and the time it waits for on its lease, in a transaction of its own: a
// stop now loses neither, and the resumed crawl waits as this one would.
func (c *Crawler) parkCommit(t *task, fatal chan<- error) {
	t.persist = false
	rec, id, host, at := t.p.robots, t.p.lease.NodeID, t.p.lease.Host, t.readyAt
	t.p.robots = nil
	done := c.store.Commit(func(tx *kv.Tx) error {
		if rec != nil {
			if err := tx.Put(kv.BucketRobots, []byte(host), rec); err != nil {
				return err
			}
		}
		_, err := frontier.Park(tx, id, at)
		return err
	})
	go func() {
		if err := <-done; err != nil {
			c.storeFailed(fatal, fmt.Errorf("%w: parking %s: %w", ErrStoreFailed, host, err))
		}
	}()
}

// giveBack returns to the queue, in one transaction, the leases claimed
// and not opened and the hosts open and unfinished, each at its old place
// and with the time it waits for; the robots.txt an open host fetched is
// kept.
func (c *Crawler) giveBack(buf []frontier.Lease, open []*task) error {
	if len(buf) == 0 && len(open) == 0 {
		return nil
	}
	err := c.store.Update(func(tx *kv.Tx) error { return c.giveBackTx(tx, buf, open) })
	if kv.IsFull(err) {
		// The leases stay in the store, and the next run takes them back.
		c.logf("WARN", "%d hosts open stay leased in the store, for want of room to return them (%v): the next run queues them again", len(buf)+len(open), err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: returning leases: %w", ErrStoreFailed, err)
	}
	return nil
}

// storeFailed sends a write's failure to fatal: the crawl stops. A write
// that waited for room and was given up because the crawl stops is no
// failure: what it held (a page, a claim, a park) is still leased in the
// store, and the next run queues it again.
func (c *Crawler) storeFailed(fatal chan<- error, err error) {
	if kv.IsFull(err) {
		c.givenUp.Add(1)
		return
	}
	select {
	case fatal <- err:
	default:
	}
}

// giveBackTx is giveBack in the caller's transaction.
func (c *Crawler) giveBackTx(tx *kv.Tx, buf []frontier.Lease, open []*task) error {
	for _, l := range buf {
		if _, err := frontier.Return(tx, l.NodeID); err != nil {
			return err
		}
	}
	for _, t := range open {
		if rec := t.p.robots; rec != nil {
			if err := tx.Put(kv.BucketRobots, []byte(t.p.lease.Host), rec); err != nil {
				return err
			}
		}
		if t.readyAt.After(c.now()) {
			if _, err := frontier.Park(tx, t.p.lease.NodeID, t.readyAt); err != nil {
				return err
			}
		}
		if _, err := frontier.Return(tx, t.p.lease.NodeID); err != nil {
			return err
		}
	}
	return nil
}
