package crawl_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func newWatch() (*crawl.Netwatch, *fakeClock) {
	clk := &fakeClock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	return crawl.NewNetwatch(clk.now), clk
}

// TestNetwatch_FailingHostsAreCharged: pages failed at the network level
// are held until an answer shows the web working; then they are charged
// (the hosts fail as before), and the watch stays up.
func TestNetwatch_FailingHostsAreCharged(t *testing.T) {
	w, _ := newWatch()
	w.Answered("a.test")
	for i := range 3 {
		w.Failed(fmt.Sprintf("dead%d.test", i))
		if held, pardon := w.Hold(i); !held || pardon {
			t.Fatalf("page %d: held %v pardon %v, want held", i, held, pardon)
		}
	}
	if got := w.Answered("b.test"); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("charged %v at the next answer, want [0 1 2]", got)
	}
	if w.State() != "up" {
		t.Errorf("state %s, want up", w.State())
	}
}

// TestNetwatch_HoldWakesTheDispatcher: a page held is news to the
// dispatcher. The worker reports the step done before holding the page, so
// the dispatcher may have looked for held pages already; when that page
// was the crawl's last, nothing else would wake it, and the crawl hung
// (a slow host timing out as the last page of a test crawl, under load).
func TestNetwatch_HoldWakesTheDispatcher(t *testing.T) {
	w, _ := newWatch()
	w.Answered("a.test")
	w.Failed("slow.test")
	w.Changed()
	if held, _ := w.Hold(0); !held {
		t.Fatal("the page was not held")
	}
	if !w.Changed() {
		t.Error("holding a page did not tell the dispatcher")
	}
}

// TestNetwatch_RunLength: k distinct hosts failing with no answer between
// them raise the suspicion; the same host failing again does not count
// twice; an answer starts the count again. k follows the failure share.
func TestNetwatch_RunLength(t *testing.T) {
	w, clk := newWatch()
	k := w.Run()
	if k != 7 {
		t.Errorf("run length at the initial share 0.25: %d, want 7", k)
	}
	for i := range k - 1 {
		w.Failed(fmt.Sprintf("h%d.test", i))
		w.Failed(fmt.Sprintf("h%d.test", i)) // a retry: the same host
	}
	if w.State() != "up" {
		t.Fatalf("state %s after %d hosts, want up", w.State(), k-1)
	}
	clk.t = clk.t.Add(time.Millisecond) // the answer came after the failures
	w.Answered("ok.test")
	w.Failed("other.test")
	if w.State() != "up" {
		t.Fatalf("state %s: an answer must restart the count", w.State())
	}
	for i := range k {
		w.Failed(fmt.Sprintf("x%d.test", i))
	}
	if w.State() != "suspect" {
		t.Fatalf("state %s after %d distinct hosts, want suspect", w.State(), k)
	}
	// A web where most requests answer needs fewer in a row; one where
	// many fail, more — never fewer than 4 nor more than 32.
	healthy, _ := newWatch()
	for range 2000 {
		healthy.Answered("ok.test")
	}
	if got := healthy.Run(); got != 4 {
		t.Errorf("run length on a healthy web: %d, want 4", got)
	}
	sick, _ := newWatch()
	for i := range 2000 {
		sick.Failed(fmt.Sprintf("s%d.test", i%3)) // never 4 distinct hosts
		if i%4 == 0 {
			sick.Answered("ok.test")
		}
	}
	if got := sick.Run(); got < 20 || got > 32 {
		t.Errorf("run length where 3 requests in 4 fail: %d, want 20..32", got)
	}
}

// TestNetwatch_OutagePausesAndPardons: a suspicion confirmed by a failed
// probe pauses the crawl, gives the held pages back uncharged, pardons
// the pages that fail during the pause, backs its probes off to 15 s, and
// ends at the first answer.
func TestNetwatch_OutagePausesAndPardons(t *testing.T) {
	w, clk := newWatch()
	w.Answered("a.test")
	for i := range 10 {
		w.Failed(fmt.Sprintf("h%d.test", i))
		w.Hold(i)
	}
	if w.State() != "suspect" {
		t.Fatalf("state %s, want suspect", w.State())
	}
	if d := w.Wait(); d != 0 {
		t.Errorf("a suspicion probes after %v, want at once", d)
	}
	if u, ok := w.Target(); !ok || u != "http://a.test/robots.txt" {
		t.Errorf("probe target %q %v, want http://a.test/robots.txt", u, ok)
	}
	charged, pardoned, down := w.Probed(false)
	if !down || len(charged) != 0 || len(pardoned) != 10 {
		t.Fatalf("failed probe: charged %v pardoned %v down %v, want 10 pardoned, down", charged, pardoned, down)
	}
	if got := w.PausedSince(); !got.Equal(clk.t) {
		t.Errorf("paused since %v, want %v", got, clk.t)
	}
	if held, pardon := w.Hold(42); held || !pardon {
		t.Errorf("a page failing in the pause: held %v pardon %v, want pardoned", held, pardon)
	}
	var waits []time.Duration
	for range 7 {
		waits = append(waits, w.Wait())
		w.Probed(false)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 15 * time.Second, 15 * time.Second, 15 * time.Second}
	if !slices.Equal(waits, want) {
		t.Errorf("probe waits %v, want %v", waits, want)
	}
	clk.t = clk.t.Add(time.Minute)
	if _, _, down := w.Probed(true); down || w.State() != "up" {
		t.Fatalf("state %s after an answered probe, want up", w.State())
	}
	pauses, paused, pardons := w.Figures()
	if pauses != 1 || paused != time.Minute || pardons != 11 {
		t.Errorf("figures %d pauses, %v, %d pardoned; want 1, 1m0s, 11", pauses, paused, pardons)
	}
	if w.Wait() != 0 || !w.PausedSince().IsZero() {
		t.Errorf("after the pause: wait %v, paused since %v", w.Wait(), w.PausedSince())
	}
}

// TestNetwatch_FalseAlarm: a suspicion whose probe is answered charges the
// held pages (the hosts failed while the web answered) and stays up.
func TestNetwatch_FalseAlarm(t *testing.T) {
	w, _ := newWatch()
	w.Answered("a.test")
	w.Hold(1)
	w.Suspect()
	if w.State() != "suspect" {
		t.Fatalf("state %s, want suspect", w.State())
	}
	charged, pardoned, down := w.Probed(true)
	if down || !slices.Equal(charged, []int{1}) || len(pardoned) != 0 || w.State() != "up" {
		t.Errorf("charged %v pardoned %v down %v state %s; want [1] charged, up", charged, pardoned, down, w.State())
	}
	if pauses, _, _ := w.Figures(); pauses != 0 {
		t.Errorf("%d pauses, want 0", pauses)
	}
}

// TestNetwatch_NoTarget: with no host ever answered, nothing tells an
// outage from failing hosts: the held pages are charged as before.
func TestNetwatch_NoTarget(t *testing.T) {
	w, _ := newWatch()
	w.Hold(3)
	w.Suspect()
	if _, ok := w.Target(); ok {
		t.Fatal("a probe target with no host answered")
	}
	if got := w.Unprobed(); !slices.Equal(got, []int{3}) || w.State() != "up" {
		t.Errorf("unprobed charged %v state %s, want [3] up", got, w.State())
	}
}

// TestNetwatch_Restore: a pause found in the store starts the crawl down,
// probing at once; without a host to probe it does not pause at all.
func TestNetwatch_Restore(t *testing.T) {
	w, clk := newWatch()
	at := clk.t.Add(-time.Hour)
	w.Restore(at, []string{"http://a.test/robots.txt"})
	if w.State() != "down" || !w.PausedSince().Equal(at) || w.Wait() != 0 {
		t.Errorf("restored: state %s since %v wait %v; want down since %v, probing at once", w.State(), w.PausedSince(), w.Wait(), at)
	}
	if _, _, down := w.Probed(false); down || w.Wait() != time.Second {
		t.Errorf("after a failed probe: wait %v, want 1s", w.Wait())
	}
	none, _ := newWatch()
	none.Restore(at, nil)
	if none.State() != "up" {
		t.Errorf("restored without targets: state %s, want up", none.State())
	}
}
