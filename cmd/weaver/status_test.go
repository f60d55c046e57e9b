package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/serve"
)

// runWeaverCmd runs `weaver args...` in-process with env getenv.
func runWeaverCmd(t *testing.T, getenv map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return getenv[k] }}
	code = run(context.Background(), e, args)
	return code, out.String(), errb.String()
}

// statusStore writes a closed store: hub.test linked from three hosts
// (weight 1+2+3), two of them crawled, one entry queued at depth 1.
func statusStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "w.bolt")
	s := storetest.MustOpenPath(t, path, kv.Options{})
	at := time.Date(2025, 2, 3, 4, 5, 6, 0, time.UTC)
	err := s.Update(func(tx *kv.Tx) error {
		hub, _, err := graph.Ensure(tx, "hub.test", "http", at)
		if err != nil {
			return err
		}
		for i, h := range []string{"a.test", "b.test", "c.test"} {
			n, _, err := graph.Ensure(tx, h, "http", at)
			if err != nil {
				return err
			}
			if i < 2 {
				n.CrawlCount, n.Status, n.LastCrawl = 1, graph.StatusCrawled, at.Add(time.Duration(i)*time.Minute)
				if err := graph.Put(tx, &n); err != nil {
					return err
				}
			}
			if err := graph.AddEdge(tx, n.ID, hub.ID, uint64(i+1), at); err != nil {
				return err
			}
		}
		_, err = frontier.Push(tx, frontier.Entry{NodeID: hub.ID, Host: "hub.test", URL: "http://hub.test/", Depth: 1})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestStatus_IdleStore_Text(t *testing.T) {
	db := statusStore(t)
	code, out, errs := runWeaverCmd(t, nil, "status", "--db", db)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"Nodes:          4\n", "Crawled nodes:  2\n", "Edges:          3\n", "Total weight:   6\n",
		"Frontier:       1\n", "Leases:         0\n", "Robots cached:  0\n",
		"Last crawl:     2025-02-03T04:06:06Z",
		"Frontier by depth\n  depth 1  1\n",
		"Top 10 hosts by in-weight\n  1  hub.test  6  from 3 hosts  discovered\n",
		// hub.test: h = 0.15/4 + 0.85(3y + h/4) and y = 0.15/4 + 0.85·h/4.
		"Top 10 hosts by PageRank\n  1  hub.test  0.541985  in-weight 6  discovered\n  2  a.test    0.152672  in-weight 0  crawled\n",
		"Nodes by status\n  crawled     2\n  discovered  2\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Live crawl") {
		t.Errorf("an idle store shows a live crawl:\n%s", out)
	}
}

func TestStatus_IdleStore_JSON(t *testing.T) {
	db := statusStore(t)
	// The store comes from WEAVER_DB_PATH when --db is not given.
	code, out, errs := runWeaverCmd(t, map[string]string{"WEAVER_DB_PATH": db}, "status", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep serve.Status
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	abs, _ := filepath.Abs(db)
	if rep.DBPath != abs || rep.Crawl != nil || rep.Version != Version {
		t.Errorf("report: %+v", rep)
	}
	st := rep.Store
	if st.Nodes != 4 || st.CrawledNodes != 2 || st.Edges != 3 || st.TotalWeight != 6 || st.FrontierSize != 1 ||
		len(st.TopHosts) != 1 || st.TopHosts[0].Host != "hub.test" || st.LastCrawl == nil ||
		len(st.TopPageRank) != 4 || st.TopPageRank[0].Host != "hub.test" || st.TopPageRank[0].InWeight != 6 ||
		math.Abs(st.TopPageRank[0].PageRank-0.8875/1.6375) > 1e-9 || st.TopPageRank[3].Host != "c.test" {
		t.Errorf("store: %+v", st)
	}
}

func TestStatus_Usage(t *testing.T) {
	dir := t.TempDir()
	notStore := filepath.Join(dir, "notes.txt")
	os.WriteFile(notStore, []byte("hello, this is not a store at all, not even close to one"), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "--db", filepath.Join(dir, "missing.bolt")}, "missing.bolt"},
		{[]string{"status", "--db", notStore}, "not a weaver store"},
		{[]string{"status", "extra"}, "no arguments"},
		{[]string{"status", "--frobnicate"}, "frobnicate"},
	} {
		code, _, errs := runWeaverCmd(t, nil, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, want 2 with %q:\n%s", c.args, code, c.want, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.bolt")); err == nil {
		t.Error("status created a store")
	}
}

// holdStore opens db for writing, as a running crawl holds it.
func holdStore(t *testing.T, db string) *kv.Store {
	t.Helper()
	s, err := kv.Open(db, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestStatus_InUse_NoListen(t *testing.T) {
	db := statusStore(t)
	holdStore(t, db)
	code, _, errs := runWeaverCmd(t, nil, "status", "--db", db)
	if code != 2 || !strings.Contains(errs, "in use by another weaver process that serves no status API (an import, a layout, a merge, or a crawl of an older weaver): wait for it to end") {
		t.Errorf("exit %d, want 2 and what the holder may be:\n%s", code, errs)
	}
}

// TestStatus_InUse_AsksTheCrawl: the store is held by "a crawl" (this
// test) that serves the status API at the address in the sidecar file.
func TestStatus_InUse_AsksTheCrawl(t *testing.T) {
	db := statusStore(t)
	s := holdStore(t, db)
	c, err := crawl.New(crawl.Defaults(), s, crawl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(serve.NewCrawlHandler(c, s, func() {}, "test"))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	if err := os.WriteFile(archive.ListenPath(db), []byte(addr+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runWeaverCmd(t, nil, "status", "--db", db)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"Nodes:          4\n", "Live crawl (http://" + addr + ")", "Pages/s:", "Workers:", "Fetch p50/p90/p99:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runWeaverCmd(t, nil, "status", "--db", db, "--json")
	var rep serve.Status
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || rep.Crawl == nil || rep.Store.Nodes != 4 {
		t.Errorf("--json: exit %d, %v: %s", code, err, out)
	}

	// A sidecar pointing at another store's API is refused.
	other := statusStore(t)
	os2 := holdStore(t, other)
	c2, _ := crawl.New(crawl.Defaults(), os2, crawl.Options{})
	srv2 := httptest.NewServer(serve.NewCrawlHandler(c2, os2, func() {}, "test"))
	defer srv2.Close()
	os.WriteFile(archive.ListenPath(db), []byte(strings.TrimPrefix(srv2.URL, "http://")+"\n"), 0o600)
	if code, _, errs := runWeaverCmd(t, nil, "status", "--db", db); code != 1 || !strings.Contains(errs, "serves "+other) {
		t.Errorf("API of another store: exit %d\n%s", code, errs)
	}

	// A stale sidecar (nobody listening) is an error naming the address.
	os.WriteFile(archive.ListenPath(db), []byte("127.0.0.1:1\n"), 0o600)
	if code, _, errs := runWeaverCmd(t, nil, "status", "--db", db, "--timeout", "5s"); code != 1 || !strings.Contains(errs, "127.0.0.1:1") {
		t.Errorf("stale sidecar: exit %d\n%s", code, errs)
	}
}

func TestPrintStatus_Live(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 1, 0, 0, time.UTC)
	rep := serve.Status{DBPath: "/data/w.bolt", Listen: "127.0.0.1:8088", Crawl: &crawl.Status{
		Running: true, UptimeSeconds: 83, PagesFetched: 120, PagesFailed: 7, PagesPerSecond: 12.34,
		ErrorsByType: map[string]int64{"dns": 2, "timeout": 5},
		Workers:      []crawl.WorkerStatus{{State: "fetching"}, {State: "fetching"}, {State: "idle"}},
		FetchP50MS:   12, FetchP90MS: 45.4, FetchP99MS: 120,
	}}
	var b bytes.Buffer
	if err := printStatus(&b, rep, now); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Last crawl:     never", "(empty)", "(no edges)",
		"Live crawl (http://127.0.0.1:8088)\n",
		"State:              running, up 1m23s\n",
		"Errors:             timeout 5, dns 2\n",
		"Workers:            fetching 2, idle 1\n",
		"Fetch p50/p90/p99:  12 / 45 / 120 ms\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
}
