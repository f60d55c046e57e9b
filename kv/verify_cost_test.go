package kv_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/kv"
)

// TestVerifyCost measures what Open's walk of the pages costs on a large
// store, against an open without it and bbolt's Tx.Check (weaver check).
// It runs only when asked, as it writes a big file:
//
//	WEAVER_VERIFY_COST_MB=1024 go test -run TestVerifyCost -v -count=1 ./kv
//
// The store holds nodes of 300-byte values and edges of 16-byte keys,
// the shape of a crawl's, written in key order (half-full pages, as a
// crawl's random inserts leave them about).
func TestVerifyCost(t *testing.T) {
	mb, _ := strconv.Atoi(os.Getenv("WEAVER_VERIFY_COST_MB"))
	if mb <= 0 {
		t.Skip("set WEAVER_VERIFY_COST_MB to measure")
	}
	dir := os.Getenv("WEAVER_VERIFY_COST_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, "big.bolt")
	if fi, err := os.Stat(path); err != nil || fi.Size() < int64(mb)<<20 {
		os.Remove(path)
		start := time.Now()
		s, err := kv.Open(path, kv.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		val := bytes.Repeat([]byte{0xa5}, 300)
		edge := []byte{0x93, 1, 2, 3}
		for id := uint64(0); ; {
			err := s.Update(func(tx *kv.Tx) error {
				for range 20000 {
					id++
					if err := tx.PutRaw(kv.BucketNodes, kv.U64(id), val); err != nil {
						return err
					}
					for j := range uint64(4) {
						k := make([]byte, 16)
						binary.BigEndian.PutUint64(k, id)
						binary.BigEndian.PutUint64(k[8:], id*7+j)
						if err := tx.PutRaw(kv.BucketEdges, k, edge); err != nil {
							return err
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			var size int64
			s.View(func(tx *kv.Tx) error { size = tx.Size(); return nil })
			if size >= int64(mb)<<20 {
				break
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("built %s in %s", path, time.Since(start).Round(time.Millisecond))
	}
	fi, _ := os.Stat(path)
	t.Logf("store: %d MiB", fi.Size()>>20)
	timed := func(what string, fn func() error) {
		start := time.Now()
		if err := fn(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		t.Logf("%-40s %s", what, time.Since(start).Round(time.Millisecond))
	}
	open := func(opts kv.Options) func() error {
		return func() error {
			s, err := kv.Open(path, opts)
			if err != nil {
				return err
			}
			return s.Close()
		}
	}
	for range 2 { // the second round with the file in the page cache
		timed("Open read-only, unverified", open(kv.Options{ReadOnly: true, Unverified: true}))
		timed("Open read-only (walk of the pages)", open(kv.Options{ReadOnly: true}))
		timed("Open read-write (walk of the pages)", open(kv.Options{}))
		timed("bbolt Tx.Check (weaver check's)", func() error {
			s, err := kv.Open(path, kv.Options{ReadOnly: true, Unverified: true})
			if err != nil {
				return err
			}
			defer s.Close()
			return s.Check()
		})
	}
}
