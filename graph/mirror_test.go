package graph_test

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// An edge without link facts is the same three-field record as before
// facts existed; one with facts reads back whole; a three-field record
// written by an older weaver reads with zero facts.
func TestEdgeCodec_Facts(t *testing.T) {
	plain := graph.Edge{Weight: 3, FirstSeen: t0, LastSeen: t0.Add(time.Hour)}
	b, err := kv.Encode(&plain)
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != 0x93 {
		t.Errorf("edge without facts: array header % x, want 93 (three fields)", b[0])
	}
	var back graph.Edge
	back.Nofollow = 9 // a reused value must not keep old facts
	if err := kv.Decode(b, &back); err != nil || back.Weight != 3 || back.Nofollow != 0 || !back.LastSeen.Equal(plain.LastSeen) {
		t.Errorf("decode plain: %+v, %v", back, err)
	}
	facts := graph.Edge{Weight: 5, FirstSeen: t0, LastSeen: t0, Nofollow: 2, Redirect: 1}
	b, err = kv.Encode(&facts)
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != 0x95 {
		t.Errorf("edge with facts: array header % x, want 95", b[0])
	}
	if err := kv.Decode(b, &back); err != nil || back.Weight != 5 || back.Nofollow != 2 || back.Redirect != 1 {
		t.Errorf("decode facts: %+v, %v", back, err)
	}
	// Frames (schema 4): a sixth field, which the other forms read as none.
	framed := graph.Edge{Weight: 5, FirstSeen: t0, LastSeen: t0, Frame: 3}
	if b, err = kv.Encode(&framed); err != nil || b[0] != 0x96 {
		t.Errorf("edge with frames: % x, %v, want the array header 96", b, err)
	}
	if err := kv.Decode(b, &back); err != nil || back.Weight != 5 || back.Frame != 3 || back.Nofollow != 0 {
		t.Errorf("decode frames: %+v, %v", back, err)
	}
	if err := kv.Decode([]byte{0x95, 5, 0, 0, 2, 1}, &back); err != nil || back.Frame != 0 || back.Nofollow != 2 {
		t.Errorf("a five-field edge after a framed one: %+v, %v", back, err)
	}
	if err := kv.Decode([]byte{0x94, 1, 0, 0, 0}, &back); err == nil {
		t.Error("a four-field edge record decoded without error")
	}
	// Seen in one commit only (schema 3): [weight, first seen], which reads
	// back with last seen = first seen; the three-field form of the same
	// edge, an older store's, reads the same.
	once := graph.Edge{Weight: 2, FirstSeen: t0, LastSeen: t0}
	b, err = kv.Encode(&once)
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != 0x92 || len(b) != 11 {
		t.Errorf("edge seen once: % x, want 92, the weight and one time", b)
	}
	old := append([]byte{0x93}, b[1:]...)
	old = append(old, b[2:]...)
	for _, v := range [][]byte{b, old} {
		back = graph.Edge{}
		if err := kv.Decode(v, &back); err != nil || back.Weight != 2 || !back.FirstSeen.Equal(t0) || !back.LastSeen.Equal(t0) {
			t.Errorf("decode % x: %+v, %v", v, back, err)
		}
	}
}

func TestStore_AddEdgeFacts(t *testing.T) {
	s := storetest.MustOpen(t)
	err := s.Update(func(tx *kv.Tx) error {
		a, _, _ := graph.Ensure(tx, "a.test", "http", t0)
		b, _, _ := graph.Ensure(tx, "b.test", "http", t0)
		steps := []struct{ w, nofollow, redirect uint64 }{{1, 0, 0}, {1, 1, 0}, {3, 2, 1}, {1, 0, 1}}
		for _, st := range steps {
			if err := graph.AddEdgeFacts(tx, a.ID, b.ID, st.w, st.nofollow, st.redirect, t0); err != nil {
				return err
			}
		}
		if err := graph.AddEdgeFacts(tx, a.ID, b.ID, 1, 2, 0, t0); !errors.Is(err, graph.ErrBadFacts) {
			t.Errorf("nofollow above weight: got %v, want ErrBadFacts", err)
		}
		e, _, err := graph.GetEdge(tx, a.ID, b.ID)
		if err != nil {
			return err
		}
		if e.Weight != 6 || e.Nofollow != 3 || e.Redirect != 2 {
			t.Errorf("edge %+v: want weight 6, nofollow 3, redirect 2", e)
		}
		if c := graph.GetCounts(tx); c.Weight != 6 || c.Edges != 1 {
			t.Errorf("counts %+v", c)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMirrors_AgainstOracle crawls nodes in random order with random
// content hashes (few distinct ones, some pages failing or empty), re-crawls
// some with changed content, and after every commit compares each node's
// MirrorOf, and MirrorGroups, with groups computed from scratch; the
// store's Check runs at the end (storetest).
func TestMirrors_AgainstOracle(t *testing.T) {
	s := storetest.MustOpen(t)
	rng := rand.New(rand.NewPCG(7, 20))
	hashes := []string{"", fmt.Sprintf("%064x", 1), fmt.Sprintf("%064x", 2), fmt.Sprintf("%064x", 3),
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "not-hex"}
	const hosts = 40
	var ids []uint64
	err := s.Update(func(tx *kv.Tx) error {
		for i := range hosts {
			// First-seen times out of id order, with ties, so that later
			// nodes often become their group's first.
			n, _, err := graph.Ensure(tx, fmt.Sprintf("h%02d.test", i), "http", t0.Add(time.Duration(rng.IntN(10))*time.Minute))
			if err != nil {
				return err
			}
			ids = append(ids, n.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for step := range 300 {
		id := ids[rng.IntN(len(ids))]
		err := s.Update(func(tx *kv.Tx) error {
			n, _, err := graph.Get(tx, id)
			if err != nil {
				return err
			}
			n.ContentHash = hashes[rng.IntN(len(hashes))]
			n.Status = graph.StatusCrawled
			if rng.IntN(5) == 0 {
				n.Status = graph.StatusHTTPError
			}
			got, err := graph.NoteContentHash(tx, &n)
			if err != nil {
				return err
			}
			if got != n.MirrorOf {
				t.Errorf("step %d: returned %d, set MirrorOf %d", step, got, n.MirrorOf)
			}
			return graph.Put(tx, &n)
		})
		if err != nil {
			t.Fatal(err)
		}
		s.View(func(tx *kv.Tx) error {
			checkMirrorOracle(t, tx, step)
			return nil
		})
		if t.Failed() {
			return
		}
	}
	// Rebuilding from the nodes gives the same index and the same MirrorOf.
	var before []byte
	s.View(func(tx *kv.Tx) error { before = dumpMirrors(tx); return nil })
	if err := s.Update(graph.RebuildMirrors); err != nil {
		t.Fatal(err)
	}
	s.View(func(tx *kv.Tx) error {
		checkMirrorOracle(t, tx, -1)
		if after := dumpMirrors(tx); !bytes.Equal(before, after) {
			t.Error("RebuildMirrors changed the index")
		}
		return nil
	})
}

func dumpMirrors(tx *kv.Tx) []byte {
	var b []byte
	c := tx.Cursor(kv.BucketMirrors)
	for k, v := c.First(); k != nil; k, v = c.Next() {
		b = append(append(append(b, k...), '='), v...)
	}
	return b
}

// checkMirrorOracle groups the crawled nodes with a real (non-empty-body)
// hash and compares with MirrorOf and MirrorGroups.
func checkMirrorOracle(t *testing.T, tx *kv.Tx, step int) {
	t.Helper()
	groups := map[string][]graph.Node{}
	var all []graph.Node
	graph.ForEachNode(tx, func(n *graph.Node) error {
		all = append(all, *n)
		if n.Status == graph.StatusCrawled && n.ContentHash != "" &&
			n.ContentHash != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
			groups[n.ContentHash] = append(groups[n.ContentHash], *n)
		}
		return nil
	})
	want := map[uint64]uint64{}
	var wantGroups [][]uint64
	for _, g := range groups {
		slices.SortFunc(g, func(a, b graph.Node) int {
			return cmp.Or(a.FirstSeen.Compare(b.FirstSeen), cmp.Compare(a.ID, b.ID))
		})
		var members []uint64
		for _, n := range g {
			members = append(members, n.ID)
			if n.ID != g[0].ID {
				want[n.ID] = g[0].ID
			}
		}
		if len(members) > 1 {
			wantGroups = append(wantGroups, members)
		}
	}
	for _, n := range all {
		if n.MirrorOf != want[n.ID] {
			t.Errorf("step %d: node %d MirrorOf %d, want %d", step, n.ID, n.MirrorOf, want[n.ID])
		}
	}
	slices.SortFunc(wantGroups, func(a, b []uint64) int { return cmp.Or(cmp.Compare(len(b), len(a)), cmp.Compare(a[0], b[0])) })
	got, err := graph.MirrorGroups(tx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(wantGroups) {
		t.Fatalf("step %d: %d groups, want %d", step, len(got), len(wantGroups))
	}
	for i, g := range got {
		if g.First != wantGroups[i][0] || g.Size != len(wantGroups[i]) || !slices.Equal(g.Members, wantGroups[i]) {
			t.Errorf("step %d: group %d is %+v, want members %v", step, i, g, wantGroups[i])
		}
	}
	if err := graph.Check(tx); err != nil {
		t.Errorf("step %d: %v", step, err)
	}
}

// Check notices a node whose content changed without NoteContentHash.
func TestCheck_MirrorIndexStale(t *testing.T) {
	path := t.TempDir() + "/w.bolt"
	s, err := kv.Open(path, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Update(func(tx *kv.Tx) error {
		for _, h := range []string{"a.test", "b.test"} {
			n, _, _ := graph.Ensure(tx, h, "http", t0)
			n.Status, n.ContentHash = graph.StatusCrawled, fmt.Sprintf("%064x", 5)
			if _, err := graph.NoteContentHash(tx, &n); err != nil {
				t.Fatal(err)
			}
			graph.Put(tx, &n)
		}
		n, _, _ := graph.GetByHost(tx, "b.test")
		if n.MirrorOf == 0 {
			t.Error("b.test, seen with a.test, is no mirror")
		}
		n.ContentHash = fmt.Sprintf("%064x", 6)
		return graph.Put(tx, &n)
	})
	if err := s.View(graph.Check); !errors.Is(err, graph.ErrInconsistent) {
		t.Fatalf("got %v, want ErrInconsistent", err)
	}
}

// EnsureMirrorIndex files the nodes of a store written before the index
// (crawled nodes with hashes, no index), once; from then on Check wants
// every crawled node filed.
func TestEnsureMirrorIndex(t *testing.T) {
	path := t.TempDir() + "/w.bolt"
	s, err := kv.Open(path, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	crawl := func(tx *kv.Tx, host string) graph.Node {
		n, _, _ := graph.Ensure(tx, host, "http", t0)
		n.Status, n.ContentHash = graph.StatusCrawled, fmt.Sprintf("%064x", 9)
		if err := graph.Put(tx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	s.Update(func(tx *kv.Tx) error {
		crawl(tx, "a.test") // as an older weaver wrote them: not noted
		crawl(tx, "b.test")
		return nil
	})
	if err := s.View(graph.Check); err != nil {
		t.Fatalf("an older store: %v", err)
	}
	for i, want := range []bool{true, false} {
		var rebuilt bool
		if err := s.Update(func(tx *kv.Tx) (err error) { rebuilt, err = graph.EnsureMirrorIndex(tx); return err }); err != nil {
			t.Fatal(err)
		}
		if rebuilt != want {
			t.Errorf("call %d: rebuilt %v, want %v", i, rebuilt, want)
		}
	}
	s.View(func(tx *kv.Tx) error {
		if b, _, _ := graph.GetByHost(tx, "b.test"); b.MirrorOf == 0 {
			t.Error("b.test is no mirror of a.test after EnsureMirrorIndex")
		}
		if gs, _ := graph.MirrorGroups(tx, 0); len(gs) != 1 || gs[0].Size != 2 {
			t.Errorf("groups %+v", gs)
		}
		return graph.Check(tx)
	})
	s.Update(func(tx *kv.Tx) error { crawl(tx, "c.test"); return nil }) // not noted
	if err := s.View(graph.Check); !errors.Is(err, graph.ErrInconsistent) || !strings.Contains(err.Error(), "not in the mirror index") {
		t.Errorf("a crawled node left out of a complete index: got %v", err)
	}
}
