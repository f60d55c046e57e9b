package kv_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/weaver-crawler/weaver/kv"
)

type rec struct {
	Name string    `msgpack:"n"`
	N    int       `msgpack:"c"`
	At   time.Time `msgpack:"t"`
}

func TestStore_RoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.bolt")
	s, err := kv.Open(path, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	want := rec{Name: "blog.example.com", N: 7, At: at}
	if err := s.Update(func(tx *kv.Tx) error {
		if _, err := tx.AddCounter("c", 5); err != nil {
			return err
		}
		return tx.Put(kv.BucketNodes, kv.U64(1), &want)
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = kv.Open(path, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.View(func(tx *kv.Tx) error {
		var got rec
		ok, err := tx.Get(kv.BucketNodes, kv.U64(1), &got)
		if err != nil || !ok {
			t.Fatalf("get: ok=%v err=%v", ok, err)
		}
		if got.Name != want.Name || got.N != want.N || !got.At.Equal(want.At) {
			t.Errorf("got %+v, want %+v", got, want)
		}
		if got := tx.Counter("c"); got != 5 {
			t.Errorf("counter: got %d, want 5", got)
		}
		if got := tx.SchemaVersion(); got != kv.SchemaVersion {
			t.Errorf("schema: got %d, want %d", got, kv.SchemaVersion)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if s.Created().IsZero() {
		t.Error("creation time not recorded")
	}
}

func TestStore_Commit_GroupsAndIsolatesFailures(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.bolt")
	s, err := kv.Open(path, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	boom := errors.New("boom")
	var chans []<-chan error
	for i := 0; i < 200; i++ {
		i := i
		chans = append(chans, s.Commit(func(tx *kv.Tx) error {
			if i == 57 {
				return boom
			}
			return tx.PutRaw(kv.BucketNodes, kv.U64(uint64(i)), []byte("x"))
		}))
	}
	for i, c := range chans {
		err := <-c
		if i == 57 {
			if !errors.Is(err, boom) {
				t.Errorf("failing fn: got %v, want boom", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("fn %d: %v", i, err)
		}
	}
	if err := s.View(func(tx *kv.Tx) error {
		if got := tx.Len(kv.BucketNodes); got != 199 {
			t.Errorf("keys: got %d, want 199", got)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	groups, fns := s.CommitStats()
	if fns != 199 || groups == 0 || groups > fns {
		t.Errorf("stats: groups %d fns %d", groups, fns)
	}
}

func TestStore_CommitAfterClose(t *testing.T) {
	s, err := kv.Open(filepath.Join(t.TempDir(), "w.bolt"), kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := <-s.Commit(func(*kv.Tx) error { return nil }); !errors.Is(err, kv.ErrClosed) {
		t.Errorf("got %v, want ErrClosed", err)
	}
}

// TestOpen_Refuses covers every file Open must refuse without touching it.
func TestOpen_Refuses(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.bolt")
	s, err := kv.Open(good, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2000; i++ { // enough data to span many pages
		i := i
		<-s.Commit(func(tx *kv.Tx) error {
			return tx.PutRaw(kv.BucketNodes, kv.U64(uint64(i)), bytes.Repeat([]byte("v"), 100))
		})
	}
	s.Close()
	goodBytes, _ := os.ReadFile(good)

	random := make([]byte, 64<<10)
	rand.Read(random)
	sqlite := append([]byte("SQLite format 3\x00"), make([]byte, 4096)...)

	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"zero-byte", nil, kv.ErrEmptyFile},
		{"random", random, kv.ErrNotStore},
		{"sqlite", sqlite, kv.ErrNotStore},
		{"tiny", []byte("hello"), kv.ErrNotStore},
		{"truncated-half", goodBytes[:len(goodBytes)/2], kv.ErrTruncated},
		{"truncated-3-pages", goodBytes[:3*4096], kv.ErrTruncated},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name+".bolt")
			if err := os.WriteFile(p, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := kv.Open(p, kv.Options{})
			if err == nil {
				s.Close()
				t.Fatalf("opened a %s file", tc.name)
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
			after, _ := os.ReadFile(p)
			if !bytes.Equal(after, tc.data) {
				t.Errorf("file was modified")
			}
		})
	}
}

func TestOpen_NewerSchema(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.bolt")
	s, err := kv.Open(p, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx *kv.Tx) error {
		return tx.SetMetaString("schema_version", strconv.Itoa(kv.SchemaVersion+1))
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	before, _ := os.ReadFile(p)
	if _, err := kv.Open(p, kv.Options{}); !errors.Is(err, kv.ErrNewerSchema) {
		t.Fatalf("got %v, want ErrNewerSchema", err)
	}
	after, _ := os.ReadFile(p)
	if !bytes.Equal(before, after) {
		t.Error("file was modified")
	}
}

func TestOpen_ReadOnlyMissing(t *testing.T) {
	_, err := kv.Open(filepath.Join(t.TempDir(), "none.bolt"), kv.Options{ReadOnly: true})
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v, want ErrNotExist", err)
	}
}

// TestOpen_Locked holds the file in a child process, as another weaver
// would, and checks the second Open fails clearly within 3 s.
func TestOpen_Locked(t *testing.T) {
	if os.Getenv("WEAVER_KV_HOLD") != "" {
		s, err := kv.Open(os.Getenv("WEAVER_KV_HOLD"), kv.Options{})
		if err != nil {
			os.Exit(3)
		}
		defer s.Close()
		os.Stdout.WriteString("held\n")
		time.Sleep(20 * time.Second) // the parent kills this child
		return
	}
	p := filepath.Join(t.TempDir(), "w.bolt")
	cmd := exec.Command(os.Args[0], "-test.run=^TestOpen_Locked$")
	cmd.Env = append(os.Environ(), "WEAVER_KV_HOLD="+p)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	buf := make([]byte, 5)
	if _, err := out.Read(buf); err != nil || string(buf) != "held\n" {
		t.Fatalf("child did not take the lock: %q %v", buf, err)
	}
	start := time.Now()
	_, err := kv.Open(p, kv.Options{})
	if !errors.Is(err, kv.ErrInUse) {
		t.Fatalf("got %v, want ErrInUse", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v to fail", d)
	}
	if want := "is in use by another weaver process"; !bytes.Contains([]byte(err.Error()), []byte(want)) {
		t.Errorf("error %q does not say %q", err, want)
	}
}

// TestTx_ReleasePages reads a store, releases its pages, and reads it again:
// nothing changes but the process's resident memory.
func TestTx_ReleasePages(t *testing.T) {
	s, err := kv.Open(filepath.Join(t.TempDir(), "w.bolt"), kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Update(func(tx *kv.Tx) error {
		for i := 0; i < 5000; i++ {
			if err := tx.PutRaw(kv.BucketNodes, kv.U64(uint64(i)), bytes.Repeat([]byte{byte(i)}, 200)); err != nil {
				return err
			}
		}
		return nil
	})
	s.View(func(tx *kv.Tx) error {
		tx.ReleasePages()
		for i := 0; i < 5000; i += 97 {
			v := tx.GetRaw(kv.BucketNodes, kv.U64(uint64(i)))
			if len(v) != 200 || v[0] != byte(i) {
				t.Fatalf("key %d: value changed after release", i)
			}
		}
		tx.ReleasePages()
		return nil
	})
}

// A store written before the cluster's buckets existed opens read-only as
// it is, and a writable open adds them.
func TestOpen_AddsLaterBuckets(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.bolt")
	s, err := kv.Open(p, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := bbolt.Open(p, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(btx *bbolt.Tx) error {
		if err := btx.DeleteBucket(kv.BucketOutbox); err != nil {
			return err
		}
		return btx.DeleteBucket(kv.BucketInbox)
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ro, err := kv.Open(p, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open of an older store: %v", err)
	}
	_ = ro.View(func(tx *kv.Tx) error {
		if tx.Exists(kv.BucketOutbox) {
			t.Error("read-only open added the outbox bucket")
		}
		return nil
	})
	ro.Close()
	rw, err := kv.Open(p, kv.Options{})
	if err != nil {
		t.Fatalf("writable open of an older store: %v", err)
	}
	defer rw.Close()
	_ = rw.View(func(tx *kv.Tx) error {
		if !tx.Exists(kv.BucketOutbox) || !tx.Exists(kv.BucketInbox) {
			t.Error("writable open did not add the outbox and inbox buckets")
		}
		return nil
	})
}

// A store of schema 1 (no history or recent bucket) opens read-only as it
// is; a writable open adds the buckets and records schema 2, which a
// weaver of schema 1 would then refuse.
func TestOpen_UpgradesSchema1(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.bolt")
	s, err := kv.Open(p, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := bbolt.Open(p, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(btx *bbolt.Tx) error {
		for _, b := range [][]byte{kv.BucketHistory, kv.BucketRecent} {
			if err := btx.DeleteBucket(b); err != nil {
				return err
			}
		}
		return btx.Bucket(kv.BucketMeta).Put([]byte("schema_version"), []byte("1"))
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, ro := range []bool{true, false} {
		s, err := kv.Open(p, kv.Options{ReadOnly: ro})
		if err != nil {
			t.Fatalf("open of a schema 1 store (read-only %v): %v", ro, err)
		}
		_ = s.View(func(tx *kv.Tx) error {
			want := map[bool]int{true: 1, false: kv.SchemaVersion}[ro]
			if v := tx.SchemaVersion(); v != want || tx.Exists(kv.BucketHistory) == ro || tx.Exists(kv.BucketRecent) == ro {
				t.Errorf("read-only %v: schema %d, history bucket %v, recent bucket %v; want schema %d and the buckets only when writable",
					ro, v, tx.Exists(kv.BucketHistory), tx.Exists(kv.BucketRecent), want)
			}
			return nil
		})
		s.Close()
	}
}

// The file is grown a MiB ahead of its pages, not to bbolt's doubling
// memory map: a crawl's store on disk is what it holds. A store written
// through a map far larger than the file (MapAhead, the import's) is the
// same on disk: it reopens without it whole, and a copy short of its
// last page is refused as truncated.
func TestStore_FileFollowsPages(t *testing.T) {
	for _, ahead := range []int{0, 64 << 20} {
		t.Run(fmt.Sprintf("MapAhead %d", ahead), func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "w.bolt")
			s, err := kv.Open(p, kv.Options{NoSync: true, MapAhead: ahead})
			if err != nil {
				t.Fatal(err)
			}
			val := bytes.Repeat([]byte{7}, 500)
			for i := range 200 {
				err := s.Update(func(tx *kv.Tx) error {
					for j := range 100 {
						if err := tx.PutRaw(kv.BucketRobots, []byte(fmt.Sprintf("host%06d", i*100+j)), val); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			var pages int64
			s.View(func(tx *kv.Tx) error { pages = tx.Size(); return nil })
			s.Close()
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() < pages || fi.Size() > pages+1<<20+64<<10 { // its high-water page, then a MiB
				t.Errorf("file of %d bytes for %d bytes of pages, want at most a MiB more", fi.Size(), pages)
			}

			s, err = kv.Open(p, kv.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			var n int
			s.View(func(tx *kv.Tx) error {
				for i := range 200 * 100 {
					if bytes.Equal(tx.GetRaw(kv.BucketRobots, []byte(fmt.Sprintf("host%06d", i))), val) {
						n++
					}
				}
				return nil
			})
			s.Close()
			if n != 200*100 {
				t.Errorf("reopened: %d records, want %d", n, 200*100)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			short := filepath.Join(t.TempDir(), "short.bolt")
			if err := os.WriteFile(short, data[:pages-4096], 0o600); err != nil {
				t.Fatal(err)
			}
			if s, err := kv.Open(short, kv.Options{MapAhead: ahead}); !errors.Is(err, kv.ErrTruncated) {
				if err == nil {
					s.Close()
				}
				t.Errorf("a copy short of its last page: %v, want ErrTruncated", err)
			}
		})
	}
}

// CommitApplied tells applied before done: nil for a function that ran in
// a group that is committed, its own error for one that failed.
func TestStore_CommitApplied(t *testing.T) {
	s, err := kv.Open(filepath.Join(t.TempDir(), "w.bolt"), kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	boom := errors.New("boom")
	type call struct{ applied, done <-chan error }
	var calls []call
	for i := 0; i < 100; i++ {
		i := i
		a, d := s.CommitApplied(func(tx *kv.Tx) error {
			if i%10 == 3 {
				return boom
			}
			return tx.PutRaw(kv.BucketNodes, kv.U64(uint64(i)), []byte("x"))
		})
		calls = append(calls, call{a, d})
		// Plain commits share the groups; one of them fails too.
		s.Commit(func(tx *kv.Tx) error {
			if i == 50 {
				return boom
			}
			return tx.PutRaw(kv.BucketEdges, kv.U64(uint64(i)), []byte("y"))
		})
	}
	for i, c := range calls {
		// done first: applied must already hold its answer by then.
		err := <-c.done
		var applied error
		select {
		case applied = <-c.applied:
		default:
			t.Fatalf("fn %d: done before applied", i)
		}
		switch {
		case i%10 == 3 && (!errors.Is(err, boom) || !errors.Is(applied, boom)):
			t.Errorf("fn %d failed: done %v, applied %v; want boom for both", i, err, applied)
		case i%10 != 3 && (err != nil || applied != nil):
			t.Errorf("fn %d: done %v, applied %v; want nil for both", i, err, applied)
		}
	}
	_ = s.View(func(tx *kv.Tx) error {
		if got := tx.Len(kv.BucketNodes); got != 90 {
			t.Errorf("nodes: got %d keys, want 90", got)
		}
		if got := tx.Len(kv.BucketEdges); got != 99 {
			t.Errorf("edges: got %d keys, want 99", got)
		}
		return nil
	})
	s.Close()
	a, d := s.CommitApplied(func(*kv.Tx) error { return nil })
	if err := <-a; !errors.Is(err, kv.ErrClosed) {
		t.Errorf("applied after Close: %v, want ErrClosed", err)
	}
	if err := <-d; !errors.Is(err, kv.ErrClosed) {
		t.Errorf("done after Close: %v, want ErrClosed", err)
	}
}

// TestOpen_DanglingLink: a store named by a symbolic link to a file not
// yet there is created at the link's target; the link stays.
func TestOpen_DanglingLink(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "w.bolt")
	if err := os.Symlink("real.bolt", link); err != nil {
		t.Fatal(err)
	}
	s, err := kv.Open(link, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "real.bolt")); err != nil || fi.Size() == 0 {
		t.Errorf("no store at the link's target: %v", err)
	}
}
