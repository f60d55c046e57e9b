package export_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/layout"
)

// TestHost_Small: the report on a host of the golden graph has its
// record, its ranks, its links in and out heaviest first with the ones
// past the limit counted, and the host is found however it is written.
func TestHost_Small(t *testing.T) {
	s := smallStore(t)
	ctx := context.Background()
	rep, err := export.Host(ctx, s, "HTTPS://IANA.org./about", export.HostOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	// iana.org: out to www.iana.org (5), example.com (1); in from
	// example.com (3), www.iana.org (4), www.example.com (1).
	if rep.Host != "iana.org" || rep.Status != "crawled" || rep.HTTPStatus != 200 || rep.Title != "Internet Assigned Numbers Authority" {
		t.Errorf("record: %+v", rep)
	}
	if rep.Out.Total != 2 || rep.Out.Weight != 6 || rep.Out.Left != 1 || len(rep.Out.Links) != 1 || rep.Out.Links[0].Host != "www.iana.org" || rep.Out.Links[0].Weight != 5 {
		t.Errorf("out: %+v", rep.Out)
	}
	if rep.In.Total != 3 || rep.In.Weight != 8 || rep.In.Left != 2 || rep.In.Links[0].Host != "www.iana.org" || rep.In.Links[0].Weight != 4 {
		t.Errorf("in: %+v", rep.In)
	}
	if rep.Ranks == nil || rep.Ranks.Of != len(smallNodes) || rep.Ranks.Position < 1 || rep.Ranks.PageRank <= 0 || rep.Anchors {
		t.Errorf("ranks %+v, anchors %v", rep.Ranks, rep.Anchors)
	}
	rep, err = export.Host(ctx, s, "iana.org", export.HostOptions{NoRanks: true})
	if err != nil || rep.Ranks != nil || rep.Out.Left != 0 || len(rep.In.Links) != 3 {
		t.Errorf("no ranks, no limit: %v %+v", err, rep)
	}
	for _, tc := range []struct{ host, near string }{
		{"ianna.org", "iana.org"},            // one edit
		{"www.github.com", "github.com"},     // without www.
		{"iana.example", ""},                 // nothing close
		{"localhost:8081", "localhost:8080"}, // the port counts
	} {
		_, err := export.Host(ctx, s, tc.host, export.HostOptions{})
		if !errors.Is(err, export.ErrUnknownHost) || !strings.Contains(err.Error(), "host "+tc.host+": ") ||
			strings.Contains(err.Error(), "did you mean") != (tc.near != "") || !strings.Contains(err.Error(), tc.near) {
			t.Errorf("%s: %v, want a suggestion of %q", tc.host, err, tc.near)
		}
	}
	if _, err := export.Host(ctx, s, "bad host", export.HostOptions{}); !errors.Is(err, graph.ErrInvalidHost) {
		t.Errorf("bad host: %v", err)
	}

	// No stored layout: none shown (show never computes one); once weaver
	// layout has stored one, the host's community and position.
	if rep.Layout != nil {
		t.Errorf("a layout without weaver layout: %+v", rep.Layout)
	}
	var want layout.Stored
	if err := s.Update(func(tx *kv.Tx) error {
		st, err := layout.ComputeStored(ctx, tx, layout.Options{})
		if err != nil {
			return err
		}
		want = *st
		return layout.Save(tx, st)
	}); err != nil {
		t.Fatal(err)
	}
	rep, err = export.Host(ctx, s, "iana.org", export.HostOptions{NoRanks: true})
	c, x, y, ok := want.Lookup(rep.ID)
	if err != nil || !ok || rep.Layout == nil || *rep.Layout != (export.HostLayout{Community: c, X: x, Y: y}) {
		t.Errorf("stored layout: %v %+v, want community %d at (%v, %v)", err, rep.Layout, c, x, y)
	}
}

// TestHost_AnchorsAndMirrors: a link lists its anchors, in the store's
// order; a mirror copy names its group's first host and the others.
func TestHost_AnchorsAndMirrors(t *testing.T) {
	s := smallStore(t)
	a := graph.Anchor{Page: "https://example.com/", URL: "https://iana.org/x", Text: "IANA"}
	err := s.Update(func(tx *kv.Tx) error {
		from, _ := graph.Lookup(tx, "example.com")
		to, _ := graph.Lookup(tx, "iana.org")
		if err := graph.AddAnchors(tx, from, to, []graph.Anchor{a}, 2); err != nil {
			return err
		}
		// www.example.com serves example.com's home page.
		for _, h := range []string{"example.com", "www.example.com"} {
			n, _, err := graph.GetByHost(tx, h)
			if err != nil {
				return err
			}
			n.ContentHash = strings.Repeat("ab", 32)
			if _, err := graph.NoteContentHash(tx, &n); err != nil {
				return err
			}
			if err := graph.Put(tx, &n); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := export.Host(context.Background(), s, "iana.org", export.HostOptions{NoRanks: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []graph.Anchor
	for _, l := range rep.In.Links {
		if l.Host == "example.com" {
			got = l.Anchors
		} else if len(l.Anchors) > 0 {
			t.Errorf("%s lists anchors %v", l.Host, l.Anchors)
		}
	}
	if len(got) != 1 || got[0] != a || !rep.Anchors {
		t.Errorf("anchors %v (kept: %v)", got, rep.Anchors)
	}
	rep, err = export.Host(context.Background(), s, "www.example.com", export.HostOptions{NoRanks: true})
	if err != nil || rep.MirrorOf != "example.com" || len(rep.Mirrors) != 1 || rep.Mirrors[0] != "example.com" {
		t.Errorf("mirror: %v %q %v", err, rep.MirrorOf, rep.Mirrors)
	}
}
