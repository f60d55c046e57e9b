package crawl

import (
	"fmt"
	"hash/maphash"
	"slices"
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
// bounded. The page learns the ids of the hosts it looked up, not of those
// it knew.
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
	known := func(host string, id uint64) hostID { return hostID{maphash.String(hostSeed, host), id} }
	c.hostIDs.add([]hostID{known("a.example", a.ID), known("gone.example", 999), known("wrong.example", a.ID)})
	var p page
	var want []hostID
	err := s.Update(func(tx *kv.Tx) error {
		h, created, err := c.ensureHead(tx, &p, "a.example", "https", 1, now)
		if err != nil || created || h != a {
			return fmt.Errorf("known host: got %+v, created %v, %v; want %+v", h, created, err, a)
		}
		b, created, err := c.ensureHead(tx, &p, "b.example", "http", 3, now)
		if err != nil || !created || b.Depth != 3 {
			return fmt.Errorf("new host: got %+v, created %v, %v", b, created, err)
		}
		want = append(want, known("b.example", b.ID))
		for _, h := range []string{"gone.example", "wrong.example"} {
			n, created, err := c.ensureHead(tx, &p, h, "http", 1, now)
			if err != nil || !created || n.ID == a.ID || n.ID == 999 {
				return fmt.Errorf("%s, remembered wrong: got %+v, created %v, %v; want a new node", h, n, created, err)
			}
			want = append(want, known(h, n.ID))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.hostIDs, want) {
		t.Errorf("the page learned %v, want %v (the hosts looked up, not a.example)", p.hostIDs, want)
	}
	many := make([]hostID, maxHostIDs+10)
	for i := range many {
		many[i] = known(fmt.Sprintf("h%d.example", i), uint64(i+1))
	}
	c.hostIDs.add(many)
	if n := len(c.hostIDs.m); n != maxHostIDs {
		t.Errorf("kept %d ids, want at most %d", n, maxHostIDs)
	}
}
