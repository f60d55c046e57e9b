package serve_test

import (
	"bytes"
	"fmt"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/serve"
)

// TestSpool_NoSpace: a download that would leave the store's disk without
// the room the crawl keeps for itself is refused with 507, before it
// starts when its size is known (a snapshot) and as soon as the disk
// fills while it is written (any answer); nothing is left behind, and
// the crawl's store is untouched.
func TestSpool_NoSpace(t *testing.T) {
	f := newLoopFixture(t)
	val := bytes.Repeat([]byte("x"), 4000)
	if err := f.s.Update(func(tx *kv.Tx) error { // ~12 MB: more than one look at the free space
		for i := 0; i < 3000; i++ {
			if err := tx.PutRaw(kv.BucketMeta, []byte(fmt.Sprintf("bulk-%08d", i)), val); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	left := func() []string {
		m, _ := filepath.Glob(filepath.Join(filepath.Dir(f.s.Path()), ".*download*"))
		return m
	}

	// A nearly full disk: refused at once.
	var looks atomic.Int64
	serve.SetFreeSpace(t, func(string) (int64, error) { looks.Add(1); return 65 << 20, nil })
	for _, path := range []string{"/snapshot", "/graph"} {
		a := do(t, "GET", f.url+path, "")
		if a.code != http.StatusInsufficientStorage || !bytes.Contains(a.body, []byte(`"error"`)) || !bytes.Contains(a.body, []byte("free")) {
			t.Errorf("GET %s on a nearly full disk: %d %s, want 507 with a JSON error naming the free space", path, a.code, a.body)
		}
	}
	if looks.Load() == 0 {
		t.Fatal("the free space was never looked at")
	}

	// A disk that fills while the snapshot is written: cut short.
	looks.Store(0)
	serve.SetFreeSpace(t, func(string) (int64, error) {
		if looks.Add(1) == 1 {
			return 1 << 40, nil
		}
		return 65 << 20, nil
	})
	if a := do(t, "GET", f.url+"/snapshot", ""); a.code != http.StatusInsufficientStorage {
		t.Errorf("GET /snapshot as the disk fills: %d %s, want 507", a.code, a.body)
	}
	if looks.Load() < 2 {
		t.Errorf("the free space was looked at %d times while spooling, want at least 2", looks.Load())
	}
	if m := left(); len(m) > 0 {
		t.Errorf("spool files left: %v", m)
	}

	// Room again: answered whole.
	serve.SetFreeSpace(t, func(string) (int64, error) { return 1 << 40, nil })
	if a := do(t, "GET", f.url+"/snapshot", ""); a.code != http.StatusOK || len(a.body) < 11<<20 {
		t.Errorf("GET /snapshot with room: %d, %d bytes", a.code, len(a.body))
	}
	if err := f.s.Update(func(tx *kv.Tx) error { return tx.PutRaw(kv.BucketMeta, []byte("after"), val) }); err != nil {
		t.Errorf("the store does not commit after refused downloads: %v", err)
	}
}
