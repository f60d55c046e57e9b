package e2e_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/internal/tooltest"
)

// crossTarget is an ARM Linux build of weaver run under qemu-user.
type crossTarget struct {
	goarch  string
	cc      string // Debian's cross compiler, for cgo (SQLite)
	qemu    string
	sysroot string // where qemu finds the target's dynamic loader and libc
	pkgs    string // the Debian packages that provide all of the above
}

var (
	arm64 = crossTarget{"arm64", "aarch64-linux-gnu-gcc", "qemu-aarch64-static", "/usr/aarch64-linux-gnu",
		"gcc-aarch64-linux-gnu qemu-user-static"}
	armv7 = crossTarget{"arm", "arm-linux-gnueabihf-gcc", "qemu-arm-static", "/usr/arm-linux-gnueabihf",
		"gcc-arm-linux-gnueabihf qemu-user-static"}
)

// need skips the test when the cross tools are missing, or fails it in CI
// (CI=true), where .ci/run installs them.
func (c crossTarget) need(t *testing.T) {
	t.Helper()
	var missing []string
	for _, tool := range []string{c.cc, c.qemu, "sqlite3"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if _, err := os.Stat(filepath.Join(c.sysroot, "lib")); err != nil {
		missing = append(missing, c.sysroot)
	}
	if len(missing) == 0 {
		return
	}
	msg := fmt.Sprintf("missing %s: apt-get install %s sqlite3", strings.Join(missing, ", "), c.pkgs)
	tooltest.Missing(t, "%s", msg)
}

// build compiles weaver for the target as make cross does (same flags, so
// the two share Go's build cache) into dir.
func (c crossTarget) build(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "weaver-linux-"+c.goarch)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, "../cmd/weaver")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "GOOS=linux", "GOARCH="+c.goarch, "GOARM=7", "CC="+c.cc)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cross build for %s: %v\n%s", c.goarch, err, b)
	}
	return out
}

// buildNative compiles weaver for this machine with the flags of build and
// no race detector, for a fair throughput comparison.
func buildNative(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "weaver-native")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, "../cmd/weaver")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("native build: %v\n%s", err, b)
	}
	return out
}

// runBin runs a weaver binary, under qemu when c is not nil, in dir.
func runBin(t *testing.T, c *crossTarget, bin, dir string, args ...string) run {
	t.Helper()
	name, argv := bin, args
	if c != nil {
		name, argv = c.qemu, append([]string{"-L", c.sysroot, bin}, args...)
	}
	r, _ := execute(t, 5*time.Minute, dir, name, argv...)
	if r.code != 0 {
		t.Fatalf("%s %s: exit %d\n%s%s", filepath.Base(bin), strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// sqliteCount runs a COUNT query with the sqlite3 shell.
func sqliteCount(t *testing.T, db, query string) int {
	t.Helper()
	out, err := exec.Command("sqlite3", db, query).CombinedOutput()
	if err != nil {
		t.Fatalf("sqlite3 %s: %v\n%s", query, err, out)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("sqlite3 %s: %q", query, out)
	}
	return n
}

// TestCross_Arm64UnderQemu is the Raspberry Pi test: the linux/arm64
// binary, under qemu-user, crawls the fake internet (served by this amd64
// process) and exports SQLite; the store it wrote is then resumed to the
// end by the amd64 binary, checked, and compared with the ground truth.
// It logs the arm64 binary's crawl throughput under emulation against the
// native binary's on the same crawl (a figure, not a target).
func TestCross_Arm64UnderQemu(t *testing.T) {
	arm64.need(t)
	bins := t.TempDir()
	armBin := arm64.build(t, bins)
	nativeBin := buildNative(t, bins)

	// No Crawl-delay hosts: the throughput figure measures weaver, not waits.
	w := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 31, CrawlDelayEvery: -1})
	srv := startWeb(t, w)
	dir := t.TempDir()
	firstLeg := []string{"--max-depth", "3", "--max-crawls-per-node", "1", w.Seed()}

	start := time.Now()
	runBin(t, &arm64, armBin, dir, crawlArgs(srv, "pi.bolt", firstLeg...)...)
	armTime := time.Since(start)
	armRate := metrics(t, filepath.Join(dir, "pi.bolt.metrics"))
	if r := runBin(t, &arm64, armBin, dir, "check", "--db", "pi.bolt"); !strings.HasPrefix(r.stdout, "ok: ") {
		t.Errorf("check under qemu: %s", r.stdout)
	}
	piEdges := edges(t, filepath.Join(dir, "pi.bolt"))
	runBin(t, &arm64, armBin, dir, "export", "--db", "pi.bolt", "--sqlite", "pi.db")
	if got := sqliteCount(t, filepath.Join(dir, "pi.db"), "SELECT COUNT(*) FROM edges"); got != len(piEdges) || got == 0 {
		t.Errorf("SQLite export from arm64: %d edges, the store has %d", got, len(piEdges))
	}
	if out, err := exec.Command("sqlite3", filepath.Join(dir, "pi.db"), "PRAGMA integrity_check").CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Errorf("integrity_check: %v %s", err, out)
	}

	// The same first leg natively, for the throughput figure.
	start = time.Now()
	runBin(t, nil, nativeBin, dir, crawlArgs(srv, "native.bolt", firstLeg...)...)
	nativeTime := time.Since(start)
	nativeRate := metrics(t, filepath.Join(dir, "native.bolt.metrics"))
	storetest.SameGraph(t, piEdges, edges(t, filepath.Join(dir, "native.bolt")))
	t.Logf("first leg, %d pages: arm64 under qemu %.1f pages/s (%v), native amd64 %.1f pages/s (%v): %.0f%% of native",
		armRate.PagesFetched, armRate.PagesPerSecond, armTime.Round(time.Millisecond),
		nativeRate.PagesPerSecond, nativeTime.Round(time.Millisecond), 100*armRate.PagesPerSecond/nativeRate.PagesPerSecond)

	// The amd64 binary resumes the store the arm64 one wrote, to the end.
	runBin(t, nil, nativeBin, dir, crawlArgs(srv, "pi.bolt", "--max-depth", "0", "--max-crawls-per-node", "1", w.Seed())...)
	if r := runBin(t, nil, nativeBin, dir, "check", "--db", "pi.bolt"); !strings.HasPrefix(r.stdout, "ok: ") {
		t.Errorf("native check: %s", r.stdout)
	}
	storetest.SameGraph(t, edges(t, filepath.Join(dir, "pi.bolt")), w.ExpectedEdges(10, excluded))
}

// TestCross_ArmV7UnderQemu: the 32-bit binary (Pi 2 and 32-bit Raspberry
// Pi OS) crawls, checks and exports under qemu-arm, and the amd64 binary
// reads what it wrote.
func TestCross_ArmV7UnderQemu(t *testing.T) {
	armv7.need(t)
	bin := armv7.build(t, t.TempDir())
	w := fakeweb.Loop3()
	srv := startWeb(t, w)
	dir := t.TempDir()
	if r := runBin(t, &armv7, bin, dir, "version"); !strings.HasPrefix(r.stdout, "weaver ") {
		t.Errorf("version: %q", r.stdout)
	}
	runBin(t, &armv7, bin, dir, crawlArgs(srv, "pi.bolt", w.Seed())...)
	runBin(t, &armv7, bin, dir, "check", "--db", "pi.bolt")
	runBin(t, &armv7, bin, dir, "export", "--db", "pi.bolt", "--sqlite", "pi.db")
	if got := sqliteCount(t, filepath.Join(dir, "pi.db"), "SELECT COUNT(*) FROM edges"); got != 3 {
		t.Errorf("SQLite export from armv7: %d edges, want 3", got)
	}
	want := map[[2]string]int{{"a.test", "b.test"}: 1, {"b.test", "c.test"}: 1, {"c.test", "a.test"}: 1} // one fetch of a host per crawl (issue 27)
	storetest.SameGraph(t, edges(t, filepath.Join(dir, "pi.bolt")), want)
}
