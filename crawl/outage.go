package crawl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// netState is what the crawl believes of its own network.
type netState uint8

const (
	netUp      netState = iota // fetching
	netSuspect                 // no step is handed out; a probe decides
	netDown                    // paused: only probes go out, with backoff
)

// netwatch tells an outage on the crawler's side (Wi-Fi gone, VPN
// reconnecting, proxy or resolver down) from hosts that fail.
//
// The rule (docs/outage.md): a page whose fetch failed at the network
// level (connection refused, reset or unreachable, a timeout, a resolver
// that did not answer — not NXDOMAIN, not TLS, not an HTTP status) is
// held, uncommitted, until the web is seen answering after it: then it is
// charged to its host as before. When k distinct hosts in a row have
// failed that way with no answer in between, or the crawl has nothing
// else to do while pages are held, no more steps are handed out and one
// probe goes to a host that answered recently. An answer means the
// failures were the hosts' own (they are charged); a failure means the
// network is away: the crawl pauses, the held pages go back to the
// frontier uncharged, and probes follow with backoff until one answers.
//
// k follows the recent share f of requests failing at the network level
// (an exponential average over about 200 requests while up): the least
// run length whose chance f^k is below 1e-4, between minRun and maxRun.
// A web where one request in four fails that way needs 7 in a row; one
// where half do, 14.
type netwatch struct {
	now func() time.Time

	mu        sync.Mutex           // guards every field below
	state     netState             //
	since     time.Time            // when the pause was declared (netDown)
	share     float64              // recent share of requests failing at the network level
	failing   map[string]time.Time // hosts failed at the network level since the last answer, and when
	suspectAt time.Time            // when the suspicion began
	k         int                  // how many of them raise the suspicion (run)
	held      []*task              // pages failed since the last answer, not charged yet
	good      []string             // robots.txt URLs of hosts that answered recently (a ring)
	goodNext  int                  // the ring's next slot to write
	probe     int                  // the ring's next slot to probe
	probes    int                  // probes failed in this pause
	nextProbe time.Time            // when the next probe goes (zero: one is out, or none planned)
	lastProbe string               // what the last failed probe said
	pauses    int64                // pauses declared in this run
	pausedNs  int64                // time spent paused, pauses ended
	pardoned  int64                // pages given back uncharged
	changed   chan struct{}        // cap 1: the state changed (the dispatcher looks)
}

const (
	minRun        = 4
	maxRun        = 32
	goodRing      = 32
	shareAlpha    = 1.0 / 200
	initialShare  = 0.25
	firstProbe    = time.Second      // after the pause is declared
	maxProbeEvery = 15 * time.Second // four probes a minute in a long outage
)

func newNetwatch(now func() time.Time) *netwatch {
	return &netwatch{now: now, share: initialShare, failing: map[string]time.Time{}, changed: make(chan struct{}, 1)}
}

func (w *netwatch) notify() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// run is the number of distinct hosts failing in a row that raises the
// suspicion, from the recent failure share.
func (w *netwatch) run() int {
	f := min(max(w.share, 0.01), 0.99)
	k := int(math.Ceil(math.Log(1e-4) / math.Log(f)))
	return min(max(k, minRun), maxRun)
}

// answered records an HTTP answer (any status) from host to a request
// sent at at: the network worked from then on. It returns the pages held
// that failed before at, now charged to their hosts, and whether a pause
// or suspicion that began before at ended. The request's start, not its
// end, is the evidence: an answer read from a connection opened before an
// outage (or told of late by a busy worker) proves nothing of failures
// that came after the request was sent.
func (w *netwatch) answered(scheme, host string, at time.Time) (charge []*task, resumed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state == netUp {
		w.share -= shareAlpha * w.share
	}
	w.remember(scheme, host)
	kept := w.held[:0:0]
	for _, t := range w.held {
		if t.failedAt.Before(at) {
			charge = append(charge, t)
		} else {
			kept = append(kept, t)
		}
	}
	w.held = kept
	for h, f := range w.failing {
		if f.Before(at) {
			delete(w.failing, h)
		}
	}
	switch {
	case w.state == netSuspect && w.suspectAt.Before(at), w.state == netDown && w.since.Before(at):
		resumed = w.upLocked()
	}
	return charge, resumed
}

// remember adds host to the ring of probe targets.
func (w *netwatch) remember(scheme, host string) {
	u := (&url.URL{Scheme: scheme, Host: host, Path: "/robots.txt"}).String()
	for _, g := range w.good {
		if g == u {
			return
		}
	}
	if len(w.good) < goodRing {
		w.good = append(w.good, u)
		return
	}
	w.good[w.goodNext] = u
	w.goodNext = (w.goodNext + 1) % goodRing
}

// upLocked ends a suspicion or a pause; it reports whether there was one.
func (w *netwatch) upLocked() bool {
	switch w.state {
	case netUp:
		return false
	case netDown:
		w.pausedNs += int64(w.now().Sub(w.since))
	}
	w.state, w.probes = netUp, 0
	w.notify()
	return true
}

// failed records a request to host that failed at the network level
// (retried or not).
func (w *netwatch) failed(host string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state != netUp {
		return
	}
	if len(w.failing) == 0 {
		w.k = w.run() // from the share before this run of failures
	}
	w.share += shareAlpha * (1 - w.share)
	w.failing[host] = w.now()
	if len(w.failing) >= w.k {
		w.state, w.suspectAt = netSuspect, w.now()
		w.notify()
	}
}

// hold takes a page whose fetch failed at the network level. It reports
// false when the page must go on at once: pardon true, uncharged (the
// crawl is paused: the failure is the outage's); pardon false, charged.
//
// A page held is news to the dispatcher: the worker told it the step was
// done before holding it, so the dispatcher may already have looked for
// held pages, found none, and be waiting with nothing else to come (the
// last page of a crawl, failed by a timeout: the crawl then hung).
func (w *netwatch) hold(t *task) (held, pardon bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state == netDown {
		w.pardoned++
		return false, true
	}
	w.held = append(w.held, t)
	w.notify()
	return true, false
}

// heldN is how many pages wait for a verdict.
func (w *netwatch) heldN() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.held)
}

// suspect stops the steps while pages are held and nothing else could
// bring an answer: a probe decides.
func (w *netwatch) suspect() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state == netUp && len(w.held) > 0 {
		w.state, w.suspectAt = netSuspect, w.now()
		w.notify()
	}
}

// current returns the state.
func (w *netwatch) current() netState {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state
}

// target returns the next URL to probe, or false when no host has
// answered: nothing tells an outage from failing hosts then.
func (w *netwatch) target() (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.good) == 0 {
		return "", false
	}
	u := w.good[w.probe%len(w.good)]
	w.probe++
	return u, true
}

// unprobed ends a suspicion that no probe can decide: the held pages are
// charged, as before this watch existed.
func (w *netwatch) unprobed() []*task {
	w.mu.Lock()
	defer w.mu.Unlock()
	charge := w.held
	w.held, w.failing = nil, map[string]time.Time{}
	w.upLocked()
	return charge
}

// probed takes a probe's outcome. An answer ends a suspicion (the held
// pages are charged) or a pause; a failure turns a suspicion into a pause
// (the held pages are pardoned: down reports it) or counts towards the
// backoff.
func (w *netwatch) probed(ok bool) (charge, pardon []*task, down bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ok {
		charge = w.held
		w.held, w.failing = nil, map[string]time.Time{}
		w.upLocked()
		return charge, nil, false
	}
	if w.state != netSuspect {
		if w.state == netDown {
			w.probes++
		}
		return nil, nil, false
	}
	w.state, w.since, w.probes = netDown, w.now(), 1
	w.pauses++
	pardon = w.held
	w.pardoned += int64(len(pardon))
	w.held, w.failing = nil, map[string]time.Time{}
	w.notify()
	return nil, pardon, true
}

// restore starts the crawl paused since at (a pause the last process did
// not see end), with probe targets from the store.
func (w *netwatch) restore(at time.Time, targets []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.known(targets)
	if len(w.good) == 0 {
		return
	}
	w.state, w.since, w.probes = netDown, at, 0
	w.pauses++
	w.notify()
}

// known adds probe targets from the store: hosts that answered in an
// earlier run, for a crawl whose network is away from its start.
func (w *netwatch) known(targets []string) {
	for _, u := range targets {
		if len(w.good) == goodRing {
			return
		}
		w.good = append(w.good, u)
	}
}

// wait is how long the next probe waits: none in a suspicion, nor for
// the first of a restored pause (a resumed crawl starts by probing); then
// 1 s after the first failed probe, doubling, at most 15 s.
func (w *netwatch) wait() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state != netDown || w.probes == 0 {
		return 0
	}
	return min(firstProbe<<min(w.probes-1, 8), maxProbeEvery)
}

// planProbe notes when the next probe goes (the dispatcher's timer), for
// Status.
func (w *netwatch) planProbe(at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.nextProbe = at
}

// probeFailed notes what a failed probe said, for Status.
func (w *netwatch) probeFailed(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lastProbe = err.Error()
}

// pauseInfo returns when the pause began (zero: not paused), when the
// next probe goes, and the pause in words.
func (w *netwatch) pauseInfo() (since, next time.Time, detail string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state != netDown {
		return time.Time{}, time.Time{}, ""
	}
	detail = "no answer from hosts that answered before"
	if w.lastProbe != "" {
		detail += "; the last probe: " + w.lastProbe
	}
	return w.since, w.nextProbe, detail
}

// pausedSince returns when the pause began, or the zero time when the
// crawl is not paused.
func (w *netwatch) pausedSince() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state != netDown {
		return time.Time{}
	}
	return w.since
}

// figures returns the run's pauses, the time spent paused (the current
// pause included) and the pages pardoned.
func (w *netwatch) figures() (pauses int64, paused time.Duration, pardoned int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	d := time.Duration(w.pausedNs)
	if w.state == netDown {
		d += w.now().Sub(w.since)
	}
	return w.pauses, d, w.pardoned
}

// drain takes every held page (the crawl stops): they are not judged.
func (w *netwatch) drain() []*task {
	w.mu.Lock()
	defer w.mu.Unlock()
	held := w.held
	w.held = nil
	w.pardoned += int64(len(held))
	return held
}

// netFault reports whether a failure of kind may be the crawler's own
// network rather than the host: connection refused, reset or unreachable,
// a timeout, or a resolver that did not answer. A name the resolver said
// does not exist (NXDOMAIN), a private address, TLS, redirects and HTTP
// answers are the host's.
func netFault(kind ErrorKind, err error) bool {
	switch kind {
	case KindConnect, KindReset, KindTimeout:
		return true
	case KindDNS, KindDNSTimeout, KindDNSServFail:
		var dnsErr *net.DNSError
		return errors.As(err, &dnsErr) && !dnsErr.IsNotFound
	}
	return false
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
