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
	old, found, err := storedEdges(tx, keys)
	if err != nil {
		return err
	}
	var added, weight uint64
	for i := range edges {
		m := &edges[i]
		e := old[i]
		if !found[i] {
			e = Edge{FirstSeen: m.First}
			added++
		}
		e.Weight += m.Weight
		e.LastSeen = m.Last
		weight += m.Weight
		start := len(buf)
		buf = appendEdge(buf, &e)
		if err := tx.PutRaw(kv.BucketEdges, keys[i*16:i*16+16:i*16+16], buf[start:len(buf):len(buf)]); err != nil {
			return fmt.Errorf("graph: edge %d→%d: %w", m.From, m.To, err)
		}
	}
	if _, err := tx.AddCounter(counterEdges, int64(added)); err != nil {
		return err
	}
	_, err = tx.AddCounter(counterWeight, int64(weight))
	return err
}

// storedEdges reads the stored edges of keys (16 bytes each, in key
// order) before any of them is written: one cursor walks the bucket
// forward along the keys, stepping to the next key while it is near and
// seeking only past a gap, instead of a lookup from the root per key (a
// merge's keys are often dense in the bucket). found[i] reports whether
// the i-th key's edge is stored; keys past the bucket's last are not
// looked for. The walk is done before the writes: bbolt's cursors do not
// survive a write to their bucket.
func storedEdges(tx *kv.Tx, keys []byte) (old []Edge, found []bool, err error) {
	n := len(keys) / 16
	old, found = make([]Edge, n), make([]bool, n)
	c := tx.Cursor(kv.BucketEdges)
	k, v := c.Seek(keys[:16])
	for i := 0; i < n && k != nil; i++ {
		key := keys[i*16 : i*16+16]
		for steps := 0; k != nil && bytes.Compare(k, key) < 0; steps++ {
			if steps == seekAfter {
				k, v = c.Seek(key)
				break
			}
			k, v = c.Next()
		}
		if k == nil || !bytes.Equal(k, key) {
			continue
		}
		if err := decodeEdge(v, &old[i]); err != nil {
			return nil, nil, fmt.Errorf("graph: edge %d→%d: %w", binary.BigEndian.Uint64(key), binary.BigEndian.Uint64(key[8:]), err)
		}
		found[i] = true
	}
	return old, found, nil
}

// seekAfter is how many keys storedEdges steps over before it seeks.
const seekAfter = 8
