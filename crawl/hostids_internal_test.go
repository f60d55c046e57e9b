package crawl

import (
	"fmt"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// TestCrawler_EnsureHead_KnownIDs: a host whose id a durable commit
// learned is read by id, as the hosts bucket would give it; one not known
// goes through the hosts bucket (and is created); an id remembered wrong
// (its node gone, or another host's) is not trusted; the memory is
// bounded.
func TestCrawler_EnsureHead_KnownIDs(t *testing.T) {
	s := storetest.MustOpen(t)
	now := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	var c Crawler
	var a graph.Head
	if err := s.Update(func(tx *kv.Tx) error {
		var err error
		a, _, err = graph.EnsureHeadAt(tx, "a.example", "http", 2, now)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	c.hostIDs.add([]hostID{{"a.example", a.ID}, {"gone.example", 999}, {"wrong.example", a.ID}})
	err := s.Update(func(tx *kv.Tx) error {
		h, created, err := c.ensureHead(tx, "a.example", "https", 1, now)
		if err != nil || created || h != a {
			return fmt.Errorf("known host: got %+v, created %v, %v; want %+v", h, created, err, a)
		}
		b, created, err := c.ensureHead(tx, "b.example", "http", 3, now)
		if err != nil || !created || b.Depth != 3 {
			return fmt.Errorf("new host: got %+v, created %v, %v", b, created, err)
		}
		for _, h := range []string{"gone.example", "wrong.example"} {
			n, created, err := c.ensureHead(tx, h, "http", 1, now)
			if err != nil || !created || n.ID == a.ID || n.ID == 999 {
				return fmt.Errorf("%s, remembered wrong: got %+v, created %v, %v; want a new node", h, n, created, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	many := make([]hostID, maxHostIDs+10)
	for i := range many {
		many[i] = hostID{fmt.Sprintf("h%d.example", i), uint64(i + 1)}
	}
	c.hostIDs.add(many)
	if n := len(c.hostIDs.m); n != maxHostIDs {
		t.Errorf("kept %d ids, want at most %d", n, maxHostIDs)
	}
}
