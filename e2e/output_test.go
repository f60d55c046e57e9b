package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

// devNull describes /dev/null, to check that no command replaced it: a
// command run as root (containers, CI) that renamed a file over it would
// break every '> /dev/null' on the machine.
func devNull(t *testing.T) fs.FileInfo {
	t.Helper()
	fi, err := os.Stat("/dev/null")
	if err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is not a character device: %v %v", fi, err)
	}
	return fi
}

// outputStore crawls a small fake web into dir/w.bolt with --metrics
// pointed at /dev/null, then /dev/stdout, and returns the store's path.
func outputStore(t *testing.T, dir string) (string, *fakeweb.Server) {
	t.Helper()
	web := fakeweb.New(fakeweb.Config{Hosts: 40, Seed: 7})
	srv := startWeb(t, web)
	db := filepath.Join(dir, "w.bolt")
	base := []string{"crawl", "--db", db, "--connect-to", srv.ConnectTo(), "--delay", "0", "--quiet", "--retry-delay", "10ms", "--max-pages", "15"}
	weaverOK(t, dir, append(base, "--metrics", "/dev/null", web.Seed())...)
	r := weaverOK(t, dir, append(base, "--metrics", "/dev/stdout", "--max-pages", "5")...)
	i := strings.Index(r.stdout, "{\n")
	var m struct {
		TerminationReason string `json:"termination_reason"`
	}
	if i < 0 || json.NewDecoder(strings.NewReader(r.stdout[i:])).Decode(&m) != nil || m.TerminationReason == "" {
		t.Errorf("--metrics /dev/stdout: no metrics JSON on stdout:\n%s", r.stdout)
	}
	return db, srv
}

// TestOutput_Devices writes every output of every command to /dev/null
// and to /dev/stdout, as a user would: each is written into the device,
// none replaces it.
func TestOutput_Devices(t *testing.T) {
	t.Parallel()
	before := devNull(t)
	dir := t.TempDir()
	db, _ := outputStore(t, dir)
	other := filepath.Join(dir, "other.bolt")
	weaverOK(t, dir, "snapshot", "--db", db, other)

	for _, c := range []struct {
		name string
		args []string
		// head is what stdout starts with when the output is /dev/stdout.
		head string
	}{
		{"export --sqlite", []string{"export", "--db", db, "--sqlite"}, "SQLite format 3\x00"},
		{"export --graphml", []string{"export", "--db", db, "--graphml"}, "<?xml"},
		{"export --dot", []string{"export", "--db", db, "--dot"}, "// weaver"},
		{"export --json", []string{"export", "--db", db, "--json"}, "{"},
		{"export --html", []string{"export", "--db", db, "--html"}, "<!DOCTYPE html>"},
		{"export --gexf", []string{"export", "--db", db, "--gexf"}, "<?xml"},
		{"snapshot", []string{"snapshot", "--db", db}, ""},
		{"merge", []string{"merge", db, other, "-o"}, ""},
		{"check --repair", []string{"check", "--repair", "--db", db, "-o"}, ""},
	} {
		for _, dev := range []string{"/dev/null", "/dev/stdout"} {
			t.Run(c.name+" "+dev, func(t *testing.T) {
				r := weaver(t, dir, append(c.args, dev)...)
				if r.code != 0 {
					t.Fatalf("exit %d: %s", r.code, r.stderr)
				}
				if dev == "/dev/null" {
					if r.stdout != "" && strings.HasPrefix(c.name, "export") {
						t.Errorf("stdout %q, want nothing", r.stdout)
					}
					return
				}
				switch {
				case c.head != "" && !strings.HasPrefix(r.stdout, c.head):
					t.Errorf("stdout starts %q, want %q", r.stdout[:min(len(r.stdout), 20)], c.head)
				case c.head == "":
					// A store: bbolt's magic in the first meta page, and the
					// summary on stderr rather than appended to the store.
					if len(r.stdout) < 4096 || !bytes.Contains([]byte(r.stdout[:4096]), []byte{0xED, 0xDA, 0x0C, 0xED}) {
						t.Errorf("stdout is not a bbolt file (%d bytes)", len(r.stdout))
					}
					if !strings.Contains(r.stderr, "/dev/stdout") {
						t.Errorf("the summary is not on stderr: %q", r.stderr)
					}
				}
			})
		}
	}
	after := devNull(t)
	if !os.SameFile(before, after) || before.Mode() != after.Mode() || before.Sys().(*syscall.Stat_t).Rdev != after.Sys().(*syscall.Stat_t).Rdev {
		t.Fatalf("/dev/null was replaced: %v → %v", before.Mode(), after.Mode())
	}
	if ents, _ := filepath.Glob(filepath.Join(os.TempDir(), ".*tmp-*")); len(ents) > 0 {
		t.Logf("temporary files in %s: %v (maybe another process's)", os.TempDir(), ents)
	}
}

// TestOutput_FIFO: an export or snapshot to a named pipe is written into
// the pipe, which stays a pipe.
func TestOutput_FIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, srv := outputStore(t, dir)
	for _, args := range [][]string{{"export", "--db", db, "--json"}, {"snapshot", "--db", db}, {"crawl", "--db", db, "--max-pages", "1", "--connect-to", srv.ConnectTo(), "--delay", "0", "--quiet", "--metrics"}} {
		fifo := filepath.Join(dir, "pipe")
		os.Remove(fifo)
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skip(err)
		}
		got := make(chan []byte, 1)
		go func() {
			f, err := os.Open(fifo) // blocks until weaver opens it to write
			if err != nil {
				got <- nil
				return
			}
			b, _ := io.ReadAll(f)
			f.Close()
			got <- b
		}()
		r := weaver(t, dir, append(args, fifo)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		b := <-got
		switch args[0] {
		case "export":
			var doc struct{ Nodes []json.RawMessage }
			if err := json.Unmarshal(b, &doc); err != nil || len(doc.Nodes) == 0 {
				t.Errorf("export through the pipe: %v (%d bytes)", err, len(b))
			}
		case "snapshot":
			if len(b) < 4096 {
				t.Errorf("snapshot through the pipe: %d bytes", len(b))
			}
		case "crawl":
			if !bytes.Contains(b, []byte(`"termination_reason"`)) {
				t.Errorf("metrics through the pipe: %q", b)
			}
		}
		if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
			t.Errorf("%v: the pipe is now %v (%v)", args, fi.Mode(), err)
		}
	}
}

// TestOutput_ExistingFiles: no command replaces an existing file without
// --force (exit 2, one line naming the file and --force); with --force
// the file is replaced, a symbolic link keeps pointing at the new file;
// a directory is refused.
func TestOutput_ExistingFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, _ := outputStore(t, dir)
	other := filepath.Join(dir, "other.bolt")
	weaverOK(t, dir, "snapshot", "--db", db, other)
	keep := []byte("my notes\n")
	for _, c := range []struct {
		name string
		args func(out string) []string
	}{
		{"export --json", func(out string) []string { return []string{"export", "--db", db, "--json", out} }},
		{"export --dot", func(out string) []string { return []string{"export", "--db", db, "--dot", out} }},
		{"export --graphml", func(out string) []string { return []string{"export", "--db", db, "--graphml", out} }},
		{"export --html", func(out string) []string { return []string{"export", "--db", db, "--html", out} }},
		{"export --sqlite", func(out string) []string { return []string{"export", "--db", db, "--sqlite", out} }},
		{"snapshot", func(out string) []string { return []string{"snapshot", "--db", db, out} }},
		{"merge", func(out string) []string { return []string{"merge", "-o", out, db, other} }},
		{"check --repair", func(out string) []string { return []string{"check", "--repair", "--db", db, "-o", out} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".out")
			if err := os.WriteFile(out, keep, 0o640); err != nil {
				t.Fatal(err)
			}
			r := weaver(t, dir, c.args(out)...)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != 2 || len(lines) != 1 || !strings.Contains(lines[0], out) || !strings.Contains(lines[0], "--force") {
				t.Errorf("over an existing file: exit %d, stderr %q; want 2 and one line naming %s and --force", r.code, r.stderr, out)
			}
			if strings.Contains(r.stderr, ".tmp-") {
				t.Errorf("a temporary file name in %q", r.stderr)
			}
			if b, _ := os.ReadFile(out); !bytes.Equal(b, keep) {
				t.Errorf("a refused command changed %s", out)
			}
			// With --force through a link: the link stays, its target is
			// replaced and keeps its mode.
			link := out + ".link"
			if err := os.Symlink(filepath.Base(out), link); err != nil {
				t.Fatal(err)
			}
			if r := weaver(t, dir, append(c.args(link), "--force")...); r.code != 0 {
				t.Fatalf("--force: exit %d: %s", r.code, r.stderr)
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("the link was replaced: %v %v", fi, err)
			}
			if b, _ := os.ReadFile(out); bytes.Equal(b, keep) {
				t.Errorf("--force did not replace the link's target")
			}
			if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o640 {
				t.Errorf("the replaced file's mode is %v, want the old 0640", fi.Mode().Perm())
			}
			// A directory is refused, forced or not.
			sub := filepath.Join(dir, "adir")
			os.Mkdir(sub, 0o755)
			if r := weaver(t, dir, append(c.args(sub), "--force")...); r.code != 2 || !strings.Contains(r.stderr, "is a directory") {
				t.Errorf("to a directory: exit %d, stderr %q; want 2 and 'is a directory'", r.code, r.stderr)
			}
			if fi, err := os.Stat(sub); err != nil || !fi.IsDir() {
				t.Errorf("the directory is gone: %v", err)
			}
		})
	}
}

// TestHelp: -h and --help print the command's usage on stdout and exit 0;
// a command line that misses what to choose is two lines on stderr, exit
// 2; weaver help names every command, version too.
func TestHelp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, cmd := range []string{"check", "crawl", "diff", "export", "merge", "rank", "serve", "snapshot", "status"} {
		for _, h := range []string{"-h", "--help"} {
			r := weaver(t, dir, cmd, h)
			if r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, "Usage: weaver "+cmd) || !strings.Contains(r.stdout, "Examples:") {
				t.Errorf("weaver %s %s: exit %d, stderr %q, stdout starts %q; want the usage on stdout, exit 0", cmd, h, r.code, r.stderr, r.stdout[:min(40, len(r.stdout))])
			}
		}
	}
	for _, args := range [][]string{{"export"}, {"export", "--colour"}, {"merge"}, {"snapshot"}, {"diff"}, {"status", "--timeout", "abc"}} {
		r := weaver(t, dir, args...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 2 || len(lines) > 2 || r.stdout != "" || !strings.Contains(r.stderr, "weaver "+args[0]+" -h") {
			t.Errorf("weaver %v: exit %d, stderr:\n%s\nwant 2 and at most two lines pointing at -h", args, r.code, r.stderr)
		}
	}
	if r := weaver(t, dir); r.code != 2 || strings.Count(r.stderr, "\n") != 2 || !strings.Contains(r.stderr, "weaver help") {
		t.Errorf("weaver alone: exit %d, stderr:\n%s\nwant 2 and two lines pointing at weaver help", r.code, r.stderr)
	}
	r := weaver(t, dir, "help")
	if r.code != 0 || !strings.Contains(r.stdout, "\tversion ") {
		t.Errorf("weaver help: exit %d, no version command:\n%s", r.code, r.stdout)
	}
	r = weaver(t, dir, "crawl", "--delay", "abc", "http://a.test/")
	if r.code != 2 || !strings.Contains(r.stderr, "want a duration") {
		t.Errorf("--delay abc: exit %d, %q; want 2 and 'want a duration'", r.code, r.stderr)
	}
}

// TestMessages: counts of one are singular; a store a crawl holds is
// refused with what to do instead, for a crawl with and without --listen.
func TestMessages(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 20, Seed: 5, RobotsDisallowEvery: -1,
		Faults: map[string]fakeweb.Fault{"slow.drip.test": fakeweb.SlowDrip}})
	srv := startWeb(t, w)
	dir := t.TempDir()

	one := filepath.Join(dir, "one.bolt")
	r := weaverOK(t, dir, crawlArgs(srv, one, "--max-pages", "1", w.Seed())...)
	if !strings.Contains(r.stdout, "Queued 1 entry at depth 0") || !strings.Contains(r.stdout, "1 page fetched") {
		t.Errorf("crawl of one seed and one page:\n%s", r.stdout)
	}
	r = weaverOK(t, dir, "merge", "-o", filepath.Join(dir, "m.bolt"), one)
	if !strings.Contains(r.stdout, "merged 1 store into") {
		t.Errorf("merge of one store: %s", r.stdout)
	}

	for _, listen := range []bool{false, true} {
		db := filepath.Join(dir, fmt.Sprintf("busy-%v.bolt", listen))
		args := crawlArgs(srv, db, "--max-outbound-links", "1", "--ignore-robots", "--timeout", "60s", "--retries", "0")
		if listen {
			args = append(args, "--listen", "127.0.0.1:0")
		}
		args = append(args, w.Seed())
		p := start(t, dir, args...)
		p.poll(t, "the crawl to start", func() bool {
			_, err := os.Stat(db + ".listen")
			return strings.Contains(p.out.String(), "Starting crawl from") && err == nil
		})
		// With --listen or without, the crawl answers this machine's
		// readers (issue 51): export and diff read a snapshot it
		// streams; what would write into its store is refused, with the
		// way around it.
		for _, args := range [][]string{
			{"export", "--db", db, "--json", fmt.Sprintf("x-%v.json", listen)},
			{"diff", db, one},
		} {
			if r := weaver(t, dir, args...); r.code != 0 && !(args[0] == "diff" && r.code == 1) {
				t.Errorf("listen %v: weaver %v: exit %d, stderr %q; want it answered", listen, args, r.code, r.stderr)
			}
		}
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"check", "--db", db}, "weaver snapshot --db " + db + " copy.bolt && weaver check --db copy.bolt"},
			{[]string{"merge", "-o", filepath.Join(dir, "n.bolt"), one, db}, "weaver snapshot --db " + db},
			{[]string{"crawl", "--db", db}, "weaver status --db " + db},
		} {
			r := weaver(t, dir, c.args...)
			if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, c.want) {
				t.Errorf("listen %v: weaver %v: exit %d, stderr %q; want 2 and one line with %q", listen, c.args, r.code, r.stderr, c.want)
			}
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		if code := p.wait(t); code != 0 {
			t.Errorf("crawl exit %d\n%s", code, p.out.String())
		}
	}
}
