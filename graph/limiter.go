package graph

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/weaver-crawler/weaver/kv"
)

// The subdomain limiter keeps the hosts it admitted in two places (schema
// 5): the roots bucket, keyed by domain and host so that a domain's hosts
// are next to each other, and the roots log, where a Limiter appends each
// admission under a sequence number until it has foldAt of them and puts
// them all into roots at once, in key order. A new host's key in roots
// lands in a leaf of its own (the domains of a web being discovered come
// in no order), and bbolt rewrites every leaf a commit touches: inserted
// one commit at a time, the limiter's keys were a sixth of the CPU of a
// crawl finding 8.5 new hosts a page, more than the hosts' own index
// (docs/performance.md, issue 54). The log is appended to at its end, one
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

// Limiter is the subdomain limiter of a store for its one writer (a
// crawl). It holds the roots log's admissions in memory and takes part in
// every transaction that changes them (kv.Resource): when the transaction
// does not commit, its changes are undone, so the Limiter always agrees
// with the store. Its methods must be called in writable transactions of
// Update or Commit, one transaction at a time (as bbolt runs them).
type Limiter struct {
	log   map[string]uint64   // roots key of an admission in the log → its sequence there
	under map[string][]string // registrable domain → the hosts of log under it
	undo  []limiterChange     // this transaction's changes, in order
	fold  int                 // how many admissions the log holds before they are folded: foldAt
}

// limiterChange is a change to a Limiter's memory, undone when its
// transaction does not commit: an admission added to the log or taken out
// of it, or a fold (log and under are then what they were before).
type limiterChange struct {
	key   string
	seq   uint64
	added bool
	log   map[string]uint64
	under map[string][]string
}

// LoadLimiter reads the store's roots log: the Limiter for tx's store.
func LoadLimiter(tx *kv.Tx) (*Limiter, error) {
	l := &Limiter{log: map[string]uint64{}, under: map[string][]string{}, fold: foldAt}
	if !tx.Exists(kv.BucketRootLog) {
		return l, nil // a store of schema 4 opened read-only
	}
	c := tx.Cursor(kv.BucketRootLog)
	for k, v := c.First(); k != nil; k, v = c.Next() {
		domain, host, ok := splitRootKey(v)
		if len(k) != 8 || !ok {
			return nil, fmt.Errorf("graph: roots log entry %x (%q) is not a sequence and a domain's host: %w", k, v, ErrInconsistent)
		}
		seq := binary.BigEndian.Uint64(k)
		key := string(v)
		l.log[key] = seq
		l.under[domain] = append(l.under[domain], host)
	}
	return l, nil
}

// splitRootKey returns a roots key's domain and host.
func splitRootKey(k []byte) (domain, host string, ok bool) {
	i := bytes.IndexByte(k, 0)
	if i <= 0 || i == len(k)-1 {
		return "", "", false
	}
	return string(k[:i]), string(k[i+1:]), true
}

// Admit is AdmitSubdomain with this Limiter's log.
func (l *Limiter) Admit(tx *kv.Tx, host string, max int) (bool, error) {
	key := rootKey(host)
	if _, ok := l.log[string(key)]; ok {
		return true, nil
	}
	prefix := key[:len(key)-len(host)]
	c := tx.Cursor(kv.BucketRoots)
	after, _ := c.Seek(key)
	if bytes.Equal(after, key) {
		return true, nil
	}
	if max > 0 {
		n := len(l.under[string(prefix[:len(prefix)-1])])
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
	return true, l.add(tx, key, len(prefix)-1)
}

// add appends key, a host's roots key whose domain is its first d bytes,
// to the log, and folds the log when it is full.
func (l *Limiter) add(tx *kv.Tx, key []byte, d int) error {
	// The log's end gives the sequence: an admission written past this
	// Limiter (the functions of store.go) is never overwritten.
	seq := uint64(1)
	if last, _ := tx.Cursor(kv.BucketRootLog).Last(); len(last) == 8 {
		seq = binary.BigEndian.Uint64(last) + 1
	}
	if err := tx.PutRaw(kv.BucketRootLog, kv.U64(seq), key); err != nil {
		return err
	}
	k := string(key)
	l.log[k] = seq
	l.under[k[:d]] = append(l.under[k[:d]], k[d+1:])
	l.changed(tx, limiterChange{key: k, seq: seq, added: true})
	if len(l.log) >= l.fold {
		return l.Fold(tx)
	}
	return nil
}

// Unadmit is graph.Unadmit with this Limiter's log.
func (l *Limiter) Unadmit(tx *kv.Tx, host string) error {
	key := rootKey(host)
	seq, ok := l.log[string(key)]
	if !ok {
		return tx.Delete(kv.BucketRoots, key)
	}
	if err := tx.Delete(kv.BucketRootLog, kv.U64(seq)); err != nil {
		return err
	}
	k := string(key)
	l.drop(k)
	l.changed(tx, limiterChange{key: k, seq: seq})
	return nil
}

// drop takes key out of the log's memory.
func (l *Limiter) drop(k string) {
	delete(l.log, k)
	i := strings.IndexByte(k, 0)
	domain, host := k[:i], k[i+1:]
	hosts := l.under[domain]
	if j := slices.Index(hosts, host); j >= 0 {
		hosts = slices.Delete(hosts, j, j+1)
	}
	if len(hosts) == 0 {
		delete(l.under, domain)
	} else {
		l.under[domain] = hosts
	}
}

// Subdomains is graph.Subdomains with this Limiter's log.
func (l *Limiter) Subdomains(tx *kv.Tx, host string) []string {
	key := rootKey(host)
	prefix := key[:len(key)-len(host)]
	out := subdomains(tx, prefix)
	if logged := l.under[string(prefix[:len(prefix)-1])]; len(logged) > 0 {
		out = append(out, logged...)
		slices.Sort(out)
	}
	return out
}

// Fold puts the log's admissions into roots, in key order, and empties
// the log. A crawl folds when it ends, so that a store at rest has its
// limiter in roots alone.
func (l *Limiter) Fold(tx *kv.Tx) error {
	if len(l.log) == 0 {
		return nil
	}
	keys := make([]string, 0, len(l.log))
	for k := range l.log {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	empty := []byte{}
	for _, k := range keys {
		if err := tx.PutRaw(kv.BucketRoots, []byte(k), empty); err != nil {
			return err
		}
	}
	seqs := make([]uint64, 0, len(l.log))
	for _, s := range l.log {
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	for _, s := range seqs {
		if err := tx.Delete(kv.BucketRootLog, kv.U64(s)); err != nil {
			return err
		}
	}
	l.changed(tx, limiterChange{log: l.log, under: l.under})
	l.log, l.under = map[string]uint64{}, map[string][]string{}
	return nil
}

// Logged reports how many admissions the log holds.
func (l *Limiter) Logged() int { return len(l.log) }

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
		case c.log != nil:
			l.log, l.under = c.log, c.under
		case c.added:
			l.drop(c.key)
		default:
			l.log[c.key] = c.seq
			i := strings.IndexByte(c.key, 0)
			l.under[c.key[:i]] = append(l.under[c.key[:i]], c.key[i+1:])
		}
	}
	l.undo = l.undo[:0]
}

// Committed forgets the changes of a transaction that committed.
func (l *Limiter) Committed() { l.undo = l.undo[:0] }
