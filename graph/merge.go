package graph

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/weaver-crawler/weaver/kv"
)

// EdgeMerge is one edge of MergeEdges: Weight more on From→To, added
// first at First and last at Last.
type EdgeMerge struct {
	From, To, Weight uint64
	First, Last      time.Time
}

// MergeEdges adds edges, given in (From, To) order with no pair twice, to
// the store in key order, as AddEdge called once per unit of weight would
// leave it: a new edge is first seen at First, and every edge is last
// seen at Last with its weight grown by Weight; link facts are kept. It is
// the write of a bulk import (ingest): edges sorted in memory or merged
// from sorted runs go into the edges bucket one leaf after the other,
// each leaf read and rewritten once per transaction, instead of one
// B+tree insert per page's link; a key past the bucket's last one (a new
// store's every edge) is not looked up at all. Both nodes must exist. It
// returns ErrInconsistent for edges out of order, a self-loop or a node
// id of 0, and the store's errors.
func MergeEdges(tx *kv.Tx, edges []EdgeMerge) error {
	if len(edges) == 0 {
		return nil
	}
	for i := range edges {
		m := &edges[i]
		if m.From == 0 || m.To == 0 || m.From == m.To {
			return fmt.Errorf("graph: merge edge %d→%d: %w", m.From, m.To, ErrInconsistent)
		}
		if i > 0 {
			if p := &edges[i-1]; p.From > m.From || (p.From == m.From && p.To >= m.To) {
				return fmt.Errorf("graph: merge edge %d→%d after %d→%d: %w", m.From, m.To, p.From, p.To, ErrInconsistent)
			}
		}
	}
	// One buffer holds every key and value: bbolt keeps the slices until
	// the transaction ends.
	buf := make([]byte, 0, len(edges)*(16+edgeMaxLen))
	for i := range edges {
		buf = binary.BigEndian.AppendUint64(buf, edges[i].From)
		buf = binary.BigEndian.AppendUint64(buf, edges[i].To)
	}
	keys := buf[: len(edges)*16 : len(edges)*16]
	// The new values follow the keys in buf, ends[i] where the i-th ends:
	// they are made as the stored edges are read, and written after.
	ends := make([]int, len(edges))
	var added, weight uint64
	err := eachStored(tx, keys, func(i int, e *Edge, found bool) {
		m := &edges[i]
		if !found {
			*e = Edge{FirstSeen: m.First}
			added++
		}
		e.Weight += m.Weight
		e.LastSeen = m.Last
		weight += m.Weight
		buf = appendEdge(buf, e)
		ends[i] = len(buf)
	})
	if err != nil {
		return err
	}
	start := len(keys)
	for i := range edges {
		if err := tx.PutRaw(kv.BucketEdges, keys[i*16:i*16+16:i*16+16], buf[start:ends[i]:ends[i]]); err != nil {
			return fmt.Errorf("graph: edge %d→%d: %w", edges[i].From, edges[i].To, err)
		}
		start = ends[i]
	}
	if _, err := tx.AddCounter(counterEdges, int64(added)); err != nil {
		return err
	}
	_, err = tx.AddCounter(counterWeight, int64(weight))
	return err
}

// eachStored calls fn with each of keys (16 bytes each, in key order) in
// turn, its index and its stored edge (found) or a zero one, before any of
// them is written: one cursor walks the bucket forward along the keys,
// stepping to the next key while it is near and seeking only past a gap,
// instead of a lookup from the root per key (a merge's keys are often
// dense in the bucket); keys past the bucket's last are not looked for.
// The walk ends before the writes: bbolt's cursors do not survive a write
// to their bucket.
func eachStored(tx *kv.Tx, keys []byte, fn func(i int, e *Edge, found bool)) error {
	c := tx.Cursor(kv.BucketEdges)
	k, v := c.Seek(keys[:16])
	var e Edge
	for i := range len(keys) / 16 {
		key := keys[i*16 : i*16+16]
		for steps := 0; k != nil && bytes.Compare(k, key) < 0; steps++ {
			if steps == seekAfter {
				k, v = c.Seek(key)
				break
			}
			k, v = c.Next()
		}
		e = Edge{}
		found := k != nil && bytes.Equal(k, key)
		if found {
			if err := decodeEdge(v, &e); err != nil {
				return fmt.Errorf("graph: edge %d→%d: %w", binary.BigEndian.Uint64(key), binary.BigEndian.Uint64(key[8:]), err)
			}
		}
		fn(i, &e, found)
	}
	return nil
}

// seekAfter is how many keys eachStored steps over before it seeks.
const seekAfter = 8
