package rank

import (
	"cmp"
	"context"
	"math"
	"slices"
)

// Options choose what Compute computes and how.
type Options struct {
	PageRank PageRankOptions
	Harmonic HarmonicOptions
	// NoHarmonic leaves harmonic centrality out (Ranks.Harmonic is nil):
	// PageRank alone is cheap enough for a status report.
	NoHarmonic bool
}

// Ranks are the ranks of every node of a Graph, by node index.
type Ranks struct {
	PageRank       []float64
	Harmonic       []float64 // nil with Options.NoHarmonic
	HarmonicMethod Method    // "" with Options.NoHarmonic
	Iterations     int       // PageRank's
}

// Compute returns the PageRank and the harmonic centrality of every node
// of g. It returns ErrBadOption, ErrNotConverged or the context's error.
func Compute(ctx context.Context, g *Graph, opt Options) (Ranks, error) {
	var r Ranks
	var err error
	if r.PageRank, r.Iterations, err = PageRank(ctx, g, opt.PageRank); err != nil {
		return Ranks{}, err
	}
	if opt.NoHarmonic {
		return r, nil
	}
	if r.Harmonic, r.HarmonicMethod, err = Harmonic(ctx, g, opt.Harmonic); err != nil {
		return Ranks{}, err
	}
	return r, nil
}

// topInsert is the most indices Top keeps in a sorted list as it reads
// the scores; above, it sorts them all.
const topInsert = 256

// Top returns the indices of the n largest scores, largest first; equal
// scores keep index order (node index order is id order). n larger than
// len(scores) returns every index.
func Top(scores []float64, n int) []int {
	n = max(min(n, len(scores)), 0)
	better := func(a, b int) int {
		if c := cmp.Compare(scores[b], scores[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	}
	if n > topInsert {
		// Many of them: sort every index. Keeping a sorted list by
		// insertion moves the list at each insert: for all of a million
		// hosts (weaver show's position of one) that took two minutes.
		all := make([]int, len(scores))
		for i := range all {
			all[i] = i
		}
		slices.SortFunc(all, better)
		return all[:n:n]
	}
	top := make([]int, 0, n+1)
	for i := range scores {
		if len(top) == n && (n == 0 || better(i, top[n-1]) >= 0) {
			continue
		}
		at, _ := slices.BinarySearchFunc(top, i, better)
		top = slices.Insert(top, at, i)
		if len(top) > n {
			top = top[:n]
		}
	}
	return top
}

// Spearman returns Spearman's rank correlation of a and b (the Pearson
// correlation of their ranks, equal values sharing their average rank),
// in [−1, 1]; NaN when the slices differ in length, hold fewer than two
// values, or one of them is constant.
func Spearman(a, b []float64) float64 {
	if len(a) != len(b) || len(a) < 2 {
		return math.NaN()
	}
	ra, rb := ranks(a), ranks(b)
	n := float64(len(a))
	var ma, mb float64
	for i := range ra {
		ma += ra[i]
		mb += rb[i]
	}
	ma /= n
	mb /= n
	var sab, saa, sbb float64
	for i := range ra {
		da, db := ra[i]-ma, rb[i]-mb
		sab += da * db
		saa += da * da
		sbb += db * db
	}
	if saa == 0 || sbb == 0 {
		return math.NaN()
	}
	return sab / math.Sqrt(saa*sbb)
}

// ranks returns the rank of each value of x (1 for the smallest), ties
// given the average of the ranks they span.
func ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(i, j int) int { return cmp.Compare(x[i], x[j]) })
	r := make([]float64, len(x))
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		for hi < len(idx) && x[idx[hi]] == x[idx[lo]] {
			hi++
		}
		avg := float64(lo+hi+1) / 2 // ranks lo+1..hi
		for _, i := range idx[lo:hi] {
			r[i] = avg
		}
		lo = hi
	}
	return r
}
