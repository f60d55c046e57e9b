package ingest_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/ingest"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/warc"
)

// TestRun_ParallelSameAsSerial imports the same WARC and WAT files with
// one parser and with several, in batches of different sizes, and
// compares every key and value of the graph's buckets, the files' saved
// states and the stats: parsing in parallel must not change the store.
func TestRun_ParallelSameAsSerial(t *testing.T) {
	dir := t.TempDir()
	w, _, err := warc.Open(warc.Options{Dir: dir, Prefix: "mix", NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(3))
	for i := range 300 {
		ex := pageExchange(rng, i, 40)
		switch i % 10 {
		case 3: // a page that is not the home page
			ex.URL = strings.TrimSuffix(ex.URL, "/") + fmt.Sprintf("/p/%d", i)
		case 5: // a redirect to another host
			ex.Response = []byte(fmt.Sprintf("HTTP/1.1 301 Moved\r\nLocation: https://www.host-%d.example/\r\n\r\n", (i+7)%40))
		case 7:
			ex.Response = []byte("HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n\r\n<a href=http://x.test/>x</a>")
		case 9:
			ex.Response = []byte("HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n\x89PNG")
		}
		if _, err := w.WriteExchange(context.Background(), ex); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	writeWAT(t, filepath.Join(dir, "z.wat.gz"), watJSON, watRedirect, watRequest, watJSON)
	files, err := ingest.Files([]string{dir})
	if err != nil || len(files) != 2 {
		t.Fatalf("files %v, %v", files, err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	run := func(workers, batch int) (*kv.Store, ingest.Stats) {
		s := storetest.MustOpen(t)
		opts := ingest.Defaults()
		opts.MaxOutboundLinks = 0
		opts.Workers, opts.BatchRecords = workers, batch
		opts.Now = func() time.Time { return now }
		st, err := ingest.Run(context.Background(), s, files, opts)
		if err != nil {
			t.Fatal(err)
		}
		return s, st
	}
	dump := func(s *kv.Store) string {
		var b strings.Builder
		s.View(func(tx *kv.Tx) error {
			for _, bucket := range [][]byte{kv.BucketNodes, kv.BucketHosts, kv.BucketEdges, kv.BucketMirrors, kv.BucketRoots, kv.BucketMeta} {
				c := tx.Cursor(bucket)
				for k, v := c.First(); k != nil; k, v = c.Next() {
					if bytes.Equal(bucket, kv.BucketMeta) && string(k) == "created_at" {
						continue
					}
					fmt.Fprintf(&b, "%s %x %x\n", bucket, k, v)
				}
			}
			return nil
		})
		return b.String()
	}
	serial, sst := run(1, 1000)
	want := dump(serial)
	if sst.Pages < 100 || sst.Redirects == 0 || sst.Links == 0 {
		t.Fatalf("serial import: %+v", sst)
	}
	for _, c := range []struct{ workers, batch int }{{4, 1000}, {3, 7}, {2, 1}} {
		s, st := run(c.workers, c.batch)
		if st != sst {
			t.Errorf("workers %d batch %d: stats %+v, serial %+v", c.workers, c.batch, st, sst)
		}
		if got := dump(s); got != want {
			t.Errorf("workers %d batch %d: the store differs from the serial import's (%d against %d bytes of dump)", c.workers, c.batch, len(got), len(want))
		}
	}
}
