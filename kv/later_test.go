package kv_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	berrors "go.etcd.io/bbolt/errors"

	"github.com/weaver-crawler/weaver/kv"
)

func openTemp(t testing.TB) *kv.Store {
	t.Helper()
	s, err := kv.Open(filepath.Join(t.TempDir(), "l.bolt"), kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// keysOf walks bucket in a transaction of its own.
func keysOf(t *testing.T, s *kv.Store, bucket []byte) []string {
	t.Helper()
	var keys []string
	if err := s.View(func(tx *kv.Tx) error {
		c := tx.Cursor(bucket)
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			keys = append(keys, string(k))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}

func TestPutLater_SeenAtOnceStoredAtCommit(t *testing.T) {
	s := openTemp(t)
	if err := s.Update(func(tx *kv.Tx) error {
		return tx.PutRaw(kv.BucketHosts, []byte("b.example"), kv.U64(2))
	}); err != nil {
		t.Fatal(err)
	}
	err := s.Update(func(tx *kv.Tx) error {
		for _, h := range []string{"d.example", "a.example", "c.example", "e.example"} {
			if err := tx.PutLater(kv.BucketHosts, []byte(h), []byte(h)); err != nil {
				return err
			}
		}
		if got := string(tx.GetRaw(kv.BucketHosts, []byte("c.example"))); got != "c.example" {
			t.Errorf("GetRaw of a held write: %q", got)
		}
		// PutRaw and Delete of a held key replace it.
		if err := tx.PutRaw(kv.BucketHosts, []byte("d.example"), []byte("raw")); err != nil {
			return err
		}
		if err := tx.Delete(kv.BucketHosts, []byte("e.example")); err != nil {
			return err
		}
		if got := tx.GetRaw(kv.BucketHosts, []byte("e.example")); got != nil {
			t.Errorf("deleted key still read: %q", got)
		}
		// A later PutLater of a key wins over the earlier one.
		if err := tx.PutLater(kv.BucketHosts, []byte("a.example"), []byte("again")); err != nil {
			return err
		}
		// A cursor sees the held writes, in key order.
		var keys []string
		c := tx.Cursor(kv.BucketHosts)
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			keys = append(keys, string(k))
		}
		if want := []string{"a.example", "b.example", "c.example", "d.example"}; !slices.Equal(keys, want) {
			t.Errorf("cursor in the transaction: %q, want %q", keys, want)
		}
		// Writes after the cursor are held again, and stored at the commit.
		return tx.PutLater(kv.BucketHosts, []byte("f.example"), []byte("f"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keysOf(t, s, kv.BucketHosts), []string{"a.example", "b.example", "c.example", "d.example", "f.example"}; !slices.Equal(got, want) {
		t.Errorf("after the commit: %q, want %q", got, want)
	}
	if err := s.View(func(tx *kv.Tx) error {
		for k, want := range map[string]string{"a.example": "again", "d.example": "raw", "f.example": "f"} {
			if got := string(tx.GetRaw(kv.BucketHosts, []byte(k))); got != want {
				t.Errorf("%s: %q, want %q", k, got, want)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestPutLater_RolledBackWithTheTransaction(t *testing.T) {
	s := openTemp(t)
	stop := errors.New("stop")
	err := s.Update(func(tx *kv.Tx) error {
		if err := tx.PutLater(kv.BucketHosts, []byte("a.example"), kv.U64(1)); err != nil {
			return err
		}
		return stop
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Update: %v", err)
	}
	if got := keysOf(t, s, kv.BucketHosts); len(got) != 0 {
		t.Errorf("a rolled back transaction stored %q", got)
	}
	// Nor does a later transaction store it.
	if err := s.Update(func(tx *kv.Tx) error { return tx.PutRaw(kv.BucketHosts, []byte("b.example"), kv.U64(2)) }); err != nil {
		t.Fatal(err)
	}
	if got := keysOf(t, s, kv.BucketHosts); !slices.Equal(got, []string{"b.example"}) {
		t.Errorf("got %q", got)
	}
}

func TestPutLater_BadWrites(t *testing.T) {
	s := openTemp(t)
	err := s.View(func(tx *kv.Tx) error { return tx.PutLater(kv.BucketHosts, []byte("a"), nil) })
	if !errors.Is(err, berrors.ErrTxNotWritable) {
		t.Errorf("in a read transaction: %v", err)
	}
	err = s.Update(func(tx *kv.Tx) error { return tx.PutLater(kv.BucketHosts, nil, []byte("v")) })
	if !errors.Is(err, berrors.ErrKeyRequired) {
		t.Errorf("empty key: %v", err)
	}
	err = s.Update(func(tx *kv.Tx) error { return tx.PutLater(kv.BucketHosts, make([]byte, 40000), []byte("v")) })
	if !errors.Is(err, berrors.ErrKeyTooLarge) {
		t.Errorf("key too large: %v", err)
	}
}

// BenchmarkRandomInserts puts 20,000 random keys into the hosts bucket in
// one transaction, as an import's batch discovering new hosts does: with
// PutRaw, bbolt shifts the growing leaf at each key (it splits leaves only
// at the commit); with PutLater they go in key order.
//
//	go test ./kv -run '^$' -bench RandomInserts
func BenchmarkRandomInserts(b *testing.B) {
	for _, put := range []string{"PutRaw", "PutLater"} {
		b.Run(put, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			for b.Loop() {
				b.StopTimer()
				s := openTemp(b)
				b.StartTimer()
				err := s.Update(func(tx *kv.Tx) error {
					for i := range 20_000 {
						k := fmt.Appendf(nil, "www.host-%d.example", r.Uint64())
						var err error
						if put == "PutRaw" {
							err = tx.PutRaw(kv.BucketHosts, k, kv.U64(uint64(i+1)))
						} else {
							err = tx.PutLater(kv.BucketHosts, k, kv.U64(uint64(i+1)))
						}
						if err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
