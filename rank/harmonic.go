package rank

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
)

// HarmonicOptions choose how harmonic centrality is computed.
type HarmonicOptions struct {
	// ExactMax is the largest graph (in nodes) whose harmonic centrality
	// is computed exactly; larger ones are estimated with HyperBall.
	// 0 means DefaultExactMax; a negative value always estimates.
	ExactMax int
	// Log2m sets HyperBall's counters to 2^Log2m registers, in 4..12;
	// 0 means DefaultLog2m. The relative standard error of one counter
	// is about 1.04/√(2^Log2m).
	Log2m int
	// Seed seeds HyperBall's hash; 0 means a fixed default.
	Seed uint64
	// Workers is how many goroutines the exact computation uses; 0 means
	// GOMAXPROCS.
	Workers int
}

// The defaults of HarmonicOptions.
const (
	DefaultExactMax = 10_000
	DefaultLog2m    = 6
	DefaultSeed     = 0x9e3779b97f4a7c15
)

func (o HarmonicOptions) withDefaults() (HarmonicOptions, error) {
	if o.ExactMax == 0 {
		o.ExactMax = DefaultExactMax
	}
	if o.Log2m == 0 {
		o.Log2m = DefaultLog2m
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Log2m < 4 || o.Log2m > 12 {
		return o, fmt.Errorf("%w: hyperball log2m %d, want 4..12", ErrBadOption, o.Log2m)
	}
	return o, nil
}

// Method says how harmonic centrality was computed: "exact", or
// "hyperball" with its counters' size.
type Method string

// MethodExact is the Method of an exact computation.
const MethodExact Method = "exact"

func hyperBallMethod(log2m int) Method {
	return Method(fmt.Sprintf("hyperball, %d registers per counter", 1<<log2m))
}

// Exact reports whether m is MethodExact.
func (m Method) Exact() bool { return m == MethodExact }

// Harmonic returns the harmonic centrality of every node of g, by node
// index, exact when g has at most opt.ExactMax nodes and estimated with
// HyperBall above, and how it was computed. It returns ErrBadOption or
// the context's error.
func Harmonic(ctx context.Context, g *Graph, opt HarmonicOptions) ([]float64, Method, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, "", err
	}
	if opt.ExactMax > 0 && g.Len() <= opt.ExactMax {
		h, err := HarmonicExact(ctx, g, opt.Workers)
		return h, MethodExact, err
	}
	h, _, err := HyperBall(ctx, g, opt.Log2m, opt.Seed)
	return h, hyperBallMethod(opt.Log2m), err
}

// HarmonicExact returns the exact harmonic centrality of every node x of
// g, Σ 1/d(y, x) over the nodes y ≠ x that reach x, d counting edges
// (networkx.harmonic_centrality(G) on a directed graph: it sums, for each
// source y, 1/d over the nodes y reaches). It runs breadth-first searches
// over the reversed edges, 64 at a time (one bit of a word per search:
// "multi-source BFS"), batches spread over workers goroutines (0:
// GOMAXPROCS). Each node's sum is made by one search, level by level, so
// the result does not depend on how the work is shared. It costs at most
// O(N·(N+E)) time, and on web graphs about 1/20 of that. It returns the
// context's error.
func HarmonicExact(ctx context.Context, g *Graph, workers int) ([]float64, error) {
	n := g.Len()
	h := make([]float64, n)
	if n == 0 {
		return h, nil
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	batches := (n + 63) / 64
	workers = min(workers, batches)
	off, src := g.transpose()
	var next atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			s := newSearch(n)
			for !stop.Load() {
				b := int(next.Add(1) - 1)
				if b >= batches {
					return
				}
				if ctx.Err() != nil {
					stop.Store(true)
					return
				}
				s.run(off, src, b*64, min(b*64+64, n), h)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return h, nil
}

// search is one worker's state for breadth-first searches of 64 targets
// at once: bit j of a node's words is about target first+j.
type search struct {
	seen   []uint64 // targets the node reaches within the current distance
	front  []uint64 // targets the node reaches at exactly the current distance
	next   []uint64 // targets the node reaches at the next distance
	active []uint32 // nodes whose front is not empty
	fresh  []uint32 // nodes whose next is not empty
}

func newSearch(n int) *search {
	return &search{seen: make([]uint64, n), front: make([]uint64, n), next: make([]uint64, n)}
}

// run adds to h[first:last] (at most 64 targets) their harmonic
// centrality: level d of the search finds the nodes at distance d from
// each target against the edges (src[off[v]:off[v+1]] link to v).
func (s *search) run(off, src []uint32, first, last int, h []float64) {
	clear(s.seen)
	s.active = s.active[:0]
	for x := first; x < last; x++ {
		s.seen[x] = 1 << (x - first)
		s.front[x] = s.seen[x]
		s.active = append(s.active, uint32(x))
	}
	var count [64]int
	for d := 1; len(s.active) > 0; d++ {
		s.fresh = s.fresh[:0]
		for _, w := range s.active {
			f := s.front[w]
			for _, v := range src[off[w]:off[w+1]] {
				// v links to w: v is one step further from w's targets,
				// unless it was nearer.
				if nb := f &^ s.seen[v]; nb != 0 {
					if s.next[v] == 0 {
						s.fresh = append(s.fresh, v)
					}
					s.next[v] |= nb
					s.seen[v] |= nb
				}
			}
		}
		for _, w := range s.active {
			s.front[w] = 0
		}
		count = [64]int{}
		for _, v := range s.fresh {
			bs := s.next[v]
			s.front[v], s.next[v] = bs, 0
			for ; bs != 0; bs &= bs - 1 {
				count[bits.TrailingZeros64(bs)]++
			}
		}
		for j, c := range count[:last-first] {
			if c > 0 {
				h[first+j] += float64(c) / float64(d)
			}
		}
		s.active, s.fresh = s.fresh, s.active
	}
}

// HyperBall returns an estimate of the harmonic centrality of every node
// of g, by node index, and the number of iterations (the largest finite
// distance, plus one to see that nothing changes): every node keeps a
// HyperLogLog counter of 2^log2m one-byte registers holding the nodes that
// reach it within t edges; at step t a node's counter takes the union of
// its own and those of the nodes linking to it whose counters changed at
// step t−1. The nodes are shared among GOMAXPROCS goroutines, each
// computing its nodes' new counters from the last step's, so the result
// does not depend on how the work is shared. The counters of two steps
// cost 2·N·2^log2m bytes, the reversed edges 4·(N+E). Hashes are seeded by
// seed, so the result is deterministic. It returns ErrBadOption or the
// context's error.
func HyperBall(ctx context.Context, g *Graph, log2m int, seed uint64) ([]float64, int, error) {
	if log2m < 4 || log2m > 12 {
		return nil, 0, fmt.Errorf("%w: hyperball log2m %d, want 4..12", ErrBadOption, log2m)
	}
	n := g.Len()
	h := make([]float64, n)
	if n == 0 {
		return h, 0, nil
	}
	off, src := g.transpose()
	c := newCounters(n, log2m)
	est := make([]float64, n) // the last estimate of each counter
	for i := range n {
		c.add(c.cur, i, mix(g.ids[i]^seed))
	}
	copy(c.next, c.cur)
	one := c.estimate(c.cur[:c.words]) // every counter holds one node
	for i := range est {
		est[i] = one
	}
	changed := newBitset(n) // counters changed at the last step
	for i := range n {
		changed.set(i)
	}
	fresh := newBitset(n) // counters changed at this step
	workers := min(runtime.GOMAXPROCS(0), (n+ballChunk-1)/ballChunk)
	t := 0
	for !changed.empty() {
		t++
		if err := ctx.Err(); err != nil {
			return nil, t, err
		}
		inv := 1 / float64(t)
		// step computes the new counters of the nodes lo..hi-1 (a range of
		// whole bitset words, so workers never share one).
		step := func(lo, hi int) {
			for v := lo; v < hi; v++ {
				dst := c.of(c.next, v)
				// next equals cur except where a counter changed last step.
				if changed.has(v) {
					copy(dst, c.of(c.cur, v))
				}
				grew := false
				for _, u := range src[off[v]:off[v+1]] {
					if changed.has(int(u)) && c.union(dst, c.of(c.cur, int(u))) {
						grew = true
					}
				}
				if !grew {
					continue
				}
				fresh.set(v)
				// HyperLogLog's estimate is not monotone where it switches
				// to linear counting: keep the largest, so that no step
				// subtracts.
				if e := c.estimate(dst); e > est[v] {
					h[v] += (e - est[v]) * inv
					est[v] = e
				}
			}
		}
		fresh.clear()
		if workers <= 1 {
			step(0, n)
		} else {
			var next atomic.Int64
			var wg sync.WaitGroup
			for range workers {
				wg.Go(func() {
					for {
						lo := int(next.Add(ballChunk) - ballChunk)
						if lo >= n {
							return
						}
						step(lo, min(lo+ballChunk, n))
					}
				})
			}
			wg.Wait()
		}
		c.cur, c.next = c.next, c.cur
		changed, fresh = fresh, changed
	}
	return h, t, nil
}

// ballChunk is how many nodes a HyperBall worker takes at a time: a
// multiple of 64, so that two workers never write one word of a bitset.
const ballChunk = 4096

// counters are the HyperLogLog counters of every node, for the current
// step and the next, 2^log2m one-byte registers each, 8 to a word.
type counters struct {
	log2m     int
	m         float64
	words     int // words per counter
	cur, next []uint64
	alphaMM   float64      // α_m·m², the estimator's constant
	pow       [128]float64 // pow[r] = 2^−r
}

func newCounters(n, log2m int) *counters {
	m := 1 << log2m
	c := &counters{log2m: log2m, m: float64(m), words: m / 8}
	c.cur = make([]uint64, n*c.words)
	c.next = make([]uint64, n*c.words)
	var alpha float64
	switch m {
	case 16:
		alpha = 0.673
	case 32:
		alpha = 0.697
	case 64:
		alpha = 0.709
	default:
		alpha = 0.7213 / (1 + 1.079/float64(m))
	}
	c.alphaMM = alpha * c.m * c.m
	for r := range c.pow {
		c.pow[r] = math.Ldexp(1, -r)
	}
	return c
}

// of returns node v's counter in regs.
func (c *counters) of(regs []uint64, v int) []uint64 {
	return regs[v*c.words : (v+1)*c.words : (v+1)*c.words]
}

// add adds the element of hash x to node v's counter in regs: the first
// log2m bits choose the register, which keeps the largest position of the
// first 1 bit among the rest (at most 65 − log2m, well under 128).
func (c *counters) add(regs []uint64, v int, x uint64) {
	j := x >> (64 - c.log2m)
	rest := x<<c.log2m | 1<<(c.log2m-1) // a sentinel bit bounds the count
	r := uint64(bits.LeadingZeros64(rest) + 1)
	w := &c.of(regs, v)[j/8]
	shift := 8 * (j % 8)
	if old := (*w >> shift) & 0xff; r > old {
		*w = *w&^(0xff<<shift) | r<<shift
	}
}

// union sets dst to the register-wise maximum of dst and src, and
// reports whether dst changed.
func (c *counters) union(dst, src []uint64) bool {
	var diff uint64
	for k, s := range src {
		d := dst[k]
		m := maxBytes(d, s)
		diff |= m ^ d
		dst[k] = m
	}
	return diff != 0
}

// hi is the high bit of every byte of a word.
const hi = 0x8080808080808080

// maxBytes is the byte-wise maximum of two words whose bytes are all
// below 128: (x|hi) − (y&^hi) keeps, in each byte's high bit, whether x's
// byte is at least y's (no borrow crosses bytes), which then selects it.
func maxBytes(x, y uint64) uint64 {
	ge := ((x | hi) - (y &^ hi)) & hi
	mask := (ge >> 7) * 0xff
	return x&mask | y&^mask
}

// estimate is HyperLogLog's estimate of a counter's size, with linear
// counting for small sizes (Flajolet et al. 2007).
func (c *counters) estimate(regs []uint64) float64 {
	sum := 0.0
	zeros := 0
	for _, w := range regs {
		for range 8 {
			r := w & 0xff
			sum += c.pow[r]
			if r == 0 {
				zeros++
			}
			w >>= 8
		}
	}
	e := c.alphaMM / sum
	if e <= 2.5*c.m && zeros > 0 {
		e = c.m * math.Log(c.m/float64(zeros))
	}
	return e
}

// mix is SplitMix64's finaliser: a bijection of 64-bit words that spreads
// every input bit over the output.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// bitset is a set of node indices.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) set(i int) { b[i/64] |= 1 << (i % 64) }

func (b bitset) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }

func (b bitset) clear() { clear(b) }

func (b bitset) empty() bool {
	for _, w := range b {
		if w != 0 {
			return false
		}
	}
	return true
}

// each calls fn for every index in b, ascending.
func (b bitset) each(fn func(i int)) {
	for k, w := range b {
		for w != 0 {
			fn(k*64 + bits.TrailingZeros64(w))
			w &= w - 1
		}
	}
}
