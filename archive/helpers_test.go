package archive_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// t0 is the tests' clock origin.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(minutes int) time.Time { return t0.Add(time.Duration(minutes) * time.Minute) }

// build creates a store at path, runs fn in one transaction, and closes it;
// the test's cleanup checks the file's invariants.
func build(tb testing.TB, path string, fn func(b *builder)) string {
	tb.Helper()
	s := storetest.MustOpenPath(tb, path, kv.Options{Now: func() time.Time { return t0 }})
	if err := s.Update(func(tx *kv.Tx) error {
		fn(&builder{tb: tb, tx: tx})
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// builder writes records into a store in a test, failing the test on error.
type builder struct {
	tb testing.TB
	tx *kv.Tx
}

func (b *builder) must(err error) {
	b.tb.Helper()
	if err != nil {
		b.tb.Fatal(err)
	}
}

// node ensures host and lets mut change its record.
func (b *builder) node(host string, mut func(n *graph.Node)) uint64 {
	b.tb.Helper()
	n, _, err := graph.Ensure(b.tx, host, "http", at(0))
	b.must(err)
	if mut != nil {
		mut(&n)
		b.must(graph.Put(b.tx, &n))
	}
	return n.ID
}

// crawled marks host as fetched count times, the last at minute m.
func (b *builder) crawled(host string, count, m int, title string) {
	b.tb.Helper()
	b.node(host, func(n *graph.Node) {
		n.CrawlCount += count
		n.Status, n.HTTPStatus, n.Title, n.Description = graph.StatusCrawled, 200, title, title
		n.LastCrawl, n.LastSeen = at(m), at(m)
	})
}

func (b *builder) edge(from, to string, w uint64, m int) {
	b.tb.Helper()
	f, t := b.node(from, nil), b.node(to, nil)
	b.must(graph.AddEdge(b.tx, f, t, w, at(m)))
}

func (b *builder) push(host string, depth int) {
	b.tb.Helper()
	id := b.node(host, nil)
	_, err := frontier.Push(b.tx, frontier.Entry{NodeID: id, Host: host, URL: "http://" + host + "/", Depth: depth})
	b.must(err)
}

// lease queues host at depth and leases it, as a worker would.
func (b *builder) lease(host string, depth int) {
	b.tb.Helper()
	b.push(host, depth)
	got, err := frontier.Claim(b.tx, 1, 1<<20, at(0), func(e *frontier.Entry) frontier.Verdict {
		if e.Host == host {
			return frontier.Take
		}
		return frontier.Skip
	})
	b.must(err)
	if len(got) != 1 {
		b.tb.Fatalf("lease %s: got %d leases", host, len(got))
	}
}

func (b *builder) admit(host string) {
	b.tb.Helper()
	_, err := graph.AdmitSubdomain(b.tx, host, 0)
	b.must(err)
}

// robotsRecord is crawl's robots cache value.
type robotsRecord struct {
	Fetched time.Time `msgpack:"t"`
	Rules   []byte    `msgpack:"r"`
}

func (b *builder) robots(host string, m int, rules string) {
	b.tb.Helper()
	b.must(b.tx.Put(kv.BucketRobots, []byte(host), &robotsRecord{Fetched: at(m), Rules: []byte(rules)}))
}

// view is a store's content by host, free of ids, for comparisons.
type view struct {
	Created time.Time
	Nodes   map[string]graph.Node // ID zeroed, times in UTC
	Edges   map[[2]string]graph.Edge
	Queue   []string // "host@depth url" in queue order
	Leases  []string
	Roots   []string
	Robots  map[string]string // host → "fetched rules"
	Visited []string          // "host@depth", sorted
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

// read returns the content of the store at path, after checking it.
func read(tb testing.TB, path string) view {
	tb.Helper()
	s, err := kv.Open(path, kv.Options{ReadOnly: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	if _, err := archive.Verify(s); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	v := view{Created: utc(s.Created()), Nodes: map[string]graph.Node{}, Edges: map[[2]string]graph.Edge{}, Robots: map[string]string{}}
	err = s.View(func(tx *kv.Tx) error {
		hosts := map[uint64]string{}
		if err := graph.ForEachNode(tx, func(n *graph.Node) error {
			hosts[n.ID] = n.Host
			c := *n
			c.ID = 0
			c.FirstSeen, c.LastSeen, c.LastCrawl = utc(c.FirstSeen), utc(c.LastSeen), utc(c.LastCrawl)
			v.Nodes[n.Host] = c
			return nil
		}); err != nil {
			return err
		}
		if err := graph.ForEachEdge(tx, func(e *graph.Edge) error {
			v.Edges[[2]string{hosts[e.From], hosts[e.To]}] = graph.Edge{Weight: e.Weight, FirstSeen: utc(e.FirstSeen), LastSeen: utc(e.LastSeen)}
			return nil
		}); err != nil {
			return err
		}
		if err := frontier.ForEach(tx, func(e *frontier.Entry) error {
			v.Queue = append(v.Queue, fmt.Sprintf("%s@%d %s", e.Host, e.Depth, e.URL))
			return nil
		}); err != nil {
			return err
		}
		if err := frontier.ForEachLease(tx, func(l *frontier.Lease) error {
			v.Leases = append(v.Leases, fmt.Sprintf("%s@%d", l.Host, l.Depth))
			return nil
		}); err != nil {
			return err
		}
		// The limiter's admissions: roots, and the roots log of a crawl
		// that did not fold it (graph/limiter.go).
		c := tx.Cursor(kv.BucketRoots)
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			v.Roots = append(v.Roots, string(k))
		}
		if tx.Exists(kv.BucketRootLog) {
			c = tx.Cursor(kv.BucketRootLog)
			for k, val := c.First(); k != nil; k, val = c.Next() {
				v.Roots = append(v.Roots, string(val))
			}
			slices.Sort(v.Roots)
		}
		c = tx.Cursor(kv.BucketRobots)
		for k, val := c.First(); k != nil; k, val = c.Next() {
			var r robotsRecord
			if err := kv.Decode(val, &r); err != nil {
				return err
			}
			v.Robots[string(k)] = fmt.Sprintf("%s %s", utc(r.Fetched).Format(time.RFC3339), r.Rules)
		}
		c = tx.Cursor(kv.BucketVisited)
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			id := uint64(0)
			for _, x := range k[:8] {
				id = id<<8 | uint64(x)
			}
			depth := int(k[8])<<24 | int(k[9])<<16 | int(k[10])<<8 | int(k[11])
			v.Visited = append(v.Visited, fmt.Sprintf("%s@%d", hosts[id], depth))
		}
		slices.Sort(v.Visited)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return v
}
