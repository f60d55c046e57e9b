package warc_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/weaver-crawler/weaver/warc"
)

// TestMain runs the child of TestWriter_SIGKILL or TestWriter_StagedSIGKILL
// when asked to.
func TestMain(m *testing.M) {
	if dir := os.Getenv("WARC_KILL_CHILD_DIR"); dir != "" {
		killChild(dir)
		return
	}
	if dir := os.Getenv("WARC_STAGED_CHILD_DIR"); dir != "" {
		stagedChild(dir)
		return
	}
	os.Exit(m.Run())
}

// killChild writes exchanges from four goroutines until it is killed,
// printing each one's URL once WriteExchange has returned.
func killChild(dir string) {
	w, _, err := warc.Open(warc.Options{Dir: dir, Prefix: "kill", MaxSize: 256 << 10})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	out := make(chan string, 64)
	for g := range 4 {
		go func() {
			for i := 0; ; i++ {
				u := fmt.Sprintf("http://g%d-%d.test/", g, i)
				if _, err := w.WriteExchange(context.Background(), exchange(u, strings.Repeat(u, 200))); err != nil {
					out <- "error " + err.Error()
					return
				}
				out <- "ok " + u
			}
		}()
	}
	for line := range out {
		fmt.Println(line)
	}
}

// TestWriter_SIGKILL kills a writing process: every exchange it had been
// told was written is in a file, every file reads to its end after Open
// repaired what was left open, and writing goes on in a new file.
func TestWriter_SIGKILL(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), "WARC_KILL_CHILD_DIR="+dir)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && len(acked) < 300 {
		line := sc.Text()
		if u, ok := strings.CutPrefix(line, "ok "); ok {
			acked[u] = true
			continue
		}
		t.Fatalf("child: %s", line)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	w, rec, err := warc.Open(warc.Options{Dir: dir, Prefix: "kill"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec) != 1 {
		t.Errorf("recovered %v, want the one file left open", rec)
	}
	for _, r := range rec {
		t.Log(r)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "kill-*.warc.gz"))
	found := map[string]bool{}
	for _, n := range names {
		got, err := readAll(t, n)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(n), err)
		}
		for _, g := range got {
			if u, ok := strings.CutPrefix(g, "response "); ok {
				found[u] = true
			}
		}
	}
	for u := range acked {
		if !found[u] {
			t.Errorf("%s was acknowledged but has no response record", u)
		}
	}
	if _, err := w.WriteExchange(context.Background(), exchange("http://after.test/", "x")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Logf("%d exchanges acknowledged, %d responses in %d files", len(acked), len(found), len(names))
}
