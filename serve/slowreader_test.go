package serve_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// TestSlowReader_CommitsContinue: a client that reads /snapshot or /graph
// a few KB and then stops must not stall the store. Before the answers
// were spooled, the handler's read transaction pinned bbolt's map, and a
// commit that had to grow the file waited for the download to end (up to
// the 30 s write timeout, for every stalled client). Here the store grows
// several times over while both downloads stall; then they finish, and
// the snapshot is the store as it was when asked for.
func TestSlowReader_CommitsContinue(t *testing.T) {
	f := newLoopFixture(t)
	// Some bulk first, so the answers are far larger than what the client
	// reads before it stalls (and than the socket buffers).
	fill := func(from, n int) {
		t.Helper()
		val := bytes.Repeat([]byte("x"), 4000)
		if err := f.s.Update(func(tx *kv.Tx) error {
			for i := from; i < from+n; i++ {
				if err := tx.PutRaw(kv.BucketMeta, []byte(fmt.Sprintf("bulk-%08d", i)), val); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	fill(0, 2500) // ~10 MB, and a graph whose export is MBs long:
	if err := f.s.Update(func(tx *kv.Tx) error {
		now := time.Now()
		var prev uint64
		for i := 0; i < 20000; i++ {
			n, _, err := graph.EnsureAt(tx, fmt.Sprintf("host-%05d.bulk.test", i), "http", 1, now)
			if err != nil {
				return err
			}
			// Pairs, not a chain: the export's harmonic centrality walks
			// from every host, and a 20,000-host chain made that n²/2
			// steps (minutes under -race); the answer is as long.
			if i%2 == 1 {
				if err := graph.AddEdge(tx, prev, n.ID, 1, now); err != nil {
					return err
				}
			}
			prev = n.ID
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var sizeBefore int64
	f.s.View(func(tx *kv.Tx) error { sizeBefore = tx.Size(); return nil })

	type stalled struct {
		resp *http.Response
		got  []byte
	}
	open := func(path string) stalled {
		t.Helper()
		req, _ := http.NewRequestWithContext(context.Background(), "GET", f.url+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
		buf := make([]byte, 4096)
		n, err := io.ReadFull(resp.Body, buf)
		if err != nil {
			t.Fatalf("GET %s: first 4 KB: %v", path, err)
		}
		return stalled{resp, buf[:n]}
	}
	// The graph first: it is the slow one to spool (its ranks), and a client stalls
	// only once it has its first bytes; the server cuts a client stalled
	// past its 30 s write timeout, which this test must not meet.
	gr := open("/graph?format=graphml")
	snap := open("/snapshot")

	// The store grows past several remaps of bbolt's map while both
	// clients have read 4 KB of answers many MB long.
	done := make(chan error, 1)
	go func() {
		for i := 1; i <= 12; i++ {
			val := bytes.Repeat([]byte("y"), 4000)
			err := f.s.Update(func(tx *kv.Tx) error {
				for j := 0; j < 1000; j++ {
					if err := tx.PutRaw(kv.BucketMeta, []byte(fmt.Sprintf("more-%02d-%05d", i, j)), val); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("commits stalled while a client was downloading slowly")
	}
	var sizeAfter int64
	f.s.View(func(tx *kv.Tx) error { sizeAfter = tx.Size(); return nil })
	if sizeAfter < 2*sizeBefore {
		t.Fatalf("the store grew from %d to %d bytes only: the test did not force a remap", sizeBefore, sizeAfter)
	}

	// The stalled downloads then finish, whole.
	rest, err := io.ReadAll(snap.resp.Body)
	snap.resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), "copy.bolt")
	if err := os.WriteFile(copyPath, append(snap.got, rest...), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := kv.Open(copyPath, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("the snapshot does not open: %v", err)
	}
	defer c.Close()
	c.View(func(tx *kv.Tx) error {
		if tx.GetRaw(kv.BucketMeta, []byte("bulk-00002499")) == nil || tx.GetRaw(kv.BucketMeta, []byte("more-01-00000")) != nil {
			t.Error("the snapshot is not the store as it was when it was asked for")
		}
		return nil
	})
	g, err := io.ReadAll(gr.resp.Body)
	gr.resp.Body.Close()
	if err != nil || !bytes.HasSuffix(bytes.TrimSpace(append(gr.got, g...)), []byte("</graphml>")) {
		t.Errorf("the GraphML download did not finish whole: %v", err)
	}
	// No spool file is left beside the store.
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(f.s.Path()), ".*download*"))
	if len(left) > 0 {
		t.Errorf("spool files left: %v", left)
	}
}
