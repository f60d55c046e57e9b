package graph_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// oracle is what the history of each node must read as: its crawls, in
// time order.
type oracle map[uint64][]graph.Crawl

func (o oracle) put(node uint64, c graph.Crawl) {
	cs := slices.DeleteFunc(o[node], func(x graph.Crawl) bool { return x.At.Equal(c.At) })
	i, _ := slices.BinarySearchFunc(cs, c.At, func(x graph.Crawl, t time.Time) int { return x.At.Compare(t) })
	o[node] = slices.Insert(cs, i, c)
}

// at is the node's last crawl at or before t (the last when t is zero).
func (o oracle) at(node uint64, t time.Time) (graph.Crawl, bool) {
	var out graph.Crawl
	found := false
	for _, c := range o[node] {
		if !t.IsZero() && c.At.After(t) {
			break
		}
		out, found = c, true
	}
	return out, found
}

// check fails t unless every reader of the store agrees with o.
func (o oracle) check(t *testing.T, s *kv.Store) {
	t.Helper()
	err := s.View(func(tx *kv.Tx) error {
		for node, want := range o {
			var got []graph.Crawl
			if err := graph.ForEachCrawl(tx, node, func(c *graph.Crawl) error {
				cr := *c
				cr.Links = slices.Clone(c.Links)
				got = append(got, cr)
				return nil
			}); err != nil {
				return err
			}
			if len(got) != len(want) {
				t.Fatalf("node %d: %d crawls, want %d", node, len(got), len(want))
			}
			for i := range want {
				if !sameCrawl(&got[i], &want[i]) {
					t.Fatalf("node %d crawl %d: %+v, want %+v", node, i, got[i], want[i])
				}
			}
			times, changed, nm, err := graph.CrawlTimes(tx, node)
			if err != nil || len(times) != len(want) {
				t.Fatalf("node %d: %d times (%v), want %d", node, len(times), err, len(want))
			}
			wc, wn := 0, 0
			for i, c := range want {
				if !times[i].Equal(c.At) {
					t.Fatalf("node %d: time %d is %s, want %s", node, i, times[i], c.At)
				}
				if c.Changed {
					wc++
				}
				if c.NotModified {
					wn++
				}
			}
			if changed != wc || nm != wn {
				t.Errorf("node %d: %d changed, %d not modified; want %d, %d", node, changed, nm, wc, wn)
			}
			stored, err := graph.LinksStored(tx, node)
			if err != nil {
				return err
			}
			for i := range want {
				if w := i == 0 || !graph.SameLinks(want[i-1].Links, want[i].Links); stored[i] != w {
					t.Errorf("node %d crawl %d: links stored %v, want %v", node, i, stored[i], w)
				}
			}
			probes := []time.Time{{}, want[0].At.Add(-1)}
			for _, c := range want {
				probes = append(probes, c.At, c.At.Add(1), c.At.Add(-1))
			}
			for _, p := range probes {
				gc, gok, err := graph.CrawlAt(tx, node, p)
				if err != nil {
					return err
				}
				wc, wok := o.at(node, p)
				if gok != wok || gok && !sameCrawl(&gc, &wc) {
					t.Fatalf("node %d at %s: %+v %v, want %+v %v", node, p, gc, gok, wc, wok)
				}
				if p.IsZero() {
					continue
				}
				h, err := graph.NodeHistoryAt(tx, node, p)
				if err != nil {
					return err
				}
				if h.Records != len(want) || wok && !h.Last.Equal(wc.At) || !wok && !h.Last.IsZero() {
					t.Fatalf("node %d history at %s: %+v", node, p, h)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := storetest.CheckAll(s); err != nil {
		t.Fatal(err)
	}
}

func sameCrawl(a, b *graph.Crawl) bool {
	return a.At.Equal(b.At) && a.Changed == b.Changed && a.NotModified == b.NotModified && graph.SameLinks(a.Links, b.Links)
}

// randomLinks returns 0 to 15 links to nodes 1 to 60, sorted, with
// weights and facts drawn from r.
func randomLinks(r *rand.Rand) []graph.Link {
	var out []graph.Link
	for to := uint64(1); to <= 60; to++ {
		if r.IntN(60) < 6 {
			l := graph.Link{To: to, Weight: uint64(1 + r.IntN(300))}
			if r.IntN(4) == 0 {
				l.Nofollow = uint64(1 + r.IntN(int(l.Weight)))
			}
			if r.IntN(5) == 0 {
				l.Redirect = uint64(1 + r.IntN(int(l.Weight)))
			}
			out = append(out, l)
		}
	}
	return out
}

// TestHistory_Oracle crawls a few hosts many times, most crawls finding
// the links of the one before, at time steps from a nanosecond to days,
// so that their records fill many segments; now and then a crawl comes
// with a clock set back (before the host's last, or at its time), and a
// host's history is written anew. Every reader must agree with a plain
// list of the crawls, and the store's check must pass.
func TestHistory_Oracle(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 43))
			s := storetest.MustOpen(t)
			o := oracle{}
			nodes := []uint64{}
			err := s.Update(func(tx *kv.Tx) error {
				for i := range 8 {
					n, _, err := graph.Ensure(tx, fmt.Sprintf("h%d.test", i), "http", t0)
					if err != nil {
						return err
					}
					nodes = append(nodes, n.ID)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			now := t0
			steps := []time.Duration{1, time.Millisecond, time.Second, time.Hour, 49 * time.Hour}
			for round := range 60 {
				err := s.Update(func(tx *kv.Tx) error {
					for range 10 {
						node := nodes[r.IntN(len(nodes))]
						now = now.Add(steps[r.IntN(len(steps))])
						c := graph.Crawl{At: now, Changed: r.IntN(3) == 0, NotModified: r.IntN(4) == 0}
						last, ok := o.at(node, time.Time{})
						switch {
						case ok && r.IntN(10) < 7:
							c.Links = slices.Clone(last.Links)
						default:
							c.Links = randomLinks(r)
						}
						if ok && r.IntN(40) == 0 { // a clock set back
							c.At = o[node][r.IntN(len(o[node]))].At.Add(-time.Duration(r.IntN(2)))
						}
						prev, pok, err := graph.LatestCrawl(tx, node)
						if err != nil {
							return err
						}
						var pp *graph.Crawl
						if pok {
							pp = &prev
						}
						if err := graph.PutCrawl(tx, node, c, pp); err != nil {
							return err
						}
						o.put(node, c)
					}
					if round%20 == 19 {
						node := nodes[r.IntN(len(nodes))]
						return graph.ReplaceHistory(tx, node, o[node])
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			o.check(t, s)
		})
	}
}

// historyPages returns the bytes in use and the pages of the history
// buckets of the store file at path (no process holding it).
func historyPages(tb testing.TB, path string) (inuse, pages, pageSize int) {
	tb.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bbolt.Tx) error {
		for _, b := range [][]byte{kv.BucketHistory, kv.BucketRecent} {
			bs := tx.Bucket(b).Stats()
			n := bs.LeafPageN + bs.BranchPageN + bs.LeafOverflowN + bs.BranchOverflowN
			inuse += bs.LeafInuse + bs.BranchInuse
			pages += n
			tb.Logf("%s: %d keys, %d pages, %.0f %% full", b, bs.KeyN, n, 100*float64(bs.LeafInuse+bs.BranchInuse)/float64(max(n, 1)*db.Info().PageSize))
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return inuse, pages, db.Info().PageSize
}

// revisits is a crawl of hosts hosts of 10 links each, found unchanged
// at every visit, as a crawl's group commits write it: group crawls a
// transaction, the hosts in turn, about once a second each.
type revisits struct {
	hosts, group int
	next         uint64 // the next host to crawl, from 1
	now          time.Time
}

func (r *revisits) links(node uint64) []graph.Link {
	var out []graph.Link
	for i := range uint64(10) {
		out = append(out, graph.Link{To: (node*7+i*131)%uint64(r.hosts) + 1, Weight: 1 + i%3})
	}
	graph.SortLinks(out)
	return slices.CompactFunc(out, func(a, b graph.Link) bool { return a.To == b.To })
}

// crawl makes n crawls; the first of each host creates its node.
func (r *revisits) crawl(tb testing.TB, s *kv.Store, n int) {
	for n > 0 {
		k := min(n, r.group)
		n -= k
		err := s.Update(func(tx *kv.Tx) error {
			for range k {
				r.next = r.next%uint64(r.hosts) + 1
				node := r.next
				prev, ok, err := graph.LatestCrawl(tx, node)
				if err != nil {
					return err
				}
				var pp *graph.Crawl
				if ok {
					pp = &prev
				} else if _, _, err := graph.Ensure(tx, fmt.Sprintf("h%d.test", node), "http", t0); err != nil {
					return err
				}
				r.now = r.now.Add(time.Second / time.Duration(r.hosts))
				if err := graph.PutCrawl(tx, node, graph.Crawl{At: r.now, Links: r.links(node)}, pp); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// TestHistory_PacksPages crawls 2,000 hosts of 10 links, then revisits
// them 40 times, unchanged, in commits of 50 crawls as a crawl's group
// commits make them: the history's pages (sealed and open segments) are
// at least 80 % full, and an unchanged revisit adds at most 10 bytes of
// them. Schema 1's records, keyed by node and time, filled a quarter of
// their pages at about 140 bytes a revisit.
func TestHistory_PacksPages(t *testing.T) {
	const hosts, rounds = 2000, 40
	path := filepath.Join(t.TempDir(), "w.bolt")
	r := &revisits{hosts: hosts, group: 50, now: t0}
	s := storetest.MustOpenPath(t, path, kv.Options{})
	r.crawl(t, s, hosts)
	s.Close()
	_, first, _ := historyPages(t, path)
	s = storetest.MustOpenPath(t, path, kv.Options{})
	r.crawl(t, s, hosts*rounds)
	s.Close()
	inuse, pages, ps := historyPages(t, path)
	fill := float64(inuse) / float64(pages*ps)
	perRevisit := float64((pages-first)*ps) / float64(hosts*rounds)
	t.Logf("history: %d bytes in %d pages, %.0f %% full; %d pages after the first crawl, %.1f bytes a revisit since", inuse, pages, 100*fill, first, perRevisit)
	if fill < 0.8 || perRevisit > 10 {
		t.Errorf("history: %.0f %% full, %.1f bytes a revisit; want at least 80 %% full, at most 10 bytes", 100*fill, perRevisit)
	}
}

// BenchmarkHistory_Revisits times unchanged revisits of 10-link hosts (an
// op is one: its crawl record, the host's latest crawl read before it)
// in a store of 2,000 hosts crawled once before, in commits of 50 without
// fsync, and reports the history's pages per revisit (history-B/revisit,
// those the first crawl left not counted) and how full they are (fill-%).
// -benchtime 80000x is 40 revisits a host; make bench runs it.
func BenchmarkHistory_Revisits(b *testing.B) {
	const hosts = 2000
	path := filepath.Join(b.TempDir(), "w.bolt")
	r := &revisits{hosts: hosts, group: 50, now: t0}
	s, err := kv.Open(path, kv.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	r.crawl(b, s, hosts)
	s.Close()
	_, first, _ := historyPages(b, path)
	if s, err = kv.Open(path, kv.Options{NoSync: true}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	r.crawl(b, s, b.N)
	b.StopTimer()
	s.Close()
	inuse, pages, ps := historyPages(b, path)
	b.ReportMetric(float64((pages-first)*ps)/float64(b.N), "history-B/revisit")
	b.ReportMetric(100*float64(inuse)/float64(pages*ps), "fill-%")
}
