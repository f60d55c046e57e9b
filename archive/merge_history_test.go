package archive_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// crawl records a crawl of host at minute m linking to links (host →
// weight), as the crawler does: the edges' weights, the history record
// (none of the links when they are the crawl before's), the node's counts.
func (b *builder) crawl(host string, m int, changed bool, links map[string]uint64) {
	b.tb.Helper()
	from := b.node(host, nil)
	var ls []graph.Link
	for to, w := range links {
		id := b.node(to, nil)
		b.must(graph.AddEdge(b.tx, from, id, w, at(m)))
		ls = append(ls, graph.Link{To: id, Weight: w})
	}
	graph.SortLinks(ls)
	prev, ok, err := graph.LatestCrawl(b.tx, from)
	b.must(err)
	var pp *graph.Crawl
	if ok {
		pp = &prev
	}
	b.must(graph.PutCrawl(b.tx, from, graph.Crawl{At: at(m), Changed: changed, Links: ls}, pp))
	b.node(host, func(n *graph.Node) {
		n.CrawlCount++
		if changed {
			n.Changes++
		}
		n.Status, n.LastCrawl, n.LastSeen = graph.StatusCrawled, at(m), at(m)
	})
}

// TestMerge_OverlappingHistories merges two stores that crawled one host
// at different times, one of them a copy of the other that crawled on
// (both hold the crawl at minute 1): the merged history is the union of
// the crawl records by time, each with its own links (a's record at 3
// stood for "the links of the crawl before", which in the merge is b's
// at 2), the crawl both held counted once in the node's counts and the
// edges' weights, and a record whose links are those of the merged crawl
// before it stored without them.
func TestMerge_OverlappingHistories(t *testing.T) {
	dir := t.TempDir()
	a := build(t, filepath.Join(dir, "a.bolt"), func(b *builder) {
		b.crawl("x.test", 1, false, map[string]uint64{"y.test": 1})
		b.crawl("x.test", 3, false, map[string]uint64{"y.test": 1}) // stored without links
		b.crawl("x.test", 5, true, map[string]uint64{"y.test": 1, "z.test": 1})
	})
	bpath := build(t, filepath.Join(dir, "b.bolt"), func(b *builder) {
		b.node("z.test", nil) // another id order than a's
		b.crawl("x.test", 1, false, map[string]uint64{"y.test": 1})
		b.crawl("x.test", 2, true, map[string]uint64{"z.test": 2})
		b.crawl("x.test", 4, false, map[string]uint64{"z.test": 2}) // stored without links
		b.crawl("x.test", 6, true, map[string]uint64{"y.test": 1, "z.test": 1})
	})
	out := filepath.Join(dir, "out.bolt")
	if _, err := archive.Merge(context.Background(), out, []string{a, bpath}, archive.MergeOptions{Verify: true}); err != nil {
		t.Fatal(err)
	}
	s := storetest.MustOpenPath(t, out, kv.Options{ReadOnly: true})
	err := s.View(func(tx *kv.Tx) error {
		id := func(h string) uint64 {
			n, ok, err := graph.GetByHost(tx, h)
			if err != nil || !ok {
				t.Fatalf("%s: %v %v", h, ok, err)
			}
			return n.ID
		}
		x, y, z := id("x.test"), id("y.test"), id("z.test")
		want := []struct {
			m       int
			changed bool
			links   []graph.Link
		}{
			{1, false, []graph.Link{{To: y, Weight: 1}}},
			{2, true, []graph.Link{{To: z, Weight: 2}}},
			{3, false, []graph.Link{{To: y, Weight: 1}}},
			{4, false, []graph.Link{{To: z, Weight: 2}}},
			{5, true, []graph.Link{{To: y, Weight: 1}, {To: z, Weight: 1}}},
			{6, true, []graph.Link{{To: y, Weight: 1}, {To: z, Weight: 1}}},
		}
		graph.SortLinks(want[4].links)
		graph.SortLinks(want[5].links)
		var got []graph.Crawl
		if err := graph.ForEachCrawl(tx, x, func(c *graph.Crawl) error { got = append(got, *c); return nil }); err != nil {
			return err
		}
		if len(got) != len(want) {
			t.Fatalf("%d crawls of x, want %d: %+v", len(got), len(want), got)
		}
		for i, w := range want {
			if !got[i].At.Equal(at(w.m)) || got[i].Changed != w.changed || !graph.SameLinks(got[i].Links, w.links) {
				t.Errorf("crawl %d: %+v, want at %d %+v", i, got[i], w.m, w)
			}
			// The graph at that minute is that crawl's.
			c, ok, err := graph.CrawlAt(tx, x, at(w.m))
			if err != nil || !ok || !graph.SameLinks(c.Links, w.links) {
				t.Errorf("graph at %d: %+v %v %v", w.m, c.Links, ok, err)
			}
		}
		// Compacted as the crawler writes: the crawl at 6 has the links
		// of the one at 5 and stores none, the one at 3 does not have
		// those of 2 and stores its own.
		if stored, err := graph.LinksStored(tx, x); err != nil || !slices.Equal(stored, []bool{true, true, true, true, true, false}) {
			t.Errorf("records holding their links: %v (%v), want all but the one at 6", stored, err)
		}
		// The crawl at 1, in both inputs, counts once.
		n, _, err := graph.Get(tx, x)
		if err != nil {
			return err
		}
		if n.CrawlCount != 6 || n.Changes != 3 {
			t.Errorf("x: %d crawls, %d changes; want 6, 3", n.CrawlCount, n.Changes)
		}
		wantW := map[uint64]uint64{y: 1 + 1 + 1 + 1, z: 2 + 2 + 1 + 1}
		var total uint64
		for to, w := range wantW {
			e, ok, err := graph.GetEdge(tx, x, to)
			if err != nil || !ok || e.Weight != w {
				t.Errorf("x→%d: weight %d (%v %v), want %d", to, e.Weight, ok, err, w)
			}
			total += w
		}
		if c := graph.GetCounts(tx); c.Weight != total {
			t.Errorf("weight counter %d, want %d", c.Weight, total)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
