// Merge's hosts and nodes in one read of each input: the inputs' host
// indexes merged in host order give every host its output id, then each
// output node is joined from its inputs' records and written in id order.

package archive

import (
	"bytes"
	"container/heap"
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/shard"
)

// viewAll calls fn with a read transaction of each of srcs, in order.
func viewAll(srcs []*kv.Store, fn func(txs []*kv.Tx) error) error {
	txs := make([]*kv.Tx, 0, len(srcs))
	var view func(i int) error
	view = func(i int) error {
		if i == len(srcs) {
			return fn(txs)
		}
		return srcs[i].View(func(tx *kv.Tx) error {
			txs = append(txs, tx)
			return view(i + 1)
		})
	}
	return view(0)
}

// hostCursor is one input's host index (host → id, in host order) in the
// k-way merge of hostHeap.
type hostCursor struct {
	c     *kv.Cursor
	k, v  []byte
	input int
}

// hostHeap orders the inputs' host cursors by their current host, then
// by input.
type hostHeap []*hostCursor

func (h hostHeap) Len() int { return len(h) }
func (h hostHeap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].k, h[j].k); c != 0 {
		return c < 0
	}
	return h[i].input < h[j].input
}
func (h hostHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *hostHeap) Push(x any)   { *h = append(*h, x.(*hostCursor)) }
func (h *hostHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// member is one input's id for the host being merged.
type member struct {
	input int
	id    uint64
}

// eachHost calls fn for every host of the inputs' host indexes, in host
// order, with the inputs that hold it (in input order) and their ids.
// host and the slice are reused between calls.
func (m *merger) eachHost(srcs []*kv.Store, txs []*kv.Tx, fn func(host []byte, in []member) error) error {
	var h hostHeap
	for i, tx := range txs {
		c := &hostCursor{c: tx.Cursor(kv.BucketHosts), input: i}
		if c.k, c.v = c.c.First(); c.k != nil {
			h = append(h, c)
		}
	}
	heap.Init(&h)
	var host []byte
	var in []member
	count := 0
	for len(h) > 0 {
		host = append(host[:0], h[0].k...)
		in = in[:0]
		for len(h) > 0 && bytes.Equal(h[0].k, host) {
			c := h[0]
			if len(c.v) != 8 || binary.BigEndian.Uint64(c.v) == 0 {
				return fmt.Errorf("%s: host index entry %q holds %x, not a node id: %w", srcs[c.input].Path(), c.k, c.v, graph.ErrInconsistent)
			}
			in = append(in, member{c.input, binary.BigEndian.Uint64(c.v)})
			if c.k, c.v = c.c.Next(); c.k == nil {
				heap.Pop(&h)
			} else {
				heap.Fix(&h, 0)
			}
		}
		if err := fn(host, in); err != nil {
			return err
		}
		if count++; count%m.batch == 0 {
			if err := m.ctx.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// firstSet marks, per input, the ids of the hosts that input is the first
// to hold; rank numbers them in id order.
type firstSet struct {
	words []uint64
	ranks []uint64 // ranks[w]: marks in words before w
}

func (s *firstSet) mark(id uint64) {
	w := id / 64
	for uint64(len(s.words)) <= w {
		s.words = append(s.words, 0)
	}
	s.words[w] |= 1 << (id % 64)
}

func (s *firstSet) has(id uint64) bool {
	w := id / 64
	return w < uint64(len(s.words)) && s.words[w]&(1<<(id%64)) != 0
}

// count makes the ranks and returns how many ids are marked.
func (s *firstSet) count() uint64 {
	s.ranks = make([]uint64, len(s.words))
	var n uint64
	for w, x := range s.words {
		s.ranks[w] = n
		n += uint64(bits.OnesCount64(x))
	}
	return n
}

// rank is how many marked ids are below id.
func (s *firstSet) rank(id uint64) uint64 {
	w := id / 64
	return s.ranks[w] + uint64(bits.OnesCount64(s.words[w]&(1<<(id%64)-1)))
}

// nodes merges the inputs' nodes into dst by host and records their new
// ids, reading each input's host index twice and its nodes once:
//
//  1. the host indexes, merged in host order, mark each host in the first
//     input that holds it;
//  2. merged again, they give each host its output id (the first input's
//     hosts in id order, then the second's new hosts in id order, ...),
//     map every input's id for it, and write the output's host index in
//     host order;
//  3. each input's nodes, in id order, give the records of the hosts it
//     holds first, in output id order: each is joined with the later
//     inputs' records of its host (looked up by host) and written.
//
// Host ids are kept in memory (8 bytes per input node, and a bit); the
// hosts never are.
func (m *merger) nodes(srcs []*kv.Store) error {
	firsts := make([]firstSet, len(srcs))
	specs := make([]shard.Spec, len(srcs))
	sharded := make([]bool, len(srcs))
	for i, src := range srcs {
		var err error
		if specs[i], sharded[i], err = shardOf(src); err != nil {
			return err
		}
	}
	return viewAll(srcs, func(txs []*kv.Tx) error {
		for i, tx := range txs {
			m.ids[i].limit = 4*graph.GetCounts(tx).Nodes + 1<<20
		}
		err := m.eachHost(srcs, txs, func(_ []byte, in []member) error {
			if in[0].id >= m.ids[in[0].input].limit {
				return fmt.Errorf("%s: node id %d is beyond the store's count: %w", srcs[in[0].input].Path(), in[0].id, graph.ErrInconsistent)
			}
			firsts[in[0].input].mark(in[0].id)
			return nil
		})
		if err != nil {
			return err
		}
		offsets := make([]uint64, len(srcs)+1)
		for i := range firsts {
			offsets[i+1] = offsets[i] + firsts[i].count()
		}
		if err := m.hostIndex(srcs, txs, firsts, offsets); err != nil {
			return err
		}
		for f := range txs {
			if err := m.nodesFirstIn(srcs, txs, f, &firsts[f], offsets[f+1]-offsets[f], specs, sharded); err != nil {
				return err
			}
		}
		return m.dst.Update(func(tx *kv.Tx) error { return graph.AddBulkNodes(tx, offsets[len(srcs)]) })
	})
}

// hostIndex maps every input's ids to the output's and writes the
// output's host index, in host order (step 2 of nodes).
func (m *merger) hostIndex(srcs []*kv.Store, txs []*kv.Tx, firsts []firstSet, offsets []uint64) error {
	type entry struct {
		host []byte
		id   uint64
	}
	var batch []entry
	var arena []byte
	flush := func() error {
		err := m.dst.Update(func(tx *kv.Tx) error {
			for _, e := range batch {
				if err := graph.IndexHost(tx, e.host, e.id); err != nil {
					return err
				}
			}
			return nil
		})
		batch, arena = batch[:0], nil
		return err
	}
	err := m.eachHost(srcs, txs, func(host []byte, in []member) error {
		f := in[0].input
		id := offsets[f] + firsts[f].rank(in[0].id) + 1
		for _, mb := range in {
			m.ids[mb.input].set(mb.id, id)
		}
		if len(arena)+len(host) > cap(arena) {
			arena = make([]byte, 0, max(1<<20, len(host)))
		}
		start := len(arena)
		arena = append(arena, host...)
		batch = append(batch, entry{arena[start:len(arena):len(arena)], id})
		if len(batch) == min(m.batch, appendBatch) {
			return flush()
		}
		return nil
	})
	if err == nil && len(batch) > 0 {
		err = flush()
	}
	return err
}

// nodesFirstIn writes the want nodes of the hosts input f is the first to
// hold, joined with the later inputs' records (step 3 of nodes).
func (m *merger) nodesFirstIn(srcs []*kv.Store, txs []*kv.Tx, f int, first *firstSet, want uint64, specs []shard.Spec, sharded []bool) error {
	// Nodes are large: a transaction of fewer, the slice made once.
	size := min(m.batch, 1024)
	batch := make([]graph.Node, 0, size)
	flush := func() error {
		err := m.dst.Update(func(tx *kv.Tx) error {
			for j := range batch {
				n := &batch[j]
				// MirrorOf from an input names that input's ids: file the node again.
				if _, err := graph.NoteContentHash(tx, n); err != nil {
					return err
				}
				if err := graph.Put(tx, n); err != nil {
					return err
				}
			}
			return nil
		})
		batch = batch[:0]
		return err
	}
	var seen uint64
	c := txs[f].Cursor(kv.BucketNodes)
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 8 {
			return fmt.Errorf("%s: node key %x: %w", srcs[f].Path(), k, graph.ErrInconsistent)
		}
		old := binary.BigEndian.Uint64(k)
		id := m.ids[f].get(old)
		if id == 0 {
			return fmt.Errorf("%s: node %d is missing from the host index: %w", srcs[f].Path(), old, graph.ErrInconsistent)
		}
		if !first.has(old) {
			continue // an earlier input's host: written with its record
		}
		seen++
		var cur graph.Node
		if err := graph.DecodeNode(k, v, &cur); err != nil {
			return fmt.Errorf("%s: node %x: %w", srcs[f].Path(), k, err)
		}
		cur.ID = id
		curStub := sharded[f] && !specs[f].Owns(cur.Host)
		for j := f + 1; j < len(txs); j++ {
			id, ok := graph.Lookup(txs[j], cur.Host)
			if !ok {
				continue
			}
			n, ok, err := graph.Get(txs[j], id)
			if err != nil || !ok || n.Host != cur.Host {
				if err == nil {
					err = fmt.Errorf("host index entry %q names node %d, which is not its node: %w", cur.Host, id, graph.ErrInconsistent)
				}
				return fmt.Errorf("%s: %w", srcs[j].Path(), err)
			}
			curStub = joinNode(&cur, curStub, &n, sharded[j] && !specs[j].Owns(n.Host))
		}
		if !cur.NextDue.IsZero() {
			m.due = append(m.due, dueAt{cur.ID, cur.NextDue})
		}
		batch = append(batch, cur)
		if len(batch) == size {
			if err := m.ctx.Err(); err != nil {
				return err
			}
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if seen != want {
		return fmt.Errorf("%s: the host index names %d nodes the nodes bucket lacks: %w", srcs[f].Path(), want-seen, graph.ErrInconsistent)
	}
	if len(batch) == 0 {
		return nil
	}
	return flush()
}
