package graph_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func TestStore_NodeRoundTrip(t *testing.T) {
	s := storetest.MustOpen(t)
	want := graph.Node{
		Host: "blog.example.co.uk", Domain: "example.co.uk", Scheme: "https", Title: "A & B <c>",
		Description: "Zürich — café", CrawlCount: 2, FailCount: 1, Status: graph.StatusCrawled,
		HTTPStatus: 200, ContentType: "text/html", Server: "nginx", Bytes: 31000, FetchMS: 20,
		ContentHash: "ab12", Error: "", Depth: 3, FirstSeen: t0, LastSeen: t0.Add(time.Hour), LastCrawl: t0.Add(time.Minute),
	}
	err := s.Update(func(tx *kv.Tx) error {
		n, created, err := graph.Ensure(tx, want.Host, "https", t0)
		if err != nil || !created {
			t.Fatalf("ensure: created=%v err=%v", created, err)
		}
		if n.Domain != "example.co.uk" || n.Status != graph.StatusDiscovered {
			t.Errorf("new node: got %+v", n)
		}
		want.ID = n.ID
		return graph.Put(tx, &want)
	})
	if err != nil {
		t.Fatal(err)
	}
	s.View(func(tx *kv.Tx) error {
		got, ok, err := graph.GetByHost(tx, want.Host)
		if err != nil || !ok {
			t.Fatalf("get: ok=%v err=%v", ok, err)
		}
		if got.Title != want.Title || got.Description != want.Description || got.CrawlCount != 2 ||
			got.Status != want.Status || got.HTTPStatus != 200 || !got.LastCrawl.Equal(want.LastCrawl) || got.Depth != 3 {
			t.Errorf("got %+v\nwant %+v", got, want)
		}
		return nil
	})
}

func TestStore_Ensure_StableIDs(t *testing.T) {
	s := storetest.MustOpen(t)
	var ids []uint64
	s.Update(func(tx *kv.Tx) error {
		for _, h := range []string{"a.test", "b.test", "a.test", "c.test"} {
			n, _, err := graph.Ensure(tx, h, "http", t0)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, n.ID)
		}
		return nil
	})
	if ids[0] != ids[2] || ids[0] == ids[1] || ids[3] != 3 {
		t.Errorf("ids %v: want stable, sequential ids", ids)
	}
}

func TestStore_EdgeWeights_AccumulateAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.bolt")
	var a, b uint64
	for round := 0; round < 3; round++ {
		s, err := kv.Open(path, kv.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 4; i++ {
			err := <-s.Commit(func(tx *kv.Tx) error {
				na, _, err := graph.Ensure(tx, "a.test", "http", t0)
				if err != nil {
					return err
				}
				nb, _, err := graph.Ensure(tx, "b.test", "http", t0)
				if err != nil {
					return err
				}
				a, b = na.ID, nb.ID
				return graph.AddEdge(tx, a, b, 1, t0.Add(time.Duration(round)*time.Hour))
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
	}
	s := storetest.MustOpenPath(t, path, kv.Options{})
	s.View(func(tx *kv.Tx) error {
		e, ok, err := graph.GetEdge(tx, a, b)
		if err != nil || !ok {
			t.Fatalf("edge: ok=%v err=%v", ok, err)
		}
		if e.Weight != 12 {
			t.Errorf("weight: got %d, want 12", e.Weight)
		}
		if !e.FirstSeen.Equal(t0) || !e.LastSeen.Equal(t0.Add(2*time.Hour)) {
			t.Errorf("seen: got %v..%v", e.FirstSeen, e.LastSeen)
		}
		if c := graph.GetCounts(tx); c != (graph.Counts{Nodes: 2, Edges: 1, Weight: 12}) {
			t.Errorf("counts: got %+v", c)
		}
		return nil
	})
}

// TestStore_PutEdge_Replaces: PutEdge rewrites an edge's record as given
// (weaver merge sets the times of an edge it summed) and leaves the
// counters as they were.
func TestStore_PutEdge_Replaces(t *testing.T) {
	s := storetest.MustOpen(t)
	err := s.Update(func(tx *kv.Tx) error {
		a, _, _ := graph.Ensure(tx, "a.test", "http", t0)
		b, _, _ := graph.Ensure(tx, "b.test", "http", t0)
		if err := graph.AddEdgeFacts(tx, a.ID, b.ID, 3, 1, 0, t0.Add(time.Hour)); err != nil {
			return err
		}
		want := graph.Edge{From: a.ID, To: b.ID, Weight: 3, Nofollow: 1, FirstSeen: t0, LastSeen: t0.Add(2 * time.Hour)}
		if err := graph.PutEdge(tx, &want); err != nil {
			return err
		}
		got, ok, err := graph.GetEdge(tx, a.ID, b.ID)
		if err != nil || !ok {
			t.Fatalf("edge: ok=%v err=%v", ok, err)
		}
		if got.Weight != want.Weight || got.Nofollow != want.Nofollow || !got.FirstSeen.Equal(want.FirstSeen) || !got.LastSeen.Equal(want.LastSeen) {
			t.Errorf("got %+v, want %+v", got, want)
		}
		if c := graph.GetCounts(tx); c != (graph.Counts{Nodes: 2, Edges: 1, Weight: 3}) {
			t.Errorf("counts: got %+v, want 2 nodes, 1 edge, weight 3", c)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestStore_ForEachEdge_Ordered(t *testing.T) {
	s := storetest.MustOpen(t)
	s.Update(func(tx *kv.Tx) error {
		var ids []uint64
		for _, h := range []string{"a", "b", "c", "d"} {
			n, _, _ := graph.Ensure(tx, h+".test", "http", t0)
			ids = append(ids, n.ID)
		}
		for _, p := range [][2]int{{3, 0}, {0, 2}, {0, 1}, {2, 1}, {1, 3}} {
			if err := graph.AddEdge(tx, ids[p[0]], ids[p[1]], 1, t0); err != nil {
				return err
			}
		}
		return nil
	})
	var got [][2]uint64
	s.View(func(tx *kv.Tx) error {
		return graph.ForEachEdge(tx, func(e *graph.Edge) error {
			got = append(got, [2]uint64{e.From, e.To})
			return nil
		})
	})
	want := [][2]uint64{{1, 2}, {1, 3}, {2, 4}, {3, 2}, {4, 1}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestStore_AdmitSubdomain(t *testing.T) {
	s := storetest.MustOpen(t)
	s.Update(func(tx *kv.Tx) error {
		for _, c := range []struct {
			host string
			want bool
		}{
			{"a.example.com", true}, {"b.example.com", true}, {"a.example.com", true},
			{"c.example.com", true}, {"d.example.com", false}, {"www.other.co.uk", true},
			{"example.com", false}, {"c.example.com", true},
		} {
			got, err := graph.AdmitSubdomain(tx, c.host, 3)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("%s: got %v, want %v", c.host, got, c.want)
			}
		}
		return nil
	})
}

// TestStore_AdmitSubdomain_AsCounted: the limiter admits exactly when the
// domain's admitted hosts (Subdomains) are fewer than the cap or include
// the host, for hosts arriving in random order under a few domains whose
// names sort around each other (the count walks backwards and forwards
// from the host's place), with caps of 0 (none) to 4.
func TestStore_AdmitSubdomain_AsCounted(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 3))
	labels := []string{"", "a", "b", "m", "www", "zz", "a-b", "a.b"}
	domains := []string{"a.test", "b.test", "ab.test", "a.co.uk", "b.co.uk"}
	for max := range 5 {
		s := storetest.MustOpen(t)
		err := s.Update(func(tx *kv.Tx) error {
			for range 300 {
				host := domains[r.IntN(len(domains))]
				if l := labels[r.IntN(len(labels))]; l != "" {
					host = l + "." + host
				}
				admitted := graph.Subdomains(tx, host)
				want := max <= 0 || len(admitted) < max || slices.Contains(admitted, host)
				got, err := graph.AdmitSubdomain(tx, host, max)
				if err != nil {
					return err
				}
				if got != want {
					return fmt.Errorf("cap %d, %s with %v admitted: got %v, want %v", max, host, admitted, got, want)
				}
				if now := graph.Subdomains(tx, host); got != slices.Contains(now, host) {
					return fmt.Errorf("cap %d, %s admitted %v, but Subdomains says %v", max, host, got, now)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestCheck_FindsDamage(t *testing.T) {
	s, err := kv.Open(filepath.Join(t.TempDir(), "w.bolt"), kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Update(func(tx *kv.Tx) error {
		a, _, _ := graph.Ensure(tx, "a.test", "http", t0)
		b, _, _ := graph.Ensure(tx, "b.test", "http", t0)
		graph.AddEdge(tx, a.ID, b.ID, 2, t0)
		return tx.Delete(kv.BucketNodes, kv.U64(b.ID)) // an edge now points nowhere
	})
	err = s.View(graph.Check)
	if !errors.Is(err, graph.ErrInconsistent) {
		t.Fatalf("got %v, want ErrInconsistent", err)
	}
}

// GetHeadOf gives the head of host's node by id, and nothing for an id
// that is no node's or another host's.
func TestGetHeadOf(t *testing.T) {
	s := storetest.MustOpen(t)
	now := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	err := s.Update(func(tx *kv.Tx) error {
		a, _, err := graph.EnsureHeadAt(tx, "a.example", "https", 3, now)
		if err != nil {
			return err
		}
		if h, ok, err := graph.GetHeadOf(tx, a.ID, "a.example"); err != nil || !ok || h != a {
			t.Errorf("a.example: got %+v, %v, %v; want %+v", h, ok, err, a)
		}
		for _, c := range []struct {
			id   uint64
			host string
		}{{a.ID, "b.example"}, {a.ID + 100, "a.example"}} {
			if h, ok, err := graph.GetHeadOf(tx, c.id, c.host); err != nil || ok {
				t.Errorf("id %d as %s: got %+v, %v, %v; want nothing", c.id, c.host, h, ok, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
