package rank_test

import (
	"cmp"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/weaver-crawler/weaver/rank"
)

// solvePageRank is PageRank's fixed point found another way: the linear
// system x(I − αM) = (1−α)/N·1, M the row-normalised weights with the
// rows of dangling nodes uniform, by Gaussian elimination.
func solvePageRank(n int, edges []edge, alpha float64) []float64 {
	out := make([]float64, n)
	for _, e := range edges {
		out[e.from-1] += float64(e.w)
	}
	// a is (I − αM)ᵀ, with the right-hand side in column n.
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n+1)
		a[i][i] = 1
		a[i][n] = (1 - alpha) / float64(n)
	}
	for u := range n {
		if out[u] == 0 {
			for v := range n {
				a[v][u] -= alpha / float64(n)
			}
		}
	}
	for _, e := range edges {
		a[e.to-1][e.from-1] -= alpha * float64(e.w) / out[e.from-1]
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		for r := range n {
			if r != c {
				f := a[r][c] / a[c][c]
				for k := c; k <= n; k++ {
					a[r][k] -= f * a[c][k]
				}
			}
		}
	}
	x := make([]float64, n)
	for i := range x {
		x[i] = a[i][n] / a[i][i]
	}
	return x
}

// floydHarmonic is harmonic centrality from all-pairs distances
// (Floyd–Warshall): Σ 1/d(y, x) over y ≠ x with a path to x.
func floydHarmonic(n int, edges []edge) []float64 {
	const inf = math.MaxInt32
	d := make([][]int, n)
	for i := range d {
		d[i] = make([]int, n)
		for j := range d[i] {
			if i != j {
				d[i][j] = inf
			}
		}
	}
	for _, e := range edges {
		d[e.from-1][e.to-1] = 1
	}
	for k := range n {
		for i := range n {
			for j := range n {
				if d[i][k] != inf && d[k][j] != inf && d[i][k]+d[k][j] < d[i][j] {
					d[i][j] = d[i][k] + d[k][j]
				}
			}
		}
	}
	h := make([]float64, n)
	for x := range n {
		for y := range n {
			if y != x && d[y][x] != inf {
				h[x] += 1 / float64(d[y][x])
			}
		}
	}
	return h
}

// TestPageRank_FixedPoint compares PageRank with the linear system's
// solution on random graphs with dangling and isolated nodes.
func TestPageRank_FixedPoint(t *testing.T) {
	for seed := range uint64(20) {
		n := 5 + int(seed)*7
		edges := randomGraph(n, n*2, seed)
		g := build(t, n, edges)
		for _, alpha := range []float64{0.85, 0.5} {
			got, iters, err := rank.PageRank(context.Background(), g, rank.PageRankOptions{Alpha: alpha})
			if err != nil {
				t.Fatal(err)
			}
			want := solvePageRank(n, edges, alpha)
			if d, at := maxDiff(got, want); d > 1e-9 {
				t.Errorf("seed %d, %d nodes, alpha %v: node %d: %v, want %v (after %d iterations)", seed, n, alpha, at, got[at], want[at], iters)
			}
			sum := 0.0
			for _, x := range got {
				sum += x
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Errorf("seed %d: ranks sum to %v, want 1", seed, sum)
			}
		}
	}
}

// TestPageRank_Known checks figures worked out by hand.
func TestPageRank_Known(t *testing.T) {
	ctx := context.Background()
	// A cycle: every node has the same rank.
	g := build(t, 3, []edge{{1, 2, 5}, {2, 3, 1}, {3, 1, 2}})
	pr, _, err := rank.PageRank(ctx, g, rank.PageRankOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range pr {
		if math.Abs(x-1.0/3) > 1e-12 {
			t.Errorf("cycle: node %d has %v, want 1/3", i, x)
		}
	}
	// 1 → 2 with 2 dangling: x1 = α·x2/2 + (1−α)/2 and x1 + x2 = 1, so
	// x1 = 1/(2+α).
	g = build(t, 2, []edge{{1, 2, 1}})
	pr, _, err = rank.PageRank(ctx, g, rank.PageRankOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := 0.85
	x1 := 1 / (2 + a)
	if math.Abs(pr[0]-x1) > 1e-9 || math.Abs(pr[1]-(1-x1)) > 1e-9 {
		t.Errorf("1 → 2: %v, want [%v %v]", pr, x1, 1-x1)
	}
	// Weight counts: 1 → 2 (weight 3) and 1 → 3 (weight 1), 2 and 3
	// dangling: 2 gets three times 3's share of 1's rank.
	g = build(t, 3, []edge{{1, 2, 3}, {1, 3, 1}})
	pr, _, err = rank.PageRank(ctx, g, rank.PageRankOptions{})
	if err != nil {
		t.Fatal(err)
	}
	base := pr[2] - a*pr[0]*0.25
	if got := pr[1] - base; math.Abs(got-3*a*pr[0]*0.25) > 1e-9 {
		t.Errorf("weighted: node 2 gets %v from node 1, want %v", got, 3*a*pr[0]*0.25)
	}
}

func TestPageRank_Options(t *testing.T) {
	g := build(t, 3, []edge{{1, 2, 1}, {2, 3, 1}})
	for _, opt := range []rank.PageRankOptions{{Alpha: 1}, {Alpha: -0.1}, {Alpha: math.NaN()}, {Tol: -1}, {MaxIter: -1}} {
		if _, _, err := rank.PageRank(context.Background(), g, opt); !errors.Is(err, rank.ErrBadOption) {
			t.Errorf("%+v: %v, want ErrBadOption", opt, err)
		}
	}
	_, iters, err := rank.PageRank(context.Background(), g, rank.PageRankOptions{MaxIter: 2})
	if !errors.Is(err, rank.ErrNotConverged) || iters != 2 {
		t.Errorf("2 iterations: %v after %d, want ErrNotConverged after 2", err, iters)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := rank.PageRank(ctx, g, rank.PageRankOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestHarmonicExact_Distances compares the exact harmonic centrality with
// all-pairs distances on random graphs, with 1 and 3 workers.
func TestHarmonicExact_Distances(t *testing.T) {
	for seed := range uint64(20) {
		n := 5 + int(seed)*6
		edges := randomGraph(n, n*2, seed+100)
		g := build(t, n, edges)
		want := floydHarmonic(n, edges)
		for _, workers := range []int{1, 3} {
			got, err := rank.HarmonicExact(context.Background(), g, workers)
			if err != nil {
				t.Fatal(err)
			}
			if d, at := maxDiff(got, want); d > 1e-12 {
				t.Errorf("seed %d, %d workers: node %d: %v, want %v", seed, workers, at, got[at], want[at])
			}
		}
	}
}

// TestHarmonic_Direction: in a → b → c, c is reached by two hosts (at 1
// and 2 hops), a by none; networkx sums 1/d(y, x) over the y that reach x.
func TestHarmonic_Direction(t *testing.T) {
	g := build(t, 3, []edge{{1, 2, 1}, {2, 3, 1}})
	for _, tc := range []struct {
		name string
		opt  rank.HarmonicOptions
	}{{"exact", rank.HarmonicOptions{}}, {"hyperball", rank.HarmonicOptions{ExactMax: -1, Log2m: 12}}} {
		h, method, err := rank.Harmonic(context.Background(), g, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		if method.Exact() != (tc.name == "exact") {
			t.Errorf("%s: method %q", tc.name, method)
		}
		// With 4,096 registers, HyperBall's linear counting is within a
		// per cent of one, two and three elements (with fewer, two
		// elements more often share a register and count as one).
		for i, want := range []float64{0, 1, 1.5} {
			if math.Abs(h[i]-want) > 0.02 {
				t.Errorf("%s: node %d: %v, want %v", tc.name, i, h[i], want)
			}
		}
	}
}

func TestHarmonic_Options(t *testing.T) {
	g := build(t, 3, []edge{{1, 2, 1}})
	for _, opt := range []rank.HarmonicOptions{{Log2m: 3}, {Log2m: 13}} {
		if _, _, err := rank.Harmonic(context.Background(), g, opt); !errors.Is(err, rank.ErrBadOption) {
			t.Errorf("%+v: %v, want ErrBadOption", opt, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := rank.HarmonicExact(ctx, g, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("exact, cancelled: %v", err)
	}
	if _, _, err := rank.HyperBall(ctx, g, 6, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("hyperball, cancelled: %v", err)
	}
}

// TestHyperBall_SmallBallsNearExact: on a long path every ball is small,
// where HyperLogLog's linear counting with many registers is close to
// exact.
func TestHyperBall_SmallBallsNearExact(t *testing.T) {
	const n = 30
	var edges []edge
	for i := uint64(1); i < n; i++ {
		edges = append(edges, edge{i, i + 1, 1})
	}
	g := build(t, n, edges)
	exact, err := rank.HarmonicExact(context.Background(), g, 1)
	if err != nil {
		t.Fatal(err)
	}
	est, iters, err := rank.HyperBall(context.Background(), g, 12, rank.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	if iters != n { // distances up to n−1, then one step that changes nothing
		t.Errorf("%d iterations, want %d", iters, n)
	}
	for i := range exact {
		if math.Abs(est[i]-exact[i]) > 0.05*exact[i]+1e-9 {
			t.Errorf("node %d: estimate %v, exact %v", i, est[i], exact[i])
		}
	}
}

// TestHyperBall_Deterministic: the same graph and seed give the same
// figures; another seed, other figures.
func TestHyperBall_Deterministic(t *testing.T) {
	g := synthetic(t, 3000, 8, 7)
	a, _, err := rank.HyperBall(context.Background(), g, 6, 42)
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := rank.HyperBall(context.Background(), g, 6, 42)
	c, _, _ := rank.HyperBall(context.Background(), g, 6, 43)
	if !slices.Equal(a, b) {
		t.Error("two runs with one seed differ")
	}
	// One goroutine or several: the same figures.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	one, _, _ := rank.HyperBall(context.Background(), g, 6, 42)
	runtime.GOMAXPROCS(4)
	four, _, _ := rank.HyperBall(context.Background(), g, 6, 42)
	if !slices.Equal(a, one) || !slices.Equal(a, four) {
		t.Error("the figures depend on GOMAXPROCS")
	}
	if slices.Equal(a, c) {
		t.Error("two seeds gave the same figures")
	}
}

func TestTop(t *testing.T) {
	scores := []float64{0.1, 0.5, 0.2, 0.5, 0.05, 0.3}
	for _, tc := range []struct {
		n    int
		want []int
	}{
		{0, []int{}}, {1, []int{1}}, {3, []int{1, 3, 5}}, {6, []int{1, 3, 5, 2, 0, 4}}, {10, []int{1, 3, 5, 2, 0, 4}}, {-1, []int{}},
	} {
		if got := rank.Top(scores, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("Top(%d) = %v, want %v", tc.n, got, tc.want)
		}
	}
}

// TestTop_Large: Top of many (sorting all) and of few (a sorted list)
// agree with one reference order, ties by index, NaN last, on both sides
// of where Top changes method.
func TestTop_Large(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 4))
	scores := make([]float64, 5000)
	for i := range scores {
		scores[i] = float64(r.IntN(300)) / 7 // many ties
	}
	scores[17], scores[4000] = math.NaN(), math.NaN()
	ref := make([]int, len(scores))
	for i := range ref {
		ref[i] = i
	}
	slices.SortStableFunc(ref, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	for _, n := range []int{1, 10, 255, 256, 257, 1000, 4999, 5000, 6000} {
		want := ref[:min(n, len(ref))]
		if got := rank.Top(scores, n); !slices.Equal(got, want) {
			t.Errorf("Top(%d): differs from the reference order", n)
		}
	}
}

func TestSpearman(t *testing.T) {
	for _, tc := range []struct {
		a, b []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}, 1},
		{[]float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
		{[]float64{1, 2, 3, 4, 5}, []float64{2, 1, 4, 3, 5}, 0.8},          // 1 − 6·4/(5·24)
		{[]float64{1, 1, 2, 3}, []float64{1, 2, 3, 4}, 0.9486832980505138}, // ties: ranks 1.5 1.5 3 4
	} {
		if got := rank.Spearman(tc.a, tc.b); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Spearman(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	for _, bad := range [][2][]float64{{{1}, {1}}, {{1, 2}, {1, 2, 3}}, {{1, 1, 1}, {1, 2, 3}}} {
		if got := rank.Spearman(bad[0], bad[1]); !math.IsNaN(got) {
			t.Errorf("Spearman(%v, %v) = %v, want NaN", bad[0], bad[1], got)
		}
	}
}
