package export_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weaver-crawler/weaver/export"
)

var allFormats = []export.Format{export.FormatSQLite, export.FormatGraphML, export.FormatDOT, export.FormatJSON}

// TestExport_Interrupted cancels exports part way (at the first periodic
// context check, 10,000 rows in) and checks that the target is left as it was: absent,
// or holding the previous export, with no temporary file beside it.
func TestExport_Interrupted(t *testing.T) {
	s := paStore(t, 4000) // ~16,000 edges: several context checks
	for _, f := range allFormats {
		for _, previous := range []bool{false, true} {
			dir := t.TempDir()
			target := filepath.Join(dir, "out."+string(f))
			var before []byte
			if previous {
				if _, err := export.WriteFile(context.Background(), smallStore(t), target, f, fixedOptions()); err != nil {
					t.Fatal(err)
				}
				before = readFile(t, target)
			}
			opt := fixedOptions()
			opt.Force = previous
			_, err := export.WriteFile(newCountdown(0), s, target, f, opt)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("%s: interrupted export returned %v, want context.Canceled", f, err)
			}
			want := []string{}
			if previous {
				want = []string{"out." + string(f)}
				if got := readFile(t, target); !bytes.Equal(got, before) {
					t.Errorf("%s: the previous export was changed by an interrupted one", f)
				}
			}
			if got := listDir(t, dir); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Errorf("%s: directory holds %q after an interrupted export, want %q", f, got, want)
			}
		}
	}
}

// TestExport_Refuses checks the targets an export must not write.
func TestExport_Refuses(t *testing.T) {
	s := smallStore(t)
	dir := t.TempDir()
	hardlink := filepath.Join(dir, "hard.bolt")
	if err := os.Link(s.Path(), hardlink); err != nil {
		t.Fatal(err)
	}
	symlink := filepath.Join(dir, "sym.db")
	if err := os.Symlink(s.Path(), symlink); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("my notes, not a database\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	relative, err := filepath.Rel(mustGetwd(t), s.Path())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range allFormats {
		for _, force := range []bool{false, true} {
			for _, target := range []string{s.Path(), relative, filepath.Join(filepath.Dir(s.Path()), ".", "weaver.bolt"), hardlink, symlink} {
				opt := fixedOptions()
				opt.Force = force
				_, err := export.WriteFile(context.Background(), s, target, f, opt)
				if !errors.Is(err, export.ErrWouldOverwriteStore) {
					t.Errorf("%s to the store as %s (force %v): got %v, want ErrWouldOverwriteStore", f, target, force, err)
				}
			}
		}
		_, err := export.WriteFile(context.Background(), s, dir, f, fixedOptions())
		if !errors.Is(err, export.ErrIsDirectory) {
			t.Errorf("%s to a directory: got %v, want ErrIsDirectory", f, err)
		}
	}
	if err := s.Check(); err != nil {
		t.Fatalf("store damaged by refused exports: %v", err)
	}

	// No format replaces an existing file without Force: not a text file,
	// not an empty one, not a SQLite database (someone else's), not a
	// previous export.
	db := filepath.Join(dir, "crawl.db")
	if _, err := export.SQLite(context.Background(), s, db, fixedOptions()); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range allFormats {
		for _, target := range []string{notes, empty, db} {
			before := readFile(t, target)
			_, err := export.WriteFile(context.Background(), s, target, f, fixedOptions())
			if !errors.Is(err, export.ErrExists) {
				t.Errorf("%s over %s: got %v, want ErrExists", f, target, err)
			}
			if got := readFile(t, target); !bytes.Equal(got, before) {
				t.Errorf("%s: refused export changed %s", f, target)
			}
		}
	}
	opt := fixedOptions()
	opt.Force = true
	if _, err := export.SQLite(context.Background(), s, notes, opt); err != nil {
		t.Errorf("SQLite over a text file with Force: %v", err)
	}
	if !bytes.HasPrefix(readFile(t, notes), []byte("SQLite format 3\x00")) {
		t.Errorf("forced export did not write a database")
	}
	for _, f := range allFormats[1:] {
		if _, err := export.WriteFile(context.Background(), s, db, f, opt); err != nil {
			t.Errorf("%s over a SQLite database with Force: %v", f, err)
		}
	}
	if _, err := export.Write(context.Background(), &bytes.Buffer{}, s, export.FormatSQLite, fixedOptions()); err == nil {
		t.Errorf("SQLite to a stream: no error")
	}
}

// TestExport_Device checks that an export to a device is written
// straight into it (SQLite's built in $TMPDIR and copied), not renamed
// over it.
func TestExport_Device(t *testing.T) {
	s := smallStore(t)
	st, err := export.WriteFile(context.Background(), s, os.DevNull, export.FormatJSON, fixedOptions())
	if err != nil || st.Nodes == 0 {
		t.Fatalf("JSON to %s: %+v, %v", os.DevNull, st, err)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode().IsRegular() {
		t.Fatalf("%s is no longer a device: %v %v", os.DevNull, fi, err)
	}
	if _, err := export.SQLite(context.Background(), s, os.DevNull, fixedOptions()); err != nil {
		t.Errorf("SQLite to %s: %v", os.DevNull, err)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a device: %v %v", os.DevNull, fi, err)
	}
}

func mustGetwd(tb testing.TB) string {
	tb.Helper()
	wd, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	return wd
}
