package export_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/internal/tooltest"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/layout"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// t0 is the fixtures' clock: every time in a fixture is t0 plus minutes.
var t0 = time.Date(2025, 1, 16, 10, 0, 0, 0, time.UTC)

// fixedOptions makes an export reproducible byte for byte.
func fixedOptions() export.Options {
	return export.Options{Version: "0.1.0-test", Now: func() time.Time { return t0.Add(24 * time.Hour) }}
}

// fixtureNode is a node of a test graph: its host and what its crawl found.
type fixtureNode struct {
	host   string
	status graph.Status
	http   int
	crawls int
	title  string
	desc   string
}

// fixtureEdge is an edge between two fixture nodes, by position.
type fixtureEdge struct {
	from, to int
	weight   uint64
}

// small is the golden graph: two registrable domains with several hosts,
// an error page, hosts never fetched, and a title that needs escaping.
var (
	smallNodes = []fixtureNode{
		{"example.com", graph.StatusCrawled, 200, 2, "Example Domain", "This domain is for use in illustrative examples."},
		{"www.example.com", graph.StatusCrawled, 200, 1, `Tom & Jerry's <"Blog">`, ""},
		{"blog.example.com", graph.StatusDiscovered, 0, 0, "", ""},
		{"iana.org", graph.StatusCrawled, 200, 1, "Internet Assigned Numbers Authority", "IANA\nnumbers"},
		{"www.iana.org", graph.StatusHTTPError, 404, 1, "Not Found", ""},
		{"github.com", graph.StatusDiscovered, 0, 0, "", ""},
		{"localhost:8080", graph.StatusTimeout, 0, 0, "", ""},
	}
	smallEdges = []fixtureEdge{
		{0, 3, 3}, {0, 1, 1}, {1, 0, 2}, {1, 3, 1}, {1, 2, 1},
		{3, 4, 5}, {3, 0, 1}, {4, 5, 2}, {4, 3, 4}, {0, 6, 1},
	}
)

// writeGraph writes nodes and edges into s in one transaction, with node
// i first seen at t0+i minutes and fetched one hour later when it was.
func writeGraph(tb testing.TB, s *kv.Store, nodes []fixtureNode, edges []fixtureEdge) {
	tb.Helper()
	// In batches: bbolt splits a node only at commit, so one transaction
	// of 90,000 edges inserts into ever longer leaves (quadratic memmove,
	// minutes under -race).
	const batch = 2000
	ids := make([]uint64, len(nodes))
	for lo := 0; lo < len(nodes); lo += batch {
		err := s.Update(func(tx *kv.Tx) error {
			for i := lo; i < min(lo+batch, len(nodes)); i++ {
				f := nodes[i]
				seen := t0.Add(time.Duration(i) * time.Minute)
				n, _, err := graph.Ensure(tx, f.host, "https", seen)
				if err != nil {
					return err
				}
				ids[i] = n.ID
				n.Status, n.HTTPStatus, n.CrawlCount = f.status, f.http, f.crawls
				n.Title, n.Description = f.title, f.desc
				n.Depth = i % 3
				if f.status == graph.StatusTimeout {
					n.FailCount = 3
					n.Error = "context deadline exceeded"
				}
				if f.crawls > 0 {
					n.ContentType, n.Server = "text/html; charset=utf-8", "nginx"
					n.Bytes, n.FetchMS = int64(1000+i), int64(100+i)
					n.ContentHash = fmt.Sprintf("%064x", i+1)
					n.LastCrawl = seen.Add(time.Hour)
					n.LastSeen = n.LastCrawl
				}
				if err := graph.Put(tx, &n); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatalf("write fixture: %v", err)
		}
	}
	for lo := 0; lo < len(edges); lo += batch {
		err := s.Update(func(tx *kv.Tx) error {
			for i := lo; i < min(lo+batch, len(edges)); i++ {
				e := edges[i]
				if err := graph.AddEdge(tx, ids[e.from], ids[e.to], e.weight, t0.Add(time.Duration(30+i)*time.Minute)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatalf("write fixture: %v", err)
		}
	}
}

// newStore is storetest.MustOpen with the creation time fixed at t0, so
// that exports record the same store_created_at every run.
func newStore(tb testing.TB) *kv.Store {
	tb.Helper()
	return storetest.MustOpenPath(tb, filepath.Join(tb.TempDir(), "weaver.bolt"), kv.Options{Now: func() time.Time { return t0 }})
}

// smallStore is a store holding the golden graph.
func smallStore(tb testing.TB) *kv.Store {
	s := newStore(tb)
	writeGraph(tb, s, smallNodes, smallEdges)
	return s
}

// paGraph is a preferential-attachment graph of n hosts: each new host
// links to up to m earlier ones chosen in proportion to their degree, as
// links on the web gather on popular hosts. Hosts fall into n/20
// registrable domains; two in three were fetched. It is deterministic.
func paGraph(n, m int, seed uint64) ([]fixtureNode, []fixtureEdge) {
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	nodes := make([]fixtureNode, n)
	domains := max(n/20, 1)
	for i := range nodes {
		f := fixtureNode{host: fmt.Sprintf("h%d.d%d.example", i, i%domains), status: graph.StatusDiscovered}
		if i%3 != 2 {
			f.status, f.http, f.crawls = graph.StatusCrawled, 200, 1+i%2
			f.title = fmt.Sprintf("Site %d & friends <%d>", i, i%7)
			f.desc = fmt.Sprintf("About site %d", i)
		}
		nodes[i] = f
	}
	var edges []fixtureEdge
	var ends []int // every edge end, so a uniform pick is degree-proportional
	for i := 1; i < n; i++ {
		seen := map[int]bool{}
		for range min(m, i) {
			t := r.IntN(i)
			if len(ends) > 0 && r.IntN(4) != 0 {
				t = ends[r.IntN(len(ends))]
			}
			if t == i || seen[t] {
				continue
			}
			seen[t] = true
			w := uint64(1 + r.IntN(3))
			if r.IntN(10) == 0 {
				w += uint64(r.IntN(50))
			}
			edges = append(edges, fixtureEdge{i, t, w})
			if r.IntN(3) == 0 { // some links back
				edges = append(edges, fixtureEdge{t, i, 1})
			}
			ends = append(ends, i, t)
		}
	}
	return nodes, edges
}

// paStore is a store holding paGraph(n, 3).
func paStore(tb testing.TB, n int) *kv.Store {
	s := newStore(tb)
	nodes, edges := paGraph(n, 3, 1)
	writeGraph(tb, s, nodes, edges)
	saveLayout(tb, s)
	return s
}

// saveLayout stores a layout of s's graph, as weaver layout does after a
// crawl, so that each export of s reads it rather than laying the graph
// out again (smallStore's exports lay theirs out). Its positions come from
// 20 steps of ForceAtlas2: these tests read a layout, the layout package's
// judge its quality.
func saveLayout(tb testing.TB, s *kv.Store) {
	tb.Helper()
	err := s.Update(func(tx *kv.Tx) error {
		st, err := layout.ComputeStored(context.Background(), tx, layout.Options{Force: layout.ForceOptions{Iterations: 20}})
		if err != nil {
			return err
		}
		return layout.Save(tx, st)
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// networkxPythons returns the Pythons whose networkx the JSON and GraphML
// exports are loaded with: the one on PATH (here pyenv's, networkx 3.x)
// and Debian's, /usr/bin/python3 with python3-networkx (2.8 in Debian
// 12), each once. A missing one, or one that does not import networkx,
// skips (fails under CI=true) only its own subtest: run reports it.
func networkxPythons(tb testing.TB) []string {
	tb.Helper()
	var out []string
	seen := map[string]bool{}
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		// pyenv's python3 is a shim script: two names are one Python
		// when sys.executable is the same file.
		key := p
		if exe, err := exec.Command(p, "-c", "import sys; print(sys.executable)").Output(); err == nil {
			if real, err := filepath.EvalSymlinks(strings.TrimSpace(string(exe))); err == nil {
				key = real
			}
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, p)
	}
	return out
}

// withNetworkx runs f as a subtest per Python of networkxPythons, named
// by it and its networkx version; a Python that is missing or has no
// networkx skips its subtest (fails it under CI=true).
func withNetworkx(t *testing.T, f func(t *testing.T, py string)) {
	for _, py := range networkxPythons(t) {
		t.Run(strings.ReplaceAll(strings.Trim(py, "/"), "/", "_"), func(t *testing.T) {
			out, err := exec.Command(py, "-c", "import networkx; print(networkx.__version__)").Output()
			if err != nil {
				tooltest.Missing(t, "%s does not import networkx (apt-get install python3-networkx): %v", py, err)
			}
			t.Logf("%s: networkx %s", py, strings.TrimSpace(string(out)))
			f(t, py)
		})
	}
}

// graphmlXSD returns the GraphML schema shipped in shared/data, beside
// the repository.
func graphmlXSD(tb testing.TB) string {
	tb.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "shared", "data", "graphml-xsd", "graphml.xsd"))
	if err == nil {
		if _, err = os.Stat(p); err == nil {
			return p
		}
	}
	tooltest.Missing(tb, "GraphML schema not found: %v", err)
	return ""
}

// runTool runs a client and fails the test with its output when it fails
// or takes over five minutes.
func runTool(tb testing.TB, stdin []byte, name string, args ...string) []byte {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("%s %s: %v\nstderr: %s", name, strings.Join(args, " "), err, limit(stderr.String(), 2000))
	}
	return stdout.Bytes()
}

func limit(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// exportFile writes s in format f to a file in a temporary directory.
func exportFile(tb testing.TB, s *kv.Store, f export.Format, opt export.Options) (string, export.Stats) {
	tb.Helper()
	ext := map[export.Format]string{export.FormatSQLite: "db", export.FormatGraphML: "graphml", export.FormatDOT: "dot", export.FormatJSON: "json"}[f]
	path := filepath.Join(tb.TempDir(), "out."+ext)
	st, err := export.WriteFile(context.Background(), s, path, f, opt)
	if err != nil {
		tb.Fatalf("export %s: %v", f, err)
	}
	return path, st
}

// storeCounts reads the graph counters of s.
func storeCounts(tb testing.TB, s *kv.Store) graph.Counts {
	tb.Helper()
	var c graph.Counts
	if err := s.View(func(tx *kv.Tx) error { c = graph.GetCounts(tx); return nil }); err != nil {
		tb.Fatal(err)
	}
	return c
}

// countdownCtx is a context whose Err turns to Canceled after a given
// number of calls: it interrupts an export at a chosen point, the way a
// Ctrl-C would, without timing.
type countdownCtx struct {
	context.Context
	left atomic.Int64
}

func newCountdown(calls int64) *countdownCtx {
	c := &countdownCtx{Context: context.Background()}
	c.left.Store(calls)
	return c
}

func (c *countdownCtx) Err() error {
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// listDir returns the names in dir, sorted.
func listDir(tb testing.TB, dir string) []string {
	tb.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}
