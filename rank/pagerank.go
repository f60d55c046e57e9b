package rank

import (
	"context"
	"fmt"
	"math"
)

// PageRankOptions tune PageRank. The zero value gives networkx's
// definition with a tight tolerance.
type PageRankOptions struct {
	// Alpha is the damping factor, in (0, 1); 0 means 0.85, networkx's.
	Alpha float64
	// Tol ends the iteration when the L1 norm of the change of the rank
	// vector falls below it; 0 means 1e-10. (networkx stops at N·1e-6.)
	Tol float64
	// MaxIter bounds the iterations; 0 means 1,000.
	MaxIter int
}

// The defaults of PageRankOptions.
const (
	DefaultAlpha   = 0.85
	DefaultTol     = 1e-10
	DefaultMaxIter = 1000
)

func (o PageRankOptions) withDefaults() (PageRankOptions, error) {
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if o.Tol == 0 {
		o.Tol = DefaultTol
	}
	if o.MaxIter == 0 {
		o.MaxIter = DefaultMaxIter
	}
	if !(o.Alpha > 0 && o.Alpha < 1) || !(o.Tol > 0) || o.MaxIter < 0 {
		return o, fmt.Errorf("%w: pagerank alpha %v, tol %v, max iter %d", ErrBadOption, o.Alpha, o.Tol, o.MaxIter)
	}
	return o, nil
}

// PageRank returns the PageRank of every node of g, by node index, and
// the iterations it took: networkx.pagerank(G, alpha, weight="weight")
// with no personalisation, the rank of nodes without out-edges (or whose
// out-edges all weigh 0) spread uniformly over all nodes, starting from
// the uniform vector. The ranks sum to 1. It returns ErrBadOption,
// ErrNotConverged (with the ranks reached) or the context's error.
func PageRank(ctx context.Context, g *Graph, opt PageRankOptions) ([]float64, int, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, 0, err
	}
	n := g.Len()
	if n == 0 {
		return []float64{}, 0, nil
	}
	// inv[u] is 1/(u's out-weight), 0 for a dangling node: networkx's Q.
	inv := make([]float64, n)
	for u := range n {
		s := 0.0
		for _, w := range g.w[g.off[u]:g.off[u+1]] {
			s += w
		}
		if s != 0 {
			inv[u] = 1 / s
		}
	}
	x := make([]float64, n)
	next := make([]float64, n)
	N := float64(n)
	for i := range x {
		x[i] = 1 / N
	}
	a := opt.Alpha
	for it := 1; it <= opt.MaxIter; it++ {
		if err := ctx.Err(); err != nil {
			return nil, it, err
		}
		clear(next)
		dangling := 0.0
		for u := range n {
			if inv[u] == 0 {
				dangling += x[u]
				continue
			}
			c := x[u] * inv[u]
			lo, hi := g.off[u], g.off[u+1]
			ws := g.w[lo:hi:hi]
			for j, v := range g.to[lo:hi:hi] {
				next[v] += c * ws[j]
			}
		}
		// x = α(xP + dangling·p) + (1−α)p with p uniform, as networkx.
		base := a*dangling/N + (1-a)/N
		diff := 0.0
		for v := range next {
			y := a*next[v] + base
			diff += math.Abs(y - x[v])
			next[v] = y
		}
		x, next = next, x
		if diff < opt.Tol {
			return x, it, nil
		}
	}
	return x, opt.MaxIter, fmt.Errorf("%w in %d iterations", ErrNotConverged, opt.MaxIter)
}
