package fakeweb

import (
	"slices"
)

// genGraph draws the links between generated hosts.
//
// First a spanning tree, by preferential attachment: each host i > 0 gets one
// in-link from an earlier host, drawn with probability proportional to that
// host's tree degree, among hosts that have fewer than maxChildren tree
// children and whose robots.txt lets weaver in. Tree links are placed among
// the first few links of the parent's page, so every host is reachable from
// host 0 through the links a crawler keeps with max_outbound_links of 8 or
// more. Then every page draws its remaining links from a Zipf law, so
// in-degrees have the heavy tail of real host graphs.
func (w *Web) genGraph() {
	n := len(w.sites)
	if n == 0 {
		return
	}
	r := newRNG(w.seed, streamGraph, 0)
	urn := make([]int32, 0, 3*n)
	urn = append(urn, 0)
	children := make([][]int32, n)
	eligible := func(j int32, strict bool) bool {
		if len(children[j]) >= maxChildren {
			return false
		}
		return !strict || w.sites[j].robots != robotsDisallowed
	}
	for i := 1; i < n; i++ {
		parent := int32(-1)
		for _, strict := range []bool{true, false} {
			for try := 0; try < 32 && parent < 0; try++ {
				if j := urn[r.intn(len(urn))]; eligible(j, strict) {
					parent = j
				}
			}
			for k, start := 0, r.intn(i); k < i && parent < 0; k++ {
				if j := int32((start + k) % i); eligible(j, strict) {
					parent = j
				}
			}
		}
		if parent < 0 {
			parent = int32(r.intn(i))
		}
		children[parent] = append(children[parent], int32(i))
		urn = append(urn, int32(i), parent)
	}
	// Other links go to targets drawn from a Zipf law over host numbers:
	// host k has weight 1/(k+3), so early hosts, like the old hosts of
	// preferential attachment, collect most in-links.
	cum := make([]float64, n)
	total := 0.0
	for k := range cum {
		total += 1 / float64(k+3)
		cum[k] = total
	}
	lpp := w.cfg.LinksPerPage
	for i := 0; i < n; i++ {
		want := max(lpp/2+r.intn(lpp+1), len(children[i])) - len(children[i])
		out := make([]int32, 0, want+len(children[i]))
		for len(out) < want && n > 1 {
			t, _ := slices.BinarySearch(cum, r.float()*total)
			if t == i || t >= n {
				continue
			}
			out = append(out, int32(t))
		}
		for _, c := range children[i] {
			pos := r.intn(min(4, len(out)+1))
			out = append(out, 0)
			copy(out[pos+1:], out[pos:])
			out[pos] = c
		}
		w.sites[i].out = out
		w.drawBase(r, i)
	}
}

// drawBase gives some home pages a <base> (see page.render): of the 100
// values a draw from r takes, 3 give host i's page the first host it
// links to as base (when it links to one), 3 a path of its own, 3 a
// target only.
func (w *Web) drawBase(r *rng, i int) {
	switch v := r.intn(100); {
	case v < 3 && len(w.sites[i].out) > 0:
		w.sites[i].base = baseOther
	case v < 6:
		w.sites[i].base = baseSame
	case v < 9:
		w.sites[i].base = baseTarget
	}
}
