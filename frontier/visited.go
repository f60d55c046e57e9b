package frontier

import (
	"encoding/binary"

	"github.com/weaver-crawler/weaver/kv"
)

// The visited bucket's keys are node id (8 B) | a word (4 B): the depth
// at which the host was queued ("queued once at that depth"), or, with the
// top bit set, a depth at which a link to a host another shard owns was
// forwarded (Forwarded, MarkForwarded). Only this file builds or takes
// them apart; archive renumbers them through VisitedNode and
// RenumberVisited.

// visitedKeyLen is the length of every key of the visited bucket.
const visitedKeyLen = 12

// forwardedBit keeps "forwarded at depth d" marks apart from visited
// marks in the same bucket: no queued entry has a depth with it set.
const forwardedBit = 1 << 31

func visitedKey(node uint64, depth int) []byte {
	k := make([]byte, visitedKeyLen)
	binary.BigEndian.PutUint64(k, node)
	binary.BigEndian.PutUint32(k[8:], uint32(depth))
	return k
}

// markVisited records that e's host was queued at e.Depth.
func markVisited(tx *kv.Tx, e Entry) error {
	return tx.PutRaw(kv.BucketVisited, visitedKey(e.NodeID, e.Depth), []byte{})
}

func forwardedKey(node uint64, depth int) []byte {
	k := visitedKey(node, depth)
	binary.BigEndian.PutUint32(k[8:], uint32(depth)|forwardedBit)
	return k
}

// Forwarded reports whether a link to node, a host another shard owns,
// was already forwarded at depth.
func Forwarded(tx *kv.Tx, node uint64, depth int) bool {
	return tx.GetRaw(kv.BucketVisited, forwardedKey(node, depth)) != nil
}

// MarkForwarded records that a link to node was forwarded at depth, so
// that the same link at the same depth goes out once.
func MarkForwarded(tx *kv.Tx, node uint64, depth int) error {
	return tx.PutRaw(kv.BucketVisited, forwardedKey(node, depth), []byte{})
}

// VisitedNode returns the node of a key of the visited bucket; ok is false
// for a key that is no mark this weaver writes.
func VisitedNode(k []byte) (node uint64, ok bool) {
	if len(k) != visitedKeyLen {
		return 0, false
	}
	return binary.BigEndian.Uint64(k), true
}

// RenumberVisited returns a copy of the visited bucket's key k (one
// VisitedNode accepts) for the same mark of node.
func RenumberVisited(k []byte, node uint64) []byte {
	nk := make([]byte, visitedKeyLen)
	binary.BigEndian.PutUint64(nk, node)
	copy(nk[8:], k[8:])
	return nk
}
