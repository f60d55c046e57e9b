package layout

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortPairs_AsComparisonSort: the radix sort orders pairs as a
// stable comparison sort does, at sizes on both sides of where it takes
// over and for node numbers small and as large as they go.
func TestSortPairs_AsComparisonSort(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 2))
	for _, n := range []int{0, 1, 100, 1<<12 - 1, 1 << 12, 50_000} {
		for _, top := range []uint32{1, 7, 3000, 1 << 20, math.MaxUint32} {
			p := make([]pair, n)
			for i := range p {
				u, v := r.Uint32N(top), r.Uint32N(top)
				p[i] = pair{min(u, v), max(u, v), float64(i)} // w: the original position
			}
			want := slices.Clone(p)
			slices.SortStableFunc(want, func(a, c pair) int {
				if r := cmp.Compare(a.u, c.u); r != 0 {
					return r
				}
				return cmp.Compare(a.v, c.v)
			})
			sortPairs(p)
			if !slices.Equal(p, want) {
				t.Fatalf("%d pairs below %d: radix sort differs", n, top)
			}
		}
	}
}

// TestIDIndex_AsBinarySearch: the index of ids finds what a binary search
// finds, for dense ids (an array) and sparse ones (a search), and misses
// what is not there.
func TestIDIndex_AsBinarySearch(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 3))
	for _, spread := range []uint64{1, 2, 4, 1000, 1 << 40} {
		var ids []uint64
		next := uint64(1)
		for range 5000 {
			ids = append(ids, next)
			next += 1 + r.Uint64N(spread)
		}
		x := newIDIndex(ids)
		if (x.table != nil) != (spread <= 4) {
			t.Errorf("spread %d: table %v", spread, x.table != nil)
		}
		for range 20000 {
			id := r.Uint64N(next + 10)
			if r.IntN(2) == 0 {
				id = ids[r.IntN(len(ids))]
			}
			gi, gok := x.find(id)
			wi, wok := slices.BinarySearch(ids, id)
			if gok != wok || (wok && gi != wi) {
				t.Fatalf("spread %d, id %d: found %d %v, want %d %v", spread, id, gi, gok, wi, wok)
			}
		}
	}
	if _, ok := newIDIndex(nil).find(1); ok {
		t.Error("an empty index found 1")
	}
}

// newIDIndex returns the index of ids, ascending, as the Builder's
// AddNode builds it.
func newIDIndex(ids []uint64) idIndex {
	var x idIndex
	for _, id := range ids {
		x.add(id)
	}
	return x
}
