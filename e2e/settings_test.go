package e2e_test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// settingLines returns the "Setting KEY: …" lines of a crawl's output.
func settingLines(out string) []string {
	return regexp.MustCompile(`(?m)^\[INFO\] Setting .*$`).FindAllString(out, -1)
}

// statusSettings runs weaver status --json on db and returns its settings.
func statusSettings(t *testing.T, dir, db string) map[string]any {
	t.Helper()
	r := weaver(t, dir, "status", "--db", db, "--json")
	if r.code != 0 {
		t.Fatalf("status --json: exit %d\n%s", r.code, r.stderr)
	}
	var rep struct {
		Store struct {
			Settings map[string]any `json:"settings"`
		} `json:"store"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("status --json: %v\n%s", err, r.stdout)
	}
	return rep.Store.Settings
}

// TestCrawl_Settings: a crawl started with --max-outbound-links 3 and
// stopped (by --max-pages, a budget that is not remembered) is resumed by
// a bare `weaver crawl` with 3 links a page, not the default 10; a flag
// given on resume is reported in one line and stored; weaver status shows
// the settings; weaver merge warns of inputs crawled under different
// settings; a store without settings (an older weaver's) still resumes,
// and gets them.
func TestCrawl_Settings(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 11})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "weaver.bolt")

	r := weaver(t, dir, crawlArgs(srv, db, "--max-depth", "0", "--max-crawls-per-node", "1", "--max-outbound-links", "3", "--max-pages", "10", w.Seed())...)
	if r.code != 0 {
		t.Fatalf("first crawl: exit %d\n%s", r.code, r.stderr)
	}
	if m := metrics(t, db+".metrics"); m.TerminationReason != "max_pages" {
		t.Fatalf("first crawl ended %q, want max_pages (the test needs a crawl left to resume)", m.TerminationReason)
	}
	if l := settingLines(r.stdout); len(l) != 0 {
		t.Errorf("a new crawl printed setting changes: %q", l)
	}

	// A bare resume: no seed, no flag. It needs the stored connect_to to
	// reach the fake web at all, and crawls to the end with 3 links a page.
	r = weaver(t, dir, "crawl")
	if r.code != 0 || !strings.Contains(r.stdout, "Resuming crawl in weaver.bolt") {
		t.Fatalf("bare resume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if l := settingLines(r.stdout); len(l) != 0 {
		t.Errorf("a bare resume printed setting changes: %q", l)
	}
	if m := metrics(t, db+".metrics"); m.TerminationReason != "queue_empty" { // metrics_path is remembered
		t.Errorf("bare resume ended %q, want queue_empty", m.TerminationReason)
	}
	got := edges(t, db)
	out := map[string]int{}
	for e := range got {
		out[e[0]]++
	}
	for h, n := range out {
		if n > 3 {
			t.Errorf("%s has %d outbound edges, the crawl's max_outbound_links is 3", h, n)
		}
	}
	storetest.SameGraph(t, got, w.ExpectedEdges(3, excluded))

	// A flag on resume changes one setting: one line, and it is stored.
	r = weaver(t, dir, "crawl", "--max-depth", "7", "--quiet")
	if r.code != 0 {
		t.Fatalf("resume --max-depth 7: exit %d\n%s", r.code, r.stderr)
	}
	want := []string{"[INFO] Setting max_depth: 0 (no limit) → 7, by flag --max-depth"}
	if l := settingLines(r.stdout); strings.Join(l, "\n") != strings.Join(want, "\n") {
		t.Errorf("resume --max-depth 7 printed\n%q\nwant\n%q", l, want)
	}
	if r = weaver(t, dir, "crawl", "--quiet"); r.code != 0 || len(settingLines(r.stdout)) != 0 {
		t.Errorf("the resume after: exit %d, setting lines %q (max_depth 7 should be stored)", r.code, settingLines(r.stdout))
	}
	set := statusSettings(t, dir, db)
	if set["max_depth"] != 7.0 || set["max_outbound_links"] != 3.0 || set["max_crawls_per_node"] != 1.0 {
		t.Errorf("status --json settings: %v", set)
	}
	if _, ok := set["max_pages"]; ok {
		t.Errorf("max_pages, a budget of one run, is stored: %v", set)
	}
	r = weaver(t, dir, "status", "--db", db)
	for _, line := range []string{`(?m)^  max_depth +7$`, `(?m)^  max_outbound_links +3$`, `(?m)^  connect_to +` + regexp.QuoteMeta(srv.ConnectTo()) + `$`} {
		if !regexp.MustCompile(line).MatchString(r.stdout) {
			t.Errorf("status lacks %s\n%s", line, r.stdout)
		}
	}

	// Another crawl, with the default 10 links a page and no depth limit.
	other := filepath.Join(dir, "other.bolt")
	if r = weaver(t, dir, crawlArgs(srv, other, "--max-depth", "0", "--max-pages", "5", w.Seed())...); r.code != 0 {
		t.Fatalf("other crawl: exit %d\n%s", r.code, r.stderr)
	}
	all := filepath.Join(dir, "all.bolt")
	r = weaver(t, dir, "merge", "-o", all, db, other)
	if r.code != 0 {
		t.Fatalf("merge: exit %d\n%s", r.code, r.stderr)
	}
	warn := "weaver merge: warning: the stores were crawled under different settings: max_depth 7 (" + db + "), 0 (no limit) (" + other + "); " +
		"max_crawls_per_node 1 (" + db + "), 3 (" + other + "); max_outbound_links 3 (" + db + "), 10 (" + other + "); " + all + " keeps " + db + "'s"
	if !strings.Contains(r.stderr, warn) || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("merge stderr\n%s\nwant one line with\n%s", r.stderr, warn)
	}
	if set := statusSettings(t, dir, all); set["max_outbound_links"] != 3.0 {
		t.Errorf("merged store's settings: %v, want the first input's", set)
	}
	if r = weaver(t, dir, "merge", "-o", filepath.Join(dir, "same.bolt"), db, all); r.code != 0 || r.stderr != "" {
		t.Errorf("merge of stores crawled under the same settings: exit %d, stderr %q", r.code, r.stderr)
	}

	// A store of an older weaver, without the settings record.
	s, err := kv.Open(other, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx *kv.Tx) error { return tx.Delete(kv.BucketMeta, []byte(crawl.MetaSettings)) }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if set := statusSettings(t, dir, other); set != nil {
		t.Fatalf("settings of a store without the record: %v", set)
	}
	if r = weaver(t, dir, "status", "--db", other); r.code != 0 || !strings.Contains(r.stdout, "(none stored") {
		t.Errorf("status of an old store: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = weaver(t, dir, crawlArgs(srv, other, "--max-outbound-links", "4")...)
	if r.code != 0 || !strings.Contains(r.stdout, "No settings stored (a store of an older weaver)") || len(settingLines(r.stdout)) != 0 {
		t.Fatalf("resume of an old store: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if set := statusSettings(t, dir, other); set["max_outbound_links"] != 4.0 || set["max_depth"] != 5.0 {
		t.Errorf("old store's settings after a resume: %v, want the run's (max_outbound_links 4, default max_depth 5)", set)
	}
}
