package graph

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/weaver-crawler/weaver/kv"
)

// chainState is what a walk of the history buckets in key order knows of
// a node's chain so far: the sequence of its last sealed segment, of the
// last one holding a record with links, and the time of its last record.
type chainState struct {
	last, lastFull uint64
	lastTime       time.Time
	open           bool // its open segment was seen
}

// segmentFault says what is wrong with segment s given the node's chain
// before it ("" when nothing); relink says the fault is only its prev or
// base, which RepairHistory mends in place.
func segmentFault(tx *kv.Tx, s *segment, st *chainState) (why string, relink bool) {
	if tx.GetRaw(kv.BucketNodes, kv.U64(s.node)) == nil {
		return fmt.Sprintf("node %d does not exist", s.node), false
	}
	switch {
	case len(s.recs) == 0 && s.seq != 0:
		return "it holds no record", false
	case len(s.recs) == 0 && st.last == 0:
		return "it holds no record, and no sealed segment is before it", false
	case len(s.recs) == 0 && !s.first.Equal(st.lastTime):
		return fmt.Sprintf("it holds no record and the time %s, the node's last crawl was at %s",
			s.first.Format(time.RFC3339Nano), st.lastTime.Format(time.RFC3339Nano)), true
	case len(s.recs) > 0 && !s.first.After(st.lastTime):
		return fmt.Sprintf("its first crawl at %s is not after the node's last before it at %s",
			s.first.Format(time.RFC3339Nano), st.lastTime.Format(time.RFC3339Nano)), false
	}
	if err := s.each(func(*record) error { return nil }); err != nil {
		return err.Error(), false
	}
	if s.prev != st.last || s.base != st.lastFull {
		return fmt.Sprintf("its chain names segments %d (before it) and %d (with links), the node's are %d and %d",
			s.prev, s.base, st.last, st.lastFull), true
	}
	return "", false
}

// follow moves st past segment s (and notes an open one).
func (st *chainState) follow(s *segment) {
	st.open = st.open || s.seq == 0
	_ = s.each(func(r *record) error {
		st.lastTime = r.at
		if r.links >= 0 && s.seq != 0 {
			st.lastFull = s.seq
		}
		return nil
	})
	if s.seq != 0 {
		st.last = s.seq
	}
}

// historyWalk reads the history buckets in key order: every sealed
// segment in sequence order, which is each node's chain in order, then
// every open segment, calling fn with each segment that decodes and its
// node's chain before it (bad with the keys and errors of those that do
// not). It returns the state of every node's chain after the walk.
func historyWalk(tx *kv.Tx, fn func(s *segment, st *chainState) error, bad func(bucket, key []byte, err error)) (map[uint64]*chainState, error) {
	nodes := map[uint64]*chainState{}
	state := func(node uint64) *chainState {
		st := nodes[node]
		if st == nil {
			st = &chainState{}
			nodes[node] = st
		}
		return st
	}
	for _, bucket := range [][]byte{kv.BucketHistory, kv.BucketRecent} {
		if !tx.Exists(bucket) {
			continue
		}
		c := tx.Cursor(bucket)
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(k) != 8 {
				bad(bucket, k, fmt.Errorf("%w: key of %d bytes, want 8", ErrBadHistory, len(k)))
				continue
			}
			var s segment
			var err error
			if string(bucket) == string(kv.BucketHistory) {
				s, err = decodeSegment(binary.BigEndian.Uint64(k), 0, v)
			} else {
				s, err = decodeSegment(0, binary.BigEndian.Uint64(k), v)
			}
			if err != nil {
				bad(bucket, k, err)
				continue
			}
			if err := fn(&s, state(s.node)); err != nil {
				return nil, err
			}
		}
	}
	return nodes, nil
}

// checkHistory adds what is wrong with the crawl history: segments that
// do not decode, of nodes that do not exist, whose chain does not name
// the node's segments before it, whose crawls are not later than the
// node's before them; sealed segments no open one reaches; schema 1
// records that do not decode, of nodes that do not exist or whose
// history is also in schema 2's layout.
func checkHistory(tx *kv.Tx, add func(format string, a ...any)) {
	nodes, _ := historyWalk(tx, func(s *segment, st *chainState) error {
		if why, _ := segmentFault(tx, s, st); why != "" {
			add("%s: %s", segmentName(s), why)
		}
		st.follow(s)
		return nil
	}, func(bucket, key []byte, err error) { add("%s %x: %v", bucket, key, err) })
	for _, node := range slices.Sorted(maps.Keys(nodes)) {
		if !nodes[node].open {
			add("node %d has sealed history segments (the last %d) but no open one: nothing reaches them", node, nodes[node].last)
		}
	}
	if !tx.Exists(kv.BucketCrawls) {
		return
	}
	c := tx.Cursor(kv.BucketCrawls)
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if why := v1Fault(tx, k, v, nodes); why != "" {
			add("crawls %x: %s", k, why)
		}
	}
}

// v1Fault says what is wrong with schema 1's record k, v ("" when
// nothing): it does not decode, its node does not exist, or the node's
// history is also in schema 2's layout (nodes, the chains historyWalk
// found).
func v1Fault(tx *kv.Tx, k, v []byte, nodes map[uint64]*chainState) string {
	if _, _, err := decodeV1(k, v); err != nil {
		return err.Error()
	}
	node := binary.BigEndian.Uint64(k)
	switch {
	case tx.GetRaw(kv.BucketNodes, k[:8]) == nil:
		return fmt.Sprintf("node %d does not exist", node)
	case nodes[node] != nil:
		return fmt.Sprintf("node %d's history is also in the history and recent buckets", node)
	}
	return ""
}

func segmentName(s *segment) string {
	if s.seq == 0 {
		return fmt.Sprintf("recent %d (node %d's open segment)", s.node, s.node)
	}
	return fmt.Sprintf("history %d (a segment of node %d)", s.seq, s.node)
}

// RepairHistory makes the crawl history of a store that `weaver check
// --repair` copied record by record agree with itself and the rest: it
// deletes the segments that do not decode, whose node does not exist or
// whose crawls are not later than those of the node's segments before
// them, and schema 1 records that do not decode, of nodes that do not
// exist or whose history is in schema 2's layout, calling drop for each;
// it relinks each node's remaining segments in sequence order (a record
// that stood for the links of a lost one takes those of the latest
// record with links before it, as schema 1's did); and it makes a node's
// last sealed segment its open one when the open one was lost.
func RepairHistory(tx *kv.Tx, drop func(bucket, key []byte, why string)) error {
	var edits historyEdits
	remove := func(bucket, key []byte, why string) {
		drop(bucket, key, why)
		edits.del(bucket, key)
	}
	nodes, err := historyWalk(tx, func(s *segment, st *chainState) error {
		bucket, key := s.key()
		why, relink := segmentFault(tx, s, st)
		switch {
		case why != "" && !relink:
			remove(bucket, key, why)
			return nil
		case relink:
			s.prev, s.base = st.last, st.lastFull
			if len(s.recs) == 0 {
				s.first = st.lastTime
			}
			edits.put(bucket, key, s.encode())
		}
		st.follow(s)
		return nil
	}, func(bucket, key []byte, err error) { remove(bucket, key, err.Error()) })
	if err != nil {
		return err
	}
	for _, node := range slices.Sorted(maps.Keys(nodes)) {
		st := nodes[node]
		if st.open || st.last == 0 {
			continue
		}
		// The open segment is lost: the last sealed one takes its place.
		key := kv.U64(st.last)
		v, ok := edits.value(kv.BucketHistory, key)
		if !ok {
			v = tx.GetRaw(kv.BucketHistory, key)
		}
		s, err := decodeSegment(st.last, 0, v)
		if err != nil {
			return err
		}
		edits.del(kv.BucketHistory, key)
		s.seq = 0
		edits.put(kv.BucketRecent, kv.U64(node), s.encode())
	}
	if tx.Exists(kv.BucketCrawls) {
		c := tx.Cursor(kv.BucketCrawls)
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if why := v1Fault(tx, k, v, nodes); why != "" {
				remove(kv.BucketCrawls, k, why)
			}
		}
	}
	return edits.apply(tx)
}

// key returns the bucket and key the segment is stored under.
func (s *segment) key() (bucket, key []byte) {
	if s.seq == 0 {
		return kv.BucketRecent, kv.U64(s.node)
	}
	return kv.BucketHistory, kv.U64(s.seq)
}

// historyEdits are the writes RepairHistory decides on while it walks the
// buckets, made after the walk; a key's last edit is the one made.
type historyEdits struct {
	order []editKey          // in the order first edited
	puts  map[editKey][]byte // the value of a key put
	seen  map[editKey]bool   // every key edited
}

type editKey struct{ bucket, key string }

func (e *historyEdits) edit(bucket, key []byte) editKey {
	k := editKey{string(bucket), string(key)}
	if e.seen == nil {
		e.seen, e.puts = map[editKey]bool{}, map[editKey][]byte{}
	}
	if !e.seen[k] {
		e.seen[k] = true
		e.order = append(e.order, k)
	}
	return k
}

func (e *historyEdits) put(bucket, key, val []byte) {
	k := e.edit(bucket, key)
	e.puts[k] = val
}

func (e *historyEdits) del(bucket, key []byte) {
	k := e.edit(bucket, key)
	delete(e.puts, k)
}

func (e *historyEdits) value(bucket, key []byte) ([]byte, bool) {
	v, ok := e.puts[editKey{string(bucket), string(key)}]
	return v, ok
}

func (e *historyEdits) apply(tx *kv.Tx) error {
	for _, k := range e.order {
		var err error
		if v, ok := e.puts[k]; ok {
			err = tx.PutRaw([]byte(k.bucket), []byte(k.key), v)
		} else {
			err = tx.Delete([]byte(k.bucket), []byte(k.key))
		}
		if err != nil {
			return err
		}
	}
	return nil
}
