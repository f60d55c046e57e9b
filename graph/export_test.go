package graph

import (
	"time"

	"github.com/weaver-crawler/weaver/kv"
)

// SealAt is sealAt, for tests that fill segments.
const SealAt = sealAt

// RecordSizes returns the bytes of each of node's records, oldest first
// (schema 2's layout; none for schema 1's).
func RecordSizes(tx *kv.Tx, node uint64) ([]int, error) {
	open, ok, err := openSegment(tx, node)
	if err != nil || !ok {
		return nil, err
	}
	segs, err := chain(tx, node, open)
	if err != nil {
		return nil, err
	}
	var sizes []int
	for i := range segs {
		err := segs[i].each(func(r *record) error {
			sizes = append(sizes, r.end-r.off)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return sizes, nil
}

// Segment is one of a node's segments as tests see it: its key in
// kv.BucketHistory (0: the open one) and its crawls' times.
type Segment struct {
	Seq   uint64
	Times []time.Time
}

// Segments returns node's segments, oldest first (schema 2's layout).
func Segments(tx *kv.Tx, node uint64) ([]Segment, error) {
	open, ok, err := openSegment(tx, node)
	if err != nil || !ok {
		return nil, err
	}
	segs, err := chain(tx, node, open)
	if err != nil {
		return nil, err
	}
	out := make([]Segment, len(segs))
	for i := range segs {
		out[i].Seq = segs[i].seq
		err := segs[i].each(func(r *record) error {
			out[i].Times = append(out[i].Times, r.at)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
