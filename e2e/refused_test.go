package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCrawl_RefusedStartCreatesNothing: a start refused for its seeds or
// its --warc directory leaves no store, no metrics.log and no WARC
// directory, so that the next bare 'weaver crawl' does not "resume" an
// empty store and exit 0.
func TestCrawl_RefusedStartCreatesNothing(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"seed outside --scope", []string{"--scope", `^nomatch\.test$`, "https://a.test/"}, "outside scope"},
		{"excluded seed", []string{"--exclude-host", `^a\.test$`, "https://a.test/"}, "excluded"},
		{"--warc under a file", []string{"--warc", "afile/warc", "https://a.test/"}, "warc_dir"},
		{"--warc with no parent", []string{"--warc", "/proc/weaver-none/warc", "https://a.test/"}, "warc_dir"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "afile"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			r := weaver(t, dir, append([]string{"crawl", "--delay", "0", "--quiet"}, c.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, c.want) {
				t.Errorf("exit %d, want 2 and %q\n%s", r.code, c.want, r.stderr)
			}
			if left := dirNames(t, dir); len(left) != 1 || left[0] != "afile" {
				t.Errorf("a refused start left %v", left)
			}
			// Nothing to resume.
			if r := weaver(t, dir, "crawl"); r.code != 2 || !strings.Contains(r.stderr, "nothing to crawl") {
				t.Errorf("bare crawl after the refusal: exit %d, want 2 (nothing to crawl)\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}
