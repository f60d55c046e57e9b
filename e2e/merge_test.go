package e2e_test

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/internal/tooltest"
)

// fileSums returns the SHA-256 of each file.
func fileSums(t *testing.T, paths ...string) [][32]byte {
	t.Helper()
	var sums [][32]byte
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, sha256.Sum256(data))
	}
	return sums
}

// mergeInputs builds two stores of 10,000 hosts (100,000 edges each) that
// hold the same hosts with other links.
func mergeInputs(t *testing.T, dir string) []string {
	t.Helper()
	a, b := filepath.Join(dir, "a.bolt"), filepath.Join(dir, "b.bolt")
	if err := storetest.BuildBig(a, storetest.Web, 10_000); err != nil {
		t.Fatal(err)
	}
	if err := storetest.BuildBig(b, storetest.Random, 10_000); err != nil {
		t.Fatal(err)
	}
	return []string{a, b}
}

// TestMerge_Killed: weaver merge killed with SIGKILL at 3 random points
// leaves the output absent (never a part of it), the inputs as they were
// and no sorted run behind (runs are unlinked as soon as they are made;
// --sort-memory 1 makes several); the merge run again then writes a sound
// store.
func TestMerge_Killed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	inputs := mergeInputs(t, dir)
	before := fileSums(t, inputs...)
	out := filepath.Join(dir, "out", "merged.bolt")
	if err := os.Mkdir(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(54, 3))
	killed := 0
	for range 3 {
		cmd := exec.Command(weaverBin, "merge", "--sort-memory", "1", "-o", out, inputs[0], inputs[1])
		cmd.Dir, cmd.Env = dir, cleanEnv()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(50+r.IntN(600)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		if err := cmd.Wait(); err == nil {
			t.Logf("the merge ended before its kill")
			os.Remove(out)
			continue
		}
		killed++
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("after a kill the output exists (%v)", err)
		}
		for _, name := range dirNames(t, filepath.Dir(out)) {
			if strings.Contains(name, "merge-run") {
				t.Errorf("a sorted run was left behind: %s", name)
			}
		}
	}
	if killed == 0 {
		t.Fatal("no merge was killed: each ended first")
	}
	if got := fileSums(t, inputs...); got[0] != before[0] || got[1] != before[1] {
		t.Fatal("a killed merge changed an input")
	}
	weaverOK(t, dir, "merge", "--force", "--sort-memory", "1", "-o", out, inputs[0], inputs[1])
	weaverOK(t, dir, "check", "--db", out)
	// The one-pass merge against the same merge sorted in memory: the
	// same bytes (the same inputs in the same order give the same store).
	mem := filepath.Join(dir, "mem.bolt")
	weaverOK(t, dir, "merge", "-o", mem, inputs[0], inputs[1])
	if sums := fileSums(t, out, mem); sums[0] != sums[1] {
		a, b := fixture(t, dir, "export", "--db", out, "--csv", "-"), fixture(t, dir, "export", "--db", mem, "--csv", "-")
		if a.stdout != b.stdout {
			t.Errorf("merged with sorted runs and in memory, the exports differ")
		}
	}
}

// TestMerge_DiskFull: a merge whose output's file system (a 4 MB tmpfs)
// fills stops with an error that says so, exit 1, and leaves the output
// absent, nothing of its own in the directory and the inputs as they were;
// with room, the same merge then succeeds.
func TestMerge_DiskFull(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	inputs := mergeInputs(t, dir)
	before := fileSums(t, inputs...)
	small := filepath.Join(dir, "small")
	if err := os.Mkdir(small, 0o755); err != nil {
		t.Fatal(err)
	}
	resize := mountTmpfs(t, small, "4m")
	out := filepath.Join(small, "merged.bolt")
	r := weaver(t, dir, "merge", "--sort-memory", "1", "-o", out, inputs[0], inputs[1])
	if r.code != 1 || !strings.Contains(r.stderr, "no space left on device") {
		t.Fatalf("merge onto a full disk: exit %d, want 1 naming the full disk\n%s", r.code, r.stderr)
	}
	if left := dirNames(t, small); len(left) > 0 {
		t.Errorf("the failed merge left %v", left)
	}
	if got := fileSums(t, inputs...); got[0] != before[0] || got[1] != before[1] {
		t.Fatal("the failed merge changed an input")
	}
	resize("512m")
	weaverOK(t, dir, "merge", "--sort-memory", "1", "-o", out, inputs[0], inputs[1])
	weaverOK(t, dir, "check", "--db", out)
}

// memoryCgroup makes a memory control group limited to limit bytes (cgroup
// v2's memory.max, or v1's memory.limit_in_bytes) and returns the file a
// process joins it by writing its pid; it fails under CI=true where none
// can be made (.ci/run runs as root).
func memoryCgroup(t *testing.T, limit int64) string {
	t.Helper()
	name := fmt.Sprintf("weaver-%s-%d", t.Name(), os.Getpid())
	for _, c := range []struct{ root, limit string }{
		{"/sys/fs/cgroup", "memory.max"},
		{"/sys/fs/cgroup/unified", "memory.max"},
		{"/sys/fs/cgroup/memory", "memory.limit_in_bytes"},
	} {
		if _, err := os.Stat(filepath.Join(c.root, c.limit)); err != nil && c.limit == "memory.max" {
			// v2: the root has no memory.max, but lists memory among its controllers.
			if data, err := os.ReadFile(filepath.Join(c.root, "cgroup.subtree_control")); err != nil || !strings.Contains(string(data), "memory") {
				continue
			}
		}
		dir := filepath.Join(c.root, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			continue
		}
		t.Cleanup(func() {
			for range 50 {
				if os.Remove(dir) == nil {
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
		if err := os.WriteFile(filepath.Join(dir, c.limit), []byte(strconv.FormatInt(limit, 10)), 0o644); err != nil {
			continue
		}
		return filepath.Join(dir, "cgroup.procs")
	}
	tooltest.Missing(t, "cannot make a memory control group (needs root and a cgroup file system)")
	return ""
}

// TestExport_MemoryLimit: an export in a container whose memory limit is
// below what laying the graph out takes (60,000 hosts, 600,000 edges:
// layout.MemoryNeed says 120 MB; the limit is 100 MB) leaves the layout
// out with one line naming the limit and weaver layout, and writes the
// whole export, instead of being killed for memory; weaver layout stops
// with an error saying what it would take.
func TestExport_MemoryLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "big.bolt")
	if err := storetest.BuildBig(db, storetest.Web, 60_000); err != nil {
		t.Fatal(err)
	}
	procs := memoryCgroup(t, 100<<20)
	prefix := filepath.Join(dir, "g")
	r, _ := execute(t, 3*time.Minute, dir, "sh", "-c", `echo $$ > "$0" && exec "$@"`, procs,
		plainBin, "export", "--db", db, "--csv", prefix, "--no-ranks")
	if r.code != 0 {
		t.Fatalf("export under a 100 MB limit: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "weaver export: layout left out: for 60000 hosts and 600000 edges") ||
		!strings.Contains(r.stderr, "control group") || !strings.Contains(r.stderr, "weaver layout --db") {
		t.Errorf("stderr does not say the layout was left out, why and how to get it:\n%s", r.stderr)
	}
	nodesCSV, err := os.ReadFile(prefix + "-nodes.csv")
	if err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(string(nodesCSV), "\n")
	if rows := strings.Count(string(nodesCSV), "\n") - 1; rows != 60_000 || strings.Contains(header, "community") {
		t.Errorf("nodes CSV: %d rows, header %q; want 60000 rows and no layout columns", rows, header)
	}
	// weaver layout, whose whole job the layout is, says so and stops
	// before it reads the graph.
	r, _ = execute(t, 3*time.Minute, dir, "sh", "-c", `echo $$ > "$0" && exec "$@"`, procs, plainBin, "layout", "--db", db)
	if r.code != 1 || !strings.Contains(r.stderr, "laying out the graph of 60000 hosts and 600000 edges takes about") || !strings.Contains(r.stderr, "control group") {
		t.Errorf("weaver layout under a 100 MB limit: exit %d, want 1 saying what it takes and what is left\n%s", r.code, r.stderr)
	}
}
