package layout_test

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/internal/tooltest"
	"github.com/weaver-crawler/weaver/layout"
)

type edge struct {
	from, to int
	w        float64
}

// build returns the graph of n nodes (ids 1..n) and the directed edges
// (by node index).
func build(tb testing.TB, n int, edges []edge) *layout.Graph {
	tb.Helper()
	b := layout.NewBuilder(n, len(edges))
	for i := range n {
		if err := b.AddNode(uint64(i + 1)); err != nil {
			tb.Fatal(err)
		}
	}
	for _, e := range edges {
		if err := b.AddEdge(uint64(e.from+1), uint64(e.to+1), e.w); err != nil {
			tb.Fatal(err)
		}
	}
	g, err := b.Graph()
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// planted returns a planted-partition graph: k groups of size nodes,
// each pair linked with probability pin inside a group and pout across,
// and the group of each node.
func planted(k, size int, pin, pout float64, s uint64) (n int, edges []edge, truth []uint32) {
	n = k * size
	rnd := rand.New(rand.NewPCG(s, s))
	truth = make([]uint32, n)
	for i := range n {
		truth[i] = uint32(i / size)
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			p := pout
			if truth[i] == truth[j] {
				p = pin
			}
			if rnd.Float64() < p {
				// Directed both ways at random, as links are.
				if rnd.IntN(2) == 0 {
					edges = append(edges, edge{i, j, float64(1 + rnd.IntN(3))})
				} else {
					edges = append(edges, edge{j, i, float64(1 + rnd.IntN(3))})
				}
			}
		}
	}
	return n, edges, truth
}

// ukEdges reads a UK-1996 subgraph file (source, target, weight).
func ukEdges(tb testing.TB, name string) (n int, edges []edge) {
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
	id := map[string]int{}
	of := func(h string) int {
		if i, ok := id[h]; ok {
			return i
		}
		id[h] = len(id)
		return id[h]
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), "\t")
		if len(parts) != 3 {
			continue
		}
		w, err := strconv.ParseFloat(parts[2], 64)
		if err != nil || parts[0] == parts[1] {
			continue
		}
		edges = append(edges, edge{of(parts[0]), of(parts[1]), w})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return len(id), edges
}

// nxLouvain runs networkx's louvain_communities on the undirected
// weighted graph of edges (weights of both directions summed) and
// returns the modularity of its partition, best of seeds.
func nxLouvain(tb testing.TB, n int, edges []edge, seeds int) float64 {
	tb.Helper()
	py := tooltest.Python(tb, "networkx", "/usr/bin/python3", "python3")
	var in bytes.Buffer
	fmt.Fprintf(&in, "%d %d\n", n, seeds)
	for _, e := range edges {
		fmt.Fprintf(&in, "%d %d %g\n", e.from, e.to, e.w)
	}
	qs := tooltest.LouvainModularity(tb, py, in.Bytes())
	best := slices.Max(qs)
	tb.Logf("networkx louvain modularity over %d seeds: %v", seeds, qs)
	return best
}
