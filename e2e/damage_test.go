package e2e_test

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

// TestDamagedStore crawls the fake web into a real store, then overwrites
// one page of a copy at a time with 0xFF, as a bad disk or a stray dd
// does, and runs every command on the copy. A page the store uses (both
// meta pages, the free list, every branch, the root tree, a sample of the
// leaves) must make every command say, on one line of stderr and exit 1,
// that the store is corrupt and how to repair it, and leave the file's
// bytes and the directory as they were; check --repair then writes a
// copy that passes weaver check. A free page, or one past the file's
// high-water mark, holds nothing: every command works. No command ever
// panics.
func TestDamagedStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 26})
	srv := startWeb(t, w)
	base := filepath.Join(dir, "base.bolt")
	warcDir := filepath.Join(dir, "warc")
	// Stopped by --max-pages, so that the frontier holds entries too.
	if r := fixture(t, dir, crawlArgs(srv, base, "--max-pages", "200", "--warc", warcDir, w.Seed())...); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	pristine, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	pages := classifyPages(t, base)
	sample := samplePages(pages)
	t.Logf("%d pages below the high-water mark; damaging %d of them: %v", len(pages), len(sample), sample)

	for _, id := range sample {
		kind := "past the high-water mark"
		if id < uint64(len(pages)) {
			kind = pages[id]
		}
		t.Run(fmt.Sprintf("page%d_%s", id, strings.ReplaceAll(kind, " ", "_")), func(t *testing.T) {
			t.Parallel()
			d := t.TempDir()
			db := filepath.Join(d, "damaged.bolt")
			other := filepath.Join(d, "other.bolt")
			damaged := slices.Clone(pristine)
			ps := pageSize(pristine)
			if end := int(id+1) * ps; end > len(damaged) {
				damaged = append(damaged, make([]byte, end-len(damaged))...)
			}
			for i := int(id) * ps; i < int(id+1)*ps; i++ {
				damaged[i] = 0xFF
			}
			if err := os.WriteFile(db, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(other, pristine, 0o600); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(damaged)
			switch kind {
			case "free", "past the high-water mark":
				damageHarmless(t, srv, w, d, db)
			case "overflow":
				damageValue(t, d, db, sum)
			default:
				damageRefused(t, srv, w, d, db, other, warcDir, sum)
			}
		})
	}
}

// damageRefused runs every command on db, a store with a damaged page it
// uses: each refuses it in one line and changes nothing.
func damageRefused(t *testing.T, srv *fakeweb.Server, w *fakeweb.Web, d, db, other, warcDir string, sum [32]byte) {
	hint := "weaver check --repair --db " + db
	for _, args := range [][]string{
		{"status", "--db", db},
		{"status", "--db", db, "--json"},
		{"rank", "--db", db},
		{"show", "--db", db, "a.test"},
		{"export", "--db", db, "--json", "-"},
		{"export", "--db", db, "--graphml", "-"},
		{"export", "--db", db, "--dot", "-"},
		{"export", "--db", db, "--html", "-"},
		{"export", "--db", db, "--sqlite", filepath.Join(d, "out.sqlite")},
		{"export", "--db", db, "--cc-hostgraph", filepath.Join(d, "cc")},
		{"diff", db, other},
		{"diff", other, db},
		{"merge", "-o", filepath.Join(d, "merged.bolt"), db, other},
		{"snapshot", "--db", db, filepath.Join(d, "snap.bolt")},
		{"import", "--db", db, "--quiet", warcDir},
		crawlArgs(srv, db, "--max-pages", "5", w.Seed()),
		crawlArgs(srv, db, "--max-pages", "5"), // a resume
	} {
		r := weaver(t, d, args...)
		noPanic(t, args, r)
		line := strings.TrimSuffix(r.stderr, "\n")
		if r.code != 1 || strings.Contains(line, "\n") || !strings.Contains(line, db+" is corrupt: ") || !strings.Contains(line, hint) {
			t.Errorf("weaver %s: exit %d, want 1 and one line naming %s and %q\nstdout: %.300s\nstderr: %s", strings.Join(args, " "), r.code, db, hint, r.stdout, r.stderr)
		}
		if sha256.Sum256(readFile(t, db)) != sum {
			t.Fatalf("weaver %s changed the damaged store", strings.Join(args, " "))
		}
	}
	// The same store named by the environment.
	r := weaverEnv(t, d, []string{"WEAVER_DB_PATH=" + db}, "status")
	noPanic(t, []string{"status"}, r)
	if r.code != 1 || !strings.Contains(r.stderr, hint) {
		t.Errorf("WEAVER_DB_PATH=%s weaver status: exit %d, want 1 naming %q\n%s", db, r.code, hint, r.stderr)
	}
	r = weaver(t, d, "check", "--db", db)
	noPanic(t, []string{"check"}, r)
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, hint) {
		t.Errorf("weaver check: exit %d, want 1 naming %q\n%s%s", r.code, hint, r.stdout, r.stderr)
	}
	if sha256.Sum256(readFile(t, db)) != sum {
		t.Fatal("weaver check changed the damaged store")
	}
	// Nothing was written beside it: no export, merge, snapshot, metrics.
	if left := dirNames(t, d); !slices.Equal(left, []string{"damaged.bolt", "other.bolt"}) {
		t.Errorf("files left by refused commands: %v", left)
	}
	// The way out works.
	fixed := filepath.Join(d, "fixed.bolt")
	r = weaver(t, d, "check", "--repair", "--db", db, "-o", fixed)
	noPanic(t, []string{"check", "--repair"}, r)
	if r.code != 0 || !strings.Contains(r.stdout, fixed+" passes weaver check") {
		t.Errorf("weaver check --repair: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := weaver(t, d, "status", "--db", fixed); r.code != 0 {
		t.Errorf("status of the repaired store: exit %d\n%s", r.code, r.stderr)
	}
}

// damageHarmless runs commands on a store damaged where it keeps nothing
// (a free page, a page past its high-water mark): they work, a crawl
// resumes.
func damageHarmless(t *testing.T, srv *fakeweb.Server, w *fakeweb.Web, d, db string) {
	for _, args := range [][]string{
		{"check", "--db", db},
		{"status", "--db", db},
		{"export", "--db", db, "--json", "-"},
		crawlArgs(srv, db, "--max-pages", "3"),
	} {
		r := weaver(t, d, args...)
		noPanic(t, args, r)
		if r.code != 0 {
			t.Errorf("weaver %s: exit %d, want 0\n%.300s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
}

// damageValue runs the read commands on a store whose damaged page is
// the continuation of a large value: the page walk does not read values,
// so a command either reads it and reports the damage, or does not.
func damageValue(t *testing.T, d, db string, sum [32]byte) {
	for _, args := range [][]string{
		{"status", "--db", db},
		{"export", "--db", db, "--json", "-"},
		{"check", "--db", db},
	} {
		r := weaver(t, d, args...)
		noPanic(t, args, r)
		if r.code != 0 && r.code != 1 {
			t.Errorf("weaver %s: exit %d, want 0 or 1\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
		if sha256.Sum256(readFile(t, db)) != sum {
			t.Fatalf("weaver %s changed the damaged store", strings.Join(args, " "))
		}
	}
}

func noPanic(t *testing.T, args []string, r run) {
	t.Helper()
	if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic:") {
		t.Fatalf("weaver %s panicked (exit %d):\n%.2000s", strings.Join(args, " "), r.code, r.stderr)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func pageSize(file []byte) int {
	return int(uint32(file[24]) | uint32(file[25])<<8 | uint32(file[26])<<16 | uint32(file[27])<<24)
}

// classifyPages names what each page below the store's high-water mark
// holds, as bbolt sees it: meta, freelist, branch, leaf, free, or
// overflow (the continuation of a large value).
func classifyPages(t *testing.T, path string) []string {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, PreLoadFreelist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var kinds []string
	err = db.View(func(tx *bbolt.Tx) error {
		n := int(tx.Size() / int64(db.Info().PageSize))
		for id := 0; id < n; id++ {
			info, err := tx.Page(id)
			if err != nil {
				return err
			}
			kind := info.Type
			switch kind {
			case "meta", "freelist", "branch", "leaf", "free":
			default:
				kind = "overflow"
			}
			kinds = append(kinds, kind)
			for range info.OverflowCount {
				if kind != "free" {
					kinds = append(kinds, "overflow")
				} else {
					kinds = append(kinds, "free")
				}
				id++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return kinds
}

// samplePages picks the pages to damage, deterministically: every page
// that is not a leaf or free (meta, free list, branches: few), leaves
// spread evenly through the file (at most 12), the first, middle and
// last free page, the first overflow page, and a page past the
// high-water mark (bbolt grows files ahead of use).
func samplePages(kinds []string) []uint64 {
	var out, leaves, free []uint64
	overflow := false
	for id, k := range kinds {
		switch k {
		case "leaf":
			leaves = append(leaves, uint64(id))
		case "free":
			free = append(free, uint64(id))
		case "overflow":
			if !overflow {
				out = append(out, uint64(id))
			}
			overflow = true
		default:
			out = append(out, uint64(id))
		}
	}
	const maxLeaves = 12
	step := max(1, (len(leaves)+maxLeaves-1)/maxLeaves)
	for i := 0; i < len(leaves); i += step {
		out = append(out, leaves[i])
	}
	if len(free) > 0 {
		out = append(out, free[0], free[len(free)/2], free[len(free)-1])
	}
	out = append(out, uint64(len(kinds))+1)
	slices.Sort(out)
	return slices.Compact(out)
}
