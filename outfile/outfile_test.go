package outfile_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/weaver-crawler/weaver/outfile"
)

func write(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestOutfile_Write_RegularAndMissing(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	if err := outfile.Write(p, 0o644, write("one")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := outfile.Write(p, 0o644, write("two")); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p); got != "two" {
		t.Errorf("got %q, want %q", got, "two")
	}
	fi, _ := os.Stat(p)
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("mode %v, want the replaced file's 0600", got)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("%d files left in the directory, want 1", len(ents))
	}
}

func TestOutfile_Write_FailureKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	os.WriteFile(p, []byte("old"), 0o644)
	boom := errors.New("boom")
	if err := outfile.Write(p, 0, func(io.Writer) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("got %v, want boom", err)
	}
	if got := read(t, p); got != "old" {
		t.Errorf("got %q, want the old file", got)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files left, want 1", len(ents))
	}
}

func TestOutfile_Symlink_KeepsLink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.json")
	link := filepath.Join(dir, "link.json")
	os.WriteFile(real, []byte("old"), 0o644)
	os.Symlink("real.json", link)
	if err := outfile.Write(link, 0, write("new")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&fs.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
	if got := read(t, real); got != "new" {
		t.Errorf("target holds %q, want new", got)
	}
	// A dangling link: its target is created.
	dangling := filepath.Join(dir, "d.json")
	os.Symlink("sub/../made.json", dangling)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	if err := outfile.Write(dangling, 0, write("x")); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(dir, "made.json")); got != "x" {
		t.Errorf("got %q", got)
	}
}

func TestOutfile_Directory_Refused(t *testing.T) {
	dir := t.TempDir()
	os.Symlink(dir, filepath.Join(dir, "l"))
	for _, p := range []string{dir, filepath.Join(dir, "l")} {
		if err := outfile.Write(p, 0, write("x")); !errors.Is(err, outfile.ErrIsDir) {
			t.Errorf("%s: got %v, want ErrIsDir", p, err)
		}
		if err := outfile.Build(p, func(string) error { return nil }); !errors.Is(err, outfile.ErrIsDir) {
			t.Errorf("%s: Build: got %v, want ErrIsDir", p, err)
		}
	}
}

func TestOutfile_DevNull_InPlace(t *testing.T) {
	before, err := os.Stat("/dev/null")
	if err != nil || before.Mode()&fs.ModeCharDevice == 0 {
		t.Skip("no /dev/null character device")
	}
	for _, p := range []string{"/dev/null", "/dev/stderr"} {
		tg, err := outfile.Resolve(p)
		if err != nil || tg.Kind != outfile.Special || tg.Exists() {
			t.Errorf("%s: %+v, %v: want Special", p, tg, err)
		}
	}
	if err := outfile.Write("/dev/null", 0o600, write("x")); err != nil {
		t.Fatal(err)
	}
	if err := outfile.Build("/dev/null", func(tmp string) error { return os.WriteFile(tmp, []byte("y"), 0o600) }); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat("/dev/null")
	if err != nil || after.Mode() != before.Mode() || !os.SameFile(before, after) {
		t.Fatalf("/dev/null changed: %v → %v (%v)", before.Mode(), after.Mode(), err)
	}
}

func TestOutfile_FIFO_InPlace(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip(err)
	}
	got := make(chan string)
	go func() {
		b, _ := os.ReadFile(p)
		got <- string(b)
	}()
	if err := outfile.Write(p, 0, write("through the pipe")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the pipe" {
		t.Errorf("read %q", s)
	}
	if fi, _ := os.Lstat(p); fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is now %v", fi.Mode())
	}
}

func TestOutfile_Build_ErrorHidesTempName(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.bolt")
	err := outfile.Build(p, func(tmp string) error {
		_, err := os.Open(tmp) // does not exist
		return err
	})
	if err == nil || strings.Contains(err.Error(), ".tmp-") || !strings.Contains(err.Error(), p) {
		t.Errorf("got %v, want an error naming %s and no temporary file", err, p)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("errors.Is(%v, ErrNotExist) = false", err)
	}
}

func TestOutfile_Untemp(t *testing.T) {
	for in, want := range map[string]string{
		"/a/b/.x.bolt.tmp-0a1b2c3d4e5f is truncated":        "/a/b/x.bolt is truncated",
		".x.json.tmp-0a1b2c3d4e5f: no space left on device": "x.json: no space left on device",
		"open \"/d/.m.log.tmp-ffffffffffff\": denied":       "open \"/d/m.log\": denied",
		"x.bolt.tmp-0a1b2c3d4e5f (no dot: not one of ours)": "x.bolt.tmp-0a1b2c3d4e5f (no dot: not one of ours)",
	} {
		if got := outfile.Untemp(in); got != want {
			t.Errorf("Untemp(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOutfile_MissingDirectory(t *testing.T) {
	p := filepath.Join(t.TempDir(), "no", "x.json")
	err := outfile.Write(p, 0, write("x"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), p+": no such directory") {
		t.Errorf("got %v, want one naming %s and its missing directory", err, p)
	}
}

func TestSameFile(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hard, sym := filepath.Join(dir, "hard"), filepath.Join(dir, "sym")
	if err := os.Link(a, hard); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(a, sym); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, c := range []struct {
		x, y string
		want bool
	}{
		{a, a, true}, {a, hard, true}, {sym, a, true}, {filepath.Join(dir, ".", "a"), a, true},
		{a, b, false}, {a, missing, false}, {missing, missing, true},
	} {
		if got := outfile.SameFile(c.x, c.y); got != c.want {
			t.Errorf("SameFile(%s, %s) = %v, want %v", c.x, c.y, got, c.want)
		}
	}
}
