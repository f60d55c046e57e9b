package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

// TestRobots_RefetchedAfterTTL: a crawl that revisits hosts trusts a
// host's robots.txt for robots_cache_ttl_ms and no longer: each host's
// robots.txt is fetched again once that long has passed since the last
// fetch, never sooner; a host whose robots.txt comes to disallow its home
// page is not fetched again after the next robots.txt fetch, and ends
// robots_disallowed. With the default TTL (24 h) a crawl revisiting for
// seconds fetches each robots.txt once.
func TestRobots_RefetchedAfterTTL(t *testing.T) {
	t.Parallel()
	const ttl = time.Second
	began := time.Now()
	switchAt := began.Add(2 * time.Second)
	const allow, disallow = "User-agent: *\nAllow: /\n", "User-agent: *\nDisallow: /\n"
	l, srv := startLiving(t, fakeweb.LivingConfig{Hosts: 4, Volatile: 3, Period: 300 * time.Millisecond,
		Robots: func(i int, now time.Time) string {
			if i == 2 && now.After(switchAt) {
				return disallow
			}
			return allow
		}})
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	config := filepath.Join(dir, "crawl.json")
	if err := os.WriteFile(config, []byte(`{"robots_cache_ttl_ms": 1000}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := weaver(t, dir, livingArgs(srv, db, "--config", config, "--delay", "0", "--revisit", "200ms",
		"--revisit-max", "800ms", "--max-duration", "6s", l.Seed())...)
	if r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	robots := map[string][]time.Time{}
	for _, s := range l.RobotsServed() {
		robots[s.Host] = append(robots[s.Host], s.At)
	}
	for i := range 4 {
		h := l.Host(i)
		at := robots[h]
		if len(at) < 2 {
			t.Errorf("%s: robots.txt fetched %d times in a 6 s crawl with a 1 s TTL, want it fetched again", h, len(at))
		}
		for k := 1; k < len(at); k++ {
			// The crawl stamps a robots.txt when its answer arrives, a
			// moment after the server answered.
			if gap := at[k].Sub(at[k-1]); gap < ttl-100*time.Millisecond {
				t.Errorf("%s: robots.txt fetched again %v after the last fetch, within the TTL (%v)", h, gap, ttl)
			}
		}
	}
	// h2 disallowed from switchAt: at most one more home page, before its
	// next robots.txt fetch.
	h2 := l.Host(2)
	var firstDisallow time.Time
	for _, at := range robots[h2] {
		if at.After(switchAt) {
			firstDisallow = at
			break
		}
	}
	if firstDisallow.IsZero() {
		t.Fatalf("%s: robots.txt not fetched after it changed at %v (fetches %v)", h2, switchAt.Sub(began), robots[h2])
	}
	// At the latest: the TTL after a fetch just before the change, then
	// the next revisit (at most --revisit-max), and a second of slack.
	if late := firstDisallow.Sub(switchAt); late > ttl+800*time.Millisecond+time.Second {
		t.Errorf("%s: robots.txt fetched %v after it changed, want within the TTL and a revisit", h2, late)
	}
	var before, after int
	for _, s := range l.Served() {
		if s.Host != h2 {
			continue
		}
		if s.At.Before(switchAt) {
			before++
		} else if s.At.After(firstDisallow) {
			after++
			t.Errorf("%s: home page fetched %v after robots.txt disallowed it", h2, s.At.Sub(firstDisallow))
		}
	}
	if before == 0 {
		t.Errorf("%s: home page never fetched while robots.txt allowed it", h2)
	}
	var g struct {
		Nodes []struct {
			Host   string `json:"host"`
			Status string `json:"status"`
		} `json:"nodes"`
	}
	out := weaver(t, dir, "export", "--db", db, "--no-ranks", "--no-layout", "--json", "-")
	if err := json.Unmarshal([]byte(out.stdout), &g); err != nil {
		t.Fatalf("export: %v\n%s", err, out.stderr)
	}
	for _, n := range g.Nodes {
		if n.Host == h2 && n.Status != "robots_disallowed" {
			t.Errorf("%s ends %q, want robots_disallowed", h2, n.Status)
		}
	}

	// The default TTL: one robots.txt fetch per host however often the
	// hosts are revisited.
	l2, srv2 := startLiving(t, fakeweb.LivingConfig{Hosts: 4, Volatile: 3, Period: 300 * time.Millisecond,
		Robots: func(int, time.Time) string { return allow }})
	db2 := filepath.Join(dir, "w2.bolt")
	r = weaver(t, dir, livingArgs(srv2, db2, "--delay", "0", "--revisit", "200ms", "--revisit-max", "800ms",
		"--max-duration", "3s", l2.Seed())...)
	if r.code != 0 {
		t.Fatalf("crawl with the default TTL: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	count := map[string]int{}
	for _, s := range l2.RobotsServed() {
		count[s.Host]++
	}
	pages := map[string]int{}
	for _, s := range l2.Served() {
		pages[s.Host]++
	}
	for i := range 4 {
		h := l2.Host(i)
		if count[h] != 1 || pages[h] < 2 {
			t.Errorf("default TTL: %s's robots.txt fetched %d times over %d home-page fetches, want once over several", h, count[h], pages[h])
		}
	}
}
