package graph_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// v1Store copies testdata/history-v1.bolt.gz, a store whose history is in
// schema 1's layout (testdata/history-v1/gen.go), into a temporary file.
func v1Store(t *testing.T) string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "history-v1.bolt.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
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
			out.Links = append(out.Links, link(l))
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
		var es []graph.Edge
		if err := graph.EdgesAt(tx, t0.Add(d), func(e *graph.Edge) error { es = append(es, *e); return nil }); err != nil {
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
