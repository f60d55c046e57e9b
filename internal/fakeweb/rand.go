package fakeweb

// rng is a splitmix64 generator. The fake web carries its own generator rather
// than math/rand so that pages stay byte-for-byte identical across Go releases:
// tests and golden files compare bytes, and a stdlib change to how Intn maps
// random bits must not reshuffle the web.
type rng struct{ s uint64 }

// Streams keep independent aspects of a host (its names, its links, its filler
// text) from consuming each other's randomness, so that rendering a page without
// its filler (for Links) draws exactly the same link decorations as serving it.
const (
	streamGraph uint64 = iota + 1
	streamNames
	streamLinks
	streamFill
	streamMeta
	streamBinary
	streamJitter
)

// newRNG returns a generator for one (seed, stream, index) triple.
func newRNG(seed int64, stream uint64, index int) *rng {
	r := &rng{s: uint64(seed)}
	r.s = r.next() ^ stream*0xd1b54a32d192ed03
	r.s = r.next() ^ uint64(index)*0x9e3779b97f4a7c15
	r.next()
	return r
}

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a value in [0, n); n must be positive and below 2^32. It
// scales the top 32 bits rather than dividing (Lemire), which is faster and
// as uniform as the fake web needs.
func (r *rng) intn(n int) int {
	return int((r.next() >> 32) * uint64(n) >> 32)
}

// chance reports true with probability p.
func (r *rng) chance(p float64) bool {
	return r.float() < p
}

// float returns a value in [0, 1).
func (r *rng) float() float64 {
	return float64(r.next()>>11) / (1 << 53)
}

// pick returns a random element of s.
func pick[T any](r *rng, s []T) T {
	return s[r.intn(len(s))]
}
