package layout

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
)

// seed is the seed of every random choice: of Louvain's node order and of
// the layout's starting positions. Fixed, so that one graph always gets
// the same communities and positions.
const seed = 1996

// Communities returns the community of every node of g, by node index,
// found by Louvain modularity optimisation at resolution 1 (see louvain;
// the node order comes from a fixed seed) and numbered by size:
// community 0 is the largest, ties going to the community holding the
// smaller node index. It also returns the partition's modularity. It
// returns the context's error, checked between levels.
func Communities(ctx context.Context, g *Graph) (comm []uint32, q float64, err error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	comm, err = louvain(ctx, g, rand.New(rand.NewPCG(seed, seed)))
	if err != nil {
		return nil, 0, err
	}
	// Number by size, largest first, ties by smallest node.
	k := 0
	for _, c := range comm {
		k = max(k, int(c)+1)
	}
	size := make([]int, k)
	first := make([]int, k)
	for i := range first {
		first[i] = -1
	}
	for i, c := range comm {
		size[c]++
		if first[c] < 0 {
			first[c] = i
		}
	}
	order := make([]int, k)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if size[a] != size[b] {
			return cmp.Compare(size[b], size[a])
		}
		return cmp.Compare(first[a], first[b])
	})
	rename := make([]uint32, k)
	for to, from := range order {
		rename[from] = uint32(to)
	}
	for i, c := range comm {
		comm[i] = rename[c]
	}
	return comm, Modularity(g, comm), nil
}

// Modularity returns the modularity of the partition comm of g (weighted,
// resolution 1): the fraction of the edge weight inside communities less
// the fraction expected were the edges placed at random with the same
// weighted degrees. It is what networkx.community.modularity computes.
func Modularity(g *Graph, comm []uint32) float64 {
	var m2 float64 // twice the total weight
	k := 0
	for _, c := range comm {
		k = max(k, int(c)+1)
	}
	in := make([]float64, k)  // weight inside each community, counted twice
	tot := make([]float64, k) // summed weighted degree of each community
	for i := range g.Len() {
		adj, w := g.Neighbors(i)
		for j, v := range adj {
			m2 += w[j]
			tot[comm[i]] += w[j]
			if comm[v] == comm[i] {
				in[comm[i]] += w[j]
			}
		}
	}
	if m2 == 0 {
		return 0
	}
	var q float64
	for c := range k {
		q += in[c]/m2 - (tot[c]/m2)*(tot[c]/m2)
	}
	return q
}
