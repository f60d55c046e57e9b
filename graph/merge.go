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
	var last []byte // the bucket's last key: any key after it is new
	if k, _ := tx.Cursor(kv.BucketEdges).Last(); k != nil {
		last = bytes.Clone(k)
	}
	// One buffer holds every key and value: bbolt keeps the slices until
	// the transaction ends.
	buf := make([]byte, 0, len(edges)*(16+edgeMaxLen))
	var added, weight uint64
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
		start := len(buf)
		buf = binary.BigEndian.AppendUint64(buf, m.From)
		buf = binary.BigEndian.AppendUint64(buf, m.To)
		key := buf[start : start+16 : start+16]
		var e Edge
		found := false
		if last != nil && bytes.Compare(key, last) <= 0 {
			if v := tx.GetRaw(kv.BucketEdges, key); v != nil {
				if err := decodeEdge(v, &e); err != nil {
					return fmt.Errorf("graph: edge %d→%d: %w", m.From, m.To, err)
				}
				found = true
			}
		}
		if !found {
			e.FirstSeen = m.First
			added++
		}
		e.Weight += m.Weight
		e.LastSeen = m.Last
		weight += m.Weight
		buf = appendEdge(buf, &e)
		if err := tx.PutRaw(kv.BucketEdges, key, buf[start+16:len(buf):len(buf)]); err != nil {
			return fmt.Errorf("graph: edge %d→%d: %w", m.From, m.To, err)
		}
	}
	if _, err := tx.AddCounter(counterEdges, int64(added)); err != nil {
		return err
	}
	_, err := tx.AddCounter(counterWeight, int64(weight))
	return err
}
