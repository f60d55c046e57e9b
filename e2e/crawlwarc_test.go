package e2e_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/warc"
)

// warcResponses reads every WARC file in dir with weaver's reader and
// returns the target URIs of their response records; it fails the test
// on any record that cannot be read.
func warcResponses(t *testing.T, dir string) map[string]int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if len(files) == 0 {
		t.Fatalf("no WARC file in %s", dir)
	}
	out := map[string]int{}
	for _, f := range files {
		r, err := warc.NewReader(f, 0)
		if err != nil {
			t.Fatal(err)
		}
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", filepath.Base(f), err)
			}
			if rec.Header("WARC-Type") == "response" {
				out[rec.Header("WARC-Target-URI")]++
			}
		}
		r.Close()
	}
	return out
}

// TestCrawlWARC_RoundTrip: a crawl with --warc writes robots.txt and every
// page as records that an independent reader (warcio.js) checks digest by
// digest, and importing them into a fresh store gives the crawl's graph.
func TestCrawlWARC_RoundTrip(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 120, Seed: 59, RobotsDisallowEvery: -1, CrawlDelayEvery: -1})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	warcs := filepath.Join(dir, "warcs")
	r := weaver(t, dir, crawlArgs(srv, db, "--max-depth", "0", "--max-crawls-per-node", "1", "--warc", warcs, "--warc-max-size", "400000", w.Seed())...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	want := w.ExpectedEdges(10, excluded)
	storetest.SameGraph(t, edges(t, db), want)
	files, _ := filepath.Glob(filepath.Join(warcs, "w-*.warc.gz"))
	if len(files) < 2 {
		t.Fatalf("want rotated files named after the crawl, got %v", files)
	}
	responses := 0
	for _, rep := range warcioCheck(t, files) {
		for _, e := range rep.Errors {
			t.Errorf("%s: %s", filepath.Base(rep.File), e)
		}
		if rep.Types["warcinfo"] != 1 {
			t.Errorf("%s: %d warcinfo records", filepath.Base(rep.File), rep.Types["warcinfo"])
		}
		responses += rep.Types["response"]
	}
	// robots.txt and the home page of every host.
	if n := 2 * len(w.Hosts()); responses != n {
		t.Errorf("%d response records, want %d (robots.txt and / of %d hosts)", responses, n, len(w.Hosts()))
	}
	fresh := filepath.Join(dir, "imported.bolt")
	if r := weaver(t, dir, "import", "--db", fresh, warcs); r.code != 0 {
		t.Fatalf("import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	storetest.SameGraph(t, edges(t, fresh), want)

	// weaver status reports the files; weaver check finds every page's records.
	if r := weaver(t, dir, "status", "--db", db); r.code != 0 || !strings.Contains(r.stdout, "WARC files:") {
		t.Errorf("status: exit %d\n%s", r.code, r.stdout)
	}
	if r := weaver(t, dir, "check", "--db", db); r.code != 0 {
		t.Fatalf("check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A second crawl of the same unchanged pages writes revisits, not bodies.
	if r := weaver(t, dir, crawlArgs(srv, db, "--max-depth", "0", "--max-crawls-per-node", "2", "--warc", warcs, w.Seed())...); r.code != 0 {
		t.Fatalf("re-crawl: exit %d\n%s", r.code, r.stderr)
	}
	files, _ = filepath.Glob(filepath.Join(warcs, "w-*.warc.gz"))
	types := map[string]int{}
	for _, rep := range warcioCheck(t, files) {
		for _, e := range rep.Errors {
			t.Errorf("%s: %s", filepath.Base(rep.File), e)
		}
		for k, v := range rep.Types {
			types[k] += v
		}
	}
	if n := len(w.Hosts()); types["revisit"] != n {
		t.Errorf("re-crawl wrote %d revisit records, want one per host (%d); types %v", types["revisit"], n, types)
	}
	if r := weaver(t, dir, "check", "--db", db); r.code != 0 {
		t.Fatalf("check after the re-crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A missing WARC file is a problem weaver check names.
	if err := os.Remove(files[0]); err != nil {
		t.Fatal(err)
	}
	if r := weaver(t, dir, "check", "--db", db); r.code != 1 || !strings.Contains(r.stdout, "which is missing") {
		t.Errorf("check with a WARC file missing: exit %d\n%s", r.code, r.stdout)
	}
}

// TestCrawlWARC_KillResume: SIGKILL during a crawl with --warc, again and
// again, then resume: every page the store holds has its response record,
// and every record of every file reads whole (a torn one was cut off).
func TestCrawlWARC_KillResume(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 61, Latency: 3 * time.Millisecond, RobotsDisallowEvery: -1})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	warcs := filepath.Join(dir, "warcs")
	args := crawlArgs(srv, db, "--max-depth", "0", "--max-crawls-per-node", "1", "--warc", warcs)
	killAndResume(t, dir, db+".metrics", args, w.Seed(), func(round int) time.Duration {
		if round < 5 {
			return time.Duration(200+round*150) * time.Millisecond
		}
		return 0
	})
	storetest.SameGraph(t, edges(t, db), w.ExpectedEdges(10, excluded))
	if r := weaver(t, dir, "check", "--db", db); r.code != 0 {
		t.Errorf("check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	got := warcResponses(t, warcs)
	for h, n := range nodes(t, db) {
		if n.CrawlCount > 0 && got["http://"+h+"/"] == 0 {
			t.Errorf("%s is crawled in the store but has no response record", h)
		}
	}
}

// TestImport_Scope: an import with --scope applies it as a crawl does:
// records of other hosts are not imported, and links to them are edges
// to out_of_scope nodes.
func TestImport_Scope(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 150, Seed: 73, RobotsDisallowEvery: -1, CrawlDelayEvery: -1})
	srv := startWeb(t, w)
	dir := t.TempDir()
	warcs := filepath.Join(dir, "warcs")
	if r := weaver(t, dir, crawlArgs(srv, filepath.Join(dir, "c.bolt"), "--max-depth", "0", "--max-crawls-per-node", "1", "--warc", warcs, w.Seed())...); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s", r.code, r.stderr)
	}
	db := filepath.Join(dir, "scoped.bolt")
	const scope = `\.com$`
	r := weaver(t, dir, "import", "--db", db, "--scope", scope, "--quiet", warcs)
	if r.code != 0 || !strings.Contains(r.stdout, "out of scope") {
		t.Fatalf("import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	re := regexp.MustCompile(scope)
	out := 0
	for h, n := range nodes(t, db) {
		switch {
		case re.MatchString(h):
		case n.CrawlCount > 0:
			t.Errorf("%s is outside the scope but was imported as crawled", h)
		case n.Status == graph.StatusOutOfScope:
			out++
		default:
			t.Errorf("%s is outside the scope: status %s, want out_of_scope", h, n.Status)
		}
	}
	if out == 0 {
		t.Fatal("no host outside the scope: the test proved nothing")
	}
	for k := range edges(t, db) {
		if !re.MatchString(k[0]) {
			t.Errorf("edge %s → %s from a host outside the scope", k[0], k[1])
		}
	}
}
