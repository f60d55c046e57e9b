package rank_test

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/internal/tooltest"
	"github.com/weaver-crawler/weaver/rank"
)

// edge is an edge of a test graph, by node id.
type edge struct {
	from, to uint64
	w        uint64
}

// build makes a Graph of the nodes 1..n and edges, which it sorts.
func build(tb testing.TB, n int, edges []edge) *rank.Graph {
	tb.Helper()
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = uint64(i + 1)
	}
	return buildIDs(tb, ids, edges)
}

// buildIDs makes a Graph of the nodes ids (ascending) and edges.
func buildIDs(tb testing.TB, ids []uint64, edges []edge) *rank.Graph {
	tb.Helper()
	edges = slices.Clone(edges)
	slices.SortFunc(edges, func(a, b edge) int {
		if a.from != b.from {
			return int(a.from) - int(b.from)
		}
		return int(a.to) - int(b.to)
	})
	b := rank.NewBuilder(len(ids), len(edges))
	for _, id := range ids {
		if err := b.AddNode(id); err != nil {
			tb.Fatal(err)
		}
	}
	for _, e := range edges {
		if err := b.AddEdge(e.from, e.to, e.w); err != nil {
			tb.Fatal(err)
		}
	}
	g, err := b.Graph()
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// randomGraph is a graph of n nodes (ids 1..n) with about m edges, no
// self-loops, weights 1..5 with a few heavier: it has nodes without
// out-edges, nodes without any edge and parts that do not reach each
// other when m is small enough.
func randomGraph(n, m int, seed uint64) []edge {
	r := rand.New(rand.NewPCG(seed, seed^0xabcdef))
	seen := map[[2]uint64]bool{}
	var edges []edge
	for range m {
		f, t := uint64(1+r.IntN(n)), uint64(1+r.IntN(n))
		if r.IntN(3) == 0 { // links gather on a few nodes
			t = uint64(1 + r.IntN(max(n/10, 1)))
		}
		if f == t || seen[[2]uint64{f, t}] || f%7 == 0 { // every 7th node dangles
			continue
		}
		seen[[2]uint64{f, t}] = true
		w := uint64(1 + r.IntN(5))
		if r.IntN(20) == 0 {
			w += uint64(r.IntN(100))
		}
		edges = append(edges, edge{f, t, w})
	}
	return edges
}

// synthetic builds a graph of n nodes and about n·deg edges with a
// power-law-ish shape, the way a web host graph looks: out-degrees drawn
// from a Pareto distribution (most hosts link to a few, some to
// hundreds), targets drawn with a bias toward a few popular hosts (in-degree
// falls off as a power of the host's popularity rank), weights mostly 1. It
// is deterministic for a seed and goes straight into a Builder, so its
// memory is the Graph's.
func synthetic(tb testing.TB, n int, deg float64, seed uint64) *rank.Graph {
	tb.Helper()
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	// Pareto with shape 2 has mean 2·xm: xm = deg/2 gives mean deg.
	xm := deg / 2
	b := rank.NewBuilder(n, int(float64(n)*deg))
	for i := range n {
		if err := b.AddNode(uint64(i + 1)); err != nil {
			tb.Fatal(err)
		}
	}
	// popular maps a popularity rank to a node, so that popular hosts are
	// spread over the ids.
	popular := r.Perm(n)
	var targets []int
	for i := range n {
		k := int(xm / math.Sqrt(1-r.Float64()))
		if r.IntN(10) == 0 {
			k = 0 // a host that links nowhere
		}
		k = min(k, 1000, n-1)
		targets = targets[:0]
		for range k {
			// u^3 puts most links on the first popularity ranks.
			u := r.Float64()
			t := popular[int(float64(n)*u*u*u)]
			if t != i {
				targets = append(targets, t)
			}
		}
		slices.Sort(targets)
		targets = slices.Compact(targets)
		for _, t := range targets {
			w := uint64(1)
			if r.IntN(8) == 0 {
				w += uint64(r.IntN(20))
			}
			if err := b.AddEdge(uint64(i+1), uint64(t+1), w); err != nil {
				tb.Fatal(err)
			}
		}
	}
	g, err := b.Graph()
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// ukEdges reads a source<TAB>target<TAB>weight file of ../shared/data into
// a graph: hosts numbered 1.. in order of first appearance.
func ukEdges(tb testing.TB, name string) (hosts []string, edges []edge) {
	tb.Helper()
	path, err := filepath.Abs(filepath.Join("..", "..", "shared", "data", "webgraph", name))
	if err != nil {
		tb.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		tooltest.Missing(tb, "the UK-1996 host graph: %v", err)
	}
	defer f.Close()
	id := map[string]uint64{}
	of := func(h string) uint64 {
		if i, ok := id[h]; ok {
			return i
		}
		hosts = append(hosts, h)
		id[h] = uint64(len(hosts))
		return id[h]
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), "\t")
		if len(parts) != 3 {
			continue
		}
		w, err := strconv.ParseUint(parts[2], 10, 64)
		if err != nil || parts[0] == parts[1] {
			continue
		}
		edges = append(edges, edge{of(parts[0]), of(parts[1]), w})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return hosts, edges
}

// ukTop reads the whole UK-1996 host graph (1996|source|target<TAB>count,
// 58,842 host strings) and returns the subgraph induced by its n hosts
// with the most links (in and out, ties by name), hosts lower-cased and
// self-loops dropped: a real web graph of n hosts.
func ukTop(tb testing.TB, n int) (hosts []string, edges []edge) {
	tb.Helper()
	path, err := filepath.Abs(filepath.Join("..", "..", "shared", "data", "webgraph", "1996-uk-web-hosts.tsv.gz"))
	if err != nil {
		tb.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		tooltest.Missing(tb, "the UK-1996 host graph: %v", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	weights := map[[2]string]uint64{}
	degree := map[string]int{}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		line, count, ok := strings.Cut(sc.Text(), "\t")
		parts := strings.Split(line, "|")
		if !ok || len(parts) != 3 {
			continue
		}
		w, err := strconv.ParseUint(count, 10, 64)
		from, to := strings.ToLower(parts[1]), strings.ToLower(parts[2])
		if err != nil || w == 0 || from == to || from == "" || to == "" {
			continue
		}
		k := [2]string{from, to}
		if weights[k] == 0 {
			degree[from]++
			degree[to]++
		}
		weights[k] += w
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	for h := range degree {
		hosts = append(hosts, h)
	}
	slices.SortFunc(hosts, func(a, b string) int {
		if c := cmp.Compare(degree[b], degree[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	hosts = hosts[:min(n, len(hosts))]
	slices.Sort(hosts)
	id := map[string]uint64{}
	for i, h := range hosts {
		id[h] = uint64(i + 1)
	}
	for k, w := range weights {
		if f, t := id[k[0]], id[k[1]]; f != 0 && t != 0 {
			edges = append(edges, edge{f, t, w})
		}
	}
	return hosts, edges
}

// nxScript computes, for the graph of an edge list on stdin (a line
// "nodes id id ..." then "from to weight" lines), networkx's PageRank at
// its defaults and at a tight tolerance, and its harmonic centrality.
const nxScript = `
import json, sys
import networkx as nx
G = nx.DiGraph()
lines = sys.stdin.read().split("\n")
G.add_nodes_from(int(x) for x in lines[0].split()[1:])
for l in lines[1:]:
    if l:
        f, t, w = l.split()
        G.add_edge(int(f), int(t), weight=int(w))
d = nx.pagerank(G, weight="weight")
tight = nx.pagerank(G, weight="weight", tol=1e-14, max_iter=100000)
h = nx.harmonic_centrality(G)
json.dump({str(n): [d[n], tight[n], h[n]] for n in G}, sys.stdout)
`

// nxRanks are networkx's figures for one node.
type nxRanks struct{ pageRank, pageRankTight, harmonic float64 }

// networkx runs nxScript on g and returns its figures by node id.
func networkx(tb testing.TB, g *rank.Graph) map[uint64]nxRanks {
	tb.Helper()
	py := tooltest.Python(tb, "networkx, scipy")
	var in bytes.Buffer
	in.WriteString("nodes")
	for i := range g.Len() {
		fmt.Fprintf(&in, " %d", g.ID(i))
	}
	in.WriteByte('\n')
	for i := range g.Len() {
		to, w := g.Out(i)
		for j, v := range to {
			fmt.Fprintf(&in, "%d %d %d\n", g.ID(i), g.ID(int(v)), uint64(w[j]))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-c", nxScript)
	cmd.Stdin = &in
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		tb.Fatalf("networkx: %v\n%s", err, errb.String())
	}
	var raw map[string][3]float64
	if err := json.Unmarshal(out.Bytes(), &raw); err != nil {
		tb.Fatalf("networkx output: %v", err)
	}
	res := map[uint64]nxRanks{}
	for k, v := range raw {
		id, err := strconv.ParseUint(k, 10, 64)
		if err != nil {
			tb.Fatal(err)
		}
		res[id] = nxRanks{v[0], v[1], v[2]}
	}
	return res
}

// maxDiff is the largest |a[i] − b[i]| and where it is.
func maxDiff(a, b []float64) (float64, int) {
	d, at := 0.0, -1
	for i := range a {
		if x := math.Abs(a[i] - b[i]); x > d || at < 0 {
			d, at = x, i
		}
	}
	return d, at
}
