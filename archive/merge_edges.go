// Merge's edges and their example links (--anchors): renumbered, weights
// and link facts summed, first/last-seen widened.

package archive

import (
	"encoding/binary"
	"fmt"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// anchors copies input i's example links (graph.Anchor) with their edge's
// ids remapped; an edge that has some in two inputs keeps the first
// input's, then the other's, as many as the longer list had.
func (m *merger) anchors(i int, src *kv.Store) error {
	ids := &m.ids[i]
	has := false
	if err := src.View(func(tx *kv.Tx) error { has = tx.Exists(kv.BucketAnchors); return nil }); err != nil || !has {
		return err // an older weaver's store: no anchors
	}
	type rec struct {
		from, to uint64
		list     []graph.Anchor
	}
	var batch []rec
	return m.scan(src, kv.BucketAnchors, func(k, v []byte) error {
		if len(k) != 16 {
			return fmt.Errorf("%s: anchors key %x: %w", src.Path(), k, graph.ErrInconsistent)
		}
		var list []graph.Anchor
		if err := kv.Decode(v, &list); err != nil {
			return fmt.Errorf("%s: anchors %x: %w", src.Path(), k, err)
		}
		batch = append(batch, rec{ids.get(binary.BigEndian.Uint64(k)), ids.get(binary.BigEndian.Uint64(k[8:])), list})
		return nil
	}, func() error {
		err := m.dst.Update(func(tx *kv.Tx) error {
			for _, r := range batch {
				if _, ok, err := graph.GetEdge(tx, r.from, r.to); err != nil || !ok {
					if err != nil {
						return err
					}
					continue // no edge of the output: the anchors have nothing to stand for
				}
				old, err := graph.GetAnchors(tx, r.from, r.to)
				if err != nil {
					return err
				}
				list := graph.MergeAnchors(old, r.list, max(len(old), len(r.list)))
				if err := graph.PutAnchors(tx, r.from, r.to, list); err != nil {
					return err
				}
			}
			return nil
		})
		batch = batch[:0]
		return err
	})
}
