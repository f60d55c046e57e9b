package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
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
		if code != 0 || out != "ok: 6 nodes, 5 edges, 1 queued, 1 lease\n" {
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
	if code != 2 || !strings.Contains(errs, "wait for it to end") {
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

// binRun is one run of the built weaver binary.
type binRun struct {
	code           int
	stdout, stderr string
}

// buildWeaver compiles this command into dir, for the tests that run it
// as a user does: a real process, real exit codes.
func buildWeaver(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "weaver")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runBin runs bin with args in dir, with no WEAVER_ variables, and waits
// at most two minutes.
func runBin(t *testing.T, bin, dir string, args ...string) binRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WEAVER_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := binRun{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("weaver %v: %v", args, err)
	}
	return r
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}

// crawledHosts counts a sound store's nodes that were fetched.
func crawledHosts(t *testing.T, path string) int {
	t.Helper()
	s, err := kv.Open(path, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	if err := s.View(func(tx *kv.Tx) error {
		return graph.ForEachNode(tx, func(node *graph.Node) error {
			if node.CrawlCount > 0 {
				n++
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCheck_Repair crawls the fake web with the built binary, leaves
// leases as a killed crawl would, and damages copies of the store three
// ways: flipped bytes in leaf pages of nodes, edges, frontier and leases
// (some that make bbolt fault), msgpack values that lie about their
// lengths, and a truncated tail. For each, weaver check reports the
// damage and names --repair; weaver check --repair lists what it dropped
// and writes a store that passes weaver check, exports, and resumes a
// crawl; the damaged file is left byte for byte as it was.
func TestCheck_Repair(t *testing.T) {
	dir := t.TempDir()
	bin := buildWeaver(t, dir)
	w := fakeweb.New(fakeweb.Config{Hosts: 400, Seed: 14})
	srv, err := w.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	crawl := func(db string, pages int) binRun {
		return runBin(t, bin, dir, "crawl", "--db", db, "--metrics", db+".metrics", "--connect-to", srv.ConnectTo(),
			"--delay", "0", "--quiet", "--retry-delay", "10ms", "--max-crawls-per-node", "1",
			"--max-pages", strconv.Itoa(pages), w.Seed())
	}
	base := filepath.Join(dir, "base.bolt")
	if r := crawl(base, 120); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	s, err := kv.Open(base, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(func(tx *kv.Tx) error { // the leases a killed crawl leaves
		_, err := frontier.Claim(tx, 60, 1000, time.Now(), func(*frontier.Entry) frontier.Verdict { return frontier.Take })
		return err
	})
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	pristine, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	// key returns the key of element i of the middle leaf of bucket among
	// those that have an element i (a leaf of a few big nodes may not),
	// and the offsets of the element's header and value.
	key := func(bucket []byte, i int) (k []byte, header, value int64) {
		_, all := storetest.LeafPages(t, base, bucket)
		var leaves []storetest.Leaf
		for _, l := range all {
			if l.Count > i {
				leaves = append(leaves, l)
			}
		}
		if len(leaves) == 0 {
			t.Fatalf("%s has no leaf page of its own with %d elements: crawl more", bucket, i+1)
		}
		leaf := leaves[len(leaves)/2]
		h, ko, vo := storetest.LeafElement(t, base, leaf, i)
		return bytes.Clone(pristine[ko:vo]), h, vo
	}

	cases := []struct {
		name   string
		damage func(path string) // applied to a copy of base
		check  int               // weaver check's exit code on the damaged copy
		want   []string          // in weaver check --repair's output
	}{
		{"flipped", func(path string) {
			var want []string
			for _, b := range [][]byte{kv.BucketNodes, kv.BucketEdges, kv.BucketFrontier, kv.BucketLeases} {
				k, _, v := key(b, 1)
				storetest.Patch(t, path, v, []byte{0xc1}) // a type code msgpack never uses
				want = append(want, fmt.Sprintf("dropped %s %x: kv: damaged value: invalid code 0xc1", b, k))
			}
			for _, b := range [][]byte{kv.BucketNodes, kv.BucketEdges} {
				_, h, _ := key(b, 3)
				storetest.Patch(t, path, h+4, []byte{0xf0, 0xff, 0xff, 0x7f}) // its key 2 GiB away: bbolt faults
				want = append(want, fmt.Sprintf("dropped %s: element 3 points outside its page", b))
			}
			flippedWant = want
		}, 1, nil},
		{"values", func(path string) {
			lie := []byte{0x81, 0xa1, 'h', 0xdb, 0x7f, 0xff, 0xff, 0xff, 'a'} // {"h": <2 GiB string>}
			s, err := kv.Open(path, kv.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			err = s.Update(func(tx *kv.Tx) error {
				if err := tx.PutRaw(kv.BucketNodes, kv.U64(5), lie); err != nil {
					return err
				}
				for _, b := range []struct{ bucket, value []byte }{
					{kv.BucketEdges, []byte{0xc9, 0x7f, 0xff, 0xff, 0xff, 0xff}},    // ext32 claiming 2 GiB
					{kv.BucketFrontier, []byte{0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0}}, // array of 4 G elements
					{kv.BucketLeases, lie},
				} {
					k, _ := tx.Cursor(b.bucket).First()
					if err := tx.PutRaw(b.bucket, bytes.Clone(k), b.value); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}, 1, []string{
			"dropped nodes 0000000000000005: kv: damaged value: length 2147483647",
			"dropped edges 0000000000000001",
			"4294967295 elements at byte 5 exceed the 1 bytes left", // the frontier entry
			"dropped leases 00000000000000",
			"node 5 is not in the repaired store",
		}},
		{"truncated", func(path string) {
			// bbolt grows files ahead of use: cut what the pages need.
			le := binary.LittleEndian
			meta := pristine[16:]
			if next := pristine[le.Uint32(pristine[24:])+16:]; le.Uint64(next[48:]) > le.Uint64(meta[48:]) {
				meta = next
			}
			need := int64(le.Uint64(meta[40:])) * int64(le.Uint32(meta[8:])) // high-water mark × page size
			if err := os.Truncate(path, need*7/10); err != nil {
				t.Fatal(err)
			}
		}, 2, []string{"is beyond the end of the file", "dropped "}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := filepath.Join(dir, c.name+".bolt")
			if err := os.WriteFile(db, pristine, 0o600); err != nil {
				t.Fatal(err)
			}
			flippedWant = nil
			c.damage(db)
			want := append(c.want, flippedWant...)
			before := fileSum(t, db)

			r := runBin(t, bin, dir, "check", "--db", db)
			if r.code != c.check || !strings.Contains(r.stdout+r.stderr, "weaver check --repair --db "+db) {
				t.Errorf("check: exit %d, want %d and a hint naming --repair\n%s%s", r.code, c.check, r.stdout, r.stderr)
			}
			r = runBin(t, bin, dir, "check", "--repair", "--db", db)
			if r.code != 0 {
				t.Fatalf("check --repair: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			out := db + ".repaired"
			for _, line := range append(want, "repaired "+db+" into "+out+": kept ", out+" passes weaver check") {
				if !strings.Contains(r.stdout, line) {
					t.Errorf("check --repair does not say %q:\n%s", line, r.stdout)
				}
			}
			if !strings.HasPrefix(r.stdout, "dropped ") {
				t.Errorf("check --repair dropped nothing:\n%s", r.stdout)
			}
			if fileSum(t, db) != before {
				t.Errorf("the damaged store was modified")
			}
			if r := runBin(t, bin, dir, "check", "--db", out); r.code != 0 || !strings.HasPrefix(r.stdout, "ok: ") {
				t.Errorf("check of the repaired store: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			r = runBin(t, bin, dir, "export", "--db", out, "--json")
			var graphJSON struct {
				Nodes []struct{ Host string } `json:"nodes"`
				Edges []json.RawMessage       `json:"edges"`
			}
			if r.code != 0 || json.Unmarshal([]byte(r.stdout), &graphJSON) != nil || len(graphJSON.Nodes) == 0 {
				t.Errorf("export --json of the repaired store: exit %d, %d nodes\n%.500s%s", r.code, len(graphJSON.Nodes), r.stdout, r.stderr)
			}

			// The output is not replaced without --force, which is named.
			if r := runBin(t, bin, dir, "check", "--repair", "--db", db); r.code != 2 || !strings.Contains(r.stderr, "--force") {
				t.Errorf("second repair without --force: exit %d, want 2 naming --force\n%s", r.code, r.stderr)
			}
			if r := runBin(t, bin, dir, "check", "--repair", "--force", "--db", db, "-o", out); r.code != 0 {
				t.Errorf("repair --force: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}

			// A crawl resumes from the repaired store.
			crawled := crawledHosts(t, out)
			if r := crawl(out, 20); r.code != 0 {
				t.Fatalf("crawl of the repaired store: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if got := crawledHosts(t, out); got <= crawled {
				t.Errorf("the resumed crawl fetched nothing: %d crawled hosts before, %d after", crawled, got)
			}
			if r := runBin(t, bin, dir, "check", "--db", out); r.code != 0 {
				t.Errorf("check after the resumed crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}

	// A store in use by another process is not read.
	held, err := kv.Open(base, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if r := runBin(t, bin, dir, "check", "--repair", "--db", base); r.code != 2 || !strings.Contains(r.stderr, "wait for it to end") {
		t.Errorf("repair of a store in use: exit %d, want 2 with a hint\n%s", r.code, r.stderr)
	}
}

// flippedWant is what the "flipped" case of TestCheck_Repair must report:
// its damage function finds the keys.
var flippedWant []string

func TestCheck_Repair_Usage(t *testing.T) {
	db := archiveStore(t, filepath.Join(t.TempDir(), "w.bolt"), 6, nil)
	for _, args := range [][]string{
		{"check", "--db", db, "-o", "x.bolt"},
		{"check", "--db", db, "--force"},
		{"check", "--repair", "--db", db, "-o", db},
	} {
		if code, out, errs := runArchiveCmd(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s%s", args, code, out, errs)
		}
	}
	out := filepath.Join(t.TempDir(), "fixed.bolt")
	code, stdout, errs := runArchiveCmd(t, "check", "--repair", db, "--out", out)
	want := "repaired " + db + " into " + out + ": kept 6 nodes, 5 edges, 2 queued (1 lease returned to the queue); dropped 0 records, lost 0 pages;"
	if code != 0 || !strings.HasPrefix(stdout, want) {
		t.Errorf("exit %d, want 0 and %q\n%s%s", code, want, stdout, errs)
	}
}
