// Package e2e runs the built weaver binary against the fake internet, the
// way a user runs it: a real process, real files, --connect-to.
package e2e_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
)

// weaverBin is the binary the tests run: built with -race when the tests
// are, or when WEAVER_E2E_RACE=1 asks for it (make test runs this package
// without -race and the weaver it runs with it: the race detector then
// watches the product, not the fake internet serving it, which costs a
// third of the suite's CPU). plainBin is always built without it, for the
// measurements of memory (the race detector's shadow memory multiplies RSS
// several times) and for the crawls that only build a fixture.
var weaverBin, plainBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "weaver-e2e-")
	if err != nil {
		panic(err)
	}
	weaverBin = filepath.Join(dir, "weaver")
	plainBin = weaverBin
	if raceEnabled || os.Getenv("WEAVER_E2E_RACE") == "1" {
		plainBin = filepath.Join(dir, "weaver-plain")
		build(plainBin)
		build(weaverBin, "-race")
	} else {
		build(weaverBin)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// build compiles cmd/weaver to out, or exits the test binary.
func build(out string, flags ...string) {
	args := append(append([]string{"build", "-o", out}, flags...), "../cmd/weaver")
	cmd := exec.Command("go", args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building weaver:", err)
		os.Exit(1)
	}
}

// run is one weaver invocation's outcome.
type run struct {
	code           int
	stdout, stderr string
}

// weaver runs the binary with args in dir and waits for it.
func weaver(t *testing.T, dir string, args ...string) run {
	t.Helper()
	r, _ := execute(t, 3*time.Minute, dir, weaverBin, args...)
	return r
}

// fixture runs the binary without the race detector, for a run that only
// builds what a test then examines (a reference crawl, a store or WARC to
// damage, export or import): the detector is for the runs under test, and
// costs ten times the CPU.
func fixture(tb testing.TB, dir string, args ...string) run {
	tb.Helper()
	r, _ := execute(tb, 3*time.Minute, dir, plainBin, args...)
	return r
}

// weaverEnv is weaver with env (NAME=value) added to the clean environment.
func weaverEnv(t *testing.T, dir string, env []string, args ...string) run {
	t.Helper()
	r, _ := executeEnv(t, 3*time.Minute, dir, env, weaverBin, args...)
	return r
}

// execute runs name with args in dir, in the tests' clean environment,
// waits at most timeout, and returns its outcome and process state.
func execute(tb testing.TB, timeout time.Duration, dir, name string, args ...string) (run, *os.ProcessState) {
	tb.Helper()
	return executeEnv(tb, timeout, dir, nil, name, args...)
}

func executeEnv(tb testing.TB, timeout time.Duration, dir string, env []string, name string, args ...string) (run, *os.ProcessState) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), env...)
	// A run past its time gets SIGQUIT first: a Go program then prints
	// every goroutine's stack, which is what a hang needs to be found.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 10 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := run{stdout: out.String(), stderr: errb.String()}
	if ctx.Err() != nil {
		tb.Errorf("%s %v: still running after %v; stopped it with SIGQUIT:\n%s%s", name, args, timeout, r.stdout, r.stderr)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		tb.Fatalf("%s %v: %v", name, args, err)
	}
	return r, cmd.ProcessState
}

// cleanEnv is the environment without WEAVER_* or proxy variables, so a
// developer's shell does not change what the tests see.
//
// It also tells the race-built binary not to sleep a second before it
// exits (the race runtime's atexit_sleep_ms, 1000 by default, a grace
// period for goroutines still running): the suite runs weaver hundreds of
// times, and those seconds were a sixth of it. A race is reported when it
// happens, and exits 66, which every test's exit-code check catches.
func cleanEnv() []string {
	var env []string
	gorace := "atexit_sleep_ms=0"
	for _, kv := range os.Environ() {
		up := strings.ToUpper(kv)
		if strings.HasPrefix(up, "WEAVER_") || strings.Contains(strings.SplitN(up, "=", 2)[0], "PROXY") {
			continue
		}
		if v, ok := strings.CutPrefix(kv, "GORACE="); ok {
			gorace = strings.TrimSpace(v + " " + gorace)
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GORACE="+gorace)
}

// startWeb serves w on loopback for the test's lifetime.
func startWeb(tb testing.TB, w *fakeweb.Web) *fakeweb.Server {
	tb.Helper()
	srv, err := w.Start("127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Close() })
	return srv
}

// interrupt runs weaver with args in dir and sends it sig after d unless
// it has ended by then (d ≤ 0: never). It reports whether the signal was
// sent, and the process's exit error.
func interrupt(t *testing.T, dir string, args []string, d time.Duration, sig os.Signal) (signalled bool, err error) {
	t.Helper()
	cmd := exec.Command(weaverBin, args...)
	cmd.Dir, cmd.Env = dir, cleanEnv()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var timeout <-chan time.Time
	if d > 0 {
		timeout = time.After(d)
	}
	select {
	case err := <-done:
		return false, err
	case <-timeout:
		cmd.Process.Signal(sig)
		return true, <-done
	}
}

// seeded reports whether the store at db holds a node: the seed is given
// to a resumed crawl until a run has queued it, because a kill that lands
// before the store exists, or before the seed is in it (a loaded machine),
// has written nothing, which is a legal outcome; the user then runs the
// same command again.
func seeded(t *testing.T, db string) bool {
	t.Helper()
	if _, err := os.Stat(db); errors.Is(err, os.ErrNotExist) {
		return false
	}
	return len(nodes(t, db)) > 0
}

// crawlArgs are the flags of a deterministic, fast crawl of srv.
func crawlArgs(srv *fakeweb.Server, db string, extra ...string) []string {
	args := []string{"crawl", "--db", db, "--metrics", db + ".metrics", "--connect-to", srv.ConnectTo(),
		"--delay", "0", "--quiet", "--retry-delay", "10ms"}
	return append(args, extra...)
}

// view runs fn in a read transaction of the store at db, opened
// read-only and closed after, failing the test on an error.
func view(t *testing.T, db string, fn func(tx *kv.Tx) error) {
	t.Helper()
	s, err := kv.Open(db, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("open %s: %v", db, err)
	}
	defer s.Close()
	if err := s.View(fn); err != nil {
		t.Fatalf("%s: %v", db, err)
	}
}

// edges reads a store's graph as host pairs → weight, and checks the
// store's invariants.
func edges(t *testing.T, db string) map[[2]string]int {
	t.Helper()
	s, err := kv.Open(db, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("open %s: %v", db, err)
	}
	defer s.Close()
	if err := storetest.CheckAll(s); err != nil {
		t.Fatalf("%s: %v", db, err)
	}
	out := map[[2]string]int{}
	err = s.View(func(tx *kv.Tx) error {
		hosts := map[uint64]string{}
		graph.ForEachNode(tx, func(n *graph.Node) error { hosts[n.ID] = n.Host; return nil })
		return graph.ForEachEdge(tx, func(e *graph.Edge) error {
			out[[2]string{hosts[e.From], hosts[e.To]}] = int(e.Weight)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// nodes reads a store's nodes by host.
func nodes(t *testing.T, db string) map[string]graph.Node {
	t.Helper()
	s, err := kv.Open(db, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("open %s: %v", db, err)
	}
	defer s.Close()
	out := map[string]graph.Node{}
	s.View(func(tx *kv.Tx) error {
		return graph.ForEachNode(tx, func(n *graph.Node) error { out[n.Host] = *n; return nil })
	})
	return out
}

func metrics(t *testing.T, path string) crawl.Result {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r crawl.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("metrics.log: %v\n%s", err, data)
	}
	return r
}

// excluded is weaver's default exclusion, for the fake web's ground truth.
func excluded(host string) bool { return fakeweb.DefaultExcluded(host) }

var _ = runtime.GOOS
var _ = syscall.SIGTERM

// csvCount counts the rows of a CSV export whose column col is value.
func csvCount(t *testing.T, data []byte, col, value string) int {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("CSV: %v", err)
	}
	i := slices.Index(rows[0], col)
	if i < 0 {
		t.Fatalf("CSV header %v has no %s", rows[0], col)
	}
	n := 0
	for _, r := range rows[1:] {
		if r[i] == value {
			n++
		}
	}
	return n
}
