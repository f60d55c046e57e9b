package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"

	_ "github.com/mattn/go-sqlite3" // the database/sql driver "sqlite3"
)

// exportStore writes a three-host store and closes it, as a finished
// crawl leaves it; its path is returned.
func exportStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "weaver.bolt")
	s := storetest.MustOpenPath(t, path, kv.Options{})
	now := time.Date(2025, 1, 16, 10, 0, 0, 0, time.UTC)
	err := s.Update(func(tx *kv.Tx) error {
		var ids []uint64
		for i, h := range []string{"example.com", "www.example.com", "iana.org"} {
			n, _, err := graph.Ensure(tx, h, "https", now)
			if err != nil {
				return err
			}
			if i != 1 {
				n.CrawlCount, n.Status, n.HTTPStatus, n.Title = 1, graph.StatusCrawled, 200, "Title of "+h
				if err := graph.Put(tx, &n); err != nil {
					return err
				}
			}
			ids = append(ids, n.ID)
		}
		for _, e := range [][3]uint64{{0, 1, 1}, {0, 2, 3}, {2, 0, 2}, {1, 2, 1}} {
			if err := graph.AddEdge(tx, ids[e[0]], ids[e[1]], e[2], now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// runExport runs `weaver export args...` in-process.
func runExportCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code = run(context.Background(), e, append([]string{"export"}, args...))
	return code, out.String(), errb.String()
}

func TestExport_Formats(t *testing.T) {
	db := exportStore(t)
	dir := t.TempDir()
	sqlitePath, graphmlPath, dotPath := filepath.Join(dir, "crawler.db"), filepath.Join(dir, "map.graphml"), filepath.Join(dir, "map.dot")
	code, stdout, stderr := runExportCmd(t, "--db", db, "--sqlite", sqlitePath, "--graphml", graphmlPath, "--dot="+dotPath, "--json")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	var doc struct {
		Directed bool              `json:"directed"`
		Nodes    []json.RawMessage `json:"nodes"`
		Edges    []json.RawMessage `json:"edges"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("stdout is not the JSON export: %v\n%s", err, stdout)
	}
	if !doc.Directed || len(doc.Nodes) != 3 || len(doc.Edges) != 4 {
		t.Errorf("JSON on stdout: directed %v, %d nodes, %d edges", doc.Directed, len(doc.Nodes), len(doc.Edges))
	}
	for _, p := range []string{sqlitePath, graphmlPath, dotPath} {
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}
	if !strings.Contains(stderr, "crawler.db: sqlite, 3 nodes, 4 edges, total weight 7") {
		t.Errorf("stderr lacks the SQLite summary:\n%s", stderr)
	}
	if got := readHead(t, sqlitePath, 16); got != "SQLite format 3\x00" {
		t.Errorf("SQLite file starts %q", got)
	}

	// Filters, and a format flag with no FILE before another flag.
	code, stdout, stderr = runExportCmd(t, "--db", db, "--dot", "--crawled-only", "--min-weight", "2")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "digraph weaver {") || strings.Count(stdout, " -> ") != 2 {
		t.Errorf("filtered DOT on stdout:\n%s", stdout)
	}
	code, stdout, _ = runExportCmd(t, "--db", db, "--domains", "--graphml", "-")
	if code != 0 || strings.Count(stdout, "<node ") != 2 || strings.Count(stdout, "<edge ") != 2 {
		t.Errorf("--domains GraphML: exit %d\n%s", code, stdout)
	}
}

// TestExport_NoRanks: --no-ranks leaves the ranks out of every format:
// no node_ranks table in SQLite (the nodes table as ever), no pagerank or
// harmonic key in GraphML, no such fields in JSON or DOT.
func TestExport_NoRanks(t *testing.T) {
	db := exportStore(t)
	dir := t.TempDir()
	ranked, bare := filepath.Join(dir, "ranked.db"), filepath.Join(dir, "bare.db")
	graphmlPath, dotPath := filepath.Join(dir, "map.graphml"), filepath.Join(dir, "map.dot")
	if code, _, stderr := runExportCmd(t, "--db", db, "--sqlite", ranked); code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	code, stdout, stderr := runExportCmd(t, "--db", db, "--no-ranks", "--sqlite", bare, "--graphml", graphmlPath, "--dot", dotPath, "--json")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	schema := func(path string) map[string]string {
		t.Helper()
		conn, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		rows, err := conn.Query("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		tables := map[string]string{}
		for rows.Next() {
			var name, ddl string
			if err := rows.Scan(&name, &ddl); err != nil {
				t.Fatal(err)
			}
			tables[name] = ddl
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return tables
	}
	with, without := schema(ranked), schema(bare)
	if _, ok := with["node_ranks"]; !ok {
		t.Errorf("the ranked export has no node_ranks table: %v", with)
	}
	if ddl, ok := without["node_ranks"]; ok {
		t.Errorf("--no-ranks: the export has a node_ranks table: %s", ddl)
	}
	if with["nodes"] == "" || without["nodes"] != with["nodes"] {
		t.Errorf("--no-ranks changed the nodes table:\n%s\nwant\n%s", without["nodes"], with["nodes"])
	}
	for name, data := range map[string]string{"GraphML": string(readFileT(t, graphmlPath)), "DOT": string(readFileT(t, dotPath)), "JSON": stdout} {
		if !strings.Contains(data, "iana.org") {
			t.Errorf("%s lacks the hosts:\n%s", name, data)
		}
		if strings.Contains(data, "pagerank") || strings.Contains(data, "harmonic") {
			t.Errorf("--no-ranks: %s has ranks:\n%s", name, data)
		}
	}
}

func readFileT(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestExport_UsageErrors(t *testing.T) {
	db := exportStore(t)
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.bolt")
	if err := os.Symlink(db, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		{"no format", []string{"--db", db}, "no format"},
		{"sqlite without file", []string{"--db", db, "--sqlite"}, "needs a FILE"},
		{"sqlite to stdout", []string{"--db", db, "--sqlite", "-"}, "needs a FILE"},
		{"sqlite before a flag", []string{"--db", db, "--sqlite", "--dot"}, "needs a FILE"},
		{"sqlite before a dash word", []string{"--db", db, "--sqlite", "-x"}, "--sqlite -x: a FILE that starts with '-'"},
		{"two on stdout", []string{"--db", db, "--dot", "--json"}, "only one format"},
		{"same file twice", []string{"--db", db, "--dot", filepath.Join(dir, "x"), "--json", filepath.Join(dir, ".", "x")}, "both write"},
		{"extra argument", []string{"--db", db, "--json", "a.json", "b.json"}, "unexpected argument"},
		{"sqlite over the store", []string{"--db", db, "--sqlite", db}, "is the store being exported"},
		{"sqlite over the store, forced", []string{"--db", db, "--sqlite", db, "--force"}, "is the store being exported"},
		{"sqlite over the store by a link", []string{"--db", db, "--sqlite", link}, "is the store being exported"},
		{"json over the store", []string{"--db", db, "--json", db}, "is the store being exported"},
		{"sqlite over a text file", []string{"--db", db, "--sqlite", notes}, "already exists: use --force"},
		{"json over a text file", []string{"--db", db, "--json", notes}, "already exists: use --force"},
		{"missing store", []string{"--db", filepath.Join(dir, "none.bolt"), "--json"}, "none.bolt: no such store"},
		{"not a store", []string{"--db", notes, "--json"}, "not a weaver store"},
		{"bad flag", []string{"--db", db, "--json", "--colour"}, "unknown flag --colour"},
		{"missing directory", []string{"--db", db, "--json", filepath.Join(dir, "no", "such", "dir", "x.json")}, "no such directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runExportCmd(t, tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.msg) {
				t.Errorf("exit %d, want 2; stderr %q, want it to mention %q", code, stderr, tc.msg)
			}
		})
	}
	if got := readHead(t, notes, 100); got != "keep me" {
		t.Errorf("a refused export changed %s: %q", notes, got)
	}
	// --force replaces the text file, never the store.
	if code, _, stderr := runExportCmd(t, "--db", db, "--sqlite", notes, "--force"); code != 0 {
		t.Errorf("--force: exit %d: %s", code, stderr)
	}
	if ro, err := kv.Open(db, kv.Options{ReadOnly: true}); err != nil {
		t.Errorf("store damaged: %v", err)
	} else {
		if err := storetest.CheckAll(ro); err != nil {
			t.Errorf("store damaged: %v", err)
		}
		ro.Close()
	}
}

// TestExport_StoreInUse checks that exporting a store a crawl holds open
// gives the "in use" error, exit 2.
func TestExport_StoreInUse(t *testing.T) {
	db := exportStore(t)
	s, err := kv.Open(db, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	code, _, stderr := runExportCmd(t, "--db", db, "--json")
	if code != 2 || !strings.Contains(stderr, "in use") {
		t.Errorf("exit %d, stderr %q; want 2 and 'in use'", code, stderr)
	}
}

// TestExport_Interrupted runs an export whose context is already
// cancelled, as a Ctrl-C makes it: exit 1, and no file written.
func TestExport_Interrupted(t *testing.T) {
	db := exportStore(t)
	dir := t.TempDir()
	for _, flag := range []string{"--sqlite", "--json"} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var out, errb bytes.Buffer
		e := &env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
		code := run(ctx, e, []string{"export", "--db", db, flag, filepath.Join(dir, "out")})
		if code != 1 || !strings.Contains(errb.String(), "interrupted") {
			t.Errorf("%s: exit %d, stderr %q; want 1 and 'interrupted'", flag, code, errb.String())
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%s: an interrupted export left %v", flag, entries)
		}
	}
}

func TestExport_Args(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"--dot"}, []string{"--dot=-"}},
		{[]string{"--dot", "-"}, []string{"--dot=-"}},
		{[]string{"--dot", "map.dot"}, []string{"--dot=map.dot"}},
		{[]string{"-json", "--crawled-only"}, []string{"-json=-", "--crawled-only"}},
		{[]string{"--graphml=g.xml", "--json"}, []string{"--graphml=g.xml", "--json=-"}},
		{[]string{"--db", "--dot", "--json", "x"}, []string{"--db", "--dot", "--json=x"}},
		{[]string{"--sqlite", "out.db", "--min-weight", "3", "--dot"}, []string{"--sqlite", "out.db", "--min-weight", "3", "--dot=-"}},
		{[]string{"--json", "a", "b"}, []string{"--json=a", "b"}},
		{[]string{"--", "--dot"}, []string{"--", "--dot"}},
		{[]string{"--sqlite", "--dot"}, []string{"--sqlite=", "--dot=-"}},
		{[]string{"--sqlite"}, []string{"--sqlite="}},
		{[]string{"--sqlite", "-x"}, []string{"--sqlite", "-x"}}, // refused by parseFlags, naming --sqlite
	} {
		isFlag := func(arg string) bool { return arg == "--dot" || arg == "--json" }
		if got := exportArgs(tc.in, isFlag); !slices.Equal(got, tc.want) {
			t.Errorf("exportArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func readHead(t *testing.T, path string, n int) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b[:min(n, len(b))])
}

// TestBigMapNote: an HTML map beyond what a browser draws says so and
// names the exports to use instead; one within says nothing.
func TestBigMapNote(t *testing.T) {
	if n := bigMapNote(mapComfort); n != "" {
		t.Errorf("a map of %d hosts: %q, want nothing", mapComfort, n)
	}
	n := bigMapNote(1_000_000)
	for _, want := range []string{"1000000 hosts", "--top 20000", "--gexf"} {
		if !strings.Contains(n, want) {
			t.Errorf("the note on a million hosts lacks %q: %q", want, n)
		}
	}
}
