package graph_test

import (
	"encoding/binary"
	"errors"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// FuzzHistorySegment reads arbitrary bytes as a history segment, open and
// sealed: a damaged one gives ErrBadHistory, never a panic, and allocates
// no more than its size allows. Seeds are the segments of a real history.
func FuzzHistorySegment(f *testing.F) {
	s := storetest.MustOpen(f)
	err := s.Update(func(tx *kv.Tx) error {
		n, _, err := graph.Ensure(tx, "a.test", "http", t0)
		if err != nil {
			return err
		}
		var prev *graph.Crawl
		for i := range 40 {
			c := graph.Crawl{At: t0.Add(time.Duration(i) * time.Second), NotModified: i%5 == 1,
				Links: []graph.Link{{To: 2, Weight: 1, Frame: uint64(i % 2)}, {To: 9, Weight: uint64(1 + i/10), Nofollow: 1, Redirect: 1}}}
			if err := graph.PutCrawl(tx, n.ID, c, prev); err != nil {
				return err
			}
			prev = &c
		}
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	s.View(func(tx *kv.Tx) error {
		sealed, open := graph.SegmentValues(tx, 1)
		for _, v := range append(sealed, open) {
			f.Add(v)
		}
		return nil
	})
	// A record claiming 2^35 links in a few bytes.
	huge := binary.AppendUvarint(binary.BigEndian.AppendUint64([]byte{0, 0}, uint64(t0.UnixNano())), 0)
	f.Add(binary.AppendUvarint(huge, 1<<35))
	allocs := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		metrics.Read(allocs)
		before := allocs[0].Value.Uint64()
		for _, seq := range []uint64{0, 1 << 40} {
			if err := graph.WalkSegment(seq, 1, data); err != nil && !errors.Is(err, graph.ErrBadHistory) {
				t.Fatalf("segment %x: %v, want nil or ErrBadHistory", data, err)
			}
		}
		metrics.Read(allocs)
		if got, limit := allocs[0].Value.Uint64()-before, uint64(1<<20+64*len(data)); got > limit { // the heap is the process's: the fuzzer allocates too
			t.Fatalf("reading %d bytes allocated %d (limit %d)", len(data), got, limit)
		}
	})
}
