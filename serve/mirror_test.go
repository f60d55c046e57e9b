package serve_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/serve"
)

// TestSummary_MirrorGroups: the summary lists the largest mirror groups,
// largest first, each with its first host first and at most MirrorHosts
// hosts named.
func TestSummary_MirrorGroups(t *testing.T) {
	s := storetest.MustOpen(t)
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	err := s.Update(func(tx *kv.Tx) error {
		// hash 1: m0..m6 (7 hosts), hash 2: p0, p1; hash 3: alone.
		for i, h := range []string{"m0", "m1", "m2", "m3", "m4", "m5", "m6", "p0", "p1", "solo"} {
			n, _, err := graph.Ensure(tx, h+".test", "http", t0.Add(time.Duration(i)*time.Minute))
			if err != nil {
				return err
			}
			hash := 1
			switch {
			case i >= 7 && i < 9:
				hash = 2
			case i == 9:
				hash = 3
			}
			n.Status, n.CrawlCount, n.ContentHash = graph.StatusCrawled, 1, fmt.Sprintf("%064x", hash)
			if _, err := graph.NoteContentHash(tx, &n); err != nil {
				return err
			}
			if err := graph.Put(tx, &n); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := serve.ReadSummary(s, t0)
	if err != nil {
		t.Fatal(err)
	}
	want := []serve.MirrorGroup{
		{First: "m0.test", Size: 7, Hosts: []string{"m0.test", "m1.test", "m2.test", "m3.test", "m4.test"}, ContentHash: fmt.Sprintf("%064x", 1)},
		{First: "p0.test", Size: 2, Hosts: []string{"p0.test", "p1.test"}, ContentHash: fmt.Sprintf("%064x", 2)},
	}
	if !reflect.DeepEqual(sum.MirrorGroups, want) {
		t.Errorf("got  %+v\nwant %+v", sum.MirrorGroups, want)
	}
}
