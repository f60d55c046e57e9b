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

// WalkSegment decodes v as a segment (sealed when seq is not 0) and reads
// every record and its links, as the readers do.
func WalkSegment(seq, node uint64, v []byte) error {
	s, err := decodeSegment(seq, node, v)
	if err != nil {
		return err
	}
	return s.each(func(r *record) error {
		if r.links >= 0 {
			_, _, err := s.links(r.links, true)
			return err
		}
		return nil
	})
}

// Segment values as the store holds them, for fuzz seeds: node's open
// segment and each sealed one, oldest first.
func SegmentValues(tx *kv.Tx, node uint64) (sealed [][]byte, open []byte) {
	o, ok, err := openSegment(tx, node)
	if err != nil || !ok {
		return nil, nil
	}
	segs, err := chain(tx, node, o)
	if err != nil {
		return nil, nil
	}
	for _, s := range segs {
		if s.seq != 0 {
			sealed = append(sealed, append([]byte(nil), tx.GetRaw(kv.BucketHistory, kv.U64(s.seq))...))
		}
	}
	return sealed, append([]byte(nil), tx.GetRaw(kv.BucketRecent, kv.U64(node))...)
}

// AppendNode is appendNode, which TestAppendNode holds to msgpack's bytes.
func AppendNode(b []byte, n *Node) []byte { return appendNode(b, n) }

// SizeHint is Node.sizeHint, the buffer graph.Put gives appendNode.
func SizeHint(n *Node) int { return n.sizeHint() }

// SetFoldAt makes l fold its log when it holds n admissions (foldAt).
func SetFoldAt(l *Limiter, n int) { l.fold = n }
