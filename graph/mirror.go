package graph

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weaver-crawler/weaver/kv"
)

// Mirrors are hosts whose home pages have the same content hash (seed 002
// FR#3). The mirror index (kv.BucketMirrors) files every crawled node
// under its home page's hash, so that a page commit finds its group with
// one seek and status and exports read groups without decoding nodes:
//
//	'g' | hash (32 B) | first seen (8 B) | id (8 B) → empty: the members of a group, in first-seen order
//	'n' | id (8 B) → hash (32 B) | first seen (8 B): where a node is filed
//
// The group's first key is its first host; every other member's
// Node.MirrorOf names it.
const (
	mirrorGroupTag = 'g'
	mirrorNodeTag  = 'n'
	hashLen        = sha256.Size
)

// emptyBodyHash is the hex sha256 of no bytes: hosts whose home pages are
// empty share nothing but the absence of content, so they are no mirrors.
const emptyBodyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// MirrorGroup is a set of hosts whose home pages share a content hash.
type MirrorGroup struct {
	Hash    string   `json:"content_hash"` // hex sha256 of the home pages (Node.ContentHash)
	First   uint64   `json:"first"`        // id of the member first seen (ties: smallest id)
	Size    int      `json:"size"`         // members, the first included
	Members []uint64 `json:"members"`      // ids in first-seen order, the first one first
}

// mirrorHash returns the key under which n is filed, and false when n is
// not filed: only a crawled node (its home page answered 2xx or 3xx) with
// a non-empty body is.
func mirrorHash(n *Node) ([hashLen]byte, bool) {
	var h [hashLen]byte
	if n.Status != StatusCrawled || n.ContentHash == "" || n.ContentHash == emptyBodyHash {
		return h, false
	}
	if len(n.ContentHash) == 2*hashLen {
		if _, err := hex.Decode(h[:], []byte(n.ContentHash)); err == nil {
			return h, true
		}
	}
	return sha256.Sum256([]byte(n.ContentHash)), true // not weaver's hex sha256: filed all the same
}

// seenKey orders first-seen times as unsigned big-endian keys.
func seenKey(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano()) ^ 1<<63
}

func mirrorGroupKey(h [hashLen]byte, seen, id uint64) []byte {
	k := make([]byte, 1+hashLen+16)
	k[0] = mirrorGroupTag
	copy(k[1:], h[:])
	binary.BigEndian.PutUint64(k[1+hashLen:], seen)
	binary.BigEndian.PutUint64(k[1+hashLen+8:], id)
	return k
}

func mirrorNodeKey(id uint64) []byte {
	k := make([]byte, 9)
	k[0] = mirrorNodeTag
	binary.BigEndian.PutUint64(k[1:], id)
	return k
}

// groupFirst returns the first member of the group of h, 0 when empty.
func groupFirst(tx *kv.Tx, h [hashLen]byte) uint64 {
	prefix := make([]byte, 1+hashLen)
	prefix[0] = mirrorGroupTag
	copy(prefix[1:], h[:])
	k, _ := tx.Cursor(kv.BucketMirrors).Seek(prefix)
	if len(k) != 1+hashLen+16 || !bytes.HasPrefix(k, prefix) {
		return 0
	}
	return binary.BigEndian.Uint64(k[1+hashLen+8:])
}

// groupMembers returns the ids of the group of h in first-seen order.
func groupMembers(tx *kv.Tx, h [hashLen]byte) []uint64 {
	prefix := make([]byte, 1+hashLen)
	prefix[0] = mirrorGroupTag
	copy(prefix[1:], h[:])
	var ids []uint64
	c := tx.Cursor(kv.BucketMirrors)
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) == 1+hashLen+16 {
			ids = append(ids, binary.BigEndian.Uint64(k[1+hashLen+8:]))
		}
	}
	return ids
}

func mirrorOfFor(first, id uint64) uint64 {
	if first == id {
		return 0
	}
	return first
}

// metaMirrorIndex is set in the meta bucket once every node of the store
// is filed in the mirror index: a store written before the index existed
// lacks it, and EnsureMirrorIndex then files its nodes.
const metaMirrorIndex = "graph.mirror_index"

// EnsureMirrorIndex files every node in the mirror index, once per store:
// when the store says its index is complete it does nothing (one read),
// else it runs RebuildMirrors. Call it in a write transaction before a
// crawl commits pages, so that a store written by an older weaver gets
// its mirror groups; from then on every crawled node must be noted
// (NoteContentHash), which Check verifies. It reports whether it rebuilt,
// and RebuildMirrors' errors.
func EnsureMirrorIndex(tx *kv.Tx) (bool, error) {
	if tx.MetaString(metaMirrorIndex) != "" {
		return false, nil
	}
	if err := RebuildMirrors(tx); err != nil {
		return false, err
	}
	return true, tx.SetMetaString(metaMirrorIndex, "1")
}

// ErrNoMirrorIndex means a store opened read-only by a weaver older than
// the mirror index: NoteContentHash cannot write it.
var ErrNoMirrorIndex = errors.New("graph: store has no mirror index")

// NoteContentHash files n in the mirror index under its home page's
// content hash and sets n.MirrorOf: 0 when n is alone with its hash or the
// group's first host (by FirstSeen, then id), else that host's id, which
// it also returns. A node that is not crawled (Status other than
// StatusCrawled), or whose ContentHash is empty or that of an empty body,
// is taken out of the index and gets MirrorOf 0.
//
// Call it in the transaction that writes n, after setting n's Status,
// ContentHash (of the home page only) and FirstSeen, and before
// graph.Put(tx, n): it does not write n itself. When n becomes or stops
// being its group's first host, it rewrites the other members' MirrorOf
// in tx. It returns ErrNoID for a node without id, ErrNoMirrorIndex, and
// the store's errors.
func NoteContentHash(tx *kv.Tx, n *Node) (uint64, error) {
	if n.ID == 0 {
		return 0, fmt.Errorf("graph: note content hash of %q: %w", n.Host, ErrNoID)
	}
	if !tx.Exists(kv.BucketMirrors) {
		return 0, ErrNoMirrorIndex
	}
	h, filed := mirrorHash(n)
	seen := seenKey(n.FirstSeen)
	var val [hashLen + 8]byte
	copy(val[:], h[:])
	binary.BigEndian.PutUint64(val[hashLen:], seen)
	nk := mirrorNodeKey(n.ID)
	old := tx.GetRaw(kv.BucketMirrors, nk)
	if filed && bytes.Equal(old, val[:]) {
		n.MirrorOf = mirrorOfFor(groupFirst(tx, h), n.ID)
		return n.MirrorOf, nil
	}
	if len(old) == hashLen+8 {
		var oh [hashLen]byte
		copy(oh[:], old)
		wasFirst := groupFirst(tx, oh) == n.ID
		if err := tx.Delete(kv.BucketMirrors, mirrorGroupKey(oh, binary.BigEndian.Uint64(old[hashLen:]), n.ID)); err != nil {
			return 0, err
		}
		if err := tx.Delete(kv.BucketMirrors, nk); err != nil {
			return 0, err
		}
		if wasFirst {
			if err := relabel(tx, oh, n.ID); err != nil {
				return 0, err
			}
		}
	}
	n.MirrorOf = 0
	if !filed {
		return 0, nil
	}
	before := groupFirst(tx, h)
	if err := tx.PutRaw(kv.BucketMirrors, mirrorGroupKey(h, seen, n.ID), []byte{}); err != nil {
		return 0, err
	}
	if err := tx.PutRaw(kv.BucketMirrors, nk, val[:]); err != nil {
		return 0, err
	}
	first := groupFirst(tx, h)
	if before != 0 && first != before {
		if err := relabel(tx, h, n.ID); err != nil {
			return 0, err
		}
	}
	n.MirrorOf = mirrorOfFor(first, n.ID)
	return n.MirrorOf, nil
}

// relabel points every member of the group of h but skip (the caller's
// node, which it writes itself) at the group's first host.
func relabel(tx *kv.Tx, h [hashLen]byte, skip uint64) error {
	ids := groupMembers(tx, h)
	if len(ids) == 0 {
		return nil
	}
	for _, id := range ids {
		if id == skip {
			continue
		}
		m, ok, err := Get(tx, id)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("graph: mirror index names missing node %d: %w", id, ErrInconsistent)
		}
		if want := mirrorOfFor(ids[0], id); m.MirrorOf != want {
			m.MirrorOf = want
			if err := Put(tx, &m); err != nil {
				return err
			}
		}
	}
	return nil
}

// RebuildMirrors empties the mirror index and files every node again,
// rewriting the nodes whose MirrorOf changes: after nodes were copied in
// with other ids (repair), or for a store written before the index
// existed (see EnsureMirrorIndex, which also marks the index complete). It holds the ids of the nodes to
// file in memory and rewrites the index in tx. It returns
// ErrNoMirrorIndex, decoding and store errors.
func RebuildMirrors(tx *kv.Tx) error {
	if !tx.Exists(kv.BucketMirrors) {
		return ErrNoMirrorIndex
	}
	var keys [][]byte
	c := tx.Cursor(kv.BucketMirrors)
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	for _, k := range keys {
		if err := tx.Delete(kv.BucketMirrors, k); err != nil {
			return err
		}
	}
	var ids []uint64
	if err := ForEachNode(tx, func(n *Node) error {
		if _, ok := mirrorHash(n); ok || n.MirrorOf != 0 {
			ids = append(ids, n.ID)
		}
		return nil
	}); err != nil {
		return err
	}
	for _, id := range ids {
		n, ok, err := Get(tx, id)
		if err != nil || !ok {
			return err
		}
		before := n.MirrorOf
		if _, err := NoteContentHash(tx, &n); err != nil {
			return err
		}
		// Earlier nodes that filing n relabels are rewritten by
		// NoteContentHash; n itself is written here.
		if n.MirrorOf != before {
			if err := Put(tx, &n); err != nil {
				return err
			}
		}
	}
	return nil
}

// MirrorGroups returns the top largest mirror groups (of two hosts or
// more), largest first, ties by their first host's id; top ≤ 0 returns
// them all. It reads the index only (no node is decoded), and returns no
// group for a store without one.
func MirrorGroups(tx *kv.Tx, top int) ([]MirrorGroup, error) {
	if !tx.Exists(kv.BucketMirrors) {
		return nil, nil
	}
	type group struct {
		h     [hashLen]byte
		first uint64
		size  int
	}
	var groups []group
	c := tx.Cursor(kv.BucketMirrors)
	for k, _ := c.Seek([]byte{mirrorGroupTag}); k != nil && k[0] == mirrorGroupTag; k, _ = c.Next() {
		if len(k) != 1+hashLen+16 {
			return nil, fmt.Errorf("graph: mirror index key %x: %w", k, ErrInconsistent)
		}
		if n := len(groups); n > 0 && bytes.Equal(groups[n-1].h[:], k[1:1+hashLen]) {
			groups[n-1].size++
			continue
		}
		var g group
		copy(g.h[:], k[1:])
		g.first, g.size = binary.BigEndian.Uint64(k[1+hashLen+8:]), 1
		groups = append(groups, g)
	}
	groups = slices.DeleteFunc(groups, func(g group) bool { return g.size < 2 })
	slices.SortFunc(groups, func(a, b group) int { return cmp.Or(cmp.Compare(b.size, a.size), cmp.Compare(a.first, b.first)) })
	if top > 0 && len(groups) > top {
		groups = groups[:top]
	}
	out := make([]MirrorGroup, len(groups))
	for i, g := range groups {
		out[i] = MirrorGroup{Hash: hex.EncodeToString(g.h[:]), First: g.first, Size: g.size, Members: groupMembers(tx, g.h)}
	}
	return out, nil
}

// checkMirrors verifies the mirror index's two key kinds against each
// other; checkNodeMirror checks each node against it: filed under its own
// hash and first-seen time, its MirrorOf its group's first host (0 for
// the first and for nodes not filed).
func checkMirrors(tx *kv.Tx, add func(format string, a ...any)) {
	if !tx.Exists(kv.BucketMirrors) {
		return
	}
	c := tx.Cursor(kv.BucketMirrors)
	for k, v := c.First(); k != nil; k, v = c.Next() {
		switch {
		case len(k) == 1+hashLen+16 && k[0] == mirrorGroupTag:
			id := binary.BigEndian.Uint64(k[1+hashLen+8:])
			if !bytes.Equal(tx.GetRaw(kv.BucketMirrors, mirrorNodeKey(id)), k[1:1+hashLen+8]) {
				add("mirror group entry of node %d has no matching node entry", id)
			}
		case len(k) == 9 && k[0] == mirrorNodeTag:
			if len(v) != hashLen+8 {
				add("mirror node entry %x holds %d bytes", k, len(v))
				continue
			}
			var h [hashLen]byte
			copy(h[:], v)
			id := binary.BigEndian.Uint64(k[1:])
			if tx.GetRaw(kv.BucketMirrors, mirrorGroupKey(h, binary.BigEndian.Uint64(v[hashLen:]), id)) == nil {
				add("mirror node entry of node %d has no group entry", id)
			}
		default:
			add("mirror index key %x is of no known kind", k)
		}
	}
}

// checkNodeMirror verifies n against the mirror index (see checkMirrors);
// Check calls it from its walk over the nodes.
// complete says the store's index holds every node (metaMirrorIndex):
// then a crawled node that is not filed is a problem too.
func checkNodeMirror(tx *kv.Tx, n *Node, complete bool, add func(format string, a ...any)) {
	if !tx.Exists(kv.BucketMirrors) {
		return
	}
	var want uint64
	v := tx.GetRaw(kv.BucketMirrors, mirrorNodeKey(n.ID))
	if _, filed := mirrorHash(n); filed && complete && v == nil {
		add("node %d (%q) is crawled but not in the mirror index (NoteContentHash was not called)", n.ID, n.Host)
	}
	if len(v) == hashLen+8 {
		h, filed := mirrorHash(n)
		if !filed || !bytes.Equal(v[:hashLen], h[:]) || binary.BigEndian.Uint64(v[hashLen:]) != seenKey(n.FirstSeen) {
			add("node %d (%q) is filed in the mirror index under another hash or time than its own", n.ID, n.Host)
		}
		copy(h[:], v)
		want = mirrorOfFor(groupFirst(tx, h), n.ID)
	}
	if n.MirrorOf != want {
		add("node %d (%q) is a mirror of %d, the index says %d", n.ID, n.Host, n.MirrorOf, want)
	}
}

// MirrorMembers returns the ids of the mirror group of n (hosts whose
// home page has n's content hash), n included, in first-seen order; none
// when n is in no group of two or more.
func MirrorMembers(tx *kv.Tx, n *Node) []uint64 {
	h, ok := mirrorHash(n)
	if !ok || !tx.Exists(kv.BucketMirrors) {
		return nil
	}
	ids := groupMembers(tx, h)
	if len(ids) < 2 {
		return nil
	}
	return ids
}
