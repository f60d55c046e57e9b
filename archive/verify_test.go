package archive_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

func TestVerifyFile(t *testing.T) {
	dir := t.TempDir()
	good := build(t, filepath.Join(dir, "good.bolt"), sample)
	info, err := archive.VerifyFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if info.Nodes != 4 || info.Edges != 3 || info.Queued != 1 || info.Leases != 1 || info.Weight != 6 {
		t.Errorf("info: %+v", info)
	}
	bad := filepath.Join(dir, "bad.bolt")
	s, err := kv.Open(bad, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx *kv.Tx) error { return tx.SetCounter("graph.nodes", 7) }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := archive.VerifyFile(bad); !errors.Is(err, graph.ErrInconsistent) {
		t.Errorf("got %v, want graph.ErrInconsistent", err)
	}
}
