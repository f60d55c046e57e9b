package ingest

import (
	"fmt"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// TestHostFilter: a host the filter was told of, or that the store held
// when it was made, is never said to be absent, through the filter's
// growth; and hosts it was not told of are mostly said to be absent (it
// is a filter, not a "maybe" to everything).
func TestHostFilter(t *testing.T) {
	s := storetest.MustOpen(t) // its cleanup checks the store
	now := time.Unix(1e9, 0)
	if err := s.Update(func(tx *kv.Tx) error {
		for i := range 5000 {
			if _, _, err := graph.EnsureID(tx, fmt.Sprintf("stored-%d.example", i), "https", 1, now); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var f *hostFilter
	if err := s.View(func(tx *kv.Tx) error { f = newHostFilter(tx); return nil }); err != nil {
		t.Fatal(err)
	}
	const added = 400000 // several parts: the first holds 65,536
	for i := range added {
		f.add(fmt.Sprintf("added-%d.example", i))
	}
	if len(f.parts) < 3 || f.off {
		t.Fatalf("%d parts, off %v: the test does not reach the filter's growth", len(f.parts), f.off)
	}
	for i := range 5000 {
		if h := fmt.Sprintf("stored-%d.example", i); f.absent(h) {
			t.Fatalf("%s, in the store, said absent", h)
		}
	}
	for i := range added {
		if h := fmt.Sprintf("added-%d.example", i); f.absent(h) {
			t.Fatalf("%s, added, said absent", h)
		}
	}
	maybe := 0
	for i := range 100000 {
		if !f.absent(fmt.Sprintf("new-%d.example", i)) {
			maybe++
		}
	}
	if maybe > 5000 {
		t.Fatalf("%d of 100,000 hosts never added said maybe present", maybe)
	}
	var none *hostFilter // a store too large to read: no answers
	none.add("a.example")
	if none.absent("a.example") || none.absent("b.example") {
		t.Fatal("a nil filter said a host is absent")
	}
}
