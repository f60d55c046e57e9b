package kv_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/weaver-crawler/weaver/kv"
)

// BenchmarkGetRaw is a page commit's lookups: random hosts of 100,000 in
// the hosts bucket, in a write transaction that also writes.
//
//	go test ./kv -run '^$' -bench GetRaw -benchmem
func BenchmarkGetRaw(b *testing.B) {
	s, err := kv.Open(filepath.Join(b.TempDir(), "g.bolt"), kv.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n = 100_000
	keys := make([][]byte, n)
	err = s.Update(func(tx *kv.Tx) error {
		for i := range keys {
			keys[i] = fmt.Appendf(nil, "www.host-%d.example", i)
			if err := tx.PutRaw(kv.BucketHosts, keys[i], kv.U64(uint64(i+1))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	b.ResetTimer()
	err = s.Update(func(tx *kv.Tx) error {
		for i := 0; b.Loop(); i++ {
			if tx.GetRaw(kv.BucketHosts, keys[r.IntN(n)]) == nil {
				b.Fatal("missing key")
			}
			if i%40 == 0 { // a new host now and then
				if err := tx.PutRaw(kv.BucketHosts, fmt.Appendf(nil, "new-%d.example", i), kv.U64(uint64(i))); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
