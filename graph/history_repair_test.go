package graph_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// TestRepairHistory loses what a damaged store loses and repairs the rest,
// as weaver check --repair leaves a copy: one sealed segment of a host
// (the host's later records relinked past it, one that stood for the
// links of a lost record taking those of the latest one left before it),
// another host's open segment (its last sealed one opens in its place), a
// third host's node record (its history goes), and schema 1 records of a
// host that has schema 2's and of no host. Every drop is reported, the
// store's check passes, and the hosts read as what is left.
func TestRepairHistory(t *testing.T) {
	s := storetest.MustOpen(t)
	o := oracle{}
	var a, b, c uint64
	err := s.Update(func(tx *kv.Tx) error {
		for i, h := range []string{"a.test", "b.test", "c.test"} {
			n, _, err := graph.Ensure(tx, h, "http", t0)
			if err != nil {
				return err
			}
			*[]*uint64{&a, &b, &c}[i] = n.ID
		}
		now := t0
		for i := range 60 {
			for _, node := range []uint64{a, b, c} {
				now = now.Add(time.Second)
				links := []graph.Link{{To: a, Weight: 1}, {To: b, Weight: 2}, {To: c, Weight: uint64(1 + i/7)}}
				cr := graph.Crawl{At: now, Links: links, Changed: i%7 == 0}
				prev, ok, err := graph.LatestCrawl(tx, node)
				if err != nil {
					return err
				}
				var pp *graph.Crawl
				if ok {
					pp = &prev
				}
				if err := graph.PutCrawl(tx, node, cr, pp); err != nil {
					return err
				}
				o.put(node, cr)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var lostA []time.Time
	err = s.Update(func(tx *kv.Tx) error {
		sa, err := graph.Segments(tx, a)
		if err != nil {
			return err
		}
		sb, err := graph.Segments(tx, b)
		if err != nil {
			return err
		}
		if len(sa) < 4 || len(sb) < 2 {
			t.Fatalf("%d and %d segments: too few for the test", len(sa), len(sb))
		}
		lostA = sa[1].Times
		for _, d := range [][2][]byte{{kv.BucketHistory, kv.U64(sa[1].Seq)}, {kv.BucketRecent, kv.U64(b)}, {kv.BucketNodes, kv.U64(c)}} {
			if err := tx.Delete(d[0], d[1]); err != nil {
				return err
			}
		}
		o[b] = o[b][:len(o[b])-len(sb[len(sb)-1].Times)]
		delete(o, c)
		for _, k := range [][]byte{append(kv.U64(a), kv.U64(uint64(t0.UnixNano()))...), append(kv.U64(99), kv.U64(uint64(t0.UnixNano()))...)} {
			if err := tx.PutRaw(kv.BucketCrawls, k, []byte{0}); err != nil {
				return err
			}
		}
		// c's node goes as a repair leaves it: its host index and the node count too.
		if err := tx.Delete(kv.BucketHosts, []byte("c.test")); err != nil {
			return err
		}
		_, err = tx.AddCounter("graph.nodes", -1)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	s.View(func(tx *kv.Tx) error {
		if err := graph.Check(tx); !errors.Is(err, graph.ErrInconsistent) {
			t.Errorf("the damaged history passes the check: %v", err)
		}
		return nil
	})
	var drops []string
	err = s.Update(func(tx *kv.Tx) error {
		return graph.RepairHistory(tx, func(bucket, key []byte, why string) {
			drops = append(drops, fmt.Sprintf("%s %x: %s", bucket, key, why))
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	// c's segments (about 60 crawls' worth), a's and the hostless schema 1 records.
	var cDrops, v1Drops int
	for _, d := range drops {
		switch {
		case strings.Contains(d, fmt.Sprintf("node %d does not exist", c)):
			cDrops++
		case strings.HasPrefix(d, "crawls "):
			v1Drops++
		default:
			t.Errorf("unexpected drop %s", d)
		}
	}
	if cDrops < 2 || v1Drops != 2 {
		t.Errorf("drops: %d of c's segments, %d schema 1 records; want c's all (more than one), 2:\n%s", cDrops, v1Drops, strings.Join(drops, "\n"))
	}
	// a's crawls but the lost ones; a record after them that stood for
	// their links takes those of the latest record left before them.
	var left []graph.Crawl
	var cur []graph.Link
	for i, cr := range o[a] {
		stored := i == 0 || !graph.SameLinks(o[a][i-1].Links, cr.Links)
		if slices.ContainsFunc(lostA, cr.At.Equal) {
			continue
		}
		if stored {
			cur = cr.Links
		}
		cr.Links = cur
		left = append(left, cr)
	}
	o[a] = left
	o.check(t, s)
}
