package crawl

import (
	"testing"
	"time"
)

// robots.txt is asked again when older than the TTL or its Cache-Control
// max-age, whichever is shorter (RFC 9309 §2.4).
func TestRobotsRecord_Fresh(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		cc    string
		age   time.Duration
		fresh bool
	}{
		{"", 23 * time.Hour, true},
		{"", 25 * time.Hour, false},
		{"public, max-age=3600", 59 * time.Minute, true},
		{"public, max-age=3600", 61 * time.Minute, false},
		{"max-age=999999", 25 * time.Hour, false}, // never longer than the TTL
		{"no-cache", 2 * time.Second, false},
		{"max-age=x", 23 * time.Hour, true}, // a bad value is ignored
	} {
		rec := robotsRecord{Fetched: t0, MaxAge: maxAge(tc.cc)}
		if got := rec.fresh(t0.Add(tc.age), 24*time.Hour); got != tc.fresh {
			t.Errorf("Cache-Control %q, age %v: fresh %t, want %t", tc.cc, tc.age, got, tc.fresh)
		}
	}
}
