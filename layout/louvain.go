package layout

import (
	"context"
	"math/rand/v2"
)

// level is one level of Louvain's hierarchy: a graph whose nodes are the
// communities of the level below, with the weight inside each as a
// self-loop.
type level struct {
	off, adj []uint32
	w        []float64
	self     []float64 // weight of the self-loop of each node
}

func (l *level) len() int { return len(l.off) - 1 }

// louvain returns a community of every node of g (Blondel, Guillaume,
// Lambiotte, Lefebvre, "Fast unfolding of communities in large networks",
// 2008), at resolution 1: local moving, nodes visited in an order drawn
// from rnd, until a pass moves no node; then each community becomes a node
// and the moving starts again on that graph, until no node moves. Ties go
// to the node's own community, then to the community met first.
func louvain(ctx context.Context, g *Graph, rnd *rand.Rand) ([]uint32, error) {
	n := g.Len()
	member := make([]uint32, n) // community of each node of g, at the current level
	for i := range member {
		member[i] = uint32(i)
	}
	cur := &level{off: g.off, adj: g.adj, w: g.w, self: make([]float64, n)}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		comm, k, moved := localMove(cur, rnd)
		if !moved {
			return member, nil
		}
		for i := range member {
			member[i] = comm[member[i]]
		}
		if k == cur.len() {
			return member, nil
		}
		cur = aggregate(cur, comm, k)
	}
}

// localMove moves nodes of l between communities while modularity grows,
// and returns the community of each node numbered 0..k-1 in the order of
// their first node, and whether any node moved.
//
// Nodes are visited from a queue (the "fast local move" of Traag, Waltman
// and van Eck, "From Louvain to Leiden", 2019): first every node, in an
// order drawn from rnd; then, each time a node moves, those of its
// neighbours outside its new community that are not queued already. The
// moving ends when the queue is empty: no node can gain by moving. This
// reaches the same kind of local optimum as repeated passes over every
// node, but visits mostly the nodes whose neighbourhood changed: on a
// million nodes, a fraction of the visits.
func localMove(l *level, rnd *rand.Rand) (comm []uint32, k int, moved bool) {
	n := l.len()
	deg := make([]float64, n) // weighted degree, the self-loop counted twice
	var m2 float64
	for i := range n {
		d := 2 * l.self[i]
		for _, w := range l.w[l.off[i]:l.off[i+1]] {
			d += w
		}
		deg[i] = d
		m2 += d
	}
	comm = make([]uint32, n)
	tot := make([]float64, n) // summed degree of each community
	for i := range n {
		comm[i] = uint32(i)
		tot[i] = deg[i]
	}
	if m2 == 0 {
		return comm, n, false
	}
	// The queue is a ring of n slots: a node is in it at most once.
	queue := make([]uint32, n)
	for k, i := range rnd.Perm(n) {
		queue[k] = uint32(i)
	}
	queued := make([]bool, n)
	for i := range queued {
		queued[i] = true
	}
	head, size := 0, n
	link := make([]float64, n) // weight from the node to each community, while visiting it
	touched := make([]uint32, 0, 64)
	// A bound on the visits, against floating-point cycles: a node moving
	// back and forth on gains at the limit of precision.
	for visits := 0; size > 0 && visits < 1000*n; visits++ {
		i := queue[head]
		head++
		if head == n {
			head = 0
		}
		size--
		queued[i] = false
		c0 := comm[i]
		touched = touched[:0]
		for e := l.off[i]; e < l.off[i+1]; e++ {
			c := comm[l.adj[e]]
			if link[c] == 0 {
				touched = append(touched, c)
			}
			link[c] += l.w[e]
		}
		tot[c0] -= deg[i]
		ki := deg[i] / m2
		best, gain := c0, link[c0]-tot[c0]*ki
		for _, c := range touched {
			if g := link[c] - tot[c]*ki; g > gain+1e-12 {
				best, gain = c, g
			}
		}
		for _, c := range touched {
			link[c] = 0
		}
		tot[best] += deg[i]
		if best == c0 {
			continue
		}
		comm[i] = best
		moved = true
		for e := l.off[i]; e < l.off[i+1]; e++ {
			j := l.adj[e]
			if !queued[j] && comm[j] != best {
				queued[j] = true
				t := head + size
				if t >= n {
					t -= n
				}
				queue[t] = j
				size++
			}
		}
	}
	// Renumber 0..k-1.
	num := make([]int32, n)
	for i := range num {
		num[i] = -1
	}
	for i, c := range comm {
		if num[c] < 0 {
			num[c] = int32(k)
			k++
		}
		comm[i] = uint32(num[c])
	}
	return comm, k, moved
}

// aggregate returns the graph of l's k communities: the weight between two
// communities is the weight of the edges between their nodes, the weight
// inside one its self-loop.
func aggregate(l *level, comm []uint32, k int) *level {
	self := make([]float64, k)
	var p []pair
	for i := range l.len() {
		ci := comm[i]
		self[ci] += l.self[i]
		for e := l.off[i]; e < l.off[i+1]; e++ {
			j := l.adj[e]
			if uint32(i) > j {
				continue // each edge once, from its smaller end
			}
			cj := comm[j]
			switch {
			case ci == cj:
				self[ci] += l.w[e]
			case ci < cj:
				p = append(p, pair{ci, cj, l.w[e]})
			default:
				p = append(p, pair{cj, ci, l.w[e]})
			}
		}
	}
	off, adj, w := csr(k, mergePairs(p))
	return &level{off: off, adj: adj, w: w, self: self}
}
