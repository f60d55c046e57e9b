package graph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/internal/tooltest"
	"github.com/weaver-crawler/weaver/kv"
)

// v1Store copies testdata/history-v1.bolt.gz, a store whose history is in
// schema 1's layout (testdata/history-v1/gen.go), into a temporary file.
func v1Store(t *testing.T) string {
	t.Helper()
	b := tooltest.Gunzip(t, filepath.Join("testdata", "history-v1.bolt.gz"))
	path := filepath.Join(t.TempDir(), "v1.bolt")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// sameDump fails t unless s's history reads as testdata/history-v1.json
// says the readers of schema 1 read the fixture.
func sameDump(t *testing.T, s *kv.Store) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join("testdata", "history-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	err = s.View(func(tx *kv.Tx) error {
		out, err := dumpHistory(tx)
		if err != nil {
			return err
		}
		got, err = json.MarshalIndent(out, "", " ")
		got = append(got, '\n')
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		os.WriteFile(filepath.Join(t.TempDir(), "got.json"), got, 0o644)
		t.Errorf("the history reads otherwise than schema 1's readers read it:\n%s", firstDiff(got, want))
	}
}

// firstDiff shows the lines around the first difference of two texts.
func firstDiff(got, want []byte) string {
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < len(g) || i < len(w); i++ {
		if i >= len(g) || i >= len(w) || !bytes.Equal(g[i], w[i]) {
			lo := max(i-5, 0)
			return "got:\n" + string(bytes.Join(g[lo:min(i+5, len(g))], []byte("\n"))) +
				"\nwant:\n" + string(bytes.Join(w[lo:min(i+5, len(w))], []byte("\n")))
		}
	}
	return ""
}

// A store written by a weaver of schema 1 reads as it did then.
func TestHistory_V1Store_ReadOnly(t *testing.T) {
	s, err := kv.Open(v1Store(t), kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sameDump(t, s)
}

// A writable open records schema 2 and reads the history as before;
// written anew in schema 2's layout, every node's history still reads the
// same, and no schema 1 record is left.
func TestHistory_V1Store_Upgrade(t *testing.T) {
	path := v1Store(t)
	s, err := kv.Open(path, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.View(func(tx *kv.Tx) error {
		if v := tx.SchemaVersion(); v != kv.SchemaVersion {
			t.Errorf("schema %d after a writable open, want %d", v, kv.SchemaVersion)
		}
		return nil
	})
	sameDump(t, s)
	if err := storetest.CheckAll(s); err != nil {
		t.Fatal(err)
	}
	err = s.Update(func(tx *kv.Tx) error {
		return graph.ForEachNode(tx, func(n *graph.Node) error {
			var all []graph.Crawl
			err := graph.ForEachCrawl(tx, n.ID, func(c *graph.Crawl) error {
				cr := *c
				cr.Links = slices.Clone(c.Links)
				all = append(all, cr)
				return nil
			})
			if err != nil || len(all) == 0 {
				return err
			}
			return graph.ReplaceHistory(tx, n.ID, all)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	sameDump(t, s)
	s.View(func(tx *kv.Tx) error {
		if n := tx.Len(kv.BucketCrawls); n != 0 {
			t.Errorf("%d schema 1 records left", n)
		}
		if n := tx.Len(kv.BucketHistory); n == 0 {
			t.Error("no sealed segment: e.test's 31 crawls should fill some")
		}
		return nil
	})
	if err := storetest.CheckAll(s); err != nil {
		t.Fatal(err)
	}
}

// A crawl of a host whose history is schema 1's rewrites it in schema 2's
// layout, the new crawl at its end; the other hosts read as before.
func TestHistory_V1Store_Crawl(t *testing.T) {
	s, err := kv.Open(v1Store(t), kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	node := func(tx *kv.Tx, host string) []byte {
		out, err := dumpHistory(tx)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(out["nodes"].(map[string]any)[host])
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var before []graph.Crawl
	var otherBefore []byte
	at := time.Date(2026, 11, 21, 12, 1, 0, 0, time.UTC)
	err = s.Update(func(tx *kv.Tx) error {
		otherBefore = node(tx, "b.test")
		a, _, _ := graph.GetByHost(tx, "a.test")
		if err := graph.ForEachCrawl(tx, a.ID, func(c *graph.Crawl) error {
			cr := *c
			cr.Links = slices.Clone(c.Links)
			before = append(before, cr)
			return nil
		}); err != nil {
			return err
		}
		prev, _, err := graph.LatestCrawl(tx, a.ID)
		if err != nil {
			return err
		}
		return graph.PutCrawl(tx, a.ID, graph.Crawl{At: at, Links: prev.Links}, &prev)
	})
	if err != nil {
		t.Fatal(err)
	}
	s.View(func(tx *kv.Tx) error {
		a, _, _ := graph.GetByHost(tx, "a.test")
		want := append(before, graph.Crawl{At: at, Links: before[len(before)-1].Links})
		var got []graph.Crawl
		graph.ForEachCrawl(tx, a.ID, func(c *graph.Crawl) error {
			cr := *c
			cr.Links = slices.Clone(c.Links)
			got = append(got, cr)
			return nil
		})
		if len(got) != len(want) {
			t.Fatalf("a.test: %d crawls, want %d", len(got), len(want))
		}
		for i := range want {
			if !sameCrawl(&got[i], &want[i]) {
				t.Errorf("a.test crawl %d: %+v, want %+v", i, got[i], want[i])
			}
		}
		if stored, _ := graph.LinksStored(tx, a.ID); len(stored) != len(want) || stored[len(stored)-1] {
			t.Errorf("a.test's records hold links: %v; want the last, unchanged, without", stored)
		}
		c := tx.Cursor(kv.BucketCrawls)
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if string(k[:8]) == string(kv.U64(a.ID)) {
				t.Fatalf("a.test's schema 1 record %x is left", k)
			}
		}
		if got := node(tx, "b.test"); !bytes.Equal(got, otherBefore) {
			t.Errorf("b.test reads otherwise:\n%s\nwant\n%s", got, otherBefore)
		}
		return nil
	})
	if err := storetest.CheckAll(s); err != nil {
		t.Fatal(err)
	}
}

// dumpHistory is everything graph's readers say of a store's history. A
// copy of it, as it was when the fixture was made, is in
// testdata/history-v1/dump.go.
// DUMP-START
func dumpHistory(tx *kv.Tx) (map[string]any, error) {
	times := []time.Duration{0, 500 * time.Millisecond, time.Second, 2600 * time.Millisecond, 3 * time.Second,
		5500 * time.Millisecond, 7500 * time.Millisecond, 20 * time.Second, time.Hour}
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	type link struct{ To, Weight, Nofollow, Redirect uint64 }
	type crawl struct {
		At                   string
		Changed, NotModified bool
		Links                []link
	}
	conv := func(c *graph.Crawl) crawl {
		out := crawl{At: c.At.Format(time.RFC3339Nano), Changed: c.Changed, NotModified: c.NotModified, Links: []link{}}
		for _, l := range c.Links {
			out.Links = append(out.Links, link{l.To, l.Weight, l.Nofollow, l.Redirect})
		}
		return out
	}
	out := map[string]any{"has_history": graph.HasHistory(tx)}
	nodes := map[string]any{}
	err := graph.ForEachNode(tx, func(n *graph.Node) error {
		node := map[string]any{"has_crawls": graph.HasCrawls(tx, n.ID)}
		var all []crawl
		if err := graph.ForEachCrawl(tx, n.ID, func(c *graph.Crawl) error { all = append(all, conv(c)); return nil }); err != nil {
			return err
		}
		node["crawls"] = all
		ts, changed, nm, err := graph.CrawlTimes(tx, n.ID)
		if err != nil {
			return err
		}
		var tstr []string
		for _, t := range ts {
			tstr = append(tstr, t.Format(time.RFC3339Nano))
		}
		node["times"], node["changed"], node["not_modified"] = tstr, changed, nm
		var at []any
		for _, d := range times {
			t := t0.Add(d)
			if d == 0 {
				t = time.Time{}
			}
			c, ok, err := graph.CrawlAt(tx, n.ID, t)
			if err != nil {
				return err
			}
			h, err := graph.NodeHistoryAt(tx, n.ID, t0.Add(d))
			if err != nil {
				return err
			}
			e := map[string]any{"ok": ok, "history": h}
			if ok {
				e["crawl"] = conv(&c)
			}
			at = append(at, e)
		}
		node["at"] = at
		iv, first, err := graph.EdgeIntervals(tx, n.ID)
		if err != nil {
			return err
		}
		node["intervals"], node["first"] = iv, first
		nodes[n.Host] = node
		return nil
	})
	if err != nil {
		return nil, err
	}
	out["nodes"] = nodes
	var edges []any
	for _, d := range times[1:] {
		// The edge as schema 1's readers had it: a frame count, which
		// schema 1 did not keep, must read as none.
		type edge struct {
			From, To, Weight    uint64
			FirstSeen, LastSeen time.Time
			Nofollow, Redirect  uint64
		}
		var es []edge
		if err := graph.EdgesAt(tx, t0.Add(d), func(e *graph.Edge) error {
			if e.Frame != 0 {
				return fmt.Errorf("edge %d→%d: frame count %d in a schema 1 store", e.From, e.To, e.Frame)
			}
			es = append(es, edge{e.From, e.To, e.Weight, e.FirstSeen, e.LastSeen, e.Nofollow, e.Redirect})
			return nil
		}); err != nil {
			return nil, err
		}
		edges = append(edges, es)
	}
	out["edges_at"] = edges
	app, dis, err := graph.DiffAt(tx, t0.Add(2*time.Second), t0.Add(time.Hour))
	if err != nil {
		return nil, err
	}
	out["diff"] = map[string]any{"appeared": app, "disappeared": dis}
	return out, nil
}

// DUMP-END
