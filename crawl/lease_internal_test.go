package crawl

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// A page whose lease is not in the store (its claim's group failed to
// commit after the leases were handed out) writes nothing at all: this is
// what makes handing leases out before the claim's fsync safe.
func TestCommitPage_RequiresLease(t *testing.T) {
	store, err := kv.Open(filepath.Join(t.TempDir(), "w.bolt"), kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cfg := Defaults()
	c, err := New(cfg, store, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var id uint64
	if err := store.Update(func(tx *kv.Tx) error {
		n, _, err := graph.Ensure(tx, "a.test", "http", c.now())
		id = n.ID
		return err
	}); err != nil {
		t.Fatal(err)
	}
	p := &page{
		lease:   frontier.Lease{Entry: frontier.Entry{NodeID: id, Host: "a.test", URL: "http://a.test/"}},
		fetched: true, status: 200,
		targets: []target{{host: "b.test", scheme: "http"}},
	}
	err = store.Update(func(tx *kv.Tx) error { return c.commitPage(tx, p) })
	if !errors.Is(err, errLeaseLost) {
		t.Fatalf("commit without a lease: got %v, want errLeaseLost", err)
	}
	_ = store.View(func(tx *kv.Tx) error {
		if g := graph.GetCounts(tx); g.Nodes != 1 || g.Edges != 0 {
			t.Errorf("store after the refused commit: %+v, want 1 node and no edge", g)
		}
		n, _, _ := graph.Get(tx, id)
		if n.CrawlCount != 0 {
			t.Errorf("crawl count %d, want 0", n.CrawlCount)
		}
		return nil
	})
}
