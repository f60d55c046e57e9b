package frontier

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/weaver-crawler/weaver/kv"
)

// Entry is a host waiting to be fetched.
type Entry struct {
	NodeID uint64 `msgpack:"n"` // the graph node of Host
	Host   string `msgpack:"h"` // normalised host
	URL    string `msgpack:"u"` // the URL to fetch: the home page, or a seed's path
	Depth  int    `msgpack:"d"` // hops from a seed
	// NotBefore, when set, is the earliest time the host may be asked
	// again: a host parked for its politeness delay, a retry or a
	// Retry-After keeps it across a stop, so a resumed crawl is as polite
	// as one that never stopped. Claim's judge decides what to do with it.
	NotBefore time.Time `msgpack:"b"`
}

// EncodeMsgpack stores an entry as [node, host, url, depth] or, parked,
// [node, host, url, depth, not-before in Unix nanoseconds]: entries are
// written and read on every claim, so they skip reflection.
func (e *Entry) EncodeMsgpack(enc *msgpack.Encoder) error {
	if err := enc.EncodeArrayLen(e.fields()); err != nil {
		return err
	}
	if err := e.encodeFields(enc); err != nil {
		return err
	}
	return e.encodeNotBefore(enc)
}

func (e *Entry) fields() int {
	if e.NotBefore.IsZero() {
		return 4
	}
	return 5
}

func (e *Entry) encodeNotBefore(enc *msgpack.Encoder) error {
	if e.NotBefore.IsZero() {
		return nil
	}
	return enc.EncodeInt(e.NotBefore.UnixNano())
}

func (e *Entry) decodeNotBefore(dec *msgpack.Decoder) error {
	ns, err := dec.DecodeInt64()
	if err != nil {
		return err
	}
	e.NotBefore = time.Unix(0, ns)
	return nil
}

func (e *Entry) encodeFields(enc *msgpack.Encoder) error {
	if err := enc.EncodeUint(e.NodeID); err != nil {
		return err
	}
	if err := enc.EncodeString(e.Host); err != nil {
		return err
	}
	if err := e.encodeURL(enc); err != nil {
		return err
	}
	return enc.EncodeInt(int64(e.Depth))
}

// encodeURL writes e's URL, or, since schema 3, for the host's home page
// (nearly every entry) nil for http://host/ and 1 for https://host/:
// older stores hold a string there, always.
func (e *Entry) encodeURL(enc *msgpack.Encoder) error {
	switch {
	case isHome(e.URL, "http", e.Host):
		return enc.EncodeNil()
	case isHome(e.URL, "https", e.Host):
		return enc.EncodeUint(1)
	}
	return enc.EncodeString(e.URL)
}

func (e *Entry) decodeURL(dec *msgpack.Decoder) error {
	c, err := dec.PeekCode()
	if err != nil {
		return err
	}
	switch c {
	case msgpcode.Nil:
		e.URL = HomeURL("http", e.Host)
		return dec.Skip()
	case 1:
		e.URL = HomeURL("https", e.Host)
		return dec.Skip()
	}
	e.URL, err = dec.DecodeString()
	return err
}

// HomeURL is the URL of host's home page, by scheme ("": http).
func HomeURL(scheme, host string) string {
	if scheme == "" {
		scheme = "http"
	}
	return scheme + "://" + host + "/"
}

// isHome reports whether u is HomeURL(scheme, host), without building it.
func isHome(u, scheme, host string) bool {
	rest, ok := strings.CutPrefix(u, scheme)
	if ok {
		rest, ok = strings.CutPrefix(rest, "://")
	}
	if ok {
		rest, ok = strings.CutPrefix(rest, host)
	}
	return ok && rest == "/"
}

// DecodeMsgpack reads what EncodeMsgpack wrote.
func (e *Entry) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n != 4 && n != 5 {
		return fmt.Errorf("frontier: entry record has %d fields, want 4 or 5", n)
	}
	if err := e.decodeFields(dec); err != nil {
		return err
	}
	e.NotBefore = time.Time{}
	if n == 5 {
		return e.decodeNotBefore(dec)
	}
	return nil
}

func (e *Entry) decodeFields(dec *msgpack.Decoder) error {
	var err error
	if e.NodeID, err = dec.DecodeUint64(); err != nil {
		return err
	}
	if e.Host, err = dec.DecodeString(); err != nil {
		return err
	}
	if err = e.decodeURL(dec); err != nil {
		return err
	}
	d, err := dec.DecodeInt()
	e.Depth = d
	return err
}

// Lease is an entry handed to a worker and not yet committed.
type Lease struct {
	Entry `msgpack:"e"` // embedded: l.NodeID, l.Host...
	Key   kv.Bytes      `msgpack:"k"` // the entry's frontier key, to put it back where it was
	Since time.Time     `msgpack:"s"`
}

// EncodeMsgpack stores a lease as [node, host, url, depth, key, since]
// or, parked, [..., since, not-before in Unix nanoseconds]. Without it the
// embedded Entry's encoder was promoted to Lease and wrote the entry
// alone: Key and Since were lost, so a returned lease went to the back of
// its depth instead of its old place.
func (l *Lease) EncodeMsgpack(enc *msgpack.Encoder) error {
	if err := enc.EncodeArrayLen(2 + l.fields()); err != nil {
		return err
	}
	if err := l.Entry.encodeFields(enc); err != nil {
		return err
	}
	if err := enc.EncodeBytes(l.Key); err != nil {
		return err
	}
	if err := enc.EncodeTime(l.Since); err != nil {
		return err
	}
	return l.encodeNotBefore(enc)
}

// DecodeMsgpack reads what EncodeMsgpack wrote, and the entry-only form
// (4 fields) that stores written before it hold.
func (l *Lease) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n != 4 && n != 6 && n != 7 {
		return fmt.Errorf("frontier: lease record has %d fields, want 6 or 7", n)
	}
	if err := l.Entry.decodeFields(dec); err != nil {
		return err
	}
	l.Key, l.Since, l.NotBefore = nil, time.Time{}, time.Time{}
	if n == 4 {
		return nil
	}
	if err := l.Key.DecodeMsgpack(dec); err != nil {
		return err
	}
	if l.Since, err = dec.DecodeTime(); err != nil {
		return err
	}
	if n == 7 {
		return l.decodeNotBefore(dec)
	}
	return nil
}

// Verdict is a Claim judge's decision on an entry.
type Verdict int

const (
	// Take leases the entry to the caller.
	Take Verdict = iota
	// Skip leaves the entry queued for a later claim (host not ready).
	Skip
	// Drop removes the entry for good (host needs no more crawling).
	Drop
)

// Meta counters the frontier keeps.
const (
	counterSize   = "frontier.size"
	counterLeases = "frontier.leases"
	counterSeq    = "frontier.seq"
)

func key(depth int, seq uint64) []byte {
	k := make([]byte, 12)
	binary.BigEndian.PutUint32(k, uint32(depth))
	binary.BigEndian.PutUint64(k[4:], seq)
	return k
}

func depthOf(k []byte) int { return int(binary.BigEndian.Uint32(k)) }

// Len returns the number of queued entries (leases not included).
func Len(tx *kv.Tx) uint64 { return tx.Counter(counterSize) }

// Leases returns the number of entries leased and not yet released.
func Leases(tx *kv.Tx) uint64 { return tx.Counter(counterLeases) }

// valid reports whether e can be queued: a node, its host, a depth.
func (e *Entry) valid() bool { return e.NodeID != 0 && e.Host != "" && e.Depth >= 0 }

// Push queues e unless its host was already queued at e.Depth, or is queued
// now at a depth ≤ e.Depth. A host queued deeper moves up to e.Depth. It
// reports whether e was queued.
func Push(tx *kv.Tx, e Entry) (bool, error) {
	if !e.valid() {
		return false, ErrBadEntry
	}
	vk := visitedKey(e.NodeID, e.Depth)
	if tx.GetRaw(kv.BucketVisited, vk) != nil {
		return false, nil
	}
	ok, err := place(tx, e, nil)
	if err != nil || !ok {
		return ok, err
	}
	return true, tx.PutRaw(kv.BucketVisited, vk, []byte{})
}

// PushNew is Push for the entry of a node created in this same
// transaction: node ids are never handed out twice, so the node has no
// visited mark and no queued entry to look up, and e is queued. A page
// finds a few dozen new hosts at a time on a web it is discovering; these
// two lookups were a tenth of its commit.
func PushNew(tx *kv.Tx, e Entry) (bool, error) {
	if !e.valid() {
		return false, ErrBadEntry
	}
	if err := queue(tx, e, nil); err != nil {
		return false, err
	}
	return true, markVisited(tx, e)
}

// Requeue queues e like Push but disregards the visited marks: a host
// crawled before is queued again (a resumed crawl's requeue pass, a retry,
// a revisit that is due) at the depth e gives, its own.
func Requeue(tx *kv.Tx, e Entry) (bool, error) {
	if !e.valid() {
		return false, ErrBadEntry
	}
	ok, err := place(tx, e, nil)
	if err != nil || !ok {
		return ok, err
	}
	return true, markVisited(tx, e)
}

// place queues e at k (a new arrival key when k is nil), honouring "at
// most once at a time, moved up to the smallest depth".
func place(tx *kv.Tx, e Entry, k []byte) (bool, error) {
	node := kv.U64(e.NodeID)
	if old := tx.GetRaw(kv.BucketQueued, node); old != nil {
		if depthOf(old) <= e.Depth {
			return false, nil
		}
		if err := tx.Delete(kv.BucketFrontier, append([]byte(nil), old...)); err != nil {
			return false, err
		}
		if _, err := tx.AddCounter(counterSize, -1); err != nil {
			return false, err
		}
	}
	return true, queue(tx, e, k)
}

// queue writes e's entry at k (a new arrival key when k is nil) and its
// index by node, for a node that has none.
func queue(tx *kv.Tx, e Entry, k []byte) error {
	if k == nil {
		seq, err := tx.AddCounter(counterSeq, 1)
		if err != nil {
			return err
		}
		k = key(e.Depth, seq)
	}
	if err := tx.Put(kv.BucketFrontier, k, &e); err != nil {
		return err
	}
	if err := tx.PutRaw(kv.BucketQueued, kv.U64(e.NodeID), k); err != nil {
		return err
	}
	_, err := tx.AddCounter(counterSize, 1)
	return err
}

// QueuedAt reports the depth at which node is queued, if it is (a leased
// entry is not queued).
func QueuedAt(tx *kv.Tx, node uint64) (int, bool) {
	k := tx.GetRaw(kv.BucketQueued, kv.U64(node))
	if len(k) != 12 {
		return 0, false
	}
	return depthOf(k), true
}

// Remove takes node's queued entry out of the queue, for good: its
// visited marks stay. It reports whether there was one.
func Remove(tx *kv.Tx, node uint64) (bool, error) {
	q := tx.GetRaw(kv.BucketQueued, kv.U64(node))
	if q == nil {
		return false, nil
	}
	if err := tx.Delete(kv.BucketFrontier, append([]byte(nil), q...)); err != nil {
		return false, err
	}
	if err := tx.Delete(kv.BucketQueued, kv.U64(node)); err != nil {
		return false, err
	}
	_, err := tx.AddCounter(counterSize, -1)
	return err == nil, err
}

// Claim leases up to n entries in breadth-first order, asking judge about
// each: Take leases it, Skip leaves it queued, Drop removes it. Entries of
// hosts already leased are skipped (a host is never fetched by two workers
// at once). It looks at no more than scan entries, so that a queue whose
// head is all skipped costs a bounded amount per call.
func Claim(tx *kv.Tx, n, scan int, now time.Time, judge func(*Entry) Verdict) ([]Lease, error) {
	var out []Lease
	var drop [][]byte
	c := tx.Cursor(kv.BucketFrontier)
	seen := 0
	for k, v := c.First(); k != nil && len(out) < n && seen < scan; k, v = c.Next() {
		seen++
		var e Entry
		if err := kv.Decode(v, &e); err != nil {
			return nil, fmt.Errorf("frontier: claim: entry %x: %w", k, err)
		}
		if tx.GetRaw(kv.BucketLeases, kv.U64(e.NodeID)) != nil {
			continue
		}
		switch judge(&e) {
		case Skip:
			continue
		case Drop:
			drop = append(drop, append([]byte(nil), k...))
		case Take:
			k := append([]byte(nil), k...)
			drop = append(drop, k)
			out = append(out, Lease{Entry: e, Key: k, Since: now})
		}
	}
	// Deleted after the scan: deleting under a bbolt cursor can skip keys.
	for _, k := range drop {
		var e Entry
		if _, err := tx.Get(kv.BucketFrontier, k, &e); err != nil {
			return nil, err
		}
		if err := tx.Delete(kv.BucketFrontier, k); err != nil {
			return nil, err
		}
		if err := tx.Delete(kv.BucketQueued, kv.U64(e.NodeID)); err != nil {
			return nil, err
		}
	}
	if _, err := tx.AddCounter(counterSize, -int64(len(drop))); err != nil {
		return nil, err
	}
	for i := range out {
		if err := tx.Put(kv.BucketLeases, kv.U64(out[i].NodeID), &out[i]); err != nil {
			return nil, err
		}
	}
	if _, err := tx.AddCounter(counterLeases, int64(len(out))); err != nil {
		return nil, err
	}
	return out, nil
}

// Release ends the lease of node: its page is committed (in this same
// transaction). It reports whether there was a lease.
func Release(tx *kv.Tx, node uint64) (bool, error) {
	k := kv.U64(node)
	if tx.GetRaw(kv.BucketLeases, k) == nil {
		return false, nil
	}
	if err := tx.Delete(kv.BucketLeases, k); err != nil {
		return false, err
	}
	_, err := tx.AddCounter(counterLeases, -1)
	return true, err
}

// Park records on node's lease that its host may not be asked before
// notBefore (its politeness delay, a retry, a Retry-After), so that if the
// process stops now, Recover queues the entry with that time and the
// resumed crawl waits it out. It reports whether there was a lease.
func Park(tx *kv.Tx, node uint64, notBefore time.Time) (bool, error) {
	var l Lease
	ok, err := tx.Get(kv.BucketLeases, kv.U64(node), &l)
	if err != nil || !ok {
		return false, err
	}
	l.NotBefore = notBefore
	return true, tx.Put(kv.BucketLeases, kv.U64(node), &l)
}

// Return puts a leased entry back in the queue at its old position (unless
// its host has meanwhile been queued at a smaller or equal depth). It
// reports whether there was a lease.
func Return(tx *kv.Tx, node uint64) (bool, error) {
	var l Lease
	ok, err := tx.Get(kv.BucketLeases, kv.U64(node), &l)
	if err != nil || !ok {
		return false, err
	}
	if _, err := Release(tx, node); err != nil {
		return false, err
	}
	if len(l.Key) != 12 {
		l.Key = nil
	}
	if _, err := place(tx, l.Entry, l.Key); err != nil {
		return false, err
	}
	return true, nil
}

// Recover returns every lease to the queue. Run when a store is opened for
// crawling: the file's lock guarantees that no other process holds them,
// so every lease found belongs to a process that stopped before committing.
func Recover(tx *kv.Tx) (int, error) {
	var nodes []uint64
	c := tx.Cursor(kv.BucketLeases)
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		nodes = append(nodes, binary.BigEndian.Uint64(k))
	}
	for _, n := range nodes {
		if _, err := Return(tx, n); err != nil {
			return 0, fmt.Errorf("frontier: recover lease %d: %w", n, err)
		}
	}
	return len(nodes), nil
}

// ForEach calls fn for every queued entry in breadth-first order.
func ForEach(tx *kv.Tx, fn func(*Entry) error) error {
	c := tx.Cursor(kv.BucketFrontier)
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var e Entry
		if err := kv.Decode(v, &e); err != nil {
			return fmt.Errorf("frontier: entry %x: %w", k, err)
		}
		if err := fn(&e); err != nil {
			return err
		}
	}
	return nil
}

// ForEachLease calls fn for every lease in node order.
func ForEachLease(tx *kv.Tx, fn func(*Lease) error) error {
	c := tx.Cursor(kv.BucketLeases)
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var l Lease
		if err := kv.Decode(v, &l); err != nil {
			return fmt.Errorf("frontier: lease %x: %w", k, err)
		}
		if err := fn(&l); err != nil {
			return err
		}
	}
	return nil
}

// ByDepth returns how many entries are queued at each depth. It walks the
// queue by seeking from depth to depth, reading every key once.
func ByDepth(tx *kv.Tx) map[int]uint64 {
	out := map[int]uint64{}
	c := tx.Cursor(kv.BucketFrontier)
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		out[depthOf(k)]++
	}
	return out
}

// Check verifies the frontier's invariants: every queued entry is indexed
// by its node and back, no node is queued twice, entries sit at their own
// depth, every lease is keyed by its node, every entry and lease names a
// node for which exists reports true, and the counters match. It returns
// all problems found, joined, wrapping ErrInconsistent.
func Check(tx *kv.Tx, exists func(node uint64) bool) error {
	var problems []error
	add := func(format string, a ...any) {
		if len(problems) < 50 {
			problems = append(problems, fmt.Errorf(format, a...))
		}
	}
	var size uint64
	nodes := map[uint64]bool{}
	c := tx.Cursor(kv.BucketFrontier)
	for k, v := c.First(); k != nil; k, v = c.Next() {
		size++
		var e Entry
		if err := kv.Decode(v, &e); err != nil || len(k) != 12 {
			if err == nil {
				err = fmt.Errorf("key of %d bytes, want 12", len(k))
			}
			add("entry %x: %v", k, err)
			continue
		}
		if nodes[e.NodeID] {
			add("node %d (%s) is queued twice", e.NodeID, e.Host)
		}
		nodes[e.NodeID] = true
		if depthOf(k) != e.Depth {
			add("entry %x of %s has depth %d in its key, %d in its value", k, e.Host, depthOf(k), e.Depth)
		}
		if q := tx.GetRaw(kv.BucketQueued, kv.U64(e.NodeID)); string(q) != string(k) {
			add("entry %x of %s is not indexed by its node (index says %x)", k, e.Host, q)
		}
		if exists != nil && !exists(e.NodeID) {
			add("entry %x names node %d (%s) which does not exist", k, e.NodeID, e.Host)
		}
	}
	qc := tx.Cursor(kv.BucketQueued)
	for k, v := qc.First(); k != nil; k, v = qc.Next() {
		if tx.GetRaw(kv.BucketFrontier, v) == nil {
			add("node %x is indexed as queued at %x, but no entry is there", k, v)
		}
	}
	var leases uint64
	lc := tx.Cursor(kv.BucketLeases)
	for k, v := lc.First(); k != nil; k, v = lc.Next() {
		leases++
		var l Lease
		if err := kv.Decode(v, &l); err != nil {
			add("lease %x: %v", k, err)
			continue
		}
		if len(k) != 8 || binary.BigEndian.Uint64(k) != l.NodeID {
			add("lease key %x holds node %d", k, l.NodeID)
		}
		if exists != nil && !exists(l.NodeID) {
			add("lease of node %d (%s) names no existing node", l.NodeID, l.Host)
		}
	}
	if got := Len(tx); got != size {
		add("size counter %d, %d entries queued", got, size)
	}
	if got := Leases(tx); got != leases {
		add("lease counter %d, %d leases stored", got, leases)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %w", ErrInconsistent, errors.Join(problems...))
	}
	return nil
}
