package graph_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// TestAnchors_Add: a crawl's anchors come first, then the ones kept
// before that it did not find again, up to n; a revisit that finds the
// same anchors keeps them; n 0 keeps nothing; Check
// refuses anchors of an edge that does not exist.
func TestAnchors_Add(t *testing.T) {
	s := storetest.MustOpen(t)
	a := graph.Anchor{Page: "http://a.test/", URL: "http://b.test/", Text: "B", Rel: "nofollow"}
	b := graph.Anchor{Page: "http://a.test/x", URL: "http://b.test/y", Text: "Y"}
	c := graph.Anchor{Page: "http://a.test/z", URL: "http://b.test/", Redirect: true}
	a2 := a
	a2.Text = "B again" // the same link of the same page, with new text
	var from, to uint64
	step := func(fresh []graph.Anchor, n int, want []graph.Anchor) {
		t.Helper()
		if err := s.Update(func(tx *kv.Tx) error {
			if err := graph.AddEdge(tx, from, to, 1, t0); err != nil {
				return err
			}
			return graph.AddAnchors(tx, from, to, fresh, n)
		}); err != nil {
			t.Fatal(err)
		}
		s.View(func(tx *kv.Tx) error {
			got, err := graph.GetAnchors(tx, from, to)
			if err != nil || !slices.Equal(got, want) {
				t.Errorf("after %v (n %d): got %v, %v; want %v", fresh, n, got, err, want)
			}
			return nil
		})
	}
	s.Update(func(tx *kv.Tx) error {
		na, _, _ := graph.Ensure(tx, "a.test", "http", t0)
		nb, _, _ := graph.Ensure(tx, "b.test", "http", t0)
		from, to = na.ID, nb.ID
		if graph.HasAnchors(tx) {
			t.Error("a new store has anchors")
		}
		return nil
	})
	step([]graph.Anchor{a}, 0, nil)
	step([]graph.Anchor{a, a, b}, 2, []graph.Anchor{a, b})
	step([]graph.Anchor{c}, 2, []graph.Anchor{c, a})
	step([]graph.Anchor{a2}, 3, []graph.Anchor{a2, c}) // b went when n was 2
	step([]graph.Anchor{b}, 3, []graph.Anchor{b, a2, c})
	step(nil, 3, []graph.Anchor{b, a2, c})
	s.View(func(tx *kv.Tx) error {
		out, err := graph.OutAnchors(tx, from)
		if err != nil || len(out) != 1 || len(out[to]) != 3 || !graph.HasAnchors(tx) {
			t.Errorf("OutAnchors: %v, %v", out, err)
		}
		if err := graph.Check(tx); err != nil {
			t.Error(err)
		}
		return nil
	})
	err := s.Update(func(tx *kv.Tx) error {
		if err := graph.PutAnchors(tx, to, from, []graph.Anchor{a}); err != nil {
			return err
		}
		err := graph.Check(tx)
		if !errors.Is(err, graph.ErrInconsistent) {
			t.Errorf("Check with anchors of no edge: %v", err)
		}
		return graph.PutAnchors(tx, to, from, nil) // deletes them
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := graph.MergeAnchors([]graph.Anchor{a, b}, []graph.Anchor{a2, c}, 3); !slices.Equal(got, []graph.Anchor{a, b, c}) {
		t.Errorf("MergeAnchors: %v", got)
	}
}
