package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/kv"
)

func TestSnapshot_IdleStore(t *testing.T) {
	dir := t.TempDir()
	db := archiveStore(t, filepath.Join(dir, "w.bolt"), 8, nil)
	out := filepath.Join(dir, "copy.bolt")
	code, stdout, errs := runArchiveCmd(t, "snapshot", "--db", db, out)
	if code != 0 || !strings.Contains(stdout, "(copied from the file): 8 nodes, 7 edges, 1 queued, 1 lease") {
		t.Fatalf("exit %d\n%s%s", code, stdout, errs)
	}
	if code, stdout, _ := runArchiveCmd(t, "check", "--db", out); code != 0 || !strings.HasPrefix(stdout, "ok: 8 nodes, 7 edges") {
		t.Errorf("check of the copy: exit %d %s", code, stdout)
	}
	// Flags after the output file are taken too.
	if code, _, errs := runArchiveCmd(t, "snapshot", out, "--db", db, "--force"); code != 0 {
		t.Errorf("--force after OUT: exit %d\n%s", code, errs)
	}
}

func TestSnapshot_Usage(t *testing.T) {
	dir := t.TempDir()
	db := archiveStore(t, filepath.Join(dir, "w.bolt"), 4, nil)
	existing := filepath.Join(dir, "existing.bolt")
	os.WriteFile(existing, []byte("x"), 0o600)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no output", []string{"snapshot", "--db", db}, "give one output file"},
		{"two outputs", []string{"snapshot", "--db", db, "a.bolt", "b.bolt"}, "give one output file"},
		{"output is the store", []string{"snapshot", "--db", db, "--force", db}, "is also an input"},
		{"existing output", []string{"snapshot", "--db", db, existing}, "already exists"},
		{"missing store", []string{"snapshot", "--db", filepath.Join(dir, "none.bolt"), filepath.Join(dir, "o.bolt")}, "none.bolt: no such store"},
		{"not a store", []string{"snapshot", "--db", existing, filepath.Join(dir, "o.bolt")}, "not a weaver store"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := runArchiveCmd(t, tc.args...)
			if code != 2 || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, want 2 with %q\n%s", code, tc.want, errs)
			}
		})
	}
	if data, _ := os.ReadFile(existing); string(data) != "x" {
		t.Error("a refused snapshot changed the existing file")
	}
}

// TestSnapshot_ThroughAPI: the store is locked by another holder (here
// this test, as a running crawl would) that serves GET /snapshot; the
// command finds its address in the sidecar file and downloads the copy.
func TestSnapshot_ThroughAPI(t *testing.T) {
	dir := t.TempDir()
	db := archiveStore(t, filepath.Join(dir, "live.bolt"), 8, func(tx *kv.Tx) error {
		return tx.SetMetaString(metaListenAddr, "127.0.0.1:1")
	})
	live, err := kv.Open(db, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Method != http.MethodGet || r.URL.Path != "/snapshot" {
			http.NotFound(w, r)
			return
		}
		live.View(func(tx *kv.Tx) error {
			w.Header().Set("Content-Length", strconv.FormatInt(tx.Size(), 10))
			_, err := tx.WriteTo(w)
			return err
		})
	}))
	defer srv.Close()
	if err := os.WriteFile(archive.ListenPath(db), []byte(strings.TrimPrefix(srv.URL, "http://")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "copy.bolt")
	code, stdout, errs := runArchiveCmd(t, "snapshot", "--db", db, out)
	if code != 0 || !strings.Contains(stdout, "streamed by the running crawl at "+srv.URL) || requests.Load() != 1 {
		t.Fatalf("exit %d, %d requests\n%s%s", code, requests.Load(), stdout, errs)
	}
	if code, stdout, _ := runArchiveCmd(t, "check", "--db", out); code != 0 || !strings.HasPrefix(stdout, "ok: 8 nodes, 7 edges, 1 queued, 1 lease") {
		t.Errorf("check of the copy: exit %d %s", code, stdout)
	}
	c, err := kv.Open(out, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.View(func(tx *kv.Tx) error {
		if v := tx.MetaString(metaListenAddr); v != "" {
			t.Errorf("the copy keeps the API address %q", v)
		}
		return nil
	})

	// An API that fails leaves nothing behind.
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	})
	out2 := filepath.Join(dir, "copy2.bolt")
	if code, _, errs := runArchiveCmd(t, "snapshot", "--db", db, out2); code != 1 || !strings.Contains(errs, "500") {
		t.Errorf("failing API: exit %d, want 1\n%s", code, errs)
	}
	if _, err := os.Stat(out2); err == nil {
		t.Error("a failed download created its output")
	}
}

func TestSnapshot_InUseWithoutAPI(t *testing.T) {
	dir := t.TempDir()
	db := archiveStore(t, filepath.Join(dir, "live.bolt"), 4, nil)
	live, err := kv.Open(db, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	code, _, errs := runArchiveCmd(t, "snapshot", "--db", db, filepath.Join(dir, "copy.bolt"))
	if code != 2 || !strings.Contains(errs, "--listen") {
		t.Errorf("exit %d, want 2 with a hint about --listen\n%s", code, errs)
	}
}
