package archive_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// TestMerge_Semantics merges two stores that share hosts and checks every
// rule of Merge's documentation on them.
func TestMerge_Semantics(t *testing.T) {
	dir := t.TempDir()
	a := build(t, filepath.Join(dir, "a.bolt"), func(b *builder) {
		b.crawled("shared.test", 1, 10, "old title")
		b.node("shared.test", func(n *graph.Node) { n.Depth, n.FirstSeen = 2, at(1) })
		b.crawled("a-only.test", 1, 11, "A")
		b.node("timeout.test", func(n *graph.Node) {
			n.Status, n.FailCount, n.Error, n.LastSeen = graph.StatusTimeout, 1, "timed out", at(12)
		})
		b.edge("shared.test", "a-only.test", 2, 10)
		b.edge("shared.test", "both.test", 1, 10)
		b.push("both.test", 3)
		b.push("queued-a.test", 1)
		b.lease("leased.test", 2)
		b.admit("shared.test")
		b.admit("a-only.test")
		b.robots("shared.test", 10, "old rules")
		b.robots("a-only.test", 11, "a rules")
	})
	bpath := build(t, filepath.Join(dir, "b.bolt"), func(b *builder) {
		b.node("timeout.test", func(n *graph.Node) { n.Depth = 1 }) // discovered only
		b.crawled("shared.test", 2, 20, "new title")
		b.node("shared.test", func(n *graph.Node) { n.Depth, n.FirstSeen = 4, at(0) })
		b.crawled("b-only.test", 1, 21, "B")
		b.edge("shared.test", "both.test", 4, 20)
		b.edge("b-only.test", "shared.test", 1, 21)
		b.push("both.test", 1)
		b.push("queued-b.test", 2)
		b.push("leased.test", 5)
		b.admit("b-only.test")
		b.robots("shared.test", 20, "new rules")
	})
	out := filepath.Join(dir, "out.bolt")
	res, err := archive.Merge(context.Background(), out, []string{a, bpath}, archive.MergeOptions{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	v := read(t, out)
	if len(res.Inputs) != 2 || res.Out.Nodes != uint64(len(v.Nodes)) || res.Out.Edges != 3 || res.Out.Queued != 4 {
		t.Errorf("result: %+v", res)
	}

	sh := v.Nodes["shared.test"]
	if sh.CrawlCount != 3 || sh.Title != "new title" || sh.Status != graph.StatusCrawled || sh.Depth != 2 ||
		!sh.FirstSeen.Equal(at(0)) || !sh.LastCrawl.Equal(at(20)) || !sh.LastSeen.Equal(at(20)) {
		t.Errorf("shared.test: %+v", sh)
	}
	if to := v.Nodes["timeout.test"]; to.Status != graph.StatusTimeout || to.FailCount != 1 || to.Depth != 0 {
		t.Errorf("a failed attempt must beat a discovery: %+v", to)
	}
	if n := v.Nodes["b-only.test"]; n.CrawlCount != 1 || n.Title != "B" {
		t.Errorf("b-only.test: %+v", n)
	}

	wantEdges := map[[2]string]uint64{
		{"shared.test", "a-only.test"}: 2, {"shared.test", "both.test"}: 5, {"b-only.test", "shared.test"}: 1,
	}
	gotEdges := map[[2]string]uint64{}
	for k, e := range v.Edges {
		gotEdges[k] = e.Weight
	}
	if !reflect.DeepEqual(gotEdges, wantEdges) {
		t.Errorf("edges: got %v, want %v", gotEdges, wantEdges)
	}
	if e := v.Edges[[2]string{"shared.test", "both.test"}]; !e.FirstSeen.Equal(at(10)) || !e.LastSeen.Equal(at(20)) {
		t.Errorf("shared→both times: %+v", e)
	}

	// One entry per host at its smallest depth, leases queued again at
	// their old place, in (depth, arrival, input) order: at depth 1, b's
	// both.test arrived first in b (seq 1), a's queued-a.test second in a
	// (seq 2); at depth 2, a's lease of leased.test (seq 3) comes after b's
	// queued-b.test (seq 2).
	wantQueue := []string{
		"both.test@1 http://both.test/",
		"queued-a.test@1 http://queued-a.test/",
		"queued-b.test@2 http://queued-b.test/",
		"leased.test@2 http://leased.test/",
	}
	if !reflect.DeepEqual(v.Queue, wantQueue) {
		t.Errorf("queue:\ngot  %q\nwant %q", v.Queue, wantQueue)
	}
	if len(v.Leases) != 0 {
		t.Errorf("leases: got %v, want none", v.Leases)
	}
	if !slices.Contains(v.Visited, "both.test@3") || !slices.Contains(v.Visited, "leased.test@5") {
		t.Errorf("visited marks not joined: %v", v.Visited)
	}
	if want := []string{"a-only.test\x00a-only.test", "b-only.test\x00b-only.test", "shared.test\x00shared.test"}; !reflect.DeepEqual(v.Roots, want) {
		t.Errorf("roots: got %q, want %q", v.Roots, want)
	}
	if got := v.Robots["shared.test"]; got != "2026-03-01T12:20:00Z new rules" {
		t.Errorf("robots of shared.test: got %q, want the fresher", got)
	}
	if got := v.Robots["a-only.test"]; got != "2026-03-01T12:11:00Z a rules" {
		t.Errorf("robots of a-only.test: %q", got)
	}
	// The first input keeps its ids.
	ids := func(path string) map[string]uint64 {
		s, err := kv.Open(path, kv.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		m := map[string]uint64{}
		s.View(func(tx *kv.Tx) error {
			return graph.ForEachNode(tx, func(n *graph.Node) error { m[n.Host] = n.ID; return nil })
		})
		return m
	}
	ia, io := ids(a), ids(out)
	for h, id := range ia {
		if io[h] != id {
			t.Errorf("%s: id %d in the first input, %d in the output", h, id, io[h])
		}
	}
}

// TestMerge_Deterministic: the same inputs give byte-identical exports
// (same ids, same records) however the merge is batched. The .bolt files
// themselves are not byte-identical: bbolt spills the buckets a transaction
// touched in map order, which changes page numbers, not content.
func TestMerge_Deterministic(t *testing.T) {
	dir := t.TempDir()
	a := build(t, filepath.Join(dir, "a.bolt"), func(b *builder) { randomStore(b, 1, 300) })
	bp := build(t, filepath.Join(dir, "b.bolt"), func(b *builder) { randomStore(b, 2, 300) })
	var first map[export.Format][]byte
	for i, batch := range []int{0, 0, 97} {
		out := filepath.Join(t.TempDir(), "out.bolt")
		if _, err := archive.Merge(context.Background(), out, []string{a, bp}, archive.MergeOptions{Batch: batch}); err != nil {
			t.Fatal(err)
		}
		got := exports(t, out)
		if i == 0 {
			first = got
			continue
		}
		for f, data := range got {
			if !bytes.Equal(data, first[f]) {
				t.Errorf("merge %d (batch %d): %s export differs from merge 0's", i, batch, f)
			}
		}
	}
}

// exports returns the store at path in every export format, stamped with a
// fixed time, without the layout columns: a layout is a function of the
// graph (the layout package tests that it is deterministic), and laying
// each merge out again cost this test two minutes under the race detector.
func exports(t *testing.T, path string) map[export.Format][]byte {
	t.Helper()
	s, err := kv.Open(path, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	opt := export.Options{Version: "test", Now: func() time.Time { return t0 }, NoLayout: true}
	out := map[export.Format][]byte{}
	for _, f := range []export.Format{export.FormatJSON, export.FormatGraphML, export.FormatDOT} {
		var buf bytes.Buffer
		if _, err := export.Write(context.Background(), &buf, s, f, opt); err != nil {
			t.Fatal(err)
		}
		out[f] = buf.Bytes()
	}
	db := filepath.Join(t.TempDir(), "export.db")
	if _, err := export.SQLite(context.Background(), s, db, opt); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	out[export.FormatSQLite] = data
	return out
}

// randomStore writes a random crawl-like store: hosts from a pool shared
// between seeds, so that two such stores overlap.
func randomStore(b *builder, seed int64, n int) {
	r := rand.New(rand.NewSource(seed))
	host := func() string { return fmt.Sprintf("h%03d.example%d.test", r.Intn(n), r.Intn(3)) }
	for i := 0; i < n; i++ {
		h := host()
		switch r.Intn(4) {
		case 0:
			b.crawled(h, 1+r.Intn(2), r.Intn(1000), fmt.Sprintf("title %d/%d", seed, i))
		case 1:
			b.node(h, func(nd *graph.Node) { nd.Depth = r.Intn(5) })
		case 2:
			b.push(h, r.Intn(4))
		case 3:
			b.admit(h)
		}
		from, to := host(), host()
		if from != to {
			b.edge(from, to, uint64(1+r.Intn(3)), r.Intn(1000))
		}
		if r.Intn(10) == 0 {
			b.robots(h, r.Intn(1000), fmt.Sprintf("rules %d", seed))
		}
	}
}

// TestMerge_Oracle merges random stores and compares the result with a
// merge computed in memory from their contents.
func TestMerge_Oracle(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			dir := t.TempDir()
			var paths []string
			var views []view
			for i := int64(0); i < 3; i++ {
				p := build(t, filepath.Join(dir, fmt.Sprintf("in%d.bolt", i)), func(b *builder) { randomStore(b, seed*10+i, 200) })
				paths = append(paths, p)
				views = append(views, read(t, p))
			}
			out := filepath.Join(dir, "out.bolt")
			if _, err := archive.Merge(context.Background(), out, paths, archive.MergeOptions{Verify: true, Batch: 64}); err != nil {
				t.Fatal(err)
			}
			got := read(t, out)

			weights := map[[2]string]uint64{}
			crawls := map[string]int{}
			depth := map[string]int{}
			queued := map[string]int{}
			robots := map[string]string{}
			var roots []string
			for _, v := range views {
				for k, e := range v.Edges {
					weights[k] += e.Weight
				}
				for h, n := range v.Nodes {
					crawls[h] += n.CrawlCount
					if d, ok := depth[h]; !ok || n.Depth < d {
						depth[h] = n.Depth
					}
				}
				for _, q := range v.Queue {
					h, rest, _ := strings.Cut(q, "@")
					var d int
					fmt.Sscanf(rest, "%d", &d)
					if old, ok := queued[h]; !ok || d < old {
						queued[h] = d
					}
				}
				for h, r := range v.Robots {
					if old, ok := robots[h]; !ok || r[:20] > old[:20] {
						robots[h] = r
					}
				}
				roots = append(roots, v.Roots...)
			}
			slices.Sort(roots)
			roots = slices.Compact(roots)

			gotWeights := map[[2]string]uint64{}
			for k, e := range got.Edges {
				gotWeights[k] = e.Weight
			}
			if !reflect.DeepEqual(gotWeights, weights) {
				t.Errorf("edges differ from the oracle")
			}
			if len(got.Nodes) != len(crawls) {
				t.Errorf("nodes: got %d, want %d", len(got.Nodes), len(crawls))
			}
			for h, c := range crawls {
				if n := got.Nodes[h]; n.CrawlCount != c || n.Depth != depth[h] {
					t.Errorf("%s: crawl count %d depth %d, want %d %d", h, n.CrawlCount, n.Depth, c, depth[h])
				}
			}
			gotQueued := map[string]int{}
			for _, q := range got.Queue {
				h, rest, _ := strings.Cut(q, "@")
				var d int
				fmt.Sscanf(rest, "%d", &d)
				gotQueued[h] = d
			}
			if !reflect.DeepEqual(gotQueued, queued) {
				t.Errorf("queue: got %v, want %v", gotQueued, queued)
			}
			if !reflect.DeepEqual(got.Robots, robots) {
				t.Errorf("robots: got %v, want %v", got.Robots, robots)
			}
			if !reflect.DeepEqual(got.Roots, roots) {
				t.Errorf("roots: got %d, want %d", len(got.Roots), len(roots))
			}
		})
	}
}

// TestMerge_One: merging a single store gives the same content.
func TestMerge_One(t *testing.T) {
	dir := t.TempDir()
	a := build(t, filepath.Join(dir, "a.bolt"), sample)
	out := filepath.Join(dir, "out.bolt")
	if _, err := archive.Merge(context.Background(), out, []string{a}, archive.MergeOptions{Verify: true}); err != nil {
		t.Fatal(err)
	}
	want, got := read(t, a), read(t, out)
	// The lease is queued again, at its old place.
	want.Queue = []string{"d.test@1 http://d.test/", "c.test@2 http://c.test/"}
	want.Leases = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestMerge_Refuses(t *testing.T) {
	dir := t.TempDir()
	a := build(t, filepath.Join(dir, "a.bolt"), sample)
	bp := build(t, filepath.Join(dir, "b.bolt"), sample)
	notStore := filepath.Join(dir, "notes.txt")
	os.WriteFile(notStore, bytes.Repeat([]byte("notes "), 1000), 0o600)
	existing := filepath.Join(dir, "existing.bolt")
	os.WriteFile(existing, []byte("precious"), 0o600)
	cases := []struct {
		name   string
		out    string
		inputs []string
		force  bool
		want   error
	}{
		{"no inputs", filepath.Join(dir, "o.bolt"), nil, false, archive.ErrNoInputs},
		{"output is an input", a, []string{a, bp}, true, archive.ErrSameFile},
		{"output is the second input", bp, []string{a, bp}, true, archive.ErrSameFile},
		{"an input twice", filepath.Join(dir, "o.bolt"), []string{a, bp, filepath.Join(dir, ".", "a.bolt")}, false, archive.ErrSameFile},
		{"existing output", existing, []string{a, bp}, false, archive.ErrExists},
		{"an input that is not a store", existing, []string{a, notStore}, true, kv.ErrNotStore},
		{"a missing input", existing, []string{a, filepath.Join(dir, "none.bolt")}, true, os.ErrNotExist},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := archive.Merge(context.Background(), tc.out, tc.inputs, archive.MergeOptions{Force: tc.force})
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	if data, _ := os.ReadFile(existing); string(data) != "precious" {
		t.Error("a refused merge changed the output file")
	}
	if _, err := os.Stat(filepath.Join(dir, "o.bolt")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a refused merge created its output")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name()[0] == '.' {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// TestMerge_InUse: a store locked by a running crawl is refused, not read.
func TestMerge_InUse(t *testing.T) {
	dir := t.TempDir()
	a := build(t, filepath.Join(dir, "a.bolt"), sample)
	live, err := kv.Open(a, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	bp := build(t, filepath.Join(dir, "b.bolt"), sample)
	_, err = archive.Merge(context.Background(), filepath.Join(dir, "o.bolt"), []string{bp, a}, archive.MergeOptions{})
	if !errors.Is(err, kv.ErrInUse) {
		t.Errorf("got %v, want ErrInUse", err)
	}
}
