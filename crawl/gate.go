package crawl

import (
	"sync"
	"time"
)

// gate spaces requests to one host by its politeness delay (robots.txt's
// Crawl-delay raises it). Nothing ever waits on it: the scheduler asks
// nextAt when a host's next request may go, parks the host until then and
// gives its worker another host meanwhile; reserve marks the request as
// going now, and done starts the delay from the request's end.
type gate struct {
	base time.Duration
	now  func() time.Time

	mu     sync.Mutex               // guards next, busy, delays and floor
	floor  time.Time                // no request to any host before
	next   map[string]time.Time     // earliest time of the next request to a host
	busy   map[string]bool          // hosts with a request in flight
	delays map[string]time.Duration // per-host delays above base (Crawl-delay)
}

func newGate(base time.Duration, now func() time.Time) *gate {
	return &gate{base: base, now: now, next: map[string]time.Time{}, busy: map[string]bool{}, delays: map[string]time.Duration{}}
}

func (g *gate) delayOf(host string) time.Duration {
	if d, ok := g.delays[host]; ok && d > g.base {
		return d
	}
	return g.base
}

// nextAt returns the earliest time a request to host may go (the zero
// time when it may go at once). While a request to host is in flight, the
// end of which nobody knows, it is a moment ahead (busyRecheck, or the
// delay when longer): the caller parks the step and asks again then.
func (g *gate) nextAt(host string) time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	t := g.next[host]
	if g.busy[host] {
		t = g.now().Add(max(g.delayOf(host), busyRecheck))
	}
	if t.After(g.floor) {
		return t
	}
	return g.floor
}

// hold keeps every host waiting until t.
func (g *gate) hold(t time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.floor = t
}

// busyRecheck is how soon a step for a host with a request in flight asks
// again.
const busyRecheck = 20 * time.Millisecond

// setDelay raises host's delay to d (Crawl-delay), counting from the
// host's last request: the slot already reserved moves back.
func (g *gate) setDelay(host string, d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.delayOf(host)
	if d <= old {
		return
	}
	g.delays[host] = d
	if t, ok := g.next[host]; ok {
		g.next[host] = t.Add(d - old)
	}
}

// reserve records that a request to host goes now: no other request to it
// may start until this one is done and the delay has passed.
func (g *gate) reserve(host string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.busy[host] = true
	if len(g.next) > 4096 {
		g.prune(g.now())
	}
}

// release gives back a reservation no request used: the host is as it
// was before it.
func (g *gate) release(host string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.busy, host)
}

// done records that a request to host has finished: the next one waits
// the delay from now, so the gap the server sees is never shorter than the
// delay, however long connecting took.
func (g *gate) done(host string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.busy, host)
	g.next[host] = g.now().Add(g.delayOf(host))
}

// prune forgets hosts whose next slot has passed: they are ready anyway.
// It keeps the map's size proportional to hosts asked in the last delay.
func (g *gate) prune(now time.Time) {
	for h, t := range g.next {
		if !t.After(now) && !g.busy[h] {
			delete(g.next, h)
			delete(g.delays, h)
		}
	}
}
