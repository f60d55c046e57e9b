package graph

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/weaver-crawler/weaver/kv"
)

// The subdomain limiter keeps the hosts it admitted in two places (schema
// 5): the roots bucket, keyed by domain and host so that a domain's hosts
// are next to each other, and the roots log, where a Limiter appends each
// admission under a sequence number until it has foldAt of them and puts
// them all into roots at once, in key order. A new host's key in roots
// lands in a leaf of its own (the domains of a web being discovered come
// in no order), and bbolt rewrites every leaf a commit touches: inserted
// one commit at a time, the limiter's keys were a tenth of the CPU of a
// crawl finding 8.5 new hosts a page (docs/performance.md, issue 54). The log is appended to at its end, one
// leaf for a commit's admissions, and a fold rewrites each leaf of roots
// once for all the admissions that reach it.
//
// The log's unfolded admissions are read from memory (a Limiter loads
// them once): a store whose log is not empty must have its limiter used
// through one Limiter only, or through the functions of store.go, which
// load the log for each call.

// foldAt is how many admissions a Limiter holds in the log before it folds
// them into roots: 32,768 of about 100 bytes each in memory.
const foldAt = 1 << 15

// counterRootLog is the meta counter of the roots log's last sequence.
const counterRootLog = "graph.rootlog_seq"

// Limiter is the subdomain limiter of a store for its one writer (a
// crawl). It holds the roots log's admissions in memory and takes part in
// every transaction that changes them (kv.Resource): when the transaction
// does not commit, its changes are undone, so the Limiter always agrees
// with the store. Its methods must be called in writable transactions of
// Update or Commit, one transaction at a time (as bbolt runs them).
type Limiter struct {
	under map[string][]logEntry // registrable domain → its admissions in the log
	n     int                   // how many admissions the log holds
	undo  []limiterChange       // this transaction's changes, in order
	fold  int                   // how many admissions the log holds before they are folded: foldAt
}

// logEntry is an admission in the roots log: its roots key and sequence.
type logEntry struct {
	key string
	seq uint64
}

// limiterChange is a change to a Limiter's memory, undone when its
// transaction does not commit: an admission added to the log or taken out
// of it (of domain, the first d bytes of its key), or a fold (under and n
// are then what they were before it).
type limiterChange struct {
	e     logEntry
	d     int
	added bool
	under map[string][]logEntry
	n     int
}

// LoadLimiter reads the store's roots log: the Limiter for tx's store.
func LoadLimiter(tx *kv.Tx) (*Limiter, error) {
	l := &Limiter{under: map[string][]logEntry{}, fold: foldAt}
	if !tx.Exists(kv.BucketRootLog) {
		return l, nil // a store of schema 4 opened read-only
	}
	c := tx.Cursor(kv.BucketRootLog)
	for k, v := c.First(); k != nil; k, v = c.Next() {
		d := bytes.IndexByte(v, 0)
		if len(k) != 8 || d <= 0 || d == len(v)-1 {
			return nil, fmt.Errorf("graph: roots log entry %x (%q) is not a sequence and a domain's host: %w", k, v, ErrInconsistent)
		}
		l.put(logEntry{string(v), binary.BigEndian.Uint64(k)}, d)
	}
	return l, nil
}

// Admit is AdmitSubdomain with this Limiter's log.
func (l *Limiter) Admit(tx *kv.Tx, host string, max int) (bool, error) {
	key, d := domainKey(host)
	entries := l.under[string(key[:d])]
	for _, e := range entries {
		if e.key == string(key) {
			return true, nil
		}
	}
	prefix := key[:d+1]
	c := tx.Cursor(kv.BucketRoots)
	after, _ := c.Seek(key)
	if bytes.Equal(after, key) {
		return true, nil
	}
	if max > 0 {
		n := len(entries)
		var k []byte
		if after == nil {
			k, _ = c.Last()
		} else {
			k, _ = c.Prev()
		}
		for ; k != nil && n < max && bytes.HasPrefix(k, prefix); k, _ = c.Prev() {
			n++
		}
		if n < max && bytes.HasPrefix(after, prefix) {
			for k, _ = c.Seek(key); k != nil && n < max && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
				n++
			}
		}
		if n >= max {
			return false, nil
		}
	}
	return true, l.add(tx, key, d)
}

// add appends key, a host's roots key whose domain is its first d bytes,
// to the log, and folds the log when it is full.
func (l *Limiter) add(tx *kv.Tx, key []byte, d int) error {
	// A counter of the store gives the sequence: an admission written past
	// this Limiter (the functions of store.go) is never overwritten. (The
	// log's last key would not do: bbolt's Cursor.Last steps back over
	// every leaf a fold emptied in the same transaction.)
	seq, err := tx.AddCounter(counterRootLog, 1)
	if err != nil {
		return err
	}
	if err := tx.PutRaw(kv.BucketRootLog, kv.U64(seq), key); err != nil {
		return err
	}
	e := logEntry{string(key), seq}
	l.put(e, d)
	l.changed(tx, limiterChange{e: e, d: d, added: true})
	if l.n >= l.fold {
		return l.Fold(tx)
	}
	return nil
}

// Unadmit is graph.Unadmit with this Limiter's log.
func (l *Limiter) Unadmit(tx *kv.Tx, host string) error {
	key, d := domainKey(host)
	for _, e := range l.under[string(key[:d])] {
		if e.key != string(key) {
			continue
		}
		if err := tx.Delete(kv.BucketRootLog, kv.U64(e.seq)); err != nil {
			return err
		}
		l.drop(e, d)
		l.changed(tx, limiterChange{e: e, d: d})
		return nil
	}
	return tx.Delete(kv.BucketRoots, key)
}

// domainKey returns host's roots key and the length of its domain, the
// key's first bytes (the Limiter's memory is by domain).
func domainKey(host string) ([]byte, int) {
	key := RootKey(host)
	return key, len(key) - len(host) - 1
}

// put adds e, of the domain of its first d bytes, to the log's memory.
func (l *Limiter) put(e logEntry, d int) {
	l.under[e.key[:d]] = append(l.under[e.key[:d]], e)
	l.n++
}

// drop takes e, of the domain of its first d bytes, out of the log's
// memory.
func (l *Limiter) drop(e logEntry, d int) {
	domain := e.key[:d]
	entries := l.under[domain]
	if i := slices.Index(entries, e); i >= 0 {
		entries = slices.Delete(entries, i, i+1)
		l.n--
	}
	if len(entries) == 0 {
		delete(l.under, domain)
	} else {
		l.under[domain] = entries
	}
}

// Subdomains is graph.Subdomains with this Limiter's log.
func (l *Limiter) Subdomains(tx *kv.Tx, host string) []string {
	key, d := domainKey(host)
	prefix := key[:d+1]
	out := subdomains(tx, prefix)
	if entries := l.under[string(key[:d])]; len(entries) > 0 {
		for _, e := range entries {
			out = append(out, e.key[len(prefix):])
		}
		slices.Sort(out)
	}
	return out
}

// Fold puts the log's admissions into roots, in key order, and empties
// the log. A crawl does not fold when it ends: the fold would free a
// page for each leaf of roots it rewrites, at the end of the file, and
// the next run reads the log again in a few milliseconds.
func (l *Limiter) Fold(tx *kv.Tx) error {
	if l.n == 0 {
		return nil
	}
	keys := make([]string, 0, l.n)
	seqs := make([]uint64, 0, l.n)
	for _, entries := range l.under {
		for _, e := range entries {
			keys = append(keys, e.key)
			seqs = append(seqs, e.seq)
		}
	}
	slices.Sort(keys)
	empty := []byte{}
	for _, k := range keys {
		if err := tx.PutRaw(kv.BucketRoots, []byte(k), empty); err != nil {
			return err
		}
	}
	slices.Sort(seqs)
	for _, s := range seqs {
		if err := tx.Delete(kv.BucketRootLog, kv.U64(s)); err != nil {
			return err
		}
	}
	l.changed(tx, limiterChange{under: l.under, n: l.n})
	l.under, l.n = map[string][]logEntry{}, 0
	return nil
}

// Logged reports how many admissions the log holds.
func (l *Limiter) Logged() int { return l.n }

// changed records a change to undo if tx does not commit.
func (l *Limiter) changed(tx *kv.Tx, c limiterChange) {
	l.undo = append(l.undo, c)
	tx.Enlist(l)
}

// Prepare is kv.Resource's: the log is in the transaction itself.
func (l *Limiter) Prepare() error { return nil }

// Abort undoes the changes of a transaction that did not commit.
func (l *Limiter) Abort() {
	for i := len(l.undo) - 1; i >= 0; i-- {
		switch c := l.undo[i]; {
		case c.under != nil:
			l.under, l.n = c.under, c.n
		case c.added:
			l.drop(c.e, c.d)
		default:
			l.put(c.e, c.d)
		}
	}
	l.undo = l.undo[:0]
}

// Committed forgets the changes of a transaction that committed.
func (l *Limiter) Committed() { l.undo = l.undo[:0] }

// checkRootLog is Check's part for the roots log: each entry a domain's
// host under a sequence below the log's counter.
func checkRootLog(tx *kv.Tx, add func(format string, a ...any)) {
	if !tx.Exists(kv.BucketRootLog) {
		return
	}
	next := tx.Counter(counterRootLog)
	c := tx.Cursor(kv.BucketRootLog)
	for k, v := c.First(); k != nil; k, v = c.Next() {
		_, isRoot := RootKeyHost(v)
		switch {
		case len(k) != 8:
			add("roots log key %x is not a sequence", k)
		case !isRoot:
			add("roots log entry %d (%q) is not a host under its registrable domain", binary.BigEndian.Uint64(k), v)
		case binary.BigEndian.Uint64(k) > next:
			add("roots log entry %d is past the log's counter %d", binary.BigEndian.Uint64(k), next)
		}
	}
}
