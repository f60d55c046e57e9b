package archive_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// TestRepair_Anchors: repair copies the example links of the edges it
// keeps, and drops, naming them, the ones of no edge and the ones that do
// not decode.
func TestRepair_Anchors(t *testing.T) {
	dir := t.TempDir()
	base, src := filepath.Join(dir, "base.bolt"), filepath.Join(dir, "src.bolt")
	a := graph.Anchor{Page: "http://a.test/", URL: "http://b.test/", Text: "B", Rel: "nofollow"}
	var ida, idb uint64
	build(t, base, func(b *builder) {
		b.crawled("a.test", 1, 0, "A")
		b.edge("a.test", "b.test", 1, 0)
		ida, idb = b.node("a.test", nil), b.node("b.test", nil)
		b.must(graph.PutAnchors(b.tx, ida, idb, []graph.Anchor{a}))
	})
	// Records a damaged store could hold: anchors of no edge, a value
	// that is no list, a key of the wrong size.
	copyFile(t, base, src)
	s, err := kv.Open(src, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(func(tx *kv.Tx) error {
		if err := graph.PutAnchors(tx, idb, ida, []graph.Anchor{a}); err != nil {
			return err
		}
		if err := tx.PutRaw(kv.BucketAnchors, append(kv.U64(ida), kv.U64(99)...), []byte{0xc0}); err != nil {
			return err
		}
		return tx.PutRaw(kv.BucketAnchors, []byte("short"), []byte{0x91, 0x95})
	})
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.bolt")
	res, drops, err := repair(t, src, out)
	if err != nil {
		t.Fatal(err)
	}
	if res.ByBucket["anchors"] != 3 || len(drops) != 3 {
		t.Errorf("dropped %v: %v", res.ByBucket, drops)
	}
	if _, err := archive.VerifyFile(out); err != nil {
		t.Fatal(err)
	}
	s, err = kv.Open(out, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.View(func(tx *kv.Tx) error {
		got, err := graph.GetAnchors(tx, ida, idb)
		if err != nil || !slices.Equal(got, []graph.Anchor{a}) {
			t.Errorf("anchors a→b: %v, %v", got, err)
		}
		if err := graph.Check(tx); err != nil {
			t.Error(err)
		}
		return nil
	})
}
