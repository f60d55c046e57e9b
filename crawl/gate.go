package crawl

import (
	"context"
	"sync"
	"time"
)

// gate spaces requests to one host by its politeness delay (robots.txt's
// Crawl-delay raises it). Workers ask ready before claiming a host, so a
// host inside its delay is skipped rather than waited on; wait reserves
// the host's next slot for a request that must go to it now.
type gate struct {
	base time.Duration
	now  func() time.Time

	mu     sync.Mutex               // guards next and delays
	next   map[string]time.Time     // earliest time of the next request to a host
	delays map[string]time.Duration // per-host delays above base (Crawl-delay)
}

func newGate(base time.Duration, now func() time.Time) *gate {
	return &gate{base: base, now: now, next: map[string]time.Time{}, delays: map[string]time.Duration{}}
}

func (g *gate) delayOf(host string) time.Duration {
	if d, ok := g.delays[host]; ok && d > g.base {
		return d
	}
	return g.base
}

// ready reports whether a request to host may go now.
func (g *gate) ready(host string, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	t, ok := g.next[host]
	return !ok || !t.After(now)
}

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

// wait reserves host's next slot and waits for it (or for ctx).
func (g *gate) wait(ctx context.Context, host string) error {
	g.mu.Lock()
	d := g.delayOf(host)
	now := g.now()
	slot := now
	if t, ok := g.next[host]; ok && t.After(now) {
		slot = t
	}
	g.next[host] = slot.Add(d) // with d = 0 too: a Crawl-delay learnt next counts from this request
	if len(g.next) > 4096 {
		g.prune(now)
	}
	g.mu.Unlock()
	return sleep(ctx, slot.Sub(now))
}

// done records that a request to host has finished: the next one waits
// the delay from now, so the gap the server sees is never shorter than the
// delay, however long connecting took.
func (g *gate) done(host string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	d := g.delayOf(host)
	if d == 0 {
		return
	}
	if t := g.now().Add(d); t.After(g.next[host]) {
		g.next[host] = t
	}
}

// prune forgets hosts whose next slot has passed: they are ready anyway.
// It keeps the map's size proportional to hosts fetched in the last delay.
func (g *gate) prune(now time.Time) {
	for h, t := range g.next {
		if !t.After(now) {
			delete(g.next, h)
			delete(g.delays, h)
		}
	}
}
