package serve_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/serve"
)

// TestClient_Answers: what the Client makes of each answer of a status
// API, reached at the address in the file beside the store; the errors
// that are the caller's to fix wrap ErrBadInput.
func TestClient_Answers(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	other := filepath.Join(dir, "other.bolt")
	for _, p := range []string{db, other} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var serves atomic.Pointer[string] // the store the API says it serves
	serves.Store(&db)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("Authorization") != "Bearer right":
			http.Error(w, "token", http.StatusUnauthorized)
		case r.URL.Path == "/status":
			json.NewEncoder(w).Encode(serve.Status{DBPath: *serves.Load()})
		case r.URL.Path == "/host" && r.URL.Query().Get("h") == "known.example":
			json.NewEncoder(w).Encode(export.HostReport{Host: "known.example"})
		case r.URL.Path == "/host":
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(map[string]string{"error": `host "x.example" is not in the store`})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	c := serve.Client{Path: db, Token: "right", TokenHow: "give a token", Timeout: 10 * time.Second}

	_, err := c.Status(ctx)
	if want := db + " is in use by another weaver process that serves no status API (an import, a layout, a merge, or a crawl of an older weaver): wait for it to end"; err == nil || err.Error() != want || !errors.Is(err, serve.ErrBadInput) {
		t.Errorf("no address: %v, want %q wrapping ErrBadInput", err, want)
	}
	// A file being written (empty) is no address, and not the caller's to fix.
	if err := os.WriteFile(archive.ListenPath(db), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = c.Status(ctx)
	if want := db + " is in use by another weaver process; reading its address: "; err == nil || !strings.HasPrefix(err.Error(), want) || errors.Is(err, serve.ErrBadInput) {
		t.Errorf("empty address file: %v, want %q...", err, want)
	}
	if err := os.WriteFile(archive.ListenPath(db), []byte(strings.TrimPrefix(srv.URL, "http://")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rep, err := c.Status(ctx); err != nil || rep.DBPath != db {
		t.Errorf("Status: %+v, %v", rep, err)
	}
	if rep, err := c.Host(ctx, "known.example", export.HostOptions{Limit: 5}, time.Minute); err != nil || rep.Host != "known.example" {
		t.Errorf("Host: %+v, %v", rep, err)
	}
	_, err = c.Host(ctx, "x.example", export.HostOptions{}, time.Minute)
	if want := `host "x.example" is not in the store in ` + db + " (asked the running crawl)"; err == nil || err.Error() != want || !errors.Is(err, serve.ErrBadInput) {
		t.Errorf("unknown host: %v, want %q wrapping ErrBadInput", err, want)
	}
	_, err = c.Ranks(ctx, 10, false, time.Minute)
	if err == nil || !strings.HasPrefix(err.Error(), "GET "+srv.URL+"/graph?format=json&domains=false: 404 Not Found") || errors.Is(err, serve.ErrBadInput) {
		t.Errorf("no /graph: %v", err)
	}
	for _, tc := range []struct{ token, want string }{
		{"", "the crawl holding " + db + " wants its API token (" + srv.URL + "/status answered 401): give a token"},
		{"wrong", "the crawl holding " + db + " refused the token given (" + srv.URL + "/status answered 401): it is not the crawl's token"},
	} {
		c := c
		c.Token = tc.token
		if _, err := c.Status(ctx); err == nil || err.Error() != tc.want || errors.Is(err, serve.ErrBadInput) {
			t.Errorf("token %q: %v, want %q", tc.token, err, tc.want)
		}
	}
	serves.Store(&other)
	_, err = c.Status(ctx)
	if want := db + " is in use by another weaver process, but the status API at " + srv.URL + "/status (from " + archive.ListenPath(db) + ") serves " + other; err == nil || err.Error() != want {
		t.Errorf("another store's API: %v, want %q", err, want)
	}
}
