package archive_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// home marks host crawled at minute m with a home page of content hash
// number h, filed in the mirror index, and the page-level facts.
func (b *builder) home(host string, m, h int, canonical, robots string, pages int) {
	b.tb.Helper()
	b.node(host, func(n *graph.Node) {
		n.CrawlCount++
		n.Status, n.HTTPStatus, n.LastCrawl, n.LastSeen = graph.StatusCrawled, 200, at(m), at(m)
		n.ContentHash = fmt.Sprintf("%064x", h)
		n.Canonical, n.RobotsDirectives, n.PagesFetched = canonical, robots, pages
		_, err := graph.NoteContentHash(b.tx, n)
		b.must(err)
	})
}

func (b *builder) edgeFacts(from, to string, w, nofollow, redirect uint64, m int) {
	b.tb.Helper()
	f, t := b.node(from, nil), b.node(to, nil)
	b.must(graph.AddEdgeFacts(b.tx, f, t, w, nofollow, redirect, at(m)))
}

// TestMerge_Facts: link facts are summed like weights, the page-level
// facts come with the freshest fetch, and mirror groups are recomputed in
// the output's ids (the output's invariants, mirror index included, are
// checked by storetest).
func TestMerge_Facts(t *testing.T) {
	dir := t.TempDir()
	a := build(t, filepath.Join(dir, "a.bolt"), func(b *builder) {
		b.node("late.test", nil) // first seen in a, crawled in b
		b.home("orig.test", 1, 7, "http://orig.test/", "noindex", 3)
		b.home("copy.test", 2, 7, "", "", 1)
		b.edgeFacts("orig.test", "copy.test", 3, 1, 0, 1)
		b.edgeFacts("copy.test", "other.test", 2, 0, 1, 2)
	})
	bpath := build(t, filepath.Join(dir, "b.bolt"), func(b *builder) {
		b.home("late.test", 30, 7, "", "", 2)
		b.home("orig.test", 30, 8, "http://orig.test/new", "", 5) // fresher, other content
		b.edgeFacts("orig.test", "copy.test", 2, 2, 1, 30)
	})
	out := filepath.Join(dir, "out.bolt")
	if _, err := archive.Merge(context.Background(), out, []string{a, bpath}, archive.MergeOptions{Verify: true}); err != nil {
		t.Fatal(err)
	}
	s := storetest.MustOpenPath(t, out, kv.Options{ReadOnly: true})
	s.View(func(tx *kv.Tx) error {
		get := func(h string) graph.Node {
			n, ok, err := graph.GetByHost(tx, h)
			if err != nil || !ok {
				t.Fatalf("%s: %v %v", h, ok, err)
			}
			return n
		}
		orig, cp, late := get("orig.test"), get("copy.test"), get("late.test")
		if orig.Canonical != "http://orig.test/new" || orig.RobotsDirectives != "" || orig.PagesFetched != 5 {
			t.Errorf("orig.test: %+v", orig)
		}
		// late.test (first seen with copy.test, a smaller id) and copy.test share hash 7 now;
		// orig.test moved to hash 8 and is alone.
		if orig.MirrorOf != 0 || late.MirrorOf != 0 || cp.MirrorOf != late.ID {
			t.Errorf("mirrors: orig %d, late %d, copy %d (late is %d)", orig.MirrorOf, late.MirrorOf, cp.MirrorOf, late.ID)
		}
		e, _, _ := graph.GetEdge(tx, orig.ID, cp.ID)
		if e.Weight != 5 || e.Nofollow != 3 || e.Redirect != 1 {
			t.Errorf("orig→copy: %+v", e)
		}
		return nil
	})
}

func TestDiff_Facts(t *testing.T) {
	dir := t.TempDir()
	before := build(t, filepath.Join(dir, "old.bolt"), func(b *builder) {
		b.home("a.test", 1, 1, "", "", 1)
		b.home("b.test", 1, 2, "", "", 1)
		b.edgeFacts("a.test", "b.test", 2, 0, 0, 1)
	})
	after := build(t, filepath.Join(dir, "new.bolt"), func(b *builder) {
		b.home("a.test", 2, 1, "http://a.test/", "nofollow", 1)
		b.home("b.test", 2, 1, "", "", 1) // now a copy of a.test
		b.edgeFacts("a.test", "b.test", 2, 1, 1, 2)
	})
	r := diff(t, before, after, archive.DiffOptions{})
	want := &archive.Report{Level: "host", Added: []string{}, Removed: []string{}, EdgesAdded: []archive.EdgeChange{}, EdgesRemoved: []archive.EdgeChange{},
		EdgesChanged: []archive.EdgeChange{{From: "a.test", To: "b.test", OldWeight: 2, NewWeight: 2, NewNofollow: 1, NewRedirect: 1}},
		NodesChanged: []archive.NodeChange{
			{Host: "a.test", OldStatus: graph.StatusCrawled, NewStatus: graph.StatusCrawled, NewCanonical: "http://a.test/", NewRobots: "nofollow"},
			{Host: "b.test", OldStatus: graph.StatusCrawled, NewStatus: graph.StatusCrawled, NewMirrorOf: "a.test"},
		}}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("got  %+v\nwant %+v", r, want)
	}
}
