package kv_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// filled writes a store with enough nodes for several leaf pages and
// returns its path and the offset of a leaf of the nodes bucket.
func filled(t *testing.T) (path string, leaf int64, pageSize int) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "w.bolt")
	s, err := kv.Open(path, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(func(tx *kv.Tx) error {
		for i := range 400 {
			if err := tx.PutRaw(kv.BucketNodes, kv.U64(uint64(i)), bytes.Repeat([]byte{0xa0}, 100)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ps, leaves := storetest.LeafPages(t, path, kv.BucketNodes)
	if len(leaves) < 3 {
		t.Fatalf("%d leaves", len(leaves))
	}
	return path, leaves[len(leaves)/2].Offset, ps
}

// overwrite fills n bytes at off with 0xFF, under an open store: bbolt's
// shared map sees the change, as it would see a failing disk's.
func overwrite(t *testing.T, path string, off int64, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xFF}, n), off); err != nil {
		t.Fatal(err)
	}
}

func readAll(tx *kv.Tx) error {
	c := tx.Cursor(kv.BucketNodes)
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
	}
	return nil
}

func wantCorrupt(t *testing.T, what string, err error, path string) {
	t.Helper()
	var ce *kv.CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, kv.ErrCorrupt) || ce.Path != path || strings.Contains(err.Error(), "\n") {
		t.Fatalf("%s: %v, want a one-line CorruptError naming %s", what, err, path)
	}
}

// A page damaged under an open store makes bbolt panic on its assertion:
// View, Update and the group-commit writer return a CorruptError, and the
// store stays usable for what is not damaged.
func TestStore_DamagedPageIsAnError(t *testing.T) {
	path, leaf, ps := filled(t)
	s, err := kv.Open(path, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.View(readAll); err != nil {
		t.Fatalf("sound store: %v", err)
	}
	overwrite(t, path, leaf, ps)

	wantCorrupt(t, "View", s.View(readAll), path)
	wantCorrupt(t, "Update", s.Update(readAll), path)
	wantCorrupt(t, "Commit", <-s.Commit(func(tx *kv.Tx) error {
		return tx.PutRaw(kv.BucketNodes, kv.U64(200), []byte{0xc0})
	}), path)
	applied, done := s.CommitApplied(readAll)
	wantCorrupt(t, "CommitApplied: applied", <-applied, path)
	wantCorrupt(t, "CommitApplied: done", <-done, path)
	// The writer goroutine survived: a commit that reads no damaged page
	// still goes through.
	if err := <-s.Commit(func(tx *kv.Tx) error { return tx.SetMetaString("x", "y") }); err != nil {
		t.Fatalf("commit after the damage: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// A file cut short under an open store faults on access to its map:
// the fault is a CorruptError too, not a crash.
func TestStore_FaultIsAnError(t *testing.T) {
	path, _, _ := filled(t)
	s, err := kv.Open(path, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := os.Truncate(path, 8192); err != nil {
		t.Fatal(err)
	}
	wantCorrupt(t, "View of a truncated file", s.View(readAll), path)
}

// A panic of the caller's own function is a bug, not damage: it is not
// turned into "the store is corrupt".
func TestStore_CallerPanicIsNotDamage(t *testing.T) {
	s, err := kv.Open(filepath.Join(t.TempDir(), "w.bolt"), kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer func() {
		if r := recover(); r != "a bug" {
			t.Errorf("recovered %v, want the caller's panic", r)
		}
	}()
	_ = s.View(func(*kv.Tx) error { panic("a bug") })
	t.Error("View returned")
}

// Open walks the pages before bbolt reads them: a store with any page
// it uses overwritten is refused with a CorruptError naming the page,
// read-only or not, and the file is left as it was.
func TestOpen_RefusesDamagedPages(t *testing.T) {
	path, leaf, ps := filled(t)
	pristine, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := func(b []byte) uint64 {
		var n uint64
		for i := 7; i >= 0; i-- {
			n = n<<8 | uint64(b[i])
		}
		return n
	}
	meta := pristine[16:]
	if other := pristine[ps+16:]; le(other[48:]) > le(meta[48:]) { // the newer txid
		meta = other
	}
	cases := map[string]int64{
		"meta page 0": 0, "meta page 1": int64(ps),
		"root":      int64(le(meta[16:])) * int64(ps),
		"free list": int64(le(meta[32:])) * int64(ps),
		"leaf":      leaf,
	}
	for name, off := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "d.bolt")
			damaged := bytes.Clone(pristine)
			copy(damaged[off:off+int64(ps)], bytes.Repeat([]byte{0xFF}, ps))
			if err := os.WriteFile(p, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, ro := range []bool{true, false} {
				s, err := kv.Open(p, kv.Options{ReadOnly: ro})
				if err == nil {
					s.Close()
				}
				wantCorrupt(t, name, err, p)
			}
			if after, _ := os.ReadFile(p); !bytes.Equal(after, damaged) {
				t.Error("the damaged file was modified")
			}
		})
	}
}
