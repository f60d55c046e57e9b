package archive_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

func diff(t *testing.T, before, after string, opt archive.DiffOptions) *archive.Report {
	t.Helper()
	a, err := kv.Open(before, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := kv.Open(after, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	r, err := archive.Diff(context.Background(), a, b, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestDiff_Self(t *testing.T) {
	p := build(t, filepath.Join(t.TempDir(), "a.bolt"), func(b *builder) { randomStore(b, 3, 300) })
	for _, domains := range []bool{false, true} {
		if r := diff(t, p, p, archive.DiffOptions{Domains: domains}); !r.Empty() {
			t.Errorf("domains=%v: a store differs from itself: %+v", domains, r)
		}
	}
}

func TestDiff_Changes(t *testing.T) {
	dir := t.TempDir()
	before := build(t, filepath.Join(dir, "old.bolt"), func(b *builder) {
		b.crawled("www.a.com", 1, 1, "A")
		b.node("blog.a.com", nil)
		b.node("gone.org", nil)
		b.crawled("c.net", 1, 1, "C")
		b.edge("www.a.com", "blog.a.com", 1, 1)
		b.edge("www.a.com", "gone.org", 2, 1)
		b.edge("www.a.com", "c.net", 3, 1)
		b.edge("c.net", "www.a.com", 1, 1)
	})
	// The new store numbers hosts differently: a diff goes by host.
	after := build(t, filepath.Join(dir, "new.bolt"), func(b *builder) {
		b.node("new.io", nil)
		b.crawled("c.net", 1, 2, "C, renamed")
		b.crawled("www.a.com", 2, 2, "A")
		b.crawled("blog.a.com", 1, 2, "Blog")
		b.edge("www.a.com", "blog.a.com", 1, 2)
		b.edge("www.a.com", "c.net", 5, 2)
		b.edge("c.net", "www.a.com", 1, 2)
		b.edge("c.net", "new.io", 1, 2)
		b.edge("blog.a.com", "c.net", 2, 2)
	})
	r := diff(t, before, after, archive.DiffOptions{})
	want := &archive.Report{
		Level:   "host",
		Added:   []string{"new.io"},
		Removed: []string{"gone.org"},
		EdgesAdded: []archive.EdgeChange{
			{From: "blog.a.com", To: "c.net", NewWeight: 2, Delta: 2},
			{From: "c.net", To: "new.io", NewWeight: 1, Delta: 1},
		},
		EdgesRemoved: []archive.EdgeChange{{From: "www.a.com", To: "gone.org", OldWeight: 2, Delta: -2}},
		EdgesChanged: []archive.EdgeChange{{From: "www.a.com", To: "c.net", OldWeight: 3, NewWeight: 5, Delta: 2}},
		NodesChanged: []archive.NodeChange{
			{Host: "blog.a.com", OldStatus: graph.StatusDiscovered, NewStatus: graph.StatusCrawled, NewTitle: "Blog"},
			{Host: "c.net", OldStatus: graph.StatusCrawled, NewStatus: graph.StatusCrawled, OldTitle: "C", NewTitle: "C, renamed"},
		},
	}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("got  %+v\nwant %+v", r, want)
	}

	// By domain: a.com's inner edge is left out, a.com→c.net sums its hosts'.
	r = diff(t, before, after, archive.DiffOptions{Domains: true})
	want = &archive.Report{
		Level:   "domain",
		Added:   []string{"new.io"},
		Removed: []string{"gone.org"},
		EdgesAdded: []archive.EdgeChange{
			{From: "c.net", To: "new.io", NewWeight: 1, Delta: 1},
		},
		EdgesRemoved: []archive.EdgeChange{{From: "a.com", To: "gone.org", OldWeight: 2, Delta: -2}},
		EdgesChanged: []archive.EdgeChange{{From: "a.com", To: "c.net", OldWeight: 3, NewWeight: 7, Delta: 4}},
		NodesChanged: []archive.NodeChange{},
	}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("domains: got  %+v\nwant %+v", r, want)
	}
}

func TestDiff_Cancelled(t *testing.T) {
	p := build(t, filepath.Join(t.TempDir(), "a.bolt"), func(b *builder) { randomStore(b, 3, 5000) })
	s, err := kv.Open(p, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := archive.Diff(ctx, s, s, archive.DiffOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}
