package archive_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/shard"
)

// everyBucket lists the store's buckets for bucketsOf.
var everyBucket = [][]byte{kv.BucketMeta, kv.BucketNodes, kv.BucketHosts, kv.BucketEdges, kv.BucketRoots, kv.BucketFrontier,
	kv.BucketQueued, kv.BucketVisited, kv.BucketLeases, kv.BucketRobots, kv.BucketOutbox, kv.BucketInbox, kv.BucketMirrors,
	kv.BucketCrawls, kv.BucketHistory, kv.BucketRecent, kv.BucketDue, kv.BucketLayout, kv.BucketAnchors, kv.BucketRootLog}

// bucketsOf returns every record of the store at path, bucket by bucket.
func bucketsOf(t *testing.T, path string) map[string][][2][]byte {
	t.Helper()
	s, err := kv.Open(path, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	all := map[string][][2][]byte{}
	err = s.View(func(tx *kv.Tx) error {
		for _, b := range everyBucket {
			if !tx.Exists(b) {
				continue
			}
			c := tx.Cursor(b)
			for k, v := c.First(); k != nil; k, v = c.Next() {
				all[string(b)] = append(all[string(b)], [2][]byte{bytes.Clone(k), bytes.Clone(v)})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// richStore is randomStore with what a merge must carry besides: link
// facts (nofollow, redirect, frame counts and times), home-page content
// hashes shared between hosts (mirrors), revisit due times, leases, and
// hosts named by several inputs.
func richStore(b *builder, seed int64, n int) {
	randomStore(b, seed, n)
	r := rand.New(rand.NewSource(seed + 1000))
	host := func() string { return fmt.Sprintf("h%03d.example%d.test", r.Intn(n), r.Intn(3)) }
	for i := 0; i < n/2; i++ {
		from, to := host(), host()
		if from == to {
			continue
		}
		f, t := b.node(from, nil), b.node(to, nil)
		w := uint64(1 + r.Intn(4))
		b.must(graph.AddEdgeFacts(b.tx, f, t, w, uint64(r.Intn(int(w)+1)), uint64(r.Intn(int(w)+1)), at(r.Intn(1000))))
		if r.Intn(3) == 0 {
			e, _, err := graph.GetEdge(b.tx, f, t)
			b.must(err)
			e.Frame = uint64(1 + r.Intn(int(e.Weight)))
			b.must(graph.PutEdge(b.tx, &e))
		}
	}
	for i := 0; i < n/4; i++ {
		h := host()
		id := b.node(h, nil)
		n, _, err := graph.Get(b.tx, id)
		b.must(err)
		n.CrawlCount++
		n.Status, n.HTTPStatus, n.LastCrawl = graph.StatusCrawled, 200, at(r.Intn(1000))
		n.ContentHash = fmt.Sprintf("%064x", r.Intn(5))
		n.FirstSeen = at(r.Intn(100))
		if r.Intn(2) == 0 {
			n.NextDue, n.IntervalMS = at(2000+r.Intn(100)), 60_000
		}
		_, err = graph.NoteContentHash(b.tx, &n)
		b.must(err)
		b.must(graph.Put(b.tx, &n))
	}
	for i := 0; i < 3; i++ {
		h := fmt.Sprintf("leased%d-%d.example.test", seed, i)
		b.lease(h, 1)
	}
}

// TestMerge_SameAsRecordByRecord: the one-pass merge writes, record for
// record and bucket for bucket, the store the record-by-record merge
// weaver had before wrote from the same inputs: random crawl-like stores
// that overlap, with link facts, mirrors, due times, leases, and cluster
// shards' stubs; with every edge sorted in memory and with sorted runs
// spilled to disk after every few hundred edges.
func TestMerge_SameAsRecordByRecord(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		for _, sortMemory := range []int{0, 64 * 300} {
			t.Run(fmt.Sprintf("seed=%d/sort=%d", seed, sortMemory), func(t *testing.T) {
				dir := t.TempDir()
				var paths []string
				inputs := 2 + int(seed%3)
				for i := 0; i < inputs; i++ {
					p := build(t, filepath.Join(dir, fmt.Sprintf("in%d.bolt", i)), func(b *builder) {
						richStore(b, seed*10+int64(i), 300)
						if seed%2 == 0 {
							// Cluster shards: each input is shard i of inputs, holding stubs of the others' hosts.
							b.must(b.tx.SetMetaString(shard.MetaSpec, shard.Spec{K: i, N: inputs}.String()))
						}
					})
					paths = append(paths, p)
				}
				opt := archive.MergeOptions{Verify: true, Batch: 50 + int(seed)*7, SortMemory: sortMemory}
				one, ref := filepath.Join(dir, "one.bolt"), filepath.Join(dir, "ref.bolt")
				if _, err := archive.Merge(context.Background(), one, paths, opt); err != nil {
					t.Fatal(err)
				}
				if _, err := archive.MergeRecordByRecord(context.Background(), ref, paths, opt); err != nil {
					t.Fatal(err)
				}
				got, want := bucketsOf(t, one), bucketsOf(t, ref)
				if len(want["nodes"]) < 300 || len(want["edges"]) < 300 || len(want["mirrors"]) == 0 || len(want["due"]) == 0 {
					t.Fatalf("the inputs are too poor to compare on: %d nodes, %d edges, %d mirror records, %d due", len(want["nodes"]), len(want["edges"]), len(want["mirrors"]), len(want["due"]))
				}
				for _, b := range everyBucket {
					g, w := got[string(b)], want[string(b)]
					if len(g) != len(w) {
						t.Errorf("%s: %d records, the record-by-record merge wrote %d", b, len(g), len(w))
						continue
					}
					for i := range w {
						if !bytes.Equal(g[i][0], w[i][0]) || !bytes.Equal(g[i][1], w[i][1]) {
							t.Errorf("%s: record %d is %x=%x, the record-by-record merge wrote %x=%x", b, i, g[i][0], g[i][1], w[i][0], w[i][1])
							break
						}
					}
				}
			})
		}
	}
}
