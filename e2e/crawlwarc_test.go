package e2e_test

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
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
	t.Parallel()
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
	if r := weaver(t, dir, "check", "--db", db, "--warc", warcs); r.code != 0 || !strings.Contains(r.stdout, "note: the WARC files were not compared with an import: hosts were crawled more than once") {
		t.Fatalf("check --warc after the re-crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
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
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 61, Latency: 3 * time.Millisecond, RobotsDisallowEvery: -1})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	warcs := filepath.Join(dir, "warcs")
	args := crawlArgs(srv, db, "--max-depth", "0", "--max-crawls-per-node", "1", "--warc", warcs)
	killAndResume(t, dir, db, args, w.Seed(), func(round int) time.Duration {
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
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 150, Seed: 73, RobotsDisallowEvery: -1, CrawlDelayEvery: -1})
	srv := startWeb(t, w)
	dir := t.TempDir()
	warcs := filepath.Join(dir, "warcs")
	if r := fixture(t, dir, crawlArgs(srv, filepath.Join(dir, "c.bolt"), "--max-depth", "0", "--max-crawls-per-node", "1", "--warc", warcs, w.Seed())...); r.code != 0 {
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

// warcRecords reads every finished WARC file in dir with weaver's reader
// and returns how many records of each WARC-Type they hold ({} for no
// file); it fails the test on any record that cannot be read.
func warcRecords(t *testing.T, dir string) map[string]int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	return warcFileRecords(t, files)
}

// warcFileRecords is warcRecords of the files given.
func warcFileRecords(t *testing.T, files []string) map[string]int {
	t.Helper()
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
			out[rec.Header("WARC-Type")]++
		}
		r.Close()
	}
	return out
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestCrawlWARC_ResumeKeepsArchiving is issue 26's resumed --warc crawl:
// `weaver crawl --warc warcs` (a relative directory), SIGKILL mid-crawl,
// then a bare `weaver crawl` keeps writing records into the same
// directory, and every page crawled has its record (weaver check agrees);
// a resume from another working directory finds it too (it is stored
// absolute). With the directory gone, a resume is refused naming it, and
// the store is left as it was; with --no-warc, the log says so in one
// line and no record is written, by that run nor by the next.
func TestCrawlWARC_ResumeKeepsArchiving(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 120, Seed: 67, Latency: 20 * time.Millisecond, RobotsDisallowEvery: -1})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "weaver.bolt")
	warcs := filepath.Join(dir, "warcs")
	recordFor := func(t *testing.T) {
		t.Helper()
		got := warcResponses(t, warcs)
		missing := 0
		for h, n := range nodes(t, db) {
			if n.CrawlCount > 0 && got["http://"+h+"/"] == 0 {
				missing++
				if missing <= 5 {
					t.Errorf("%s is crawled in the store but has no response record", h)
				}
			}
		}
		if r := weaver(t, dir, "check", "--db", db); r.code != 0 {
			t.Errorf("check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}

	// Killed once its WARC file holds some pages (not by a timer: on a
	// loaded machine a timer may kill it before it queued its seed).
	p := start(t, dir, append(crawlArgs(srv, db, "--max-depth", "0", "--max-crawls-per-node", "1", "--warc", "warcs"), w.Seed())...)
	p.poll(t, "some pages in the WARC file", func() bool {
		open, _ := filepath.Glob(filepath.Join(warcs, "*.warc.gz.open"))
		for _, f := range open {
			if fi, err := os.Stat(f); err == nil && fi.Size() > 20000 {
				return true
			}
		}
		return false
	})
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.wait(t)
	if set := statusSettings(t, dir, db); set["warc_dir"] != warcs {
		t.Fatalf("stored warc_dir %v, want the absolute %s", set["warc_dir"], warcs)
	}
	before := warcRecords(t, warcs)

	// A bare resume, in the same working directory.
	r := weaver(t, dir, "crawl")
	if r.code != 0 || !strings.Contains(r.stdout, "Resuming crawl in weaver.bolt") {
		t.Fatalf("bare resume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if l := settingLines(r.stdout); len(l) != 0 {
		t.Errorf("a bare resume printed setting changes: %q", l)
	}
	if !regexp.MustCompile(`(?m)^\[INFO\] WARC: \d+ files?, \d+ records?, \d+ bytes in ` + regexp.QuoteMeta(warcs) + `$`).MatchString(r.stdout) {
		t.Errorf("the resume does not say it wrote WARC into %s:\n%s", warcs, r.stdout)
	}
	m := metrics(t, db+".metrics") // where the crawl's go: metrics_path is remembered
	if m.TerminationReason != "queue_empty" || m.PagesFetched == 0 {
		t.Fatalf("bare resume: %s, %d pages fetched; want a crawl to the end that fetched pages", m.TerminationReason, m.PagesFetched)
	}
	resumed := warcRecords(t, warcs)
	if resumed["response"] <= before["response"] {
		t.Errorf("the resume fetched %d pages and wrote no response record (%v before, %v after)", m.PagesFetched, before, resumed)
	}
	storetest.SameGraph(t, edges(t, db), w.ExpectedEdges(10, excluded))
	recordFor(t)

	// The directory gone: refused, naming it; the store is not touched.
	moved := warcs + ".moved"
	if err := os.Rename(warcs, moved); err != nil {
		t.Fatal(err)
	}
	storeBefore, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	r = weaver(t, dir, "crawl", "--max-crawls-per-node", "2")
	if r.code != 2 || !strings.Contains(r.stderr, warcs) || !strings.Contains(r.stderr, "does not exist") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("resume with the WARC directory gone: exit %d, want 2 and one line naming %s\n%s%s", r.code, warcs, r.stdout, r.stderr)
	}
	if after, _ := os.ReadFile(db); !bytes.Equal(after, storeBefore) {
		t.Error("the refused resume changed the store")
	}
	if _, err := os.Stat(warcs); err == nil {
		t.Error("the refused resume created the WARC directory")
	}
	if err := os.Rename(moved, warcs); err != nil {
		t.Fatal(err)
	}

	// A resume from another working directory writes into the stored one.
	other := t.TempDir()
	r = weaver(t, other, "crawl", "--db", db, "--max-crawls-per-node", "2", "--max-pages", "20", "--quiet", w.Seed())
	if r.code != 0 {
		t.Fatalf("resume from %s: exit %d\n%s%s", other, r.code, r.stdout, r.stderr)
	}
	again := warcRecords(t, warcs)
	if sum(again) <= sum(resumed) {
		t.Errorf("the resume from another directory wrote no record into %s: %v, then %v", warcs, resumed, again)
	}
	if entries, _ := os.ReadDir(other); len(entries) != 0 {
		t.Errorf("the resume from another directory wrote there: %v (its metrics go where the crawl's do)", entries)
	}
	recordFor(t)

	// --no-warc: one line, no record, and the next resume archives no more.
	r = weaver(t, dir, "crawl", "--no-warc", "--max-crawls-per-node", "3", "--max-pages", "20", "--quiet", w.Seed())
	want := []string{
		"[INFO] Setting max_crawls_per_node: 2 → 3, by flag --max-crawls-per-node",
		"[INFO] Setting warc_dir: " + warcs + " → (none), by flag --no-warc",
	}
	if l := settingLines(r.stdout); r.code != 0 || strings.Join(l, "\n") != strings.Join(want, "\n") {
		t.Errorf("--no-warc: exit %d, setting lines\n%q\nwant\n%q\n%s", r.code, l, want, r.stderr)
	}
	if m := metrics(t, db+".metrics"); m.PagesFetched == 0 {
		t.Fatal("the --no-warc resume fetched no page: the test proved nothing")
	}
	if strings.Contains(r.stdout, "WARC:") {
		t.Errorf("--no-warc wrote WARC:\n%s", r.stdout)
	}
	r = weaver(t, dir, "crawl", "--max-crawls-per-node", "4", "--max-pages", "20", "--quiet", w.Seed())
	if m := metrics(t, db+".metrics"); r.code != 0 || m.PagesFetched == 0 {
		t.Fatalf("resume after --no-warc: exit %d, %d pages fetched\n%s", r.code, m.PagesFetched, r.stderr)
	}
	if got := warcRecords(t, warcs); sum(got) != sum(again) {
		t.Errorf("records after --no-warc: %v, want the %v before it", got, again)
	}
	if set := statusSettings(t, dir, db); set["warc_dir"] != "" {
		t.Errorf("stored warc_dir %v after --no-warc, want none", set["warc_dir"])
	}
	// The records written before stay checked.
	if r := weaver(t, dir, "check", "--db", db); r.code != 0 {
		t.Errorf("check after --no-warc: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestCrawlWARC_KillImport is issue 42's archive after any stop: a --warc
// crawl killed (SIGKILL) at random instants, again and again, then
// resumed to its end: its WARC files, imported into a fresh store, give
// the crawl's graph weight for weight, and hold each host's home page
// once (a page fetched before a kill and again after it used to be in
// the archive twice).
func TestCrawlWARC_KillImport(t *testing.T) {
	t.Parallel() // it mostly waits for the fake web
	w := fakeweb.New(fakeweb.Config{Hosts: 400, Seed: 83, Latency: 10 * time.Millisecond, RobotsDisallowEvery: -1})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	warcs := filepath.Join(dir, "warcs")
	args := crawlArgs(srv, db, "--max-depth", "0", "--max-crawls-per-node", "1", "--warc", warcs, "--warc-max-size", "300000")
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 42))
	t.Logf("kill instants from seed %d", seed)
	const wantKills = 12
	kills := 0
	for round := 0; ; round++ {
		a := args
		if !seeded(t, db) {
			a = append(slices.Clone(args), w.Seed())
		}
		d := time.Duration(0)
		if kills < wantKills {
			d = time.Duration(80+rng.IntN(420)) * time.Millisecond
		}
		signalled, err := interrupt(t, dir, a, d, syscall.SIGKILL)
		if signalled {
			kills++
			continue
		}
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if m := metrics(t, db+".metrics"); m.TerminationReason == "queue_empty" {
			break
		}
	}
	if kills < 10 {
		t.Fatalf("only %d kills landed before the crawl ended: the test wants 10", kills)
	}
	crawled := edges(t, db)
	storetest.SameGraph(t, crawled, w.ExpectedEdges(10, excluded))
	homes := warcResponses(t, warcs)
	twice := 0
	for u, n := range homes {
		if strings.HasSuffix(u, "/") && !strings.HasSuffix(u, "/robots.txt") && n > 1 {
			twice++
			if twice <= 5 {
				t.Errorf("%s: %d response records", u, n)
			}
		}
	}
	fresh := filepath.Join(dir, "imported.bolt")
	if r := fixture(t, dir, "import", "--db", fresh, "--quiet", warcs); r.code != 0 {
		t.Fatalf("import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	imported := edges(t, fresh)
	storetest.SameGraph(t, imported, crawled)
	weight := 0
	for _, n := range crawled {
		weight += n
	}
	t.Logf("%d kills; crawl %d edges, weight %d; import %d edges; %d home pages twice in the archive", kills, len(crawled), weight, len(imported), twice)

	// weaver check --warc agrees, and notices files that do not: records
	// past the last commit (an earlier file's again at the end of the
	// last one), and pages archived twice (a copy of the first file).
	if r := weaver(t, dir, "check", "--db", db, "--warc", warcs); r.code != 0 {
		t.Fatalf("check --warc: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(warcs, "w-*.warc.gz"))
	slices.Sort(files)
	if len(files) < 2 {
		t.Fatalf("want rotated files, got %v", files)
	}
	first, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	last := files[len(files)-1]
	fi, _ := os.Stat(last)
	f, err := os.OpenFile(last, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(first)
	f.Close()
	r := weaver(t, dir, "check", "--db", db, "--warc", warcs)
	if r.code != 1 || !strings.Contains(r.stdout, "bytes past the store's last commit") ||
		!strings.Contains(r.stdout, "the store is whole") || strings.Contains(r.stdout, "--repair --db") ||
		!strings.Contains(r.stderr, ": 1 problem found") {
		t.Errorf("check --warc with records past the last commit: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	os.Truncate(last, fi.Size())
	copied := filepath.Join(warcs, "w-20000101000000-00000.warc.gz")
	if err := os.WriteFile(copied, first, 0o644); err != nil {
		t.Fatal(err)
	}
	r = weaver(t, dir, "check", "--db", db, "--warc", warcs)
	if r.code != 1 || !strings.Contains(r.stdout, "weight 2 in the WARC files, 1 in the store") {
		t.Errorf("check --warc with pages archived twice: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestCrawlWARC_InterruptKeepsRobots: a --warc crawl stopped by SIGINT
// while hosts wait between their robots.txt and their page (the delay)
// keeps those robots.txt records in the store, and their exchanges in the
// archive: after the resume every robots.txt the store caches, and so
// judged a page by, is in the WARC files (weaver check --warc compares
// them), each once.
func TestCrawlWARC_InterruptKeepsRobots(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 400, Seed: 7, Topics: 8, Latency: 5 * time.Millisecond, Jitter: 10 * time.Millisecond})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	warcs := filepath.Join(dir, "warcs")
	args := crawlArgs(srv, db, "--max-depth", "0", "--max-crawls-per-node", "1", "--warc", warcs, "--workers", "8")
	signalled, err := interrupt(t, dir, append(slices.Clone(args), "--delay", "400ms", w.Seed()), 2500*time.Millisecond, syscall.SIGINT)
	if !signalled || err != nil {
		t.Fatalf("the first run was to be interrupted: signalled %v, %v", signalled, err)
	}
	if r := weaver(t, dir, args...); r.code != 0 {
		t.Fatalf("resume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := weaver(t, dir, "check", "--db", db, "--warc", warcs); r.code != 0 {
		t.Fatalf("check --warc: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	robots := 0
	for u, n := range warcResponses(t, warcs) {
		if strings.HasSuffix(u, "/robots.txt") {
			robots++
			if n > 1 {
				t.Errorf("%s: %d response records, want 1", u, n)
			}
		}
	}
	var cached int
	s, err := kv.Open(db, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	s.View(func(tx *kv.Tx) error {
		return crawl.ForEachRobots(tx, func(string, time.Time) error { cached++; return nil })
	})
	s.Close()
	if robots < cached || cached < 300 {
		t.Errorf("%d robots.txt exchanges archived, %d cached by the store (want every one, of about 400 hosts)", robots, cached)
	}
}
