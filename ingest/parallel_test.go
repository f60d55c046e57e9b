package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/ingest"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/warc"
)

// TestRun_ParallelSameAsSerial imports the same WARC and WAT files with
// one parser and with several, in batches of different sizes, with links
// merged from memory or from many runs of a few links, in transactions of
// a few edges, and compares every key and value of the graph's buckets,
// the files' saved states and the stats: parsing in parallel and sorting
// the links must not change the store.
func TestRun_ParallelSameAsSerial(t *testing.T) {
	files := mixFiles(t, 300)
	serial, sst := importMix(t, files, 1, 1000, 0)
	want := dumpStore(serial)
	if sst.Pages < 100 || sst.Redirects == 0 || sst.Links == 0 {
		t.Fatalf("serial import: %+v", sst)
	}
	defer ingest.SetMergeChunk(97)()
	for _, c := range []struct {
		workers, batch int
		sort           int64
	}{{4, 1000, 0}, {2, 5000, 0}, {3, 7, 0}, {2, 1, 0}, {2, 7, 40 * 50}, {1, 50, 40 * 1000}} {
		s, st := importMix(t, files, c.workers, c.batch, c.sort)
		if st != sst {
			t.Errorf("workers %d batch %d sort %d: stats %+v, serial %+v", c.workers, c.batch, c.sort, st, sst)
		}
		if got := dumpStore(s); got != want {
			t.Errorf("workers %d batch %d sort %d: the store differs from the serial import's (%d against %d bytes of dump)", c.workers, c.batch, c.sort, len(got), len(want))
		}
	}
}

// TestRun_StoppedAnywhereResumes stops an import (120 pages, workers 2,
// batches of 25 records, runs of 150 links merged 300 edges a
// transaction) before its
// first transaction, its second, and so on to its last, as a kill would:
// none of its writes after that point happens. Each stopped store meets
// the store's invariants; run again, each gives the store of an import
// never stopped, byte for byte in every bucket the import writes.
func TestRun_StoppedAnywhereResumes(t *testing.T) {
	files := mixFiles(t, 120)
	defer ingest.SetMergeChunk(300)()
	whole, _ := importMix(t, files, 2, 25, 40*150)
	want := dumpStore(whole)
	errKilled := errors.New("killed")
	for k := int64(1); ; k++ {
		var n atomic.Int64
		restore := ingest.SetBeforeUpdate(func() error {
			if n.Add(1) >= k {
				return errKilled
			}
			return nil
		})
		s := storetest.MustOpenPath(t, filepath.Join(t.TempDir(), "s.bolt"), kv.Options{NoSync: true}) // a kill in the process: fsync changes nothing
		_, err := ingest.Run(context.Background(), s, files, mixOptions(2, 25, 40*150))
		restore()
		if err == nil {
			if k < 10 {
				t.Fatalf("an import of %d transactions", k-1)
			}
			t.Logf("stopped before each of %d transactions", k-1)
			break
		}
		if !errors.Is(err, errKilled) {
			t.Fatalf("stopped before transaction %d: %v", k, err)
		}
		if err := storetest.CheckAll(s); err != nil {
			t.Fatalf("stopped before transaction %d: %v", k, err)
		}
		if _, err := ingest.Run(context.Background(), s, files, mixOptions(2, 25, 40*150)); err != nil {
			t.Fatalf("stopped before transaction %d, resumed: %v", k, err)
		}
		if got := dumpStore(s); got != want {
			t.Fatalf("stopped before transaction %d, resumed: the store differs from an import never stopped:\n%s", k, firstDiff(got, want))
		}
		if err := storetest.CheckAll(s); err != nil {
			t.Fatalf("stopped before transaction %d, resumed: %v", k, err)
		}
	}
}

// firstDiff is the first line where two dumps differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n got %s\nwant %s", i, g[i], w[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}

// mixFiles writes a WARC of pages of 40 hosts, redirects, errors and
// non-HTML answers among them, and a WAT.
func mixFiles(t *testing.T, pages int) []string {
	dir := t.TempDir()
	w, _, err := warc.Open(warc.Options{Dir: dir, Prefix: "mix", NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(3))
	for i := range pages {
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
	return files
}

func mixOptions(workers, batch int, sort int64) ingest.Options {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	opts := ingest.Defaults()
	opts.MaxOutboundLinks = 0
	opts.Workers, opts.BatchRecords, opts.SortBytes = workers, batch, sort
	opts.Now = func() time.Time { return now }
	return opts
}

func importMix(t *testing.T, files []string, workers, batch int, sort int64) (*kv.Store, ingest.Stats) {
	t.Helper()
	s := storetest.MustOpen(t)
	st, err := ingest.Run(context.Background(), s, files, mixOptions(workers, batch, sort))
	if err != nil {
		t.Fatal(err)
	}
	return s, st
}

// dumpStore is every key and value of the buckets an import writes (but
// the store's creation time), a line each.
func dumpStore(s *kv.Store) string {
	var b strings.Builder
	s.View(func(tx *kv.Tx) error {
		for _, bucket := range [][]byte{kv.BucketNodes, kv.BucketHosts, kv.BucketEdges, kv.BucketMirrors, kv.BucketRoots, kv.BucketMeta} {
			c := tx.Cursor(bucket)
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if bytes.Equal(bucket, kv.BucketMeta) && string(k) == "created_at" {
					continue
				}
				fmt.Fprintf(&b, "%s %q %x\n", bucket, k, v)
			}
		}
		return nil
	})
	return b.String()
}

// TestRun_NoRunsLeft: an import whose links went through runs leaves no
// run file, nor their directory, beside the store, and no record of them.
func TestRun_NoRunsLeft(t *testing.T) {
	files := mixFiles(t, 120)
	s, _ := importMix(t, files, 2, 25, 40*150)
	if _, err := os.Stat(s.Path() + ".import"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s.import: %v, want it gone", s.Path(), err)
	}
	s.View(func(tx *kv.Tx) error {
		if v := tx.MetaString("import.runs"); v != "" {
			t.Errorf("meta import.runs = %s", v)
		}
		return nil
	})
}
