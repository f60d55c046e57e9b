package layout

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
)

// ForceOptions tune ForceAtlas2. The zero value means Gephi's defaults
// for the graph's size.
type ForceOptions struct {
	// Iterations is the number of steps; 0 chooses by size (see
	// iterations).
	Iterations int
	// Scaling is k_r, the strength of repulsion against attraction: the
	// larger, the sparser the picture. 0 means Gephi's default: 2 from
	// 100 nodes, 10 below.
	Scaling float64
	// Gravity pulls every node towards the origin with a force of
	// Gravity·(degree+1), so that disconnected parts do not drift away.
	// 0 means 1.
	Gravity float64
	// Jitter is the jitter tolerance of the adaptive speed: how much
	// swinging is accepted for speed. 0 means 1.
	Jitter float64
	// Theta is the Barnes-Hut accuracy: a cell of the quadtree acts as one
	// body on a node when its size over its distance is below Theta. 0
	// means 1.2, Gephi's.
	Theta float64
	// Workers is the number of goroutines computing forces; 0 means
	// GOMAXPROCS. The positions do not depend on it.
	Workers int
}

func (o ForceOptions) withDefaults(n int) ForceOptions {
	if o.Iterations <= 0 {
		o.Iterations = iterations(n)
	}
	if o.Scaling <= 0 {
		o.Scaling = 2
		if n < 100 {
			o.Scaling = 10
		}
	}
	if o.Gravity <= 0 {
		o.Gravity = 1
	}
	if o.Jitter <= 0 {
		o.Jitter = 1
	}
	if o.Theta <= 0 {
		o.Theta = 1.2
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o
}

// iterations is the default number of steps for n nodes: enough for the
// adaptive speed to settle a few thousand hosts, fewer for a large graph,
// whose steps cost more and whose starting positions (by community)
// already hold most of the picture. On the UK-1996 graph (5,060 hosts)
// 500 steps left communities kept together anywhere from 0.49 to 0.61
// depending on the seed (still swinging); 1,000 steps gave 0.34–0.52.
func iterations(n int) int {
	switch {
	case n <= 10_000:
		return 1000
	case n <= 100_000:
		return 150
	}
	return 50
}

// Positions lays g out with ForceAtlas2 (Jacomy, Venturini, Heymann,
// Bastian, "ForceAtlas2, a continuous graph layout algorithm for handy
// network visualization designed for the Gephi software", PLoS ONE 2014),
// as Gephi runs it: linear attraction along edges, the same for
// every edge whatever its weight (see pull; LinLog off, no dissuasion of hubs),
// repulsion k_r(deg(a)+1)(deg(b)+1)/d approximated with a Barnes-Hut
// quadtree, gravity, and the adaptive speed of section "Adaptive speed"
// (global speed from global swing and traction, each node slowed by its
// own swing). Nodes start around the centre of their community (comm by
// node index; nil starts every node at random), so that communities start
// together. The result is deterministic. It returns the context's error,
// checked between steps.
func Positions(ctx context.Context, g *Graph, comm []uint32, opt ForceOptions) (x, y []float64, err error) {
	n := g.Len()
	opt = opt.withDefaults(n)
	x, y = start(n, comm)
	if n < 2 {
		return x, y, nil
	}
	f := &fa2{g: g, opt: opt, x: x, y: y,
		mass: make([]float64, n), xy: make([]float64, 2*n),
		dx: make([]float64, n), dy: make([]float64, n),
		odx: make([]float64, n), ody: make([]float64, n),
		speed: 1, efficiency: 1,
	}
	for i := range n {
		adj, _ := g.Neighbors(i)
		f.mass[i] = float64(len(adj) + 1)
		f.xy[2*i], f.xy[2*i+1] = x[i], y[i]
	}
	for range opt.Iterations {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		f.step()
	}
	return x, y, nil
}

// start returns the starting positions: the communities' centres on a
// sunflower spiral (the largest in the middle), each spread over a disc
// whose area grows with its size, the nodes at random in their
// community's disc; from a fixed seed.
func start(n int, comm []uint32) (x, y []float64) {
	x, y = make([]float64, n), make([]float64, n)
	rnd := rand.New(rand.NewPCG(seed, seed+1))
	if comm == nil {
		r := math.Sqrt(float64(n)) * 10
		for i := range n {
			x[i], y[i] = (rnd.Float64()*2-1)*r, (rnd.Float64()*2-1)*r
		}
		return x, y
	}
	k := 0
	for _, c := range comm {
		k = max(k, int(c)+1)
	}
	size := make([]float64, k)
	for _, c := range comm {
		size[c]++
	}
	// Centre of community c: the sunflower's seed c, on a spiral whose
	// rings leave room for the discs (area ∝ nodes).
	cx, cy := make([]float64, k), make([]float64, k)
	golden := math.Pi * (3 - math.Sqrt(5))
	var area float64
	for c := range k {
		area += size[c]
		r := 10 * math.Sqrt(area)
		if c == 0 {
			r = 0
		}
		cx[c], cy[c] = r*math.Cos(float64(c)*golden), r*math.Sin(float64(c)*golden)
	}
	for i, c := range comm {
		r := 5 * math.Sqrt(size[c]) * math.Sqrt(rnd.Float64())
		a := rnd.Float64() * 2 * math.Pi
		x[i], y[i] = cx[c]+r*math.Cos(a), cy[c]+r*math.Sin(a)
	}
	return x, y
}

// fa2 is the state of a ForceAtlas2 run.
type fa2 struct {
	g          *Graph
	opt        ForceOptions
	x, y       []float64
	mass       []float64 // degree + 1
	xy         []float64 // x and y side by side, read along the edges: one cache line for both
	dx, dy     []float64 // this step's force
	odx, ody   []float64 // the last step's
	speed      float64
	efficiency float64
	tree       quadtree
}

// step runs one iteration: forces, then the adaptive speed, then moves.
func (f *fa2) step() {
	n := f.g.Len()
	f.dx, f.odx = f.odx, f.dx
	f.dy, f.ody = f.ody, f.dy
	f.tree.build(f.x, f.y, f.mass, f.opt.Workers)
	// Repulsion takes the nodes in the tree's order, leaf by leaf:
	// consecutive nodes are near each other and walk the same cells, which
	// then stay in the cache (on a million nodes, taken by index, most of
	// a step was spent waiting for memory). Each node's force is its own
	// sum, so the order changes nothing of the result.
	f.parallel(n, func(lo, hi int, stack []int32) []int32 {
		for _, i := range f.tree.perm[lo:hi] {
			stack, f.dx[i], f.dy[i] = f.tree.repulse(int(i), f.x, f.y, f.mass, f.opt.Scaling, f.opt.Theta, stack)
		}
		return stack
	})
	// Gravity and attraction take them by index, the order of the
	// adjacency lists, whose neighbours are mostly near in memory.
	f.parallel(n, func(lo, hi int, stack []int32) []int32 {
		for i := lo; i < hi; i++ {
			fx, fy := f.dx[i], f.dy[i]
			// Gravity: Gravity·mass towards the origin.
			if d := math.Hypot(f.x[i], f.y[i]); d > 0 {
				k := f.opt.Gravity * f.mass[i] / d
				fx -= f.x[i] * k
				fy -= f.y[i] * k
			}
			// Attraction: the edge's pull · distance along each edge.
			adj, w := f.g.Neighbors(i)
			xi, yi := f.x[i], f.y[i]
			for j, v := range adj {
				a := pull(w[j])
				fx += a * (f.xy[2*v] - xi)
				fy += a * (f.xy[2*v+1] - yi)
			}
			f.dx[i], f.dy[i] = fx, fy
		}
		return stack
	})
	// Adaptive speed (Gephi's ForceAtlas2.goAlgo).
	var swing, traction float64
	for i := range n {
		swing += f.mass[i] * math.Hypot(f.odx[i]-f.dx[i], f.ody[i]-f.dy[i])
		traction += f.mass[i] * 0.5 * math.Hypot(f.odx[i]+f.dx[i], f.ody[i]+f.dy[i])
	}
	nn := float64(n)
	estimated := 0.05 * math.Sqrt(nn)
	jt := f.opt.Jitter * max(math.Sqrt(estimated), min(10, estimated*traction/(nn*nn)))
	const minEfficiency = 0.05
	if traction > 0 && swing/traction > 2 {
		if f.efficiency > minEfficiency {
			f.efficiency *= 0.5
		}
		jt = max(jt, f.opt.Jitter)
	}
	target := math.Inf(1)
	if swing > 0 {
		target = jt * f.efficiency * traction / swing
	}
	if swing > jt*traction {
		if f.efficiency > minEfficiency {
			f.efficiency *= 0.7
		}
	} else if f.speed < 1000 {
		f.efficiency *= 1.3
	}
	f.speed += min(target-f.speed, 0.5*f.speed)
	// Move: each node slowed by its own swing.
	for i := range n {
		s := f.mass[i] * math.Hypot(f.odx[i]-f.dx[i], f.ody[i]-f.dy[i])
		factor := f.speed / (1 + math.Sqrt(f.speed*s))
		f.x[i] += f.dx[i] * factor
		f.y[i] += f.dy[i] * factor
		f.xy[2*i], f.xy[2*i+1] = f.x[i], f.y[i]
	}
}

// pull is the strength of an edge's attraction for its weight: 1 for
// every edge (Gephi's edge weight influence 0, networkx's forceatlas2
// default). A host's links are counted in pages, from 1 to thousands: in
// proportion (influence 1) a few heavy links hold their ends together
// and leave the communities loose (kept together 0.68 on UK-1996, 1 +
// ln w gives 0.55–0.60, unweighted 0.39–0.44). The weights still choose
// the communities, which choose where nodes start.
func pull(w float64) float64 {
	if w <= 0 {
		return 0
	}
	return 1
}

// parallel runs fn over 0..n in chunks on the workers; each worker keeps
// its own stack.
func (f *fa2) parallel(n int, fn func(lo, hi int, stack []int32) []int32) {
	spread(min(f.opt.Workers, max(n/256, 1)), n, 1024, fn)
}

// spread runs fn over 0..n in chunks of chunk, taken in turn by workers
// goroutines; each worker keeps its own stack.
func spread(workers, n, chunk int, fn func(lo, hi int, stack []int32) []int32) {
	if workers <= 1 {
		fn(0, n, nil)
		return
	}
	var next int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var stack []int32
			for {
				mu.Lock()
				lo := int(next)
				next += int64(chunk)
				mu.Unlock()
				if lo >= n {
					return
				}
				stack = fn(lo, min(lo+chunk, n), stack)
			}
		})
	}
	wg.Wait()
}

// quadtree is a Barnes-Hut quadtree over the nodes' positions, rebuilt at
// every step: cells in one slice, a cell's four children consecutive. A
// leaf holds up to leafSize nodes, whose positions and masses are copied
// side by side in the tree's order (px, py, pm), so that the exact sums
// over a leaf read consecutive memory.
type quadtree struct {
	cells      []cell
	perm       []int32 // node indices, grouped by leaf
	px, py, pm []float64
}

// leafSize is the most nodes a leaf holds: below it, summing the nodes
// one by one costs less than splitting the cell further.
const leafSize = 8

// cell is a square of the quadtree with the mass of the nodes in it and
// their centre of mass.
type cell struct {
	cx, cy, mass float64
	size         float64 // side
	child        int32   // index of the first of four children; -1 for a leaf
	lo, hi       int32   // a leaf's nodes: perm[lo:hi]
}

// maxDepth bounds the tree where nodes coincide.
const maxDepth = 24

// build makes the tree of the nodes at x, y. With workers > 1 and enough
// nodes, the subtrees below the second level are filled in parallel; the
// tree is the same (only where its cells lie in the slice differs, which
// no sum depends on).
func (t *quadtree) build(x, y, mass []float64, workers int) {
	n := len(x)
	t.cells = t.cells[:0]
	if cap(t.perm) < n {
		t.perm = make([]int32, n)
	}
	t.perm = t.perm[:n]
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for i := range n {
		t.perm[i] = int32(i)
		minX, maxX = min(minX, x[i]), max(maxX, x[i])
		minY, maxY = min(minY, y[i]), max(maxY, y[i])
	}
	size := max(maxX-minX, maxY-minY, 1e-9)
	t.cells = append(t.cells, cell{})
	if workers > 1 && n >= 1<<14 {
		t.fillParallel(workers, minX, minY, size, x, y, mass)
	} else {
		t.fill(0, 0, int32(n), minX, minY, size, 0, x, y, mass)
	}
	if cap(t.px) < n {
		t.px, t.py, t.pm = make([]float64, n), make([]float64, n), make([]float64, n)
	}
	t.px, t.py, t.pm = t.px[:n], t.py[:n], t.pm[:n]
	for k, i := range t.perm {
		t.px[k], t.py[k], t.pm[k] = x[i], y[i], mass[i]
	}
}

// subtree is a cell of the tree's top levels whose subtree is filled on
// its own (fillParallel).
type subtree struct {
	c            int
	lo, hi       int32
	x0, y0, size float64
	depth        int
	cells        []cell
}

// topDepth is the depth from which fillParallel fills subtrees apart: 16
// of them, for a few workers.
const topDepth = 2

// fillParallel fills the tree as fill does, the top topDepth levels here
// and the subtrees below on the workers, each into cells of its own,
// then joined.
func (t *quadtree) fillParallel(workers int, x0, y0, size float64, x, y, mass []float64) {
	var jobs []*subtree
	var top []int // cells of the top levels, parents before children
	var split func(c int, lo, hi int32, x0, y0, size float64, depth int)
	split = func(c int, lo, hi int32, x0, y0, size float64, depth int) {
		if depth == topDepth || hi-lo <= leafSize {
			jobs = append(jobs, &subtree{c: c, lo: lo, hi: hi, x0: x0, y0: y0, size: size, depth: depth})
			return
		}
		top = append(top, c)
		half := size / 2
		q, corners, first := t.quadrants(lo, hi, x0, y0, half, x, y)
		t.cells[c] = cell{size: size, child: first}
		for k := range 4 {
			split(int(first)+k, q[k], q[k+1], corners[k][0], corners[k][1], half, depth+1)
		}
	}
	split(0, 0, int32(len(x)), x0, y0, size, 0)
	spread(min(workers, len(jobs)), len(jobs), 1, func(lo, hi int, stack []int32) []int32 {
		for _, j := range jobs[lo:hi] {
			sub := quadtree{cells: []cell{{}}, perm: t.perm}
			sub.fill(0, j.lo, j.hi, j.x0, j.y0, j.size, j.depth, x, y, mass)
			j.cells = sub.cells
		}
		return stack
	})
	for _, j := range jobs {
		off := int32(len(t.cells)) - 1 // the subtree's cell k > 0 goes to off+k
		for k, c := range j.cells {
			if c.child >= 0 {
				c.child += off
			}
			if k == 0 {
				t.cells[j.c] = c
			} else {
				t.cells = append(t.cells, c)
			}
		}
	}
	for k := len(top) - 1; k >= 0; k-- {
		t.sumChildren(top[k])
	}
}

// sumChildren sets the mass and centre of mass of cell c, an inner cell,
// from its four children's.
func (t *quadtree) sumChildren(c int) {
	p := &t.cells[c]
	var m, sx, sy float64
	for _, ch := range t.cells[p.child : p.child+4] {
		if ch.mass > 0 {
			m += ch.mass
			sx += ch.mass * ch.cx
			sy += ch.mass * ch.cy
		}
	}
	p.cx, p.cy, p.mass = sx/m, sy/m, m
}

// quadrants partitions perm[lo:hi], the nodes of the square at (x0, y0)
// of side 2·half, into its four quadrants (left bottom, left top, right
// bottom, right top), appends their four cells, and returns the bounds of
// each in perm (q[k]:q[k+1]), its corner, and the index of the first cell.
func (t *quadtree) quadrants(lo, hi int32, x0, y0, half float64, x, y []float64) (q [5]int32, corners [4][2]float64, first int32) {
	mx, my := x0+half, y0+half
	p := t.perm
	split := func(lo, hi int32, left func(i int32) bool) int32 {
		for lo < hi {
			if left(p[lo]) {
				lo++
			} else {
				hi--
				p[lo], p[hi] = p[hi], p[lo]
			}
		}
		return lo
	}
	mid := split(lo, hi, func(i int32) bool { return x[i] < mx })
	q1 := split(lo, mid, func(i int32) bool { return y[i] < my })
	q3 := split(mid, hi, func(i int32) bool { return y[i] < my })
	first = int32(len(t.cells))
	t.cells = append(t.cells, cell{}, cell{}, cell{}, cell{})
	corners = [4][2]float64{{x0, y0}, {x0, my}, {mx, y0}, {mx, my}}
	return [5]int32{lo, q1, mid, q3, hi}, corners, first
}

// fill makes cell c the square at (x0, y0) of side size holding
// perm[lo:hi], splitting it into quadrants while it holds more than one
// node.
func (t *quadtree) fill(c int, lo, hi int32, x0, y0, size float64, depth int, x, y, mass []float64) {
	var m, sx, sy float64
	if hi-lo <= leafSize || depth >= maxDepth {
		for _, i := range t.perm[lo:hi] {
			m += mass[i]
			sx += mass[i] * x[i]
			sy += mass[i] * y[i]
		}
		t.cells[c] = cell{cx: sx / m, cy: sy / m, mass: m, size: size, child: -1, lo: lo, hi: hi}
		return
	}
	half := size / 2
	q, corners, first := t.quadrants(lo, hi, x0, y0, half, x, y)
	for k := range 4 {
		t.fill(int(first)+k, q[k], q[k+1], corners[k][0], corners[k][1], half, depth+1, x, y, mass)
	}
	t.cells[c] = cell{size: size, child: first}
	t.sumChildren(c)
}

// repulse returns the repulsion on node i: k·mass(i)·mass(j)/d from every
// other node j, a cell standing for its nodes when size/d < theta.
func (t *quadtree) repulse(i int, x, y, mass []float64, k, theta float64, stack []int32) ([]int32, float64, float64) {
	var fx, fy float64
	xi, yi, mi := x[i], y[i], mass[i]
	t2 := theta * theta
	stack = append(stack[:0], 0)
	for len(stack) > 0 {
		c := &t.cells[stack[len(stack)-1]]
		stack = stack[:len(stack)-1]
		if c.mass == 0 {
			continue
		}
		dx, dy := xi-c.cx, yi-c.cy
		d2 := dx*dx + dy*dy
		if c.size*c.size < t2*d2 {
			f := k * mi * c.mass / d2
			fx += dx * f
			fy += dy * f
			continue
		}
		if c.child < 0 {
			px, py, pm := t.px[c.lo:c.hi], t.py[c.lo:c.hi], t.pm[c.lo:c.hi]
			for j := range px {
				dx, dy := xi-px[j], yi-py[j]
				// Itself, or a node at the same place: no direction.
				if d2 := dx*dx + dy*dy; d2 > 0 {
					f := k * mi * pm[j] / d2
					fx += dx * f
					fy += dy * f
				}
			}
			continue
		}
		stack = append(stack, c.child, c.child+1, c.child+2, c.child+3)
	}
	return stack, fx, fy
}
