package graph

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/weaver-crawler/weaver/kv"
)

// The writes of a store built in bulk (weaver merge): records put in key
// order into empty buckets, with no lookup before each write, and the
// counters added once at the end.

// IndexHost files host (normalised) under id in the host index, as
// Ensure does for a node it creates. The node itself is put with Put;
// AddBulkNodes counts them.
func IndexHost(tx *kv.Tx, host []byte, id uint64) error {
	if len(host) == 0 {
		return ErrEmptyHost
	}
	return tx.PutRaw(kv.BucketHosts, host, kv.U64(id))
}

// AddBulkNodes counts n nodes put with ids after the store's last: the
// node count and the id counter both grow by n, so that the ids stay
// dense (the next node Ensure creates gets the id after them).
func AddBulkNodes(tx *kv.Tx, n uint64) error {
	if _, err := tx.AddCounter(counterNodes, int64(n)); err != nil {
		return err
	}
	_, err := tx.AddCounter(counterNextID, int64(n))
	return err
}

// AppendEdges writes edges, in (From, To) order with no pair twice and
// every key past the last one the edges bucket holds, as the records they
// are, and counts them (edges and total weight): the edges bucket of a
// store being built is filled one leaf after the other. It returns
// ErrInconsistent for edges out of order, a node id of 0 or a key not
// past the bucket's last, and ErrBadFacts for link facts above a weight.
func AppendEdges(tx *kv.Tx, edges []Edge) error {
	var w EdgeAppender
	return w.Append(tx, edges)
}

// EdgeAppender is AppendEdges for a store built in many transactions:
// the buffer its records are encoded in is kept for the next
// transaction (bbolt holds the values put until the commit, so a
// transaction's buffer is free once it ended). The zero value is ready.
type EdgeAppender struct{ buf []byte }

// Append is AppendEdges with a's buffer. A transaction takes at most one
// Append of a: the buffer is reused at the next call.
func (a *EdgeAppender) Append(tx *kv.Tx, edges []Edge) error {
	if len(edges) == 0 {
		return nil
	}
	if need := len(edges) * (16 + edgeMaxLen); cap(a.buf) < need {
		a.buf = make([]byte, 0, need)
	}
	buf := a.buf[:0]
	var weight uint64
	var last []byte
	if k, _ := tx.Cursor(kv.BucketEdges).Last(); k != nil {
		last = bytes.Clone(k)
	}
	for i := range edges {
		e := &edges[i]
		if e.From == 0 || e.To == 0 {
			return fmt.Errorf("graph: edge %d→%d: %w", e.From, e.To, ErrInconsistent)
		}
		if err := checkFacts(e.From, e.To, e.Weight, e.Nofollow, e.Redirect, e.Frame); err != nil {
			return err
		}
		start := len(buf)
		buf = binary.BigEndian.AppendUint64(buf, e.From)
		buf = binary.BigEndian.AppendUint64(buf, e.To)
		key := buf[start : start+16 : start+16]
		if last != nil && bytes.Compare(last, key) >= 0 {
			return fmt.Errorf("graph: append edge %d→%d after %x: %w", e.From, e.To, last, ErrInconsistent)
		}
		buf = appendEdge(buf, e)
		if err := tx.PutRaw(kv.BucketEdges, key, buf[start+16:len(buf):len(buf)]); err != nil {
			return fmt.Errorf("graph: edge %d→%d: %w", e.From, e.To, err)
		}
		last = key
		weight += e.Weight
	}
	if _, err := tx.AddCounter(counterEdges, int64(len(edges))); err != nil {
		return err
	}
	_, err := tx.AddCounter(counterWeight, int64(weight))
	return err
}

// DecodeEdge decodes an edge record's value (not its key: From and To
// are left as they were), as kv.Decode would, without reflection for the
// form weaver writes.
func DecodeEdge(v []byte, e *Edge) error { return decodeEdge(v, e) }
