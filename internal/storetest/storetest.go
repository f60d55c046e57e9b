// Package storetest opens real weaver stores in a test's temporary
// directory and checks every invariant when the test ends.
package storetest

import (
	"path/filepath"
	"testing"

	"weaver/frontier"
	"weaver/graph"
	"weaver/kv"
)

// MustOpen opens a new store in t.TempDir(). Its cleanup closes the store
// and runs CheckAll on the file, so every test also checks consistency.
func MustOpen(tb testing.TB) *kv.Store {
	tb.Helper()
	return MustOpenPath(tb, filepath.Join(tb.TempDir(), "weaver.bolt"), kv.Options{})
}

// MustOpenPath is MustOpen for a chosen path and options.
func MustOpenPath(tb testing.TB, path string, opts kv.Options) *kv.Store {
	tb.Helper()
	s, err := kv.Open(path, opts)
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close store: %v", err)
		}
		ro, err := kv.Open(path, kv.Options{ReadOnly: true})
		if err != nil {
			tb.Errorf("reopen store for checks: %v", err)
			return
		}
		defer ro.Close()
		if err := CheckAll(ro); err != nil {
			tb.Errorf("store invariants: %v", err)
		}
	})
	return s
}

// CheckAll runs bbolt's consistency check and weaver's own invariants
// (graph and frontier) on s.
func CheckAll(s *kv.Store) error {
	if err := s.Check(); err != nil {
		return err
	}
	return s.View(func(tx *kv.Tx) error {
		if err := graph.Check(tx); err != nil {
			return err
		}
		return frontier.Check(tx, func(id uint64) bool {
			return tx.GetRaw(kv.BucketNodes, kv.U64(id)) != nil
		})
	})
}
