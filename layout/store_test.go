package layout_test

import (
	"slices"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/layout"
)

// TestSave_Replaces: a layout saved over another keeps exactly the new
// one's hosts and values, whatever the old one held (a host gone, a key
// of the wrong size).
func TestSave_Replaces(t *testing.T) {
	s := storetest.MustOpen(t)
	stored := func(ids []uint64, base float64) *layout.Stored {
		st := &layout.Stored{IDs: ids}
		for i := range ids {
			st.Community = append(st.Community, uint32(i%3))
			st.X = append(st.X, base+float64(i))
			st.Y = append(st.Y, base-float64(i))
		}
		return st
	}
	save := func(st *layout.Stored) {
		t.Helper()
		if err := s.Update(func(tx *kv.Tx) error { return layout.Save(tx, st) }); err != nil {
			t.Fatal(err)
		}
	}
	save(stored([]uint64{1, 2, 3, 7}, 10))
	if err := s.Update(func(tx *kv.Tx) error { return tx.PutRaw(kv.BucketLayout, []byte("odd"), []byte("x")) }); err != nil {
		t.Fatal(err)
	}
	want := stored([]uint64{2, 3, 4, 9}, 20)
	save(want)
	var got *layout.Stored
	if err := s.View(func(tx *kv.Tx) error {
		var err error
		got, _, err = layout.Load(tx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got == nil || !slices.Equal(got.IDs, want.IDs) || !slices.Equal(got.Community, want.Community) ||
		!slices.Equal(got.X, want.X) || !slices.Equal(got.Y, want.Y) {
		t.Errorf("after a second save the store holds %+v, want %+v", got, want)
	}
}

// TestSave_PacksPages: a layout's records go in in id order, at the end of
// the key space, so its leaves are packed (kv's fill percent for the
// bucket) instead of left half empty by bbolt's default split: on a
// million hosts 45 MB of a 1 GB store.
func TestSave_PacksPages(t *testing.T) {
	s := storetest.MustOpen(t)
	st := &layout.Stored{}
	for i := range 50_000 {
		st.IDs = append(st.IDs, uint64(i+1))
		st.Community = append(st.Community, uint32(i%40))
		st.X, st.Y = append(st.X, float64(i)), append(st.Y, -float64(i))
	}
	if err := s.Update(func(tx *kv.Tx) error { return layout.Save(tx, st) }); err != nil {
		t.Fatal(err)
	}
	path := s.Path()
	s.Close()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bbolt.Tx) error {
		bs := tx.Bucket(kv.BucketLayout).Stats()
		fill := float64(bs.LeafInuse) / float64(bs.LeafPageN*db.Info().PageSize)
		if bs.KeyN != 50_000 || fill < 0.85 {
			t.Errorf("%d records in %d leaves, %.0f %% full; want 50,000 in leaves at least 85 %% full", bs.KeyN, bs.LeafPageN, 100*fill)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWalker: a Walker finds what Load finds, asked for every node in
// id order or for a few far apart, and nothing for nodes without a record
// or in a store without a layout.
func TestWalker(t *testing.T) {
	s := storetest.MustOpen(t)
	if err := s.View(func(tx *kv.Tx) error {
		if w := layout.NewWalker(tx); w != nil {
			t.Errorf("a store without a layout: a walker %v", w)
		}
		var none *layout.Walker
		if _, _, _, ok := none.At(1); ok {
			t.Error("a nil walker found node 1")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	st := &layout.Stored{}
	for i := range 3000 {
		if i%7 == 3 {
			continue // a node without a record
		}
		id := uint64(2*i + 1)
		st.IDs = append(st.IDs, id)
		st.Community = append(st.Community, uint32(i%11))
		st.X, st.Y = append(st.X, float64(i)/3), append(st.Y, -float64(i))
	}
	if err := s.Update(func(tx *kv.Tx) error { return layout.Save(tx, st) }); err != nil {
		t.Fatal(err)
	}
	for _, every := range []uint64{1, 2, 97, 1001} {
		if err := s.View(func(tx *kv.Tx) error {
			w := layout.NewWalker(tx)
			found := 0
			for id := uint64(1); id <= 6100; id += every {
				c, x, y, ok := w.At(id)
				wc, wx, wy, wok := st.Lookup(id)
				if ok != wok || c != wc || x != wx || y != wy {
					t.Fatalf("every %d: node %d: (%d, %g, %g, %t), want (%d, %g, %g, %t)", every, id, c, x, y, ok, wc, wx, wy, wok)
				}
				if ok {
					found++
				}
			}
			if found == 0 {
				t.Errorf("every %d: found no node", every)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}
