// Package rank computes two ranks of every host of a link graph, with
// exactly the definitions of networkx, so that anyone can check them:
//
//   - PageRank weighted by edge weight, damping 0.85, the rank of hosts
//     without out-links spread uniformly over every host:
//     networkx.pagerank(G, weight="weight").
//   - Harmonic centrality in hops: the sum over the other hosts y of
//     1/d(y, x), the length of the shortest path from y to x, over the
//     hosts y that reach x: networkx.harmonic_centrality(G). A host that
//     many hosts reach in few hops ranks high.
//
// Common Crawl publishes the same two ranks for its host graphs, computed
// with WebGraph.
//
// The algorithms run over Graph, a compact copy of the graph in memory
// (compressed sparse rows: uint32 node indices, one offset per node, one
// target and one float64 weight per edge, about 12 bytes per edge and 16
// per node), built with a Builder from nodes in id order and edges in
// (from, to) order, the order the store and the export view hand them out
// (nodes first, or edges first for a walk that reads the edges first).
// Load builds one from a store's read transaction.
//
// PageRank is a power iteration, as networkx's: x ← α(xP + d/N) + (1−α)/N
// where P is the row-normalised weight matrix and d the rank held by
// hosts without out-links. networkx stops when the L1 change is below
// N·1e-6, which leaves an error of up to ~1e-5 per host on graphs of a few
// thousand hosts; weaver iterates until the L1 change is below 1e-10 (the
// L1 distance to the fixed point is then below 6e-10), so it agrees with
// networkx run to a tight tolerance within 1e-9 per host.
//
// Harmonic centrality is exact up to ExactMax (10,000) hosts: a
// breadth-first search from every host over the reversed edges, spread
// over the machine's cores. Above that it is estimated with HyperBall
// (Boldi and Vigna, "In-core computation of geometric centralities with
// HyperBall", 2013), the algorithm WebGraph uses for Common Crawl's ranks:
// each host keeps a HyperLogLog counter of the hosts within t hops of it
// (against the edges), t = 0, 1, 2, ... until no counter changes; the ball
// B(x, t) grows by the union of the balls B(y, t−1) of the hosts y linking
// to x, and the harmonic centrality is Σ_t (|B(x,t)| − |B(x,t−1)|)/t.
// Counters have 2^Log2m registers of one byte (64 by default), hashes are
// seeded, so two runs give the same figures. Its Spearman rank correlation
// with the exact ranks is measured in the tests on a 10,000-host graph.
//
// rank knows nothing of the export formats; package export writes the
// ranks beside every node.
package rank
