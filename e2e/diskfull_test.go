package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/internal/tooltest"
	"github.com/weaver-crawler/weaver/kv"
)

// mountTmpfs mounts a tmpfs of size at dir (root only), or skips — fails
// under CI=true, where .ci/run runs as root.
func mountTmpfs(t *testing.T, dir, size string) func(size string) {
	t.Helper()
	return tooltest.Tmpfs(t, dir, size)
}

// TestDiskFull fills a small file system mid-crawl: weaver stops with a
// clear error, the store stays readable and consistent, and once space
// returns the crawl resumes to the graph an uninterrupted crawl gives.
func TestDiskFull(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 600, Seed: 31, RobotsDisallowEvery: -1})
	srv := startWeb(t, w)
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	os.Mkdir(small, 0o755)
	mountTmpfs(t, small, "256k")
	db := filepath.Join(small, "w.bolt")
	args := []string{"crawl", "--db", db, "--metrics", filepath.Join(dir, "metrics.log"), "--connect-to", srv.ConnectTo(),
		"--delay", "0", "--quiet", "--ignore-robots", "--max-depth", "0", "--max-crawls-per-node", "1"}
	r := weaver(t, dir, append(args, w.Seed())...)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (store write failed)\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "no space left on device") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("want one clear line naming the full disk, got:\n%s", r.stderr)
	}
	if m := metrics(t, filepath.Join(dir, "metrics.log")); m.TerminationReason != "error" || m.Error == "" {
		t.Errorf("metrics: reason %q error %q", m.TerminationReason, m.Error)
	}
	s, err := kv.Open(db, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("store unreadable after disk full: %v", err)
	}
	if err := storetest.CheckAll(s); err != nil {
		t.Errorf("store inconsistent after disk full: %v", err)
	}
	s.Close()

	if out, err := exec.Command("mount", "-o", "remount,size=64m", small).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
	if r := weaver(t, dir, args...); r.code != 0 {
		t.Fatalf("resume after space returned: exit %d\n%s", r.code, r.stderr)
	}
	storetest.SameGraph(t, edges(t, db), w.ExpectedEdges(10, excluded))
}
