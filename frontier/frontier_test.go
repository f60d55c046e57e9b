package frontier_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// node makes a graph node for host so the frontier's entries name real nodes.
func node(t testing.TB, tx *kv.Tx, host string) uint64 {
	t.Helper()
	n, _, err := graph.Ensure(tx, host, "http", now)
	if err != nil {
		t.Fatal(err)
	}
	return n.ID
}

func push(t testing.TB, s *kv.Store, host string, depth int) bool {
	t.Helper()
	var ok bool
	if err := s.Update(func(tx *kv.Tx) error {
		var err error
		ok, err = frontier.Push(tx, frontier.Entry{NodeID: node(t, tx, host), Host: host, URL: "http://" + host + "/", Depth: depth})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ok
}

func claim(t testing.TB, s *kv.Store, n int, judge func(*frontier.Entry) frontier.Verdict) []frontier.Lease {
	t.Helper()
	if judge == nil {
		judge = func(*frontier.Entry) frontier.Verdict { return frontier.Take }
	}
	var out []frontier.Lease
	if err := s.Update(func(tx *kv.Tx) error {
		var err error
		out, err = frontier.Claim(tx, n, 1000, now, judge)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func hosts(ls []frontier.Lease) []string {
	var out []string
	for _, l := range ls {
		out = append(out, fmt.Sprintf("%s@%d", l.Host, l.Depth))
	}
	return out
}

func TestFrontier_Claim_BreadthFirstOrder(t *testing.T) {
	s := storetest.MustOpen(t)
	push(t, s, "c.test", 2)
	push(t, s, "a.test", 1)
	push(t, s, "d.test", 2)
	push(t, s, "b.test", 1)
	push(t, s, "e.test", 0)
	got := fmt.Sprint(hosts(claim(t, s, 10, nil)))
	want := "[e.test@0 a.test@1 b.test@1 c.test@2 d.test@2]"
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestFrontier_Push_Dedup(t *testing.T) {
	s := storetest.MustOpen(t)
	if !push(t, s, "a.test", 3) {
		t.Fatal("first push refused")
	}
	if push(t, s, "a.test", 3) {
		t.Error("same depth queued twice")
	}
	if push(t, s, "a.test", 5) {
		t.Error("queued again at a greater depth while queued")
	}
	if !push(t, s, "a.test", 1) {
		t.Error("did not move up to a smaller depth")
	}
	ls := claim(t, s, 10, nil)
	if got := fmt.Sprint(hosts(ls)); got != "[a.test@1]" {
		t.Fatalf("got %s, want [a.test@1]", got)
	}
	// Visited marks: depth 1 and 3 were queued once; they never come back.
	if push(t, s, "a.test", 1) || push(t, s, "a.test", 3) {
		t.Error("a host was queued twice at one depth")
	}
	if !push(t, s, "a.test", 2) {
		t.Error("a new depth was refused")
	}
	s.Update(func(tx *kv.Tx) error { _, err := frontier.Release(tx, ls[0].NodeID); return err })
}

func TestFrontier_Claim_SkipsLeasedAndJudged(t *testing.T) {
	s := storetest.MustOpen(t)
	push(t, s, "a.test", 0)
	first := claim(t, s, 1, nil)
	push(t, s, "a.test", 1) // same host, another depth, while leased
	push(t, s, "b.test", 1)
	push(t, s, "slow.test", 1)
	push(t, s, "done.test", 1)
	judge := func(e *frontier.Entry) frontier.Verdict {
		switch e.Host {
		case "slow.test":
			return frontier.Skip
		case "done.test":
			return frontier.Drop
		}
		return frontier.Take
	}
	if got := fmt.Sprint(hosts(claim(t, s, 10, judge))); got != "[b.test@1]" {
		t.Errorf("got %s, want [b.test@1]: a leased host must not be handed out twice", got)
	}
	s.View(func(tx *kv.Tx) error {
		if got := frontier.Len(tx); got != 2 { // a.test@1 and slow.test
			t.Errorf("len: got %d, want 2", got)
		}
		return nil
	})
	s.Update(func(tx *kv.Tx) error { _, err := frontier.Release(tx, first[0].NodeID); return err })
	if got := fmt.Sprint(hosts(claim(t, s, 10, judge))); got != "[a.test@1]" {
		t.Errorf("after release got %s, want [a.test@1]", got)
	}
	s.Update(func(tx *kv.Tx) error { _, err := frontier.Recover(tx); return err })
}

func TestFrontier_Recover_AfterCrash(t *testing.T) {
	path := t.TempDir() + "/w.bolt"
	s, err := kv.Open(path, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		push(t, s, fmt.Sprintf("h%d.test", i), i%2)
	}
	leased := claim(t, s, 3, nil)
	s.Close() // "crash": leases never released

	s = storetest.MustOpenPath(t, path, kv.Options{})
	var n int
	s.Update(func(tx *kv.Tx) error { n, err = frontier.Recover(tx); return err })
	if n != len(leased) {
		t.Errorf("recovered %d, want %d", n, len(leased))
	}
	got := fmt.Sprint(hosts(claim(t, s, 10, nil)))
	if want := "[h0.test@0 h2.test@0 h4.test@0 h1.test@1 h3.test@1]"; got != want {
		t.Errorf("after recovery got %s, want %s (original order, nothing lost or doubled)", got, want)
	}
	s.Update(func(tx *kv.Tx) error { _, err := frontier.Recover(tx); return err })
}

func TestFrontier_Claim_Concurrent(t *testing.T) {
	s := storetest.MustOpen(t)
	const total = 600
	if err := s.Update(func(tx *kv.Tx) error {
		for i := 0; i < total; i++ {
			h := fmt.Sprintf("h%d.test", i)
			if _, err := frontier.Push(tx, frontier.Entry{NodeID: node(t, tx, h), Host: h, Depth: i % 4}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[uint64]int{}
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				var got []frontier.Lease
				err := <-s.Commit(func(tx *kv.Tx) error {
					var err error
					got, err = frontier.Claim(tx, 2, 100, now, func(*frontier.Entry) frontier.Verdict { return frontier.Take })
					if err != nil {
						return err
					}
					for _, l := range got {
						if _, err := frontier.Release(tx, l.NodeID); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, l := range got {
					seen[l.NodeID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != total {
		t.Errorf("claimed %d distinct entries, want %d", len(seen), total)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("node %d claimed %d times", id, n)
		}
	}
}

// A lease keeps its entry's frontier key and its start time through the
// store (the embedded Entry's encoder once dropped both), and a lease
// stored in the older entry-only form still reads.
func TestLease_RoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)
	l := frontier.Lease{
		Entry: frontier.Entry{NodeID: 7, Host: "a.test", URL: "http://a.test/", Depth: 3},
		Key:   kv.Bytes{0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 9}, Since: at,
	}
	data, err := kv.Encode(&l)
	if err != nil {
		t.Fatal(err)
	}
	var got frontier.Lease
	if err := kv.Decode(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.Entry != l.Entry || string(got.Key) != string(l.Key) || !got.Since.Equal(at) {
		t.Errorf("round trip: got %+v, want %+v", got, l)
	}
	old, err := kv.Encode(&l.Entry)
	if err != nil {
		t.Fatal(err)
	}
	var fromOld frontier.Lease
	if err := kv.Decode(old, &fromOld); err != nil || fromOld.Entry != l.Entry || fromOld.Key != nil {
		t.Errorf("entry-only lease: got %+v, %v", fromOld, err)
	}
}

// TestFrontier_PushNew_AsPush: PushNew, for nodes created in the same
// transaction, leaves the frontier, its index and the visited marks as
// Push does, entry for entry.
func TestFrontier_PushNew_AsPush(t *testing.T) {
	dump := func(pushFn func(*kv.Tx, frontier.Entry) (bool, error)) string {
		s := storetest.MustOpen(t)
		var out string
		if err := s.Update(func(tx *kv.Tx) error {
			for i, h := range []string{"a.example", "b.example", "c.example", "d.example"} {
				ok, err := pushFn(tx, frontier.Entry{NodeID: node(t, tx, h), Host: h, URL: "http://" + h + "/", Depth: i % 2})
				if err != nil || !ok {
					return fmt.Errorf("push %s: %v, %v", h, ok, err)
				}
			}
			for _, b := range [][]byte{kv.BucketFrontier, kv.BucketQueued, kv.BucketVisited} {
				c := tx.Cursor(b)
				for k, v := c.First(); k != nil; k, v = c.Next() {
					out += fmt.Sprintf("%s %x %x\n", b, k, v)
				}
			}
			out += fmt.Sprintf("len %d\n", frontier.Len(tx))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got, want := dump(frontier.PushNew), dump(frontier.Push); got != want {
		t.Errorf("PushNew:\n%s\nPush:\n%s", got, want)
	}
}

// TestEntry_HomeURL: an entry for a host's home page (nearly every entry)
// stores its URL as nil (http) or 1 (https) since schema 3; any other URL
// as the string it is, and an older store's string form of a home URL
// reads the same.
func TestEntry_HomeURL(t *testing.T) {
	for _, c := range []struct {
		url  string
		size int // of the URL field
	}{
		{"http://a.test/", 1},
		{"https://a.test/", 1},
		{"http://a.test/path", 19},
		{"http://a.test:8080/", 20},
		{"https://b.test/", 16},
		{"http://a.testx/", 16},
		{"", 1},
	} {
		e := frontier.Entry{NodeID: 7, Host: "a.test", URL: c.url, Depth: 2}
		b, err := kv.Encode(&e)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(b) - 1 - 1 - 7 - 1; got != c.size { // array, id, host, depth
			t.Errorf("%q: the URL takes %d bytes, want %d (% x)", c.url, got, c.size, b)
		}
		var back frontier.Entry
		if err := kv.Decode(b, &back); err != nil || back != e {
			t.Errorf("%q: decoded %+v, %v", c.url, back, err)
		}
	}
	old := []byte{0x94, 7, 0xa6, 'a', '.', 't', 'e', 's', 't', 0xae, 'h', 't', 't', 'p', ':', '/', '/', 'a', '.', 't', 'e', 's', 't', '/', 2}
	var back frontier.Entry
	if err := kv.Decode(old, &back); err != nil || back.URL != "http://a.test/" || back.Depth != 2 {
		t.Errorf("an older store's entry: %+v, %v", back, err)
	}
}
