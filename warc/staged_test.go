package warc_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/weaver-crawler/weaver/warc"
)

// stage builds and stages one exchange of url with a body of size random
// bytes (which gzip does not shrink).
func stage(t testing.TB, w *warc.Writer, url string, size int) warc.Written {
	t.Helper()
	body := make([]byte, size)
	for i := range body {
		body[i] = byte('a' + rand.IntN(26))
	}
	b, err := w.Build(context.Background(), exchange(url, string(body)))
	if err != nil {
		t.Fatal(err)
	}
	at, err := w.Stage(b)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// responses returns the target URIs of the response records of every
// file in dir, open or finished, by file name.
func responses(t *testing.T, dir string) map[string][]string {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz*"))
	out := map[string][]string{}
	for _, n := range names {
		got, err := readAll(t, n)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(n), err)
		}
		out[filepath.Base(n)] = []string{}
		for _, g := range got {
			if u, ok := strings.CutPrefix(g, "response "); ok {
				out[filepath.Base(n)] = append(out[filepath.Base(n)], u)
			}
		}
	}
	return out
}

func TestWriter_Staged(t *testing.T) {
	dir := t.TempDir()
	w := openWriter(t, dir, warc.Options{Prefix: "s"})
	a := stage(t, w, "http://a.test/", 100)
	b := stage(t, w, "http://b.test/", 100)
	if a.File != b.File || b.Offset != a.Offset+a.Bytes {
		t.Fatalf("a at %+v, b at %+v: want b right after a in one file", a, b)
	}
	end, ok := w.StagedEnd()
	if !ok || end.File != b.File || end.Offset != b.Offset+b.Bytes {
		t.Errorf("staged end %v %v, want %s %d", end, ok, b.File, b.Offset+b.Bytes)
	}
	// Nothing is in a file before Prepare.
	if got := responses(t, dir); len(got) != 0 {
		t.Fatalf("files before Prepare: %v", got)
	}
	if err := w.Prepare(); err != nil {
		t.Fatal(err)
	}
	w.Committed()
	if _, ok := w.StagedEnd(); ok {
		t.Error("a staged end after Committed")
	}
	// An aborted transaction leaves nothing, prepared or not.
	stage(t, w, "http://c.test/", 100)
	w.Abort()
	stage(t, w, "http://d.test/", 100)
	if err := w.Prepare(); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	e := stage(t, w, "http://e.test/", 100)
	if e.Offset != b.Offset+b.Bytes {
		t.Errorf("e at %d, want right after b (%d)", e.Offset, b.Offset+b.Bytes)
	}
	if err := w.Prepare(); err != nil {
		t.Fatal(err)
	}
	w.Committed()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := responses(t, dir)
	if want := map[string][]string{a.File: {"http://a.test/", "http://b.test/", "http://e.test/"}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("files %v, want %v", got, want)
	}
	if st := w.Stats(); st.Records != 7 || st.Files != 1 {
		t.Errorf("stats %+v, want 7 records (warcinfo, 3 exchanges) in 1 file", st)
	}
}

// TestWriter_StagedRotates: a transaction that passes MaxSize starts a
// new file; the full one is renamed only once the transaction committed,
// and an aborted one leaves the current file as it was.
func TestWriter_StagedRotates(t *testing.T) {
	dir := t.TempDir()
	w := openWriter(t, dir, warc.Options{Prefix: "r", MaxSize: 4000})
	first := stage(t, w, "http://a.test/", 100)
	if err := w.Prepare(); err != nil {
		t.Fatal(err)
	}
	w.Committed()
	var at []warc.Written
	for i := range 6 {
		at = append(at, stage(t, w, fmt.Sprintf("http://r%d.test/", i), 1500))
	}
	if at[len(at)-1].File == first.File {
		t.Fatalf("6 records of 1.5 KB stayed in %s with MaxSize 4000", first.File)
	}
	if err := w.Prepare(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, first.File)); err == nil {
		t.Fatal("the full file was renamed before the commit")
	}
	w.Abort()
	open, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(open) != 1 || filepath.Base(open[0]) != first.File+".open" {
		t.Fatalf("after Abort: %v, want only %s.open", open, first.File)
	}
	for i := range 6 {
		at[i] = stage(t, w, fmt.Sprintf("http://r%d.test/", i), 1500)
	}
	if err := w.Prepare(); err != nil {
		t.Fatal(err)
	}
	w.Committed()
	if _, err := os.Stat(filepath.Join(dir, first.File)); err != nil {
		t.Fatalf("the full file is not finished after the commit: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := responses(t, dir)
	n := 0
	for name, us := range got {
		if strings.HasSuffix(name, ".open") {
			t.Errorf("%s left open", name)
		}
		n += len(us)
		if fi, _ := os.Stat(filepath.Join(dir, name)); fi.Size() > 4000 {
			t.Errorf("%s: %d bytes, past MaxSize 4000", name, fi.Size())
		}
	}
	if n != 7 || len(got) < 3 {
		t.Errorf("%d responses in %d files, want 7 in at least 3: %v", n, len(got), got)
	}
	for i, a := range at {
		if u := fmt.Sprintf("http://r%d.test/", i); !slices.Contains(got[a.File], u) {
			t.Errorf("%s is not in %s, where Stage said", u, a.File)
		}
	}
}

// TestMain's child for TestWriter_StagedSIGKILL: commits batches of
// exchanges, recording each commit's position in a file (as a crawl's
// store does) before telling it, until it is killed.
func stagedChild(dir string) {
	w, _, err := warc.Open(warc.Options{Dir: dir, Prefix: "kill", MaxSize: 64 << 10})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	for batch := 0; ; batch++ {
		for i := range 5 {
			u := fmt.Sprintf("http://b%d-%d.test/", batch, i)
			b, err := w.Build(context.Background(), exchange(u, strings.Repeat(u, 40)))
			if err == nil {
				_, err = w.Stage(b)
			}
			if err != nil {
				fmt.Println("error", err)
				os.Exit(1)
			}
		}
		end, _ := w.StagedEnd()
		if err := w.Prepare(); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		// The "store": the position and the batch, renamed into place.
		tmp := filepath.Join(dir, "position.tmp")
		if err := os.WriteFile(tmp, fmt.Appendf(nil, "%d\n%s", batch, end), 0o644); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "position")); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		w.Committed()
		fmt.Println("ok", batch)
	}
}

// TestWriter_StagedSIGKILL kills a process that writes batches of
// exchanges transactionally, at many instants: after Open with the last
// recorded position, the files hold exactly the batches committed, each
// once, and every record reads whole.
func TestWriter_StagedSIGKILL(t *testing.T) {
	dir := t.TempDir()
	for round := range 6 {
		cmd := exec.Command(os.Args[0], "-test.run", "^$")
		cmd.Env = append(os.Environ(), "WARC_STAGED_CHILD_DIR="+dir)
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		for n := 0; sc.Scan() && n < 20+round*15; n++ {
			if !strings.HasPrefix(sc.Text(), "ok ") {
				t.Fatalf("child: %s", sc.Text())
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		data, err := os.ReadFile(filepath.Join(dir, "position"))
		if err != nil {
			t.Fatal(err)
		}
		batchText, posText, _ := strings.Cut(string(data), "\n")
		last, _ := strconv.Atoi(batchText)
		pos, ok := warc.ParsePosition(posText)
		if !ok {
			t.Fatalf("position %q", posText)
		}
		w, rec, err := warc.Open(warc.Options{Dir: dir, Prefix: "kill", Committed: &pos})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rec {
			t.Logf("round %d: %s", round, r)
		}
		w.Close()
		seen := map[string]int{}
		for name, us := range responses(t, dir) {
			if strings.HasSuffix(name, ".open") {
				t.Errorf("%s left open after Open", name)
			}
			for _, u := range us {
				seen[u]++
			}
		}
		for u, n := range seen {
			var b, i int
			fmt.Sscanf(u, "http://b%d-%d.test/", &b, &i)
			if n != 1 || b > last {
				t.Errorf("round %d: %s: %d records, batch %d, last committed %d", round, u, n, b, last)
			}
		}
		if len(seen) != 5*(last+1) {
			t.Errorf("round %d: %d exchanges, want the %d of the %d batches committed", round, len(seen), 5*(last+1), last+1)
		}
		// The next round's child starts its batches at 0 again: keep the
		// names apart by clearing the directory.
		os.RemoveAll(dir)
		os.Mkdir(dir, 0o755)
	}
}

// TestOpen_NothingCommitted: the zero Position as Options.Committed (a
// store whose commits have referred to no record) removes every open
// file of the prefix, prepared records and all, and leaves another
// prefix's open file and the prefix's finished files alone.
func TestOpen_NothingCommitted(t *testing.T) {
	dir := t.TempDir()
	done := openWriter(t, dir, warc.Options{Prefix: "c"})
	stage(t, done, "http://done.test/", 100)
	if err := done.Prepare(); err != nil {
		t.Fatal(err)
	}
	done.Committed()
	if err := done.Close(); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"c", "other"} {
		w := openWriter(t, dir, warc.Options{Prefix: prefix})
		stage(t, w, "http://"+prefix+".test/", 100)
		if err := w.Prepare(); err != nil {
			t.Fatal(err)
		}
		// killed before its commit: neither Committed nor Close
	}
	w, rec, err := warc.Open(warc.Options{Dir: dir, Prefix: "c", Committed: &warc.Position{}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if len(rec) != 1 || !rec[0].Removed || !rec[0].Uncommitted {
		t.Errorf("recovered %v, want the one open file of c removed", rec)
	}
	var got []string
	for name, us := range responses(t, dir) {
		got = append(got, name[:strings.Index(name, "-")]+" "+strings.Join(us, " ")+fmt.Sprint(strings.HasSuffix(name, ".open")))
	}
	slices.Sort(got)
	if want := []string{"c http://done.test/false", "other http://other.test/true"}; !slices.Equal(got, want) {
		t.Errorf("files %q, want %q", got, want)
	}
}
