package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

// weaverStdin is weaver with stdin.
func weaverStdin(t *testing.T, dir, stdin string, args ...string) run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, weaverBin, args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, cleanEnv(), strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := run{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("weaver %v: %v", args, err)
	}
	return r
}

// noFiles fails the test if dir holds anything but keep: a refused start
// creates nothing.
func noFiles(t *testing.T, dir string, keep ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.Contains(strings.Join(keep, "\x00")+"\x00", e.Name()+"\x00") {
			t.Errorf("a refused start left %s", e.Name())
		}
	}
}

// TestCLI_FlagsAfterArguments: a crawl's flags may follow its seed (and
// "--" ends them), as diff's follow its stores.
func TestCLI_FlagsAfterArguments(t *testing.T) {
	t.Parallel()
	w := fakeweb.Loop3()
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	// Flags after the seed, a boolean among them followed by a flag with
	// a value.
	args := append([]string{"crawl", w.Seed()}, crawlArgs(srv, db, "--ignore-robots", "--max-depth", "1")[1:]...)
	r := weaverOK(t, dir, args...)
	got := nodes(t, db)
	if got["a.test"].CrawlCount != 1 || got["b.test"].CrawlCount != 1 || got["c.test"].CrawlCount != 0 {
		t.Errorf("crawl SEED --max-depth 1: crawl counts a %d b %d c %d, want 1 1 0 (depth 1 is the limit)\n%s",
			got["a.test"].CrawlCount, got["b.test"].CrawlCount, got["c.test"].CrawlCount, r.stdout)
	}
	// After "--", a flag is an argument: here a seed, refused as one.
	r = weaver(t, dir, "crawl", "--db", filepath.Join(dir, "x.bolt"), "--", "--max-depth", "2")
	if r.code != 2 || !strings.Contains(r.stderr, `seed "--max-depth" is not an http(s) URL`) {
		t.Errorf("crawl -- --max-depth: exit %d, %q; want 2 and the seed refused", r.code, r.stderr)
	}
	// A flag that wants a value, last: said so, not given "--".
	r = weaver(t, dir, "crawl", w.Seed(), "--max-depth")
	if r.code != 2 || !strings.Contains(r.stderr, "flag needs an argument: --max-depth") {
		t.Errorf("crawl SEED --max-depth: exit %d, %q", r.code, r.stderr)
	}
	// Every command: rank's --json after nothing, status's --db last.
	r = weaver(t, dir, "status", "--json", "--db", db)
	r2 := weaver(t, dir, "status", "--db", db, "--json")
	for _, out := range []string{r.stdout, r2.stdout} {
		if !strings.HasPrefix(out, "{") || !strings.Contains(out, `"max_depth": 1,`) {
			t.Errorf("status --json --db / --db --json: not the store's JSON:\n%s", out)
		}
	}
	if r.code != 0 || r2.code != 0 {
		t.Errorf("status --json --db / --db --json: exit %d %d\n%s\n%s", r.code, r2.code, r.stdout, r2.stdout)
	}
}

// TestCLI_DidYouMean: a misspelt command, flag or WEAVER_ variable is
// named with what was likely meant; the variable is a warning, the crawl
// goes on, and weaver's own non-key variables are not warned about.
func TestCLI_DidYouMean(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"crwal"}, `weaver: unknown command "crwal": did you mean crawl?`},
		{[]string{"exprot", "--dot"}, `did you mean export?`},
		{[]string{"crawl", "--max-dept", "2", "http://a.test/"}, "weaver crawl: unknown flag --max-dept: did you mean --max-depth?"},
		{[]string{"crawl", "http://a.test/", "--wokers", "2"}, "did you mean --workers?"},
		{[]string{"export", "--db", "x.bolt", "--graphm"}, "did you mean --graphml?"},
	} {
		r := weaver(t, dir, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("weaver %v: exit %d, %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	noFiles(t, dir)

	w := fakeweb.Loop3()
	srv := startWeb(t, w)
	db := filepath.Join(dir, "w.bolt")
	env := []string{"WEAVER_MAX_DEPT=1", "WEAVER_DELAY=2s", "WEAVER_TOKEN=0123456789abcdef0123456789abcdef",
		"WEAVER_BROWSER=/nowhere", "WEAVER_CPUPROFILE=", "WEAVER_MAX_PAGES=2"}
	r := weaverEnv(t, dir, env, crawlArgs(srv, db, w.Seed())...)
	wantLines := []string{
		"weaver: warning: WEAVER_DELAY is not a weaver variable, ignored: did you mean WEAVER_POLITENESS_DELAY_MS? (the environment takes config keys; --delay sets politeness_delay_ms)",
		"weaver: warning: WEAVER_MAX_DEPT is not a weaver variable, ignored: did you mean WEAVER_MAX_DEPTH?",
	}
	if got := strings.TrimSpace(r.stderr); r.code != 0 || got != strings.Join(wantLines, "\n") {
		t.Errorf("crawl with misspelt variables: exit %d, stderr\n%s\nwant\n%s", r.code, got, strings.Join(wantLines, "\n"))
	}
	if !strings.Contains(r.stdout, "2 pages fetched") { // WEAVER_MAX_PAGES is read
		t.Errorf("WEAVER_MAX_PAGES=2 not applied:\n%s", r.stdout)
	}
}

// TestCLI_DurationNeedsUnit: a bare number for a duration flag is refused
// before anything is written, for every command's duration flags; 0 and
// numbers with units are durations; the *_ms config keys stay in
// milliseconds.
func TestCLI_DurationNeedsUnit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"crawl", "--delay", "1", "http://a.test/"},
		{"crawl", "http://a.test/", "--timeout", "5"},
		{"crawl", "--retry-delay=2.5", "http://a.test/"},
		{"status", "--timeout", "10"},
		{"import", "--progress", "5", "x.warc"},
	} {
		r := weaver(t, dir, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "a duration needs a unit: 1s or 1ms") {
			t.Errorf("weaver %v: exit %d, %q; want 2 and 'a duration needs a unit: 1s or 1ms'", args, r.code, r.stderr)
		}
	}
	noFiles(t, dir)

	w := fakeweb.Loop3()
	srv := startWeb(t, w)
	db := filepath.Join(dir, "w.bolt")
	conf := filepath.Join(dir, "c.json")
	if err := os.WriteFile(conf, []byte(`{"politeness_delay_ms": 7, "retry_delay_ms": "20ms"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := weaverEnv(t, dir, []string{"WEAVER_REQUEST_TIMEOUT_MS=3000"},
		"crawl", "--db", db, "--metrics", db+".metrics", "--connect-to", srv.ConnectTo(), "--quiet", "--config", conf, "--max-pages", "1", w.Seed())
	if r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = weaverOK(t, dir, "status", "--db", db)
	for _, want := range []string{"politeness_delay_ms", "7", "3000"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("status after the keys in milliseconds: no %q in\n%s", want, r.stdout)
		}
	}
}

// TestCLI_SeedsFile: --seeds-file reads one URL a line, skipping blank
// lines and # comments, from a file or stdin; a bad line is named with
// its line number and nothing is created; a bare host is told the URL.
func TestCLI_SeedsFile(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 30, Seed: 26, RobotsDisallowEvery: -1})
	srv := startWeb(t, w)
	dir := t.TempDir()
	hosts := w.Hosts()[:5]
	var file strings.Builder
	file.WriteString("# five hosts of the fake web\n\n")
	for _, h := range hosts {
		fmt.Fprintf(&file, "  http://%s/  \n# between\n", h)
	}
	seeds := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seeds, []byte(file.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, from := range []string{"file", "stdin"} {
		db := filepath.Join(dir, from+".bolt")
		var r run
		if from == "file" {
			r = weaverOK(t, dir, crawlArgs(srv, db, "--seeds-file", seeds, "--max-depth", "1")...)
		} else {
			r = weaverStdin(t, dir, file.String(), crawlArgs(srv, db, "--seeds-file", "-", "--max-depth", "1")...)
		}
		name := map[string]string{"file": seeds, "stdin": "stdin"}[from]
		if r.code != 0 || !strings.Contains(r.stdout, "Starting crawl from 5 seeds in "+name) || !strings.Contains(r.stdout, "Queued 5 entries at depth 0") {
			t.Errorf("%s: exit %d\n%s%s", from, r.code, r.stdout, r.stderr)
		}
		got := nodes(t, db)
		for _, h := range hosts {
			if got[h].CrawlCount < 1 {
				t.Errorf("%s: seed %s not crawled", from, h)
			}
		}
	}

	bad := t.TempDir()
	for _, tc := range []struct {
		content, args, want string
	}{
		{"http://a.test/\n# c\n\nftp://x\n", "", `seeds.txt:4: "ftp://x" is not an http(s) URL`},
		{"http://a.test/\nexample.com\n", "", `seeds.txt:2: "example.com" is not an http(s) URL: did you mean https://example.com/?`},
		{"http://a.test/\nnot a url # words\n", "", `seeds.txt:2: "not a url" is not an http(s) URL`},
		{"http://a.test/\nhttp://www.facebook.com/\n", "", `seeds.txt:2: `},
		{"# nothing\n\n", "", `seeds file seeds.txt holds no seed URL`},
		{"http://a.test/\n", "example.org", `seed "example.org" is not an http(s) URL: did you mean https://example.org/?`},
	} {
		if err := os.WriteFile(filepath.Join(bad, "seeds.txt"), []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"crawl", "--seeds-file", "seeds.txt"}
		if tc.args != "" {
			args = append(args, tc.args)
		}
		r := weaver(t, bad, args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, %q; want 2 and one line with %q", tc.content, r.code, r.stderr, tc.want)
		}
		noFiles(t, bad, "seeds.txt")
	}
	r := weaverStdin(t, bad, "http://a.test/\nhttp//b.test/\n", "crawl", "--seeds-file", "-")
	if r.code != 2 || !strings.Contains(r.stderr, `stdin:2: "http//b.test/" is not an http(s) URL`) {
		t.Errorf("bad stdin: exit %d, %q", r.code, r.stderr)
	}
	noFiles(t, bad, "seeds.txt")
	// A bare host in a config file, too.
	conf := filepath.Join(bad, "c.json")
	os.WriteFile(conf, []byte(`{"seed_url": "example.com"}`), 0o644)
	r = weaver(t, bad, "crawl", "--config", conf)
	if r.code != 2 || !strings.Contains(r.stderr, "did you mean https://example.com/?") {
		t.Errorf("bare seed_url: exit %d, %q", r.code, r.stderr)
	}
}
