package crawl

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/kv"
)

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
//
// Each turn of its loop looks at the network (a pause, a probe), claims,
// decides whether the crawl is over, and offers a step; then it waits for
// whatever happens first, each case a method of the dispatcher.
func (c *Crawler) dispatch(ctx context.Context, steps chan<- *task, back <-chan stepped, again <-chan *task, acked <-chan struct{}, fatal chan error) (string, error) {
	d := c.newDispatcher(steps, back, again, acked, fatal)
	defer d.close()
	for {
		st, full := c.net.current(), c.disk.paused()
		if retry, err := d.pauseIfDown(st, full); err != nil {
			return d.stop(ReasonError, err)
		} else if retry {
			continue
		}
		d.planProbe(st)
		d.claimMore(st, full)
		if d.suspectNetwork(st) {
			continue
		}
		if reason, over := d.over(st); over {
			return d.stop(reason, nil)
		}
		out := d.offer(st, full)
		select {
		case out <- d.next:
			d.handedOut()
		case s := <-back:
			d.stepEnded(s)
		case t := <-again:
			d.nextPageDue(t)
		case <-acked:
			d.committed()
		case r := <-d.claiming:
			if err := d.claimed(r); err != nil {
				return d.stop(ReasonError, err)
			}
		case <-d.timer.C:
		case <-d.dueTimer.C:
			d.wakeUp()
		case <-d.deadline:
			c.logf("INFO", "max_duration reached")
			return d.stop(ReasonMaxDuration, nil)
		case <-c.wake:
			d.wakeUp()
		case <-c.net.changed:
			d.wakeUp()
		case <-c.disk.changed:
			d.wakeUp()
		case <-d.probeC:
			d.probe(ctx)
		case err := <-d.probing:
			if err := d.probed(err); err != nil {
				return d.stop(ReasonError, err)
			}
		case <-d.clusterDone:
			d.clusterQuiet()
		case err := <-fatal:
			return d.stop(ReasonError, err)
		case <-ctx.Done():
			return d.stop(d.stopReason(ctx), nil)
		}
	}
}

// dispatcher is what dispatch's loop holds from one turn to the next.
type dispatcher struct {
	c     *Crawler
	steps chan<- *task
	back  <-chan stepped
	again <-chan *task
	acked <-chan struct{}
	fatal chan error

	capacity int              // leases claimed ahead (claimAhead)
	maxOpen  int              // hosts open at most (openHosts)
	buf      []frontier.Lease // claimed, not opened
	waiting  parked           // open, parked until readyAt
	next     *task            // the step offered to the workers
	timer    *time.Timer      // wakes the loop when the first parked task is ready

	running    int // steps handed to workers, not yet back
	committing int // finished pages whose commit is not yet acknowledged

	claiming   <-chan claimResult // the claim under way; nil: none
	queued     uint64             // entries queued, as the last claim found
	claimedAll bool               // max_pages reached
	// needClaim is false after a claim that found nothing, until something
	// changes what a claim could find: a committed page (it may have
	// queued hosts) or a wake.
	needClaim bool
	// ackedWhileClaiming: a page committed while a claim was outstanding.
	// The claim may have run before that page's writes (in the same group
	// or an earlier one), so an empty claim proves nothing then.
	ackedWhileClaiming bool

	// clusterDone is the cluster's end; nil outside a cluster, and once
	// it came (clusterQuiet).
	clusterDone <-chan struct{}
	clusterOver bool

	// The network watch (netwatch): while it is not up no step is handed
	// out and no lease claimed; a probe is due on probeC or out on probing.
	probeTimer *time.Timer
	probeC     <-chan time.Time
	probing    chan error
	pauseSaved bool // the pause is in the store, the open hosts back in the queue

	// With a revisit policy the crawl does not end when the queue is
	// empty: dueTimer wakes it when the next host is due. deadline ends
	// it after max_duration_ms.
	dueTimer *time.Timer
	deadline <-chan time.Time
	dlTimer  *time.Timer // deadline's; nil: none
	idleSaid time.Time   // the due time last logged as awaited
}

func (c *Crawler) newDispatcher(steps chan<- *task, back <-chan stepped, again <-chan *task, acked <-chan struct{}, fatal chan error) *dispatcher {
	d := &dispatcher{
		c: c, steps: steps, back: back, again: again, acked: acked, fatal: fatal,
		capacity: c.claimAhead(), maxOpen: c.cfg.openHosts(),
		queued:    1, // unknown until the first claim: assume work
		needClaim: true,
		timer:     time.NewTimer(time.Hour), probeTimer: time.NewTimer(time.Hour), dueTimer: time.NewTimer(time.Hour),
	}
	d.timer.Stop()
	d.probeTimer.Stop()
	d.dueTimer.Stop()
	if c.peer != nil {
		d.clusterDone = c.peer.Done()
	}
	if c.cfg.MaxDurationMS > 0 {
		d.dlTimer = time.NewTimer(time.Duration(c.cfg.MaxDurationMS)*time.Millisecond - c.now().Sub(time.Unix(0, c.started.Load())))
		d.deadline = d.dlTimer.C
	}
	c.nextDue.Store(0)
	return d
}

// close stops the timers that outlive the loop, and clears the gauges of
// open and parked hosts.
func (d *dispatcher) close() {
	d.c.open.Store(0)
	d.c.parkedN.Store(0)
	d.dueTimer.Stop()
	if d.dlTimer != nil {
		d.dlTimer.Stop()
	}
}

// pauseIfDown gives the hosts open back to the queue when the network is
// down (pause): again when a full disk refuses the pause (it is made
// again once there is room), or the pause's error.
func (d *dispatcher) pauseIfDown(st netState, full bool) (again bool, err error) {
	if st != netDown || full || (d.pauseSaved && len(d.buf) == 0 && d.waiting.Len() == 0 && d.next == nil) {
		return false, nil
	}
	if err := d.pause(); kv.IsFull(err) {
		d.c.disk.failed(err) // paused again once there is room
		return true, nil
	} else if err != nil {
		return false, err
	}
	return false, nil
}

// planProbe sets the probe timer when the network is not up and no probe
// is planned or under way.
func (d *dispatcher) planProbe(st netState) {
	if st == netUp || d.probing != nil || d.probeC != nil {
		return
	}
	wait := d.c.net.wait()
	d.probeTimer.Reset(wait)
	d.probeC = d.probeTimer.C
	d.c.net.planProbe(d.c.now().Add(wait))
}

// claimMore claims leases when fewer than half the capacity are left
// (and max_pages leaves some), unless the last claim found nothing and
// nothing changed since. A full disk (diskwatch) claims nothing: the
// hosts open stay open, in memory, and a pause's writes wait for room.
func (d *dispatcher) claimMore(st netState, full bool) {
	if st != netUp || full || d.claiming != nil || d.claimedAll || len(d.buf) >= d.capacity/2 {
		return
	}
	want := d.capacity - len(d.buf)
	if d.c.cfg.MaxPages > 0 {
		left := int64(d.c.cfg.MaxPages) - d.c.stats.claimed.Load()
		if left <= 0 {
			d.claimedAll = true
		}
		want = int(min(int64(want), left))
	}
	if want > 0 && d.needClaim {
		d.claiming = d.c.claim(want, d.fatal)
		d.ackedWhileClaiming = false
	}
}

// idle reports whether the network is up and nothing is claimed, claiming,
// handed out, parked or offered.
func (d *dispatcher) idle(st netState) bool {
	return st == netUp && d.claiming == nil && len(d.buf) == 0 && d.running == 0 && d.waiting.Len() == 0 && d.next == nil
}

// suspectNetwork reports a crawl idle but for pages held by the network
// watch: they failed, and nothing else could show the web answering, so a
// probe decides whether the failures are the hosts'.
func (d *dispatcher) suspectNetwork(st netState) bool {
	if !d.idle(st) || d.c.net.heldN() == 0 {
		return false
	}
	d.c.net.suspect()
	return true
}

// over returns why the crawl is over, if it is: max_pages claimed, or
// nothing queued nor due (with a revisit policy the crawl waits for the
// next due host, and ends only when none is scheduled: every host capped).
func (d *dispatcher) over(st netState) (string, bool) {
	c := d.c
	if !d.idle(st) || d.committing != 0 || (!d.claimedAll && d.needClaim) {
		return "", false
	}
	if d.claimedAll {
		return ReasonMaxPages, true
	}
	if d.queued == 0 && (c.peer == nil || d.clusterOver) && (c.cfg.revisit() <= 0 || c.nextDueAt().IsZero()) {
		return ReasonQueueEmpty, true
	}
	// Said when the time it names changes: due times a few milliseconds
	// apart read the same to the second.
	if due := c.nextDueAt().Truncate(time.Second); c.cfg.revisit() > 0 && d.queued == 0 && !due.IsZero() && !due.Equal(d.idleSaid) {
		d.idleSaid = due
		c.logf("INFO", "Nothing to fetch now: the next host is due at %s", due.UTC().Format(time.RFC3339))
	}
	return "", false
}

// offer chooses the step to offer the workers (pick), updates the gauges
// of hosts open and parked, and returns the channel to offer it on: nil
// when there is none, or the disk is full; with none, the timer is set
// for the first parked task.
func (d *dispatcher) offer(st netState, full bool) chan<- *task {
	c := d.c
	now := c.now()
	if st == netUp && !full && d.next == nil && d.committing < c.maxInflight() {
		// The host is held from now, before the worker can have its
		// answer: a reservation after the request's done would hold the
		// host for good.
		if d.next = d.pick(now); d.next != nil {
			c.gate.reserve(d.next.host)
			if !d.next.parkedAt.IsZero() {
				d.next.p.wait += now.Sub(d.next.parkedAt)
				d.next.parkedAt = time.Time{}
			}
		}
	}
	c.open.Store(int64(d.running + d.waiting.Len()))
	c.parkedN.Store(int64(d.waiting.Len()))
	if d.next != nil && !full {
		return d.steps
	}
	if d.waiting.Len() > 0 && st == netUp && !full {
		d.timer.Reset(max(d.waiting[0].readyAt.Sub(now), time.Millisecond))
	}
	return nil
}

// pick chooses the next step: a parked task whose time has come (its
// gate rechecked: a redirect may have taken its host meanwhile), else a
// new host. It returns nil when nothing may go now.
func (d *dispatcher) pick(now time.Time) *task {
	for d.waiting.Len() > 0 && !d.waiting[0].readyAt.After(now) {
		t := d.waiting[0]
		if g := d.c.gate.nextAt(t.host); g.After(now) {
			t.readyAt = g
			heap.Fix(&d.waiting, 0)
			continue
		}
		heap.Pop(&d.waiting)
		return t
	}
	for len(d.buf) > 0 && d.running+d.waiting.Len() < d.maxOpen {
		t := newTask(d.buf[0], 0)
		d.buf = d.buf[1:]
		if g := d.c.gate.nextAt(t.host); g.After(t.readyAt) {
			t.readyAt = g
		}
		if t.readyAt.After(now) {
			t.parkedAt = now
			heap.Push(&d.waiting, t)
			continue
		}
		return t
	}
	return nil
}

// park parks t until its time. A park is written to the store when its
// wait is longer than the politeness delay: a shorter one is kept after a
// crash by the hold the next run puts on every host (Prepare), so the
// write would buy nothing but a robots.txt not asked again (it then goes
// with the page's commit).
func (d *dispatcher) park(t *task, now time.Time) {
	t.parkedAt = now
	if t.persist && t.readyAt.Sub(now) > d.c.cfg.delay() {
		d.c.parkCommit(t, d.fatal)
	}
	heap.Push(&d.waiting, t)
}

// handedOut: a worker took the step offered. The worker owns it now:
// nothing of it is read or written here any more.
func (d *dispatcher) handedOut() { d.next, d.running = nil, d.running+1 }

// stepEnded: a worker's step ended, its page finished (committing now) or
// its host parked for its next step.
func (d *dispatcher) stepEnded(s stepped) {
	d.running--
	if s.done {
		d.committing++
	} else {
		d.park(s.t, d.c.now())
	}
}

// nextPageDue: the parse stage has a host's next page (parsed, not
// committed), to park until its time.
func (d *dispatcher) nextPageDue(t *task) {
	d.committing--
	d.park(t, d.c.now())
}

// committed: a page's commit is acknowledged; it may have queued hosts.
func (d *dispatcher) committed() {
	d.committing--
	d.needClaim = true
	if d.claiming != nil {
		d.ackedWhileClaiming = true
	}
}

// wakeUp: something changed what a claim could find (a host due, seeds
// added, the network or the disk back).
func (d *dispatcher) wakeUp() { d.needClaim = true }

// claimed takes a claim's leases, and its word on what is queued and
// when the next host is due. It returns the claim's error.
func (d *dispatcher) claimed(r claimResult) error {
	c := d.c
	d.claiming = nil
	if r.err != nil {
		return fmt.Errorf("%w: claim: %w", ErrStoreFailed, r.err)
	}
	d.buf = append(d.buf, r.leases...)
	c.stats.claimed.Add(int64(len(r.leases)))
	c.stats.dropped.Add(r.dropped)
	d.queued = r.queued
	if c.cfg.revisit() > 0 {
		c.nextDue.Store(r.nextDue.UnixNano())
		if r.nextDue.IsZero() {
			c.nextDue.Store(0)
		} else if len(r.leases) == 0 {
			d.dueTimer.Reset(max(r.nextDue.Sub(c.now()), time.Millisecond))
		}
	}
	if len(r.leases) == 0 && !d.ackedWhileClaiming {
		d.needClaim = false
		if d.queued > 0 && d.running+d.waiting.Len() == 0 {
			// Entries are queued but none could be taken (their hosts
			// are leased elsewhere, e.g. by a stopped process's
			// recovered leases being committed): look again shortly
			// instead of spinning.
			time.AfterFunc(50*time.Millisecond, c.Wake)
		}
	}
	return nil
}

// probe sends the probe that is due, to a host that answered before. With
// none (no host has answered) nothing tells an outage from failing hosts,
// which are charged as they always were.
func (d *dispatcher) probe(ctx context.Context) {
	c := d.c
	d.probeC = nil
	u, ok := c.net.target()
	if !ok {
		c.toParse(c.net.unprobed())
		return
	}
	ch := make(chan error, 1)
	d.probing = ch
	c.net.planProbe(c.now())
	go func() { ch <- c.probe(ctx, u) }()
}

// probed takes a probe's outcome: the pages held are charged or pardoned,
// and the crawl pauses, or resumes from a pause. It returns the error of
// a store that failed to record either.
func (d *dispatcher) probed(err error) error {
	c := d.c
	d.probing = nil
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
		if err := d.pause(); kv.IsFull(err) {
			c.disk.failed(err)
		} else if err != nil {
			return err
		}
		c.logf("WARN", "Network unreachable since %s: %d pages failed with no answer between them, and the %v; paused: no host is charged, hosts that answered before are probed until one answers",
			c.net.pausedSince().UTC().Format(time.RFC3339), len(pardon), err)
	case err == nil && !since.IsZero():
		// A full disk keeps the pause in the store: the next run then
		// begins with a probe, which answers.
		if err := c.store.Update(func(tx *kv.Tx) error { return tx.Delete(kv.BucketMeta, []byte(metaPaused)) }); kv.IsFull(err) {
			c.disk.failed(err)
		} else if err != nil {
			return fmt.Errorf("%w: ending the pause: %w", ErrStoreFailed, err)
		}
		d.pauseSaved = false
		c.logf("INFO", "Network back after a pause of %v: resuming the crawl", c.now().Sub(since).Round(time.Second))
	}
	return nil
}

// clusterQuiet: the whole cluster is quiescent, so this shard's store
// holds no entry or lease: the loop ends once its own claim agrees.
func (d *dispatcher) clusterQuiet() { d.clusterOver, d.clusterDone = true, nil }

// stopReason says why ctx ended, and returns it as the termination
// reason: a POST /stop, or a signal.
func (d *dispatcher) stopReason(ctx context.Context) string {
	if errors.Is(context.Cause(ctx), ErrStopRequested) {
		d.c.logf("INFO", "Stop requested (POST /stop)")
		return ReasonAPIStop
	}
	d.c.logf("INFO", "Shutdown signal received")
	return ReasonSignal
}

// stop ends the dispatch: it waits for the steps handed out, takes the
// claim under way, and gives every lease and host open back to the queue
// (giveBack). It returns reason, and err or giveBack's error.
//
// A commit group the store holds for want of room is given up first: the
// claim under way, and anything else waiting on the store's writer, would
// otherwise wait for that group, which waits for room or for the crawl to
// stop (diskwatch.Full), and the stop waits for them.
func (d *dispatcher) stop(reason string, err error) (string, error) {
	d.c.disk.stop()
	var open []*task
	if d.next != nil {
		open = append(open, d.next)
	}
	open = append(open, d.waiting...)
	d.waiting = nil
	for d.running > 0 {
		select {
		case s := <-d.back:
			d.running--
			if !s.done {
				open = append(open, s.t)
			}
		case t := <-d.again:
			open = append(open, t)
		case <-d.acked:
		}
	}
	if d.claiming != nil {
		if r := <-d.claiming; r.err == nil {
			d.buf = append(d.buf, r.leases...)
		}
	}
	if rerr := d.c.giveBack(d.buf, open); rerr != nil && err == nil {
		err = rerr
	}
	return reason, err
}

// pause gives every host open back to the queue whole, at its place,
// uncharged, and records the pause in the same transaction, so that a
// process killed now resumes into a probe. A pause that cannot be
// written (a full disk) changes nothing: it is made again later.
func (d *dispatcher) pause() error {
	c := d.c
	open := []*task(d.waiting)
	if d.next != nil {
		open = append(open, d.next)
	}
	if err := c.pauseBack(d.buf, open); err != nil {
		return err
	}
	if d.next != nil {
		c.gate.release(d.next.host)
	}
	for _, t := range open {
		c.stats.claimed.Add(-int64(1 + t.pageNo))
	}
	c.stats.claimed.Add(-int64(len(d.buf)))
	d.buf, d.waiting, d.next, d.pauseSaved, d.claimedAll = nil, nil, nil, true, false
	return nil
}
