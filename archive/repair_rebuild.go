// Rebuilding what the copied records imply: the frontier with its queued
// index, the subdomain limiter, and the meta records with the counters.

package archive

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// entryProblem says why e cannot be queued in tx, or "".
func entryProblem(tx *kv.Tx, e *frontier.Entry) string {
	if e.NodeID == 0 || e.Host == "" || e.Depth < 0 {
		return "no node, no host or a negative depth"
	}
	if id, ok := graph.Lookup(tx, e.Host); !ok || id != e.NodeID {
		return fmt.Sprintf("node %d (%s) is not in the repaired store", e.NodeID, e.Host)
	}
	u, err := url.Parse(e.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Sprintf("URL %q is not an http(s) URL", e.URL)
	}
	return ""
}

// readLeases reads the leases to return to the queue: every process that
// held them is gone (Repair holds the file's lock).
func (r *repairer) readLeases() error {
	var batch []keyed[frontier.Lease]
	return r.scan(kv.BucketLeases, func(k, v []byte) error {
		var l frontier.Lease
		if err := kv.Decode(v, &l); err != nil {
			r.dropKey(kv.BucketLeases, k, "%v", err)
			return nil
		}
		if len(k) != 8 || binary.BigEndian.Uint64(k) != l.NodeID {
			r.dropKey(kv.BucketLeases, k, "holds a lease of node %d (a damaged key or value)", l.NodeID)
			return nil
		}
		batch = append(batch, keyed[frontier.Lease]{bytes.Clone(k), l})
		return nil
	}, func() error {
		err := r.dst.View(func(tx *kv.Tx) error {
			for i := range batch {
				l := &batch[i].v
				if why := entryProblem(tx, &l.Entry); why != "" {
					r.dropKey(kv.BucketLeases, batch[i].k, "%s", why)
					continue
				}
				q := queuedAt{depth: l.Depth, seq: ^uint64(0), e: l.Entry}
				if len(l.Key) == 12 && int(binary.BigEndian.Uint32(l.Key)) == l.Depth {
					q.seq = keySeq(l.Key)
				}
				r.leases = append(r.leases, q)
			}
			return nil
		})
		batch = batch[:0]
		return err
	})
}

// copyFrontier queues the entries again in their old order, with the
// leases at their old places, through frontier.Push.
func (r *repairer) copyFrontier() error {
	slices.SortStableFunc(r.leases, queuedAt.compare)
	leases := r.leases
	var batch []keyed[queuedAt]
	push := func(tx *kv.Tx, q queuedAt) error {
		_, err := frontier.Push(tx, q.e)
		return err
	}
	err := r.scan(kv.BucketFrontier, func(k, v []byte) error {
		if len(k) != 12 {
			r.dropKey(kv.BucketFrontier, k, "key of %d bytes, want 12", len(k))
			return nil
		}
		var e frontier.Entry
		if err := kv.Decode(v, &e); err != nil {
			r.dropKey(kv.BucketFrontier, k, "%v", err)
			return nil
		}
		q := queuedAt{depth: int(binary.BigEndian.Uint32(k)), seq: keySeq(k), e: e}
		if q.depth != e.Depth {
			r.dropKey(kv.BucketFrontier, k, "entry of %s at depth %d under a key of depth %d", e.Host, e.Depth, q.depth)
			return nil
		}
		batch = append(batch, keyed[queuedAt]{bytes.Clone(k), q})
		return nil
	}, func() error {
		err := r.dst.Update(func(tx *kv.Tx) error {
			for _, b := range batch {
				for len(leases) > 0 && leases[0].compare(b.v) < 0 {
					if err := push(tx, leases[0]); err != nil {
						return err
					}
					leases = leases[1:]
					r.res.Returned++
				}
				if why := entryProblem(tx, &b.v.e); why != "" {
					r.dropKey(kv.BucketFrontier, b.k, "%s", why)
					continue
				}
				if err := push(tx, b.v); err != nil {
					return err
				}
			}
			return nil
		})
		batch = batch[:0]
		return err
	})
	if err != nil {
		return err
	}
	return r.dst.Update(func(tx *kv.Tx) error {
		for _, q := range leases {
			if err := push(tx, q); err != nil {
				return err
			}
			r.res.Returned++
		}
		return nil
	})
}

// copyRoots keeps the subdomain limiter's records whose domain is their
// host's. When pages or records of them were lost, the hosts of kept
// nodes that were queued or crawled (not excluded by a limit or the scope) are
// admitted again, as the crawl had admitted them.
func (r *repairer) copyRoots() error {
	lost := func() int { return r.res.ByBucket[string(kv.BucketRoots)] + r.res.ByBucket[string(kv.BucketRootLog)] }
	before := lost()
	var batch [][]byte
	keep := func(bucket, k, key []byte) {
		host, ok := graph.RootKeyHost(key)
		if h, err := graph.NormalizeHost(host, ""); !ok || err != nil || h != host {
			r.dropKey(bucket, k, "not a host under its registrable domain")
			return
		}
		batch = append(batch, bytes.Clone(key))
	}
	err := r.scan(kv.BucketRoots, func(k, _ []byte) error {
		keep(kv.BucketRoots, k, k)
		return nil
	}, keysFlush(r.dst, kv.BucketRoots, &batch))
	if _, logged := r.lay.buckets[string(kv.BucketRootLog)]; logged && err == nil {
		// The latest admissions of a crawl that did not end (graph/limiter.go)
		// go to roots, where the crawl would have folded them.
		err = r.scan(kv.BucketRootLog, func(k, v []byte) error {
			if len(k) != 8 {
				r.dropKey(kv.BucketRootLog, k, "not a sequence number")
				return nil
			}
			keep(kv.BucketRootLog, k, v)
			return nil
		}, func() error {
			slices.SortFunc(batch, bytes.Compare)
			return keysFlush(r.dst, kv.BucketRoots, &batch)()
		})
	}
	if err != nil || lost() == before {
		return err
	}
	r.note("the subdomain limiter lost records: hosts of queued or crawled nodes admitted again")
	var last uint64
	for {
		var keys [][]byte
		err := r.dst.View(func(tx *kv.Tx) error {
			return graph.ForEachNodeFrom(tx, last+1, func(n *graph.Node) error {
				last = n.ID
				// Out-of-scope hosts never count toward the subdomain cap.
				if n.Status != graph.StatusExcludedByLimit && n.Status != graph.StatusOutOfScope {
					keys = append(keys, graph.RootKey(n.Host))
				}
				if len(keys) == r.opt.Batch {
					return graph.ErrStop
				}
				return nil
			})
		})
		if err != nil || len(keys) == 0 {
			return err
		}
		slices.SortFunc(keys, bytes.Compare)
		if err := keysFlush(r.dst, kv.BucketRoots, &keys)(); err != nil {
			return err
		}
	}
}

// readMeta reads the source's meta records and returns its creation time.
// It refuses a store of a newer schema, and a file that is bbolt but not
// a weaver store.
func (r *repairer) readMeta() (time.Time, error) {
	err := r.scan(kv.BucketMeta, func(k, v []byte) error {
		r.meta = append(r.meta, kvPair{bytes.Clone(k), bytes.Clone(v)})
		return nil
	}, func() error { return nil })
	if err != nil {
		return time.Time{}, err
	}
	get := func(k string) (string, bool) {
		for _, p := range r.meta {
			if string(p.k) == k {
				return string(p.v), true
			}
		}
		return "", false
	}
	magic, ok := get("magic")
	switch {
	case ok && magic != "weaver store":
		return time.Time{}, fmt.Errorf("%s %w (its meta bucket's magic is %q)", r.res.Source, kv.ErrNotStore, magic)
	case !ok && r.lay.buckets[string(kv.BucketNodes)] == nil && len(r.lay.orphans[string(kv.BucketNodes)]) == 0:
		return time.Time{}, fmt.Errorf("%s %w (a bbolt file without weaver's buckets)", r.res.Source, kv.ErrNotStore)
	case !ok:
		r.note("the meta records are lost or damaged: read as a weaver store of schema %d", kv.SchemaVersion)
	}
	if v, ok := get("schema_version"); ok {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil:
			r.dropKey(kv.BucketMeta, []byte("schema_version"), "not a number (%q): read as schema %d", v, kv.SchemaVersion)
		case n > kv.SchemaVersion:
			return time.Time{}, fmt.Errorf("%s %w: file has %d, this weaver reads up to %d", r.res.Source, kv.ErrNewerSchema, n, kv.SchemaVersion)
		}
	}
	created := time.Unix(0, 0).UTC()
	if v, ok := get("created_at"); ok {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			r.dropKey(kv.BucketMeta, []byte("created_at"), "not a time (%q)", v)
		} else {
			created, r.hasCreated = t, true
		}
	}
	return created, nil
}

// printable reports whether a meta key is text a program wrote.
func printable(k []byte) bool {
	if len(k) == 0 || len(k) > 256 || !utf8.Valid(k) {
		return false
	}
	return !strings.ContainsFunc(string(k), func(c rune) bool { return !unicode.IsPrint(c) })
}

// copyMeta copies the meta records (but the computed ones and
// opt.DropMeta) and writes the counters of what was kept.
func (r *repairer) copyMeta() error {
	skip := map[string]bool{}
	for _, k := range append(slices.Clone(metaComputed), r.opt.DropMeta...) {
		skip[k] = true
	}
	return r.dst.Update(func(tx *kv.Tx) error {
		var srcNext, srcOutboxSeq uint64
		outbox := false
		for _, p := range r.meta {
			k := string(p.k)
			switch {
			case k == "created_at":
				if _, err := time.Parse(time.RFC3339Nano, string(p.v)); err == nil {
					if err := tx.PutRaw(kv.BucketMeta, p.k, p.v); err != nil {
						return err
					}
				}
				continue
			case k == "graph.next_id" && len(p.v) == 8:
				srcNext = binary.BigEndian.Uint64(p.v)
			case k == metaOutbox:
				outbox = true
				continue
			case k == metaOutboxSeq && len(p.v) == 8:
				srcOutboxSeq = binary.BigEndian.Uint64(p.v)
				continue
			case !printable(p.k):
				r.dropKey(kv.BucketMeta, p.k, "not a key weaver writes (a damaged key)")
				continue
			}
			if skip[k] {
				continue
			}
			if err := tx.PutRaw(kv.BucketMeta, p.k, p.v); err != nil {
				return err
			}
		}
		if !r.hasCreated && !r.firstSeen.IsZero() {
			// The store was created at its first seed, or just before.
			created := r.firstSeen.UTC()
			r.note("the creation time is lost: the earliest first-seen time of a node, %s, stands in for it", created.Format(time.RFC3339))
			if err := tx.PutRaw(kv.BucketMeta, []byte("created_at"), []byte(created.Format(time.RFC3339Nano))); err != nil {
				return err
			}
		}
		// Ids of lost nodes above the largest kept one are not given again,
		// unless the stored next id is itself implausible.
		next := r.maxID
		if srcNext > next && srcNext-next < 1<<32 {
			next = srcNext
		}
		for _, c := range []struct {
			name string
			n    uint64
		}{{"graph.nodes", r.nodes}, {"graph.edges", r.edges}, {"graph.weight", r.weight}, {"graph.next_id", next}} {
			if err := tx.SetCounter(c.name, c.n); err != nil {
				return err
			}
		}
		if outbox || r.outboxKept > 0 {
			if err := tx.SetCounter(metaOutbox, r.outboxKept); err != nil {
				return err
			}
			if err := tx.SetCounter(metaOutboxSeq, max(srcOutboxSeq, r.outboxMax)); err != nil {
				return err
			}
		}
		return nil
	})
}
