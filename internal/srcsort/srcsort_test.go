package srcsort_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weaver-crawler/weaver/internal/srcsort"
)

// link is an edge as an import holds it: seq is the order it came in.
type link struct {
	from, to uint64
	seq      uint32
}

func source(l link) uint64 { return l.from }

func byTarget(a, b link) int { return cmp.Or(cmp.Compare(a.to, b.to), cmp.Compare(a.seq, b.seq)) }

// TestSort: the counting sort (sources dense for the batch: groups of one
// to hundreds of edges) and the comparison sort (sources sparse) both give
// the order of a stable sort by source and target, one sorter reused
// across batches of any size.
func TestSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var s srcsort.Sorter[link]
	for _, tc := range []struct{ n, sources, targets int }{
		{0, 1, 1}, {1, 1, 1}, {2, 2, 2}, {500, 40, 40}, {5000, 300, 20}, {5000, 10, 1000},
		{3000, 100_000, 100_000}, {20, 1 << 40, 5}, {100, 3, 2},
	} {
		t.Run(fmt.Sprintf("%d/%d/%d", tc.n, tc.sources, tc.targets), func(t *testing.T) {
			ls := make([]link, tc.n)
			for i := range ls {
				ls[i] = link{from: r.Uint64N(uint64(tc.sources)), to: r.Uint64N(uint64(tc.targets)), seq: uint32(i)}
			}
			want := slices.Clone(ls)
			slices.SortStableFunc(want, func(a, b link) int { return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.to, b.to)) })
			s.Sort(ls, source, byTarget)
			for i := range ls {
				if ls[i] != want[i] {
					t.Fatalf("sorted %d links of %d sources: at %d %+v, a stable sort gives %+v", tc.n, tc.sources, i, ls[i], want[i])
				}
			}
		})
	}
}

// BenchmarkSort: a run of an import of the 10,000-host WAT of
// docs/performance.md (872,000 links of 10,000 hosts), by srcsort and by
// a comparison sort of the whole batch.
func BenchmarkSort(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]link, 872_000)
	for i := range src {
		src[i] = link{from: 1 + r.Uint64N(10_000), to: 1 + r.Uint64N(10_000), seq: uint32(i)}
	}
	ls := make([]link, len(src))
	b.Run("srcsort", func(b *testing.B) {
		var s srcsort.Sorter[link]
		for b.Loop() {
			copy(ls, src)
			s.Sort(ls, source, byTarget)
		}
	})
	b.Run("slices.SortFunc", func(b *testing.B) {
		for b.Loop() {
			copy(ls, src)
			slices.SortFunc(ls, func(a, b link) int { return cmp.Or(cmp.Compare(a.from, b.from), byTarget(a, b)) })
		}
	})
}
