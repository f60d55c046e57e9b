package crawlwarc

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/warc"
)

// TestOpen_FirstCommitKilled is the state a kill leaves between the WARC
// records of a crawl's first page commit, written and fsynced, and the
// store's commit that would have referred to them: the next Open removes
// them, so that the page fetched again is in the archive once (a store
// whose commits had written no record used to keep the file whole). A
// store of an older weaver, which records no position at all, still
// keeps every whole record.
func TestOpen_FirstCommitKilled(t *testing.T) {
	for _, tc := range []struct {
		name      string
		recordDir bool // the crawl recorded its WARC directory, as today's does before any page
		wantKept  bool
	}{
		{"today's store", true, false},
		{"an older weaver's store", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, store := crawlStore(t)
			a, rec, err := Open(&cfg, "weaver/test", store)
			if err != nil || len(rec) != 0 {
				t.Fatalf("first Open: %v, %v", rec, err)
			}
			if tc.recordDir {
				if err := store.Update(func(tx *kv.Tx) error { return RecordDir(tx, &cfg) }); err != nil {
					t.Fatal(err)
				}
			}
			// The first page's records, staged and made durable as the
			// store's commit does before bbolt's own; then the kill.
			capture := record(t, a, "http://first.test/")
			if _, err := a.w.Stage(&warc.Built{Data: capture.Records}); err != nil {
				t.Fatal(err)
			}
			if err := a.w.Prepare(); err != nil {
				t.Fatal(err)
			}
			open, _ := filepath.Glob(filepath.Join(cfg.WarcDir, "*.open"))
			if len(open) != 1 {
				t.Fatalf("open files after Prepare: %v", open)
			}

			_, rec, err = Open(&cfg, "weaver/test", store)
			if err != nil || len(rec) != 1 {
				t.Fatalf("Open after the kill: %v, %v", rec, err)
			}
			t.Log(rec[0])
			left, _ := filepath.Glob(filepath.Join(cfg.WarcDir, "*"))
			switch {
			case tc.wantKept && (rec[0].Removed || len(left) != 1 || strings.HasSuffix(left[0], ".open")):
				t.Errorf("an older store's open file: %s; files %v, want it kept and closed", rec[0], left)
			case !tc.wantKept && (!rec[0].Removed || !rec[0].Uncommitted || len(left) != 0):
				t.Errorf("records no commit refers to: %s; files %v, want them removed", rec[0], left)
			}
		})
	}
}

// TestEnd_NoneYet: End tells a store whose crawl has written no record
// (the zero Position) from one that records nothing (nil), and a later
// RecordDir keeps the position a commit wrote.
func TestEnd_NoneYet(t *testing.T) {
	cfg, store := crawlStore(t)
	end := func() *warc.Position {
		t.Helper()
		p, err := End(store)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := end(); p != nil {
		t.Fatalf("a fresh store: %v, want nil", p)
	}
	recordDir := func() {
		t.Helper()
		if err := store.Update(func(tx *kv.Tx) error { return RecordDir(tx, &cfg) }); err != nil {
			t.Fatal(err)
		}
	}
	recordDir()
	if p := end(); p == nil || *p != (warc.Position{}) {
		t.Fatalf("after RecordDir: %v, want the zero position", p)
	}
	a, _, err := Open(&cfg, "weaver/test", store)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	c := record(t, a, "http://first.test/")
	if err := store.Update(func(tx *kv.Tx) error { return a.Write(tx, []*crawl.Capture{c}) }); err != nil {
		t.Fatal(err)
	}
	want := end()
	if want == nil || want.File == "" || want.Offset == 0 {
		t.Fatalf("after a page's commit: %v, want its records' end", want)
	}
	recordDir()
	if p := end(); p == nil || *p != *want {
		t.Errorf("RecordDir again: %v, want %v kept", p, want)
	}
}

// crawlStore is a new store and the settings of a crawl of it that writes
// WARC files beside it; the store is closed when the test ends.
func crawlStore(t *testing.T) (crawl.Config, *kv.Store) {
	t.Helper()
	dir := t.TempDir()
	cfg := crawl.Defaults()
	cfg.DBPath = filepath.Join(dir, "c.bolt")
	cfg.WarcDir = filepath.Join(dir, "warcs")
	store, err := kv.Open(cfg.DBPath, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return cfg, store
}

// record builds the records of a 200 response of u.
func record(t *testing.T, a *Archive, u string) *crawl.Capture {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	body := "<a href=http://other.test/>x</a>"
	resp := &http.Response{StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"text/html"}}, Body: io.NopCloser(strings.NewReader(body)), Request: req}
	c, err := a.Record(context.Background(), req, resp, []byte(body), false, "127.0.0.1", time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
