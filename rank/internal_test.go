package rank

import (
	"math"
	"testing"
)

// TestMaxBytes checks the broadword maximum against a byte loop for
// every pair of register values, in every byte position.
func TestMaxBytes(t *testing.T) {
	for a := range uint64(128) {
		for b := range uint64(128) {
			for pos := range 8 {
				x := a<<(8*pos) | 0x05<<(8*((pos+1)%8))
				y := b<<(8*pos) | 0x7f<<(8*((pos+3)%8))
				want := uint64(0)
				for k := range 8 {
					bx, by := (x>>(8*k))&0xff, (y>>(8*k))&0xff
					want |= max(bx, by) << (8 * k)
				}
				if got := maxBytes(x, y); got != want {
					t.Fatalf("maxBytes(%#x, %#x) = %#x, want %#x", x, y, got, want)
				}
			}
		}
	}
}

// TestCounters_Estimate checks HyperLogLog's estimate on known sizes:
// within four standard errors of the true size, and exact enough where
// linear counting applies.
func TestCounters_Estimate(t *testing.T) {
	for _, log2m := range []int{4, 6, 8} {
		c := newCounters(1, log2m)
		se := 1.04 / math.Sqrt(c.m)
		for n := 1; n <= 200_000; n++ {
			c.add(c.cur, 0, mix(uint64(n)^DefaultSeed))
			if n != 1 && n != 10 && n != 1000 && n != 200_000 {
				continue
			}
			e := c.estimate(c.cur)
			if math.Abs(e-float64(n)) > 4*se*float64(n)+0.05 {
				t.Errorf("2^%d registers, %d elements: estimate %.1f, off by more than 4 standard errors (%.1f%%)", log2m, n, e, 100*se)
			}
		}
	}
}

// TestCounters_UnionIsMax checks that union keeps the larger register and
// reports a change exactly when there was one.
func TestCounters_UnionIsMax(t *testing.T) {
	c := newCounters(2, 6)
	for i := range 50 {
		c.add(c.cur, 0, mix(uint64(i)))
		c.add(c.cur, 1, mix(uint64(i+25)))
	}
	a, b := c.of(c.cur, 0), c.of(c.cur, 1)
	before := append([]uint64(nil), a...)
	if !c.union(a, b) {
		t.Fatal("union of two different counters reported no change")
	}
	for k := range a {
		if a[k] != maxBytes(before[k], b[k]) {
			t.Fatalf("word %d: %#x, want %#x", k, a[k], maxBytes(before[k], b[k]))
		}
	}
	if c.union(a, b) {
		t.Error("a second union with the same counter reported a change")
	}
}

func TestBitset(t *testing.T) {
	b := newBitset(130)
	if !b.empty() {
		t.Fatal("new bitset not empty")
	}
	for _, i := range []int{129, 0, 64, 63} {
		b.set(i)
	}
	var got []int
	b.each(func(i int) { got = append(got, i) })
	if want := []int{0, 63, 64, 129}; len(got) != len(want) || got[0] != 0 || got[1] != 63 || got[2] != 64 || got[3] != 129 {
		t.Errorf("each: %v, want %v", got, want)
	}
	b.clear()
	if !b.empty() {
		t.Error("cleared bitset not empty")
	}
}
