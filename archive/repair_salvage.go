// Salvaging records: each copied bucket's records are kept when they
// decode and agree with the records kept before them.

package archive

import (
	"bytes"
	"encoding/binary"

	"github.com/weaver-crawler/weaver/crawl/robots"
	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

type keyed[T any] struct {
	k []byte
	v T
}

// copyNodes keeps the nodes keyed by their own id whose host is
// normalised and held by no earlier node, and indexes them by host.
func (r *repairer) copyNodes() error {
	var batch []keyed[graph.Node]
	return r.scan(kv.BucketNodes, func(k, v []byte) error {
		if len(k) != 8 {
			r.dropKey(kv.BucketNodes, k, "key of %d bytes, want 8", len(k))
			return nil
		}
		var n graph.Node
		if len(v) > 0 && isExt(v[0]) {
			r.dropKey(kv.BucketNodes, k, "an extension value, not a node")
			return nil
		}
		if err := graph.DecodeNode(k, v, &n); err != nil {
			r.dropKey(kv.BucketNodes, k, "%v", err)
			return nil
		}
		if id := binary.BigEndian.Uint64(k); n.ID != id || id == 0 {
			r.dropKey(kv.BucketNodes, k, "holds node %d (a damaged key or value)", n.ID)
			return nil
		}
		if h, err := graph.NormalizeHost(n.Host, ""); err != nil || h != n.Host {
			r.dropKey(kv.BucketNodes, k, "host %q is not a normalised host name", n.Host)
			return nil
		}
		batch = append(batch, keyed[graph.Node]{bytes.Clone(k), n})
		return nil
	}, func() error {
		err := r.dst.Update(func(tx *kv.Tx) error {
			for i := range batch {
				n := &batch[i].v
				if old, ok, err := graph.Get(tx, n.ID); err != nil {
					return err
				} else if ok {
					// Two versions of one node: from an unreferenced page, or
					// a damaged key. A crawl only ever adds to a node.
					if old.Host != n.Host || !nodeNewer(n, &old) {
						r.dropKey(kv.BucketNodes, batch[i].k, "a second record under the same key, older or of another host")
						continue
					}
					r.dropKey(kv.BucketNodes, batch[i].k, "a second record under the same key: the older one is left out")
					if err := graph.Put(tx, n); err != nil {
						return err
					}
					continue
				}
				if id, ok := graph.Lookup(tx, n.Host); ok {
					r.dropKey(kv.BucketNodes, batch[i].k, "host %q already belongs to node %d", n.Host, id)
					continue
				}
				if err := graph.Put(tx, n); err != nil {
					return err
				}
				if err := tx.PutRaw(kv.BucketHosts, []byte(n.Host), batch[i].k); err != nil {
					return err
				}
				r.nodes++
				r.maxID = max(r.maxID, n.ID)
				if !n.FirstSeen.IsZero() && (r.firstSeen.IsZero() || n.FirstSeen.Before(r.firstSeen)) {
					r.firstSeen = n.FirstSeen
				}
			}
			return nil
		})
		batch = batch[:0]
		return err
	})
}

// copyEdges keeps the edges of positive weight between two kept nodes.
func (r *repairer) copyEdges() error {
	var batch []keyed[graph.Edge]
	return r.scan(kv.BucketEdges, func(k, v []byte) error {
		if len(k) != 16 {
			r.dropKey(kv.BucketEdges, k, "key of %d bytes, want 16", len(k))
			return nil
		}
		var e graph.Edge
		if err := kv.Decode(v, &e); err != nil {
			r.dropKey(kv.BucketEdges, k, "%v", err)
			return nil
		}
		e.From, e.To = binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:])
		switch {
		case e.Weight == 0:
			r.dropKey(kv.BucketEdges, k, "weight 0")
		case e.From == e.To:
			r.dropKey(kv.BucketEdges, k, "a self-loop")
		default:
			batch = append(batch, keyed[graph.Edge]{bytes.Clone(k), e})
		}
		return nil
	}, func() error {
		err := r.dst.Update(func(tx *kv.Tx) error {
			for i := range batch {
				e := &batch[i].v
				if missing, ok := r.missingNode(tx, e.From, e.To); ok {
					r.dropKey(kv.BucketEdges, batch[i].k, "node %d is not in the repaired store", missing)
					continue
				}
				var old graph.Edge
				if ok, err := tx.Get(kv.BucketEdges, batch[i].k, &old); err != nil {
					return err
				} else if ok {
					// Two versions of one edge: weights only grow.
					r.dropKey(kv.BucketEdges, batch[i].k, "a second record under the same key: the lighter one is left out")
					if e.Weight > old.Weight || (e.Weight == old.Weight && e.LastSeen.After(old.LastSeen)) {
						if err := tx.Put(kv.BucketEdges, batch[i].k, e); err != nil {
							return err
						}
						r.weight += e.Weight - old.Weight
					}
					continue
				}
				if err := tx.Put(kv.BucketEdges, batch[i].k, e); err != nil {
					return err
				}
				r.edges++
				r.weight += e.Weight
			}
			return nil
		})
		batch = batch[:0]
		return err
	})
}

// isExt reports whether c starts a msgpack extension value. Node and
// robots records are maps, and msgpack reads an extension where it wants
// a map as a wrapper around the bytes after it, lengths kv.Decode's
// checks take for payload: its pooled decoder then grows its buffer a
// MiB per such value and keeps it. Repair never hands it one.
func isExt(c byte) bool { return (c >= 0xc7 && c <= 0xc9) || (c >= 0xd4 && c <= 0xd8) }

// nodeNewer reports whether a is a later version of node b: more
// fetches, or as many and seen later.
func nodeNewer(a, b *graph.Node) bool {
	fa, fb := a.CrawlCount+a.FailCount, b.CrawlCount+b.FailCount
	switch {
	case fa != fb:
		return fa > fb
	case !a.LastCrawl.Equal(b.LastCrawl):
		return a.LastCrawl.After(b.LastCrawl)
	}
	return a.LastSeen.After(b.LastSeen)
}

// missingNode returns the first of ids that is not a node in tx, and
// whether there is one. It cannot answer 0 for "none": a flipped bit
// can make an edge's or a visited mark's id 0, which is never a node.
func (r *repairer) missingNode(tx *kv.Tx, ids ...uint64) (uint64, bool) {
	for _, id := range ids {
		if tx.GetRaw(kv.BucketNodes, kv.U64(id)) == nil {
			return id, true
		}
	}
	return 0, false
}

// copyVisited keeps the visited marks (node | depth) of kept nodes.
func (r *repairer) copyVisited() error {
	var batch [][]byte
	return r.scan(kv.BucketVisited, func(k, _ []byte) error {
		if _, ok := frontier.VisitedNode(k); !ok {
			r.dropKey(kv.BucketVisited, k, "key of %d bytes, want 12", len(k))
			return nil
		}
		batch = append(batch, bytes.Clone(k))
		return nil
	}, func() error {
		err := r.dst.Update(func(tx *kv.Tx) error {
			for _, k := range batch {
				id, _ := frontier.VisitedNode(k)
				if _, missing := r.missingNode(tx, id); missing {
					r.dropKey(kv.BucketVisited, k, "node %d is not in the repaired store", id)
					continue
				}
				if err := tx.PutRaw(kv.BucketVisited, k, []byte{}); err != nil {
					return err
				}
			}
			return nil
		})
		batch = batch[:0]
		return err
	})
}

// copyRobots keeps the robots.txt cache records that decode, under a
// host name.
func (r *repairer) copyRobots() error {
	var batch []kvPair
	return r.scan(kv.BucketRobots, func(k, v []byte) error {
		if h, err := graph.NormalizeHost(string(k), ""); err != nil || h != string(k) {
			r.dropKey(kv.BucketRobots, k, "not a host name")
			return nil
		}
		var rec robotsRecord
		if len(v) > 0 && isExt(v[0]) {
			r.dropKey(kv.BucketRobots, k, "an extension value, not a robots.txt record")
			return nil
		}
		if err := kv.Decode(v, &rec); err != nil {
			r.dropKey(kv.BucketRobots, k, "%v", err)
			return nil
		}
		var rules robots.Rules
		if err := rules.UnmarshalBinary(rec.Rules); err != nil {
			r.dropKey(kv.BucketRobots, k, "rules: %v", err)
			return nil
		}
		batch = append(batch, kvPair{bytes.Clone(k), bytes.Clone(v)})
		return nil
	}, pairsFlush(r.dst, kv.BucketRobots, &batch))
}

// copyOutbox keeps the cluster's unpublished links (sequence → link) as
// they are: their encoding is the cluster's.
func (r *repairer) copyOutbox() error {
	var batch []kvPair
	return r.scan(kv.BucketOutbox, func(k, v []byte) error {
		if len(k) != 8 {
			r.dropKey(kv.BucketOutbox, k, "key of %d bytes, want 8", len(k))
			return nil
		}
		r.outboxKept++
		r.outboxMax = max(r.outboxMax, binary.BigEndian.Uint64(k))
		batch = append(batch, kvPair{bytes.Clone(k), bytes.Clone(v)})
		return nil
	}, pairsFlush(r.dst, kv.BucketOutbox, &batch))
}

// copyInbox keeps the ids of the messages already applied.
func (r *repairer) copyInbox() error {
	var batch [][]byte
	return r.scan(kv.BucketInbox, func(k, _ []byte) error {
		batch = append(batch, bytes.Clone(k))
		return nil
	}, keysFlush(r.dst, kv.BucketInbox, &batch))
}

// copyHistory keeps the crawl history (graph/history.go): schema 2's
// segments, sealed and open, whose keys have the right size, and schema 1's
// records whose key is a node and a time and whose value has its flags
// byte; then graph.RepairHistory drops what does not decode or has no node
// kept, and relinks each host's segments past the lost ones.
func (r *repairer) copyHistory() error {
	for _, b := range []struct {
		bucket []byte
		keyLen int
	}{{kv.BucketCrawls, 16}, {kv.BucketHistory, 8}, {kv.BucketRecent, 8}} {
		var batch []kvPair
		err := r.scan(b.bucket, func(k, v []byte) error {
			if len(k) != b.keyLen || len(v) < 1 {
				r.dropKey(b.bucket, k, "key of %d bytes and value of %d, want %d and at least 1", len(k), len(v), b.keyLen)
				return nil
			}
			batch = append(batch, kvPair{bytes.Clone(k), bytes.Clone(v)})
			return nil
		}, pairsFlush(r.dst, b.bucket, &batch))
		if err != nil {
			return err
		}
	}
	return r.dst.Update(func(tx *kv.Tx) error {
		return graph.RepairHistory(tx, func(bucket, key []byte, why string) { r.dropKey(bucket, key, "%s", why) })
	})
}

// copyDue keeps the revisit schedule's index (due time, node → URL).
func (r *repairer) copyDue() error {
	var batch []kvPair
	return r.scan(kv.BucketDue, func(k, v []byte) error {
		if len(k) != 16 {
			r.dropKey(kv.BucketDue, k, "key of %d bytes, want 16", len(k))
			return nil
		}
		batch = append(batch, kvPair{bytes.Clone(k), bytes.Clone(v)})
		return nil
	}, pairsFlush(r.dst, kv.BucketDue, &batch))
}

// copyAnchors keeps the example links (graph.Anchor) of the edges kept.
func (r *repairer) copyAnchors() error {
	var batch []keyed[[]graph.Anchor]
	return r.scan(kv.BucketAnchors, func(k, v []byte) error {
		if len(k) != 16 {
			r.dropKey(kv.BucketAnchors, k, "key of %d bytes, want 16", len(k))
			return nil
		}
		if len(v) == 0 || !(v[0]&0xf0 == 0x90 || v[0] == 0xdc || v[0] == 0xdd) {
			r.dropKey(kv.BucketAnchors, k, "not a list of anchors")
			return nil
		}
		var list []graph.Anchor
		if err := kv.Decode(v, &list); err != nil {
			r.dropKey(kv.BucketAnchors, k, "%v", err)
			return nil
		}
		if len(list) == 0 || len(list) > graph.MaxAnchors {
			r.dropKey(kv.BucketAnchors, k, "%d anchors, want 1 to %d", len(list), graph.MaxAnchors)
			return nil
		}
		batch = append(batch, keyed[[]graph.Anchor]{bytes.Clone(k), list})
		return nil
	}, func() error {
		err := r.dst.Update(func(tx *kv.Tx) error {
			for i := range batch {
				if tx.GetRaw(kv.BucketEdges, batch[i].k) == nil {
					r.dropKey(kv.BucketAnchors, batch[i].k, "the edge is not in the repaired store")
					continue
				}
				if err := tx.Put(kv.BucketAnchors, batch[i].k, batch[i].v); err != nil {
					return err
				}
			}
			return nil
		})
		batch = batch[:0]
		return err
	})
}
