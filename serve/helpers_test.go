package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/kv"
)

// startWeb serves w on loopback for the test's lifetime.
func startWeb(t *testing.T, w *fakeweb.Web) *fakeweb.Server {
	t.Helper()
	srv, err := w.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// testConfig is a fast, deterministic crawl of srv into s.
func testConfig(t *testing.T, srv *fakeweb.Server, s *kv.Store) crawl.Config {
	cfg := crawl.Defaults()
	cfg.DBPath = s.Path()
	cfg.MetricsPath = filepath.Join(t.TempDir(), "metrics.log")
	cfg.ConnectTo = []string{srv.ConnectTo()}
	cfg.AllowPrivateNetworks = true
	cfg.PolitenessDelayMS = 0
	cfg.RetryDelayMS = 10
	cfg.ProgressIntervalMS = 0
	cfg.Quiet = true
	return cfg
}

// answer is an HTTP answer read whole.
type answer struct {
	code   int
	header http.Header
	body   []byte
}

// do sends a request to h's test server at base and reads the answer.
func do(t *testing.T, method, url, body string) answer {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading: %v", method, url, err)
	}
	return answer{code: resp.StatusCode, header: resp.Header, body: data}
}

// decode decodes a JSON answer into v, strictly.
func decode(t *testing.T, a answer, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(a.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decoding %s: %v", a.body, err)
	}
}

// errorOf returns an error answer's message, checking it is JSON.
func errorOf(t *testing.T, a answer) string {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("error answer has Content-Type %q, want JSON", ct)
	}
	decode(t, a, &e)
	if e.Error == "" {
		t.Errorf("error answer without a message: %s", a.body)
	}
	return e.Error
}

// newServer serves h for the test's lifetime.
func newServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

// eventually polls cond every 20 ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		case <-tick.C:
		}
	}
}
