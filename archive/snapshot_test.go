package archive_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// sample fills a store with a bit of everything a crawl writes.
func sample(b *builder) {
	b.crawled("a.test", 1, 5, "A")
	b.crawled("b.test", 2, 6, "B")
	b.edge("a.test", "b.test", 3, 5)
	b.edge("b.test", "c.test", 1, 6)
	b.edge("b.test", "a.test", 2, 6)
	b.push("c.test", 2)
	b.lease("d.test", 1)
	for _, h := range []string{"a.test", "b.test", "c.test", "d.test"} {
		b.admit(h)
	}
	b.robots("a.test", 5, "allow all")
}

func TestSnapshot_Idle(t *testing.T) {
	dir := t.TempDir()
	src := build(t, filepath.Join(dir, "src.bolt"), sample)
	want := read(t, src)
	s := storetest.MustOpenPath(t, src, kv.Options{})
	out := filepath.Join(dir, "copy.bolt")
	info, err := archive.Snapshot(context.Background(), s, out, archive.Options{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if info.Nodes != 4 || info.Edges != 3 || info.Queued != 1 || info.Leases != 1 || info.Path != out {
		t.Errorf("info: got %+v", info)
	}
	if got := read(t, out); !reflect.DeepEqual(got, want) {
		t.Errorf("copy differs:\ngot  %+v\nwant %+v", got, want)
	}
	if fi, err := os.Stat(out); err != nil || fi.Size() != info.Bytes {
		t.Errorf("size: %v, info says %d", err, info.Bytes)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func TestSnapshot_Refuses(t *testing.T) {
	dir := t.TempDir()
	src := build(t, filepath.Join(dir, "src.bolt"), sample)
	s := storetest.MustOpenPath(t, src, kv.Options{ReadOnly: true})
	existing := filepath.Join(dir, "existing.bolt")
	if err := os.WriteFile(existing, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		path  string
		force bool
		want  error
	}{
		{"the store itself", src, true, archive.ErrSameFile},
		{"the store by another name", filepath.Join(dir, ".", "src.bolt"), true, archive.ErrSameFile},
		{"an existing file", existing, false, archive.ErrExists},
		{"a directory", dir, true, archive.ErrIsDir},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := archive.Snapshot(context.Background(), s, tc.path, archive.Options{Force: tc.force})
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	if data, _ := os.ReadFile(existing); string(data) != "precious" {
		t.Errorf("refused target was changed: %q", data)
	}
	if _, err := archive.Snapshot(context.Background(), s, existing, archive.Options{Force: true, Verify: true}); err != nil {
		t.Errorf("--force: %v", err)
	}
}

// TestSnapshot_DuringWrites copies a store while writers commit edges
// continuously: every copy is a sound store whose counters match its
// content, i.e. it holds whole transactions only.
func TestSnapshot_DuringWrites(t *testing.T) {
	dir := t.TempDir()
	s := storetest.MustOpenPath(t, filepath.Join(dir, "live.bolt"), kv.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var commits atomic.Int64
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				err := <-s.Commit(func(tx *kv.Tx) error {
					from, _, err := graph.Ensure(tx, fmt.Sprintf("w%d-%d.test", w, i), "http", t0)
					if err != nil {
						return err
					}
					for j := 0; j < 20; j++ {
						to, _, err := graph.Ensure(tx, fmt.Sprintf("t%d.test", (i*7+j)%500), "http", t0)
						if err != nil {
							return err
						}
						if err := graph.AddEdge(tx, from.ID, to.ID, 1, t0); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
				commits.Add(1)
			}
		}()
	}
	for i := 0; i < 5; i++ {
		for before := commits.Load(); commits.Load() < before+20; {
			time.Sleep(time.Millisecond) // let writers run between copies
		}
		out := filepath.Join(dir, "copy"+strconv.Itoa(i)+".bolt")
		info, err := archive.Snapshot(ctx, s, out, archive.Options{Verify: true})
		if err != nil {
			t.Fatal(err)
		}
		if info.Edges == 0 {
			t.Errorf("copy %d holds no edges", i)
		}
	}
	cancel()
	wg.Wait()
}

// serveSnapshots is a stand-in for a crawl's status API: GET /snapshot
// streams s as the serve package does.
func serveSnapshots(t *testing.T, s *kv.Store) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/snapshot" {
			http.NotFound(w, r)
			return
		}
		err := s.View(func(tx *kv.Tx) error {
			w.Header().Set("Content-Length", strconv.FormatInt(tx.Size(), 10))
			_, err := tx.WriteTo(w)
			return err
		})
		if err != nil {
			t.Error(err)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestDownload(t *testing.T) {
	dir := t.TempDir()
	src := build(t, filepath.Join(dir, "live.bolt"), func(b *builder) {
		sample(b)
		b.must(b.tx.SetMetaString("listen_addr", "127.0.0.1:9"))
	})
	want := read(t, src)
	s := storetest.MustOpenPath(t, src, kv.Options{})
	srv := serveSnapshots(t, s)
	out := filepath.Join(dir, "copy.bolt")
	info, err := archive.Download(context.Background(), srv.Client(), srv.URL, out, archive.Options{DropMeta: []string{"listen_addr"}}, src)
	if err != nil {
		t.Fatal(err)
	}
	if info.Nodes != 4 || info.Edges != 3 || info.Leases != 1 {
		t.Errorf("info: %+v", info)
	}
	if got := read(t, out); !reflect.DeepEqual(got, want) {
		t.Errorf("copy differs:\ngot  %+v\nwant %+v", got, want)
	}
	c, err := kv.Open(out, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	c.View(func(tx *kv.Tx) error {
		if v := tx.MetaString("listen_addr"); v != "" {
			t.Errorf("the copy keeps the crawl's address %q", v)
		}
		return nil
	})
	c.Close()

	if _, err := archive.Download(context.Background(), srv.Client(), srv.URL, src, archive.Options{Force: true}, src); !errors.Is(err, archive.ErrSameFile) {
		t.Errorf("download over the live store: got %v, want ErrSameFile", err)
	}
}

// TestDownload_Bad: a failed or damaged download never replaces the target.
func TestDownload_Bad(t *testing.T) {
	dir := t.TempDir()
	src := build(t, filepath.Join(dir, "live.bolt"), sample)
	good, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    error
	}{
		{"404", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, archive.ErrRemote},
		{"503", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "store busy", http.StatusServiceUnavailable)
		}, archive.ErrRemote},
		{"cut short", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(good)))
			w.Write(good[:len(good)/2])
		}, archive.ErrRemote},
		{"truncated store", func(w http.ResponseWriter, r *http.Request) {
			w.Write(good[:len(good)/2])
		}, archive.ErrBadSnapshot},
		{"not a store", func(w http.ResponseWriter, r *http.Request) {
			w.Write(bytes.Repeat([]byte("not bbolt "), 2000))
		}, archive.ErrBadSnapshot},
		{"not a weaver store", func(w http.ResponseWriter, r *http.Request) {
			data := append([]byte(nil), good...)
			copy(data[2*4096:], bytes.Repeat([]byte{0xff}, 4096)) // a data page overwritten
			w.Write(data)
		}, archive.ErrBadSnapshot},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			out := filepath.Join(t.TempDir(), "copy.bolt")
			if err := os.WriteFile(out, []byte("previous"), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := archive.Download(context.Background(), srv.Client(), srv.URL, out, archive.Options{Force: true})
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
			if data, _ := os.ReadFile(out); string(data) != "previous" {
				t.Errorf("target replaced after a failed download")
			}
			entries, _ := os.ReadDir(filepath.Dir(out))
			if len(entries) != 1 {
				t.Errorf("temporary files left: %v", entries)
			}
		})
	}
}

func TestListenAddr(t *testing.T) {
	cases := []struct {
		content string
		want    string
		err     error
	}{
		{"127.0.0.1:8088\n", "http://127.0.0.1:8088", nil},
		{":8088", "http://127.0.0.1:8088", nil},
		{"0.0.0.0:8088", "http://127.0.0.1:8088", nil},
		{"[::]:8088", "http://[::1]:8088", nil},
		{"[::1]:8088\n", "http://[::1]:8088", nil},
		{"pi.local:8088", "http://pi.local:8088", nil},
		{"http://127.0.0.1:8088/\n", "http://127.0.0.1:8088", nil},
		{"", "", archive.ErrNoListen},
		{"\n", "", archive.ErrNoListen},
	}
	for _, tc := range cases {
		t.Run(strconv.Quote(tc.content), func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "w.bolt")
			if err := os.WriteFile(archive.ListenPath(db), []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := archive.ListenAddr(db)
			if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Errorf("got %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
	if _, err := archive.ListenAddr(filepath.Join(t.TempDir(), "none.bolt")); !errors.Is(err, archive.ErrNoListen) {
		t.Errorf("no sidecar: got %v, want ErrNoListen", err)
	}
}
