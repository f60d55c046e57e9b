// Package srcsort sorts batches of edges by their source's id, then by
// what else orders the edges of one source. Node ids are dense (a store
// gives them from a counter), so a batch whose sources are few for its
// size is sorted with an in-place counting sort by source (one pass to
// count, one to move each edge into its source's place) and each source's
// edges are sorted among themselves, instead of a comparison sort of the
// whole batch: a batch of a merge or an import is mostly groups of a few
// to a few hundred edges of one source.
package srcsort

import (
	"cmp"
	"slices"
)

// Sorter sorts batches; it keeps its counts from one batch to the next.
// The zero value is ready to use.
type Sorter[E any] struct {
	next []uint32 // per source: where its next edge goes
	end  []uint32 // per source: where its edges end
}

// Sort sorts es in place by source, then, among the edges of one source,
// by within. A batch whose largest source is beyond 4 times its size (plus
// 1,024), or of 2^32 edges or more, is sorted by comparison instead.
func (s *Sorter[E]) Sort(es []E, source func(E) uint64, within func(a, b E) int) {
	var top uint64
	for i := range es {
		top = max(top, source(es[i]))
	}
	if top >= uint64(4*len(es)+1024) || uint64(len(es)) >= 1<<32 {
		slices.SortFunc(es, func(a, b E) int { return cmp.Or(cmp.Compare(source(a), source(b)), within(a, b)) })
		return
	}
	if cap(s.next) < int(top)+2 {
		s.next = make([]uint32, top+2)
	}
	next := s.next[:top+2]
	clear(next)
	for i := range es {
		next[source(es[i])+1]++
	}
	for i := 1; i < len(next); i++ {
		next[i] += next[i-1]
	}
	// next[f] is where source f's edges start, end[f] where they end.
	// Each edge not in its source's place is swapped into it: a cycle of
	// swaps ends with an edge that belongs where the cycle began.
	if cap(s.end) < len(next) {
		s.end = make([]uint32, len(next))
	}
	end := s.end[:len(next)]
	copy(end, next[1:])
	for f := uint64(0); f <= top; f++ {
		for next[f] < end[f] {
			i := next[f]
			e := es[i]
			for src := source(e); src != f; src = source(e) {
				j := next[src]
				next[src]++
				es[j], e = e, es[j]
			}
			es[i] = e
			next[f]++
		}
	}
	start := 0
	for i := 1; i <= len(es); i++ {
		if i < len(es) && source(es[i]) == source(es[start]) {
			continue
		}
		if group := es[start:i]; len(group) > 16 {
			slices.SortFunc(group, within)
		} else {
			for a := 1; a < len(group); a++ {
				for b := a; b > 0 && within(group[b], group[b-1]) < 0; b-- {
					group[b], group[b-1] = group[b-1], group[b]
				}
			}
		}
		start = i
	}
}
