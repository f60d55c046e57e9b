package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// archiveStore writes a small store at path: hosts linked in a chain
// host0 → host1 → ..., the first half crawled, one entry queued and one
// leased. extra runs in the same transaction.
func archiveStore(t *testing.T, path string, hosts int, extra func(tx *kv.Tx) error) string {
	t.Helper()
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	s, err := kv.Open(path, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Update(func(tx *kv.Tx) error {
		var prev uint64
		for i := 0; i < hosts; i++ {
			n, _, err := graph.Ensure(tx, fmt.Sprintf("host%d.test", i), "http", now)
			if err != nil {
				return err
			}
			if i < hosts/2 {
				n.CrawlCount, n.Status, n.Title, n.LastCrawl = 1, graph.StatusCrawled, fmt.Sprintf("Host %d", i), now
				if err := graph.Put(tx, &n); err != nil {
					return err
				}
			}
			if prev != 0 {
				if err := graph.AddEdge(tx, prev, n.ID, uint64(i), now); err != nil {
					return err
				}
			}
			prev = n.ID
			if i >= hosts-2 {
				if _, err := frontier.Push(tx, frontier.Entry{NodeID: n.ID, Host: n.Host, URL: "http://" + n.Host + "/", Depth: 1}); err != nil {
					return err
				}
			}
		}
		if _, err := frontier.Claim(tx, 1, 10, now, func(*frontier.Entry) frontier.Verdict { return frontier.Take }); err != nil {
			return err
		}
		if extra != nil {
			return extra(tx)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// runArchiveCmd runs weaver in-process with args.
func runArchiveCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code = run(context.Background(), e, args)
	return code, out.String(), errb.String()
}

func TestCheck_OK(t *testing.T) {
	db := archiveStore(t, filepath.Join(t.TempDir(), "w.bolt"), 6, nil)
	for _, args := range [][]string{{"check", "--db", db}, {"check", db}} {
		code, out, errs := runArchiveCmd(t, args...)
		if code != 0 || out != "ok: 6 nodes, 5 edges, 1 queued, 1 leases\n" {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errs)
		}
	}
}

func TestCheck_Problems(t *testing.T) {
	db := archiveStore(t, filepath.Join(t.TempDir(), "w.bolt"), 6, func(tx *kv.Tx) error {
		if err := tx.SetCounter("graph.edges", 9); err != nil {
			return err
		}
		if err := tx.SetCounter("frontier.size", 4); err != nil {
			return err
		}
		return tx.PutRaw(kv.BucketHosts, []byte("ghost.test"), kv.U64(99))
	})
	code, out, errs := runArchiveCmd(t, "check", "--db", db)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
	}
	for _, want := range []string{
		"3 problems:",
		`graph: host "ghost.test" points at node 0000000000000063 which does not name it`,
		"graph: edge counter 9, 5 edges stored",
		"frontier: size counter 4, 1 entries queued",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "3 problems found") {
		t.Errorf("stderr: %q", errs)
	}
}

func TestCheck_Unusable(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(archiveStore(t, filepath.Join(dir, "good.bolt"), 50, nil))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"empty.bolt":     nil,
		"text.bolt":      bytes.Repeat([]byte("hello "), 1000),
		"truncated.bolt": good[:3*4096],
	}
	for name, data := range files {
		os.WriteFile(filepath.Join(dir, name), data, 0o600)
	}
	for _, name := range []string{"empty.bolt", "text.bolt", "truncated.bolt", "missing.bolt"} {
		code, out, errs := runArchiveCmd(t, "check", "--db", filepath.Join(dir, name))
		if code != 2 || out != "" || !strings.HasPrefix(errs, "weaver check: ") {
			t.Errorf("%s: exit %d, want 2\n%s%s", name, code, out, errs)
		}
	}
	if code, _, errs := runArchiveCmd(t, "check", "a.bolt", "b.bolt"); code != 2 {
		t.Errorf("two files: exit %d\n%s", code, errs)
	}
}

func TestCheck_InUse(t *testing.T) {
	db := archiveStore(t, filepath.Join(t.TempDir(), "w.bolt"), 4, nil)
	s, err := kv.Open(db, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	code, _, errs := runArchiveCmd(t, "check", "--db", db)
	if code != 2 || !strings.Contains(errs, "weaver snapshot") {
		t.Errorf("exit %d, want 2 with a hint\n%s", code, errs)
	}
}

func TestParseInterleaved(t *testing.T) {
	cases := []struct {
		args []string
		pos  []string
		json bool
		db   string
	}{
		{[]string{"a", "b"}, []string{"a", "b"}, false, ""},
		{[]string{"--json", "a", "b"}, []string{"a", "b"}, true, ""},
		{[]string{"a", "b", "--json"}, []string{"a", "b"}, true, ""},
		{[]string{"a", "--db", "x", "b"}, []string{"a", "b"}, false, "x"},
		{[]string{"a", "--", "--json"}, []string{"a", "--json"}, false, ""},
		{[]string{"--", "-a"}, []string{"-a"}, false, ""},
		{nil, nil, false, ""},
	}
	for _, tc := range cases {
		e := &env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
		fs := newFlagSet(e, "t", "t", "")
		js := fs.Bool("json", false, "")
		db := fs.String("db", "", "")
		pos, err := parseInterleaved(fs, tc.args)
		if err != nil || strings.Join(pos, "|") != strings.Join(tc.pos, "|") || *js != tc.json || *db != tc.db {
			t.Errorf("%q: got %q json=%v db=%q err=%v", tc.args, pos, *js, *db, err)
		}
	}
}

// TestCheck_DamagedValues: records whose msgpack lies about its lengths (a
// flipped bit in a length header) are reported by check and make export
// fail with one line; nothing panics or allocates the claimed gigabytes.
func TestCheck_DamagedValues(t *testing.T) {
	lie := []byte{0x81, 0xa1, 'h', 0xdb, 0x7f, 0xff, 0xff, 0xff, 'a'} // {"h": <2 GiB string>}
	db := archiveStore(t, filepath.Join(t.TempDir(), "w.bolt"), 6, func(tx *kv.Tx) error {
		if err := tx.PutRaw(kv.BucketNodes, kv.U64(2), lie); err != nil {
			return err
		}
		for _, b := range []struct {
			bucket, value []byte
		}{
			{kv.BucketEdges, []byte{0xc9, 0x7f, 0xff, 0xff, 0xff, 0xff}},    // ext32 claiming 2 GiB
			{kv.BucketFrontier, []byte{0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0}}, // array of 4 G elements
			{kv.BucketLeases, lie},
		} {
			k, _ := tx.Cursor(b.bucket).First()
			if err := tx.PutRaw(b.bucket, append([]byte(nil), k...), b.value); err != nil {
				return err
			}
		}
		return tx.PutRaw(kv.BucketLeases, []byte{1}, lie[:2]) // a short key, a cut value
	})
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	code, out, errs := runArchiveCmd(t, "check", "--db", db)
	if code != 1 {
		t.Fatalf("check: exit %d, want 1\n%s%s", code, out, errs)
	}
	for _, want := range []string{
		"graph: node 0000000000000002: kv: damaged value: length 2147483647",
		"graph: edge 0000000000000001",
		"frontier: entry 00000001",
		"frontier: lease 00000000000000",
		"frontier: lease 01: kv: damaged value: 2 elements",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
	target := filepath.Join(t.TempDir(), "crawler.db")
	code, out, errs = runArchiveCmd(t, "export", "--db", db, "--sqlite", target)
	if code == 0 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "damaged value") {
		t.Errorf("export: exit %d, want a one-line error naming the damage\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("export of a damaged store left %s behind (%v)", target, err)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 256<<20 {
		t.Errorf("check and export allocated %d MiB", got>>20)
	}
}
