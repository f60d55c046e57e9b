package graph_test

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// A node's crawls: links with their own weights, a crawl with the same
// links stored as its time and flags alone, the graph at any time, and
// what changed.
func TestHistory_CrawlsAndEdgesAt(t *testing.T) {
	s := storetest.MustOpen(t)
	var a, b, c, d uint64
	put := func(tx *kv.Tx, from uint64, at time.Time, links ...graph.Link) {
		t.Helper()
		prev, ok, err := graph.LatestCrawl(tx, from)
		if err != nil {
			t.Fatal(err)
		}
		var pp *graph.Crawl
		if ok {
			pp = &prev
		}
		graph.SortLinks(links)
		for _, l := range links {
			if err := graph.AddEdgeFacts(tx, from, l.To, l.Weight, l.Nofollow, l.Redirect, at); err != nil {
				t.Fatal(err)
			}
		}
		if err := graph.PutCrawl(tx, from, graph.Crawl{At: at, Links: links}, pp); err != nil {
			t.Fatal(err)
		}
	}
	err := s.Update(func(tx *kv.Tx) error {
		for i, h := range []string{"a.test", "b.test", "c.test", "d.test"} {
			n, _, err := graph.Ensure(tx, h, "http", t0)
			if err != nil {
				return err
			}
			*[]*uint64{&a, &b, &c, &d}[i] = n.ID
		}
		put(tx, a, t0.Add(1*time.Second), graph.Link{To: c, Weight: 2, Nofollow: 1}, graph.Link{To: b, Weight: 1})
		put(tx, a, t0.Add(2*time.Second), graph.Link{To: b, Weight: 1}, graph.Link{To: c, Weight: 2, Nofollow: 1}) // the same
		put(tx, a, t0.Add(3*time.Second), graph.Link{To: d, Weight: 300, Redirect: 1})                             // b and c gone
		put(tx, a, t0.Add(4*time.Second), graph.Link{To: b, Weight: 1})                                            // b back
		put(tx, b, t0.Add(2500*time.Millisecond), graph.Link{To: a, Weight: 1})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	at := func(tx *kv.Tx, tm time.Time) map[[2]uint64]uint64 {
		out := map[[2]uint64]uint64{}
		if err := graph.EdgesAt(tx, tm, func(e *graph.Edge) error { out[[2]uint64{e.From, e.To}] = e.Weight; return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	s.View(func(tx *kv.Tx) error {
		for _, tc := range []struct {
			at   time.Duration
			want map[[2]uint64]uint64
		}{
			{500 * time.Millisecond, map[[2]uint64]uint64{}},
			{1 * time.Second, map[[2]uint64]uint64{{a, b}: 1, {a, c}: 2}},
			{2600 * time.Millisecond, map[[2]uint64]uint64{{a, b}: 1, {a, c}: 2, {b, a}: 1}},
			{3 * time.Second, map[[2]uint64]uint64{{a, d}: 300, {b, a}: 1}},
			{time.Hour, map[[2]uint64]uint64{{a, b}: 1, {b, a}: 1}},
		} {
			got := at(tx, t0.Add(tc.at))
			if len(got) != len(tc.want) {
				t.Errorf("at +%v: %v, want %v", tc.at, got, tc.want)
				continue
			}
			for k, w := range tc.want {
				if got[k] != w {
					t.Errorf("at +%v: %v, want %v", tc.at, got, tc.want)
				}
			}
		}
		// The same links cost a time step and the flags.
		if sizes, err := graph.RecordSizes(tx, a); err != nil || len(sizes) != 4 || sizes[1] > 5 || sizes[0] < 6 {
			t.Errorf("a's records: %v bytes (%v), want the second, with the links of the first, at most 5", sizes, err)
		}
		if stored, err := graph.LinksStored(tx, a); err != nil || !slices.Equal(stored, []bool{true, false, true, true}) {
			t.Errorf("a's records hold their links: %v (%v), want all but the second", stored, err)
		}
		cr, ok, err := graph.CrawlAt(tx, a, t0.Add(2*time.Second))
		if err != nil || !ok || len(cr.Links) != 2 || cr.Links[1].Nofollow != 1 {
			t.Errorf("CrawlAt +2s: %+v %v %v", cr, ok, err)
		}
		latest, _, _ := graph.LatestCrawl(tx, a)
		if !graph.Gone(&latest, c) || graph.Gone(&latest, b) || graph.Gone(nil, c) {
			t.Error("Gone: c is gone from a's latest crawl, b is not, and no history says nothing is")
		}
		times, _, _, err := graph.CrawlTimes(tx, a)
		if err != nil || len(times) != 4 || !times[0].Equal(t0.Add(time.Second)) {
			t.Errorf("crawl times %v, %v", times, err)
		}
		app, dis, err := graph.DiffAt(tx, t0.Add(2*time.Second), t0.Add(time.Hour))
		if err != nil || len(app) != 1 || app[0] != (graph.EdgeChange{From: b, To: a, Weight: 1}) || len(dis) != 1 || dis[0].To != c || dis[0].Weight != 2 {
			t.Errorf("diff: appeared %v, disappeared %v, %v", app, dis, err)
		}
		// The intervals of a's edges: b went at 3 s and came back at 4 s.
		iv, first, err := graph.EdgeIntervals(tx, a)
		sec := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
		wantIv := map[uint64][]graph.Interval{
			b: {{Start: sec(1), End: sec(3)}, {Start: sec(4)}},
			c: {{Start: sec(1), End: sec(3)}},
			d: {{Start: sec(3), End: sec(4)}},
		}
		if err != nil || !first.Equal(sec(1)) || len(iv) != len(wantIv) {
			t.Errorf("intervals %v, first %v, %v", iv, first, err)
		}
		for to, w := range wantIv {
			if got := iv[to]; len(got) != len(w) || !got[0].Start.Equal(w[0].Start) || !got[0].End.Equal(w[0].End) ||
				len(w) == 2 && (!got[1].Start.Equal(w[1].Start) || !got[1].End.IsZero()) {
				t.Errorf("intervals a→%d: %v, want %v", to, got, w)
			}
		}
		h, err := graph.NodeHistoryAt(tx, a, sec(2.5))
		if err != nil || h.Records != 4 || h.Crawls != 2 || !h.Last.Equal(sec(2)) || h.ChangedAfter {
			t.Errorf("history of a at 2.5 s: %+v, %v", h, err)
		}
		return nil
	})
	// Written anew: the same crawls, the unchanged one without links.
	var all []graph.Crawl
	s.View(func(tx *kv.Tx) error {
		return graph.ForEachCrawl(tx, a, func(c *graph.Crawl) error {
			cr := *c
			cr.Links = slices.Clone(c.Links)
			all = append(all, cr)
			return nil
		})
	})
	if err := s.Update(func(tx *kv.Tx) error { return graph.ReplaceHistory(tx, a, all) }); err != nil {
		t.Fatal(err)
	}
	s.View(func(tx *kv.Tx) error {
		if stored, err := graph.LinksStored(tx, a); err != nil || !slices.Equal(stored, []bool{true, false, true, true}) {
			t.Errorf("rewritten, a's records hold their links: %v (%v), want all but the second", stored, err)
		}
		cr, _, err := graph.CrawlAt(tx, a, t0.Add(2*time.Second))
		if err != nil || len(cr.Links) != 2 || cr.Links[1].Nofollow != 1 {
			t.Errorf("CrawlAt +2s: %+v %v", cr, err)
		}
		return nil
	})
	if err := storetest.CheckAll(s); err != nil {
		t.Fatal(err)
	}
}

// A damaged record is an error, never a panic, in either layout, and the
// store's check reports it.
func TestHistory_Damaged(t *testing.T) {
	s := storetest.MustOpen(t)
	if err := s.Update(func(tx *kv.Tx) error { _, _, err := graph.Ensure(tx, "a.test", "http", t0); return err }); err != nil {
		t.Fatal(err)
	}
	v1key := append(kv.U64(1), kv.U64(uint64(t0.UnixNano()))...)
	tm := binary.BigEndian.AppendUint64(nil, uint64(t0.UnixNano()))
	seg := func(prev, base byte, recs ...byte) []byte { return append(append([]byte{prev, base}, tm...), recs...) }
	for _, tc := range []struct {
		bucket, key, val []byte
	}{
		{kv.BucketCrawls, v1key, []byte{0, 0x80}},
		{kv.BucketCrawls, v1key, []byte{0, 1, 0x80}},
		{kv.BucketCrawls, v1key, []byte{0, 1, 2 /* nofollow flag, its count missing */}},
		{kv.BucketCrawls, v1key, []byte{0, 1, 0xfe}},
		{kv.BucketRecent, kv.U64(1), []byte{}},
		{kv.BucketRecent, kv.U64(1), []byte{0}},
		{kv.BucketRecent, kv.U64(1), seg(0, 0)},                                     // no record
		{kv.BucketRecent, kv.U64(1), seg(0, 0, 0x80)},                               // a record cut short
		{kv.BucketRecent, kv.U64(1), seg(0, 0, 0x08)},                               // the first record 1 ns after the segment's time
		{kv.BucketRecent, kv.U64(1), seg(0, 0, 0x04, 0x04)},                         // a second record at the same time
		{kv.BucketRecent, kv.U64(1), seg(0, 0, 0x00, 0x05, 0x01)},                   // 5 links in 1 byte
		{kv.BucketRecent, kv.U64(1), seg(0, 0, 0x00, 0x01, 0x01, 0x06)},             // a nofollow count missing
		{kv.BucketRecent, kv.U64(1), seg(0, 0, 0x00, 0x02, 0x01, 0x04, 0x00, 0x04)}, // the same target twice
		{kv.BucketRecent, kv.U64(1), seg(1, 2, 0x00, 0x00)},                         // a base after the segment before
		{kv.BucketRecent, kv.U64(1), seg(5, 5, 0x04)},                               // links in a segment that is not there
	} {
		if err := s.Update(func(tx *kv.Tx) error { return tx.PutRaw(tc.bucket, tc.key, tc.val) }); err != nil {
			t.Fatal(err)
		}
		s.View(func(tx *kv.Tx) error {
			if _, _, err := graph.LatestCrawl(tx, 1); !errors.Is(err, graph.ErrBadHistory) {
				t.Errorf("%s %x: LatestCrawl: %v, want ErrBadHistory", tc.bucket, tc.val, err)
			}
			if err := graph.ForEachCrawl(tx, 1, func(*graph.Crawl) error { return nil }); !errors.Is(err, graph.ErrBadHistory) {
				t.Errorf("%s %x: ForEachCrawl: %v, want ErrBadHistory", tc.bucket, tc.val, err)
			}
			if err := graph.Check(tx); !errors.Is(err, graph.ErrInconsistent) {
				t.Errorf("%s %x: Check: %v, want ErrInconsistent", tc.bucket, tc.val, err)
			}
			return nil
		})
		if err := s.Update(func(tx *kv.Tx) error { return tx.Delete(tc.bucket, tc.key) }); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHistory_Frames: a crawl's frame counts (schema 4) are kept with its
// links, read back with them, and tell a crawl from one whose links are
// the same but not framed.
func TestHistory_Frames(t *testing.T) {
	s := storetest.MustOpen(t)
	links := [][]graph.Link{
		{{To: 2, Weight: 3, Frame: 2}, {To: 3, Weight: 1}, {To: 4, Weight: 2, Nofollow: 1, Redirect: 1, Frame: 1}},
		{{To: 2, Weight: 3, Frame: 2}, {To: 3, Weight: 1}, {To: 4, Weight: 2, Nofollow: 1, Redirect: 1, Frame: 1}},
		{{To: 2, Weight: 3}, {To: 3, Weight: 1}, {To: 4, Weight: 2, Nofollow: 1, Redirect: 1, Frame: 1}},
	}
	err := s.Update(func(tx *kv.Tx) error {
		n, _, err := graph.Ensure(tx, "framed.test", "http", t0)
		if err != nil {
			return err
		}
		var prev *graph.Crawl
		for i, ls := range links {
			c := graph.Crawl{At: t0.Add(time.Duration(i+1) * time.Second), Links: ls}
			if prev != nil {
				c.Changed = !graph.SameLinks(prev.Links, c.Links)
			}
			if err := graph.PutCrawl(tx, n.ID, c, prev); err != nil {
				return err
			}
			prev = &c
		}
		var got []graph.Crawl
		if err := graph.ForEachCrawl(tx, n.ID, func(c *graph.Crawl) error { got = append(got, *c); return nil }); err != nil {
			return err
		}
		if len(got) != 3 {
			t.Fatalf("%d crawls read back, want 3", len(got))
		}
		for i, c := range got {
			if !slices.Equal(c.Links, links[i]) {
				t.Errorf("crawl %d: links %+v, want %+v", i, c.Links, links[i])
			}
			if want := i == 2; c.Changed != want {
				t.Errorf("crawl %d: changed %v, want %v", i, c.Changed, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
