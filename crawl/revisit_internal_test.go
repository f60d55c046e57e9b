package crawl

import (
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/kv"
)

// TestPromoteDue_DamagedNode: a due host whose node record does not
// decode is the store's error, not a host silently left unscheduled.
func TestPromoteDue_DamagedNode(t *testing.T) {
	c, s := depthCrawler(t, 0, 0)
	queue(t, c, s, "a.test", 0)
	now := time.Now()
	var node []byte
	err := s.Update(func(tx *kv.Tx) error {
		node = append(node, tx.GetRaw(kv.BucketNodes, kv.U64(1))...)
		if err := tx.PutRaw(kv.BucketNodes, kv.U64(1), []byte{0xc1}); err != nil { // 0xc1: never used by msgpack
			return err
		}
		return frontier.Schedule(tx, 1, now.Add(-time.Second), "")
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(func(tx *kv.Tx) error {
		_, err := c.promoteDue(tx, now, 10)
		return err
	})
	if err == nil {
		t.Error("promoteDue of a damaged node: no error")
	}
	// The store's invariants are checked when the test ends: undamaged.
	if err := s.Update(func(tx *kv.Tx) error { return tx.PutRaw(kv.BucketNodes, kv.U64(1), node) }); err != nil {
		t.Fatal(err)
	}
}
