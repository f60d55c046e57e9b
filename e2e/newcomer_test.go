package e2e_test

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

// TestNewcomer_CrawlLog: what a first crawl prints reads right. A failed
// fetch names its kind once ("timeout: ...", not "timeout: timeout:
// ..."); the first progress line after pages were fetched shows their
// rate, not 0 pages/s for want of an earlier sample.
func TestNewcomer_CrawlLog(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 60, Seed: 4, RobotsDisallowEvery: -1, Latency: 20 * time.Millisecond,
		Faults: map[string]fakeweb.Fault{"slow.drip.test": fakeweb.SlowDrip}})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	r := weaverEnv(t, dir, []string{"WEAVER_PROGRESS_INTERVAL_MS=400"}, "crawl", "--db", db, "--metrics", db+".metrics",
		"--connect-to", srv.ConnectTo(), "--delay", "0", "--retry-delay", "10ms", "--timeout", "1s", "--retries", "0",
		"--ignore-robots", "--max-depth", "1", w.Seed(), "http://slow.drip.test/", "http://10.0.0.1/")
	if r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	out := r.stdout + r.stderr
	for _, want := range []string{"failed to fetch slow.drip.test (timeout: ", "failed to fetch 10.0.0.1 (refused: "} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
	for _, kind := range []string{"timeout", "refused", "dns", "connect", "reset", "tls", "other"} {
		if strings.Contains(out, kind+": "+kind+":") {
			t.Errorf("the log says %q twice:\n%s", kind, out)
		}
	}
	re := regexp.MustCompile(`Queue: .* \| Pages: (\d+) .* \| ([0-9.]+) pages/s`)
	// The first progress line after a page was fetched (under load the
	// first line can come before any).
	var m []string
	for _, l := range re.FindAllStringSubmatch(out, -1) {
		if l[1] != "0" {
			m = l
			break
		}
	}
	if m == nil {
		t.Fatalf("no progress line with a page fetched:\n%s", out)
	}
	pages, _ := strconv.Atoi(m[1])
	rate, _ := strconv.ParseFloat(m[2], 64)
	if rate <= 0 {
		t.Errorf("the first progress line shows %d pages at %v pages/s: %s", pages, rate, m[0])
	}
}

// TestNewcomer_Usage: flag placeholders are names (crawl -h shows
// "-render MODE", not "-render never"), a negative --min-weight says what
// is wanted, and a count of one is singular ("imported 1 file").
func TestNewcomer_Usage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	placeholder := regexp.MustCompile(`^  -([a-z-]+) (\S+)$`)
	for _, cmd := range []string{"check", "crawl", "diff", "export", "import", "layout", "merge", "rank", "serve", "snapshot", "status"} {
		r := weaver(t, dir, cmd, "-h")
		for _, line := range strings.Split(r.stdout, "\n") {
			if m := placeholder.FindStringSubmatch(line); m != nil && strings.ToUpper(m[2]) != m[2] {
				t.Errorf("weaver %s -h: %q: the placeholder is not a name in capitals", cmd, line)
			}
		}
		if cmd == "crawl" && !strings.Contains(r.stdout, "\n  -render MODE\n") {
			t.Errorf("weaver crawl -h lacks -render MODE:\n%s", r.stdout)
		}
	}
	r := weaver(t, dir, "export", "--min-weight", "-1", "--json", "x.json")
	if r.code != 2 || strings.Contains(r.stderr, "parse error") || !strings.Contains(r.stderr, "want a whole number, 0 or more") {
		t.Errorf("--min-weight -1: exit %d, %q; want 2 and what is wanted", r.code, r.stderr)
	}

	w := importWeb(5, 3)
	srv := startWeb(t, w)
	writeWebWARC(t, w, srv, filepath.Join(dir, "warcs"), 1<<30)
	r = weaver(t, dir, "import", "--db", filepath.Join(dir, "i.bolt"), filepath.Join(dir, "warcs"))
	if r.code != 0 || !strings.HasPrefix(r.stdout, "imported 1 file (") {
		t.Errorf("import of one file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
