package archive_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/crawl/robots"
	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// crawlLike fills a store the way a long crawl does, over enough pages
// that every bucket but meta has leaf pages of its own: n hosts, each
// linked to a few others, a third of them crawled, the rest queued at
// depth 1 or 2, 80 of those leased, all admitted, robots.txt rules cached
// for a tenth. A last, small transaction records a job configuration, so
// that the file's previous transaction already holds every record.
func crawlLike(tb testing.TB, path string, n int) string {
	tb.Helper()
	build(tb, path, func(b *builder) {
		host := func(i int) string { return fmt.Sprintf("h%04d.example-%d.com", i, i%97) }
		rules, err := robots.FromResponse(200, []byte("User-agent: *\nDisallow: /private\n")).MarshalBinary()
		b.must(err)
		for i := 0; i < n; i++ {
			if i%3 == 0 {
				b.crawled(host(i), 1, i%60, fmt.Sprintf("Host %d", i))
			} else {
				b.node(host(i), nil)
			}
			b.admit(host(i))
		}
		for i := 0; i < n; i++ {
			for _, d := range []int{1, 7, 31} {
				b.edge(host(i), host((i+d)%n), uint64(1+i%5), i%60)
			}
			if i%10 == 0 {
				b.must(b.tx.Put(kv.BucketRobots, []byte(host(i)), &robotsRecord{Fetched: at(i % 60), Rules: rules}))
			}
		}
		leased := 0
		for i := 0; i < n; i++ {
			if i%3 == 0 {
				continue
			}
			if i%7 == 1 && leased < 80 {
				b.lease(host(i), 1+i%2)
				leased++
			} else {
				b.push(host(i), 1+i%2)
			}
		}
	})
	s, err := kv.Open(path, kv.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	if err := s.Update(func(tx *kv.Tx) error {
		if err := tx.SetMetaString("job_config", `{"seeds":["http://h0000.example-0.com/"]}`); err != nil {
			return err
		}
		return tx.SetMetaString("listen_addr", "127.0.0.1:8088")
	}); err != nil {
		tb.Fatal(err)
	}
	return path
}

// recovered is what a repair of the healthy store at path must give: the
// store as a crawl resuming it sees it, its leases back in the queue.
func recovered(t *testing.T, path string) view {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "recovered.bolt")
	copyFile(t, path, cp)
	s, err := kv.Open(cp, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx *kv.Tx) error { _, err := frontier.Recover(tx); return err }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	return read(t, cp)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func fileHash(t *testing.T, path string) [32]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}

// repair runs archive.Repair and returns what it reported.
func repair(t *testing.T, src, out string) (archive.RepairResult, []archive.Drop, error) {
	t.Helper()
	var drops []archive.Drop
	res, err := archive.Repair(context.Background(), src, out, archive.RepairOptions{
		Force:    true,
		DropMeta: []string{"listen_addr"},
		Report:   func(d archive.Drop) { drops = append(drops, d) },
	})
	return res, drops, err
}

func TestRepair_Healthy(t *testing.T) {
	dir := t.TempDir()
	src := crawlLike(t, filepath.Join(dir, "src.bolt"), 1200)
	want := recovered(t, src)
	before := fileHash(t, src)
	out := filepath.Join(dir, "out.bolt")
	res, drops, err := repair(t, src, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(drops) != 0 || res.Dropped != 0 || res.LostPages != 0 || len(res.Notes) != 0 {
		t.Errorf("a healthy store lost records: %+v %v", res, drops)
	}
	if res.Returned != 80 || res.Out.Leases != 0 || res.Out.Nodes != 1200 || res.Out.Edges != 3600 || res.Txid != res.Newest {
		t.Errorf("result: %+v", res)
	}
	if got := read(t, out); !reflect.DeepEqual(got, want) {
		t.Errorf("repaired store differs from the store with its leases recovered:\ngot  %d nodes, %d edges, queue %d, roots %d, robots %d, visited %d\nwant %d nodes, %d edges, queue %d, roots %d, robots %d, visited %d",
			len(got.Nodes), len(got.Edges), len(got.Queue), len(got.Roots), len(got.Robots), len(got.Visited),
			len(want.Nodes), len(want.Edges), len(want.Queue), len(want.Roots), len(want.Robots), len(want.Visited))
		for i := range min(len(got.Queue), len(want.Queue)) {
			if got.Queue[i] != want.Queue[i] {
				t.Errorf("queue position %d: got %s, want %s", i, got.Queue[i], want.Queue[i])
				break
			}
		}
	}
	s, err := kv.Open(out, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_ = s.View(func(tx *kv.Tx) error {
		if got := tx.MetaString("job_config"); !strings.Contains(got, "seeds") {
			t.Errorf("job_config not copied: %q", got)
		}
		if got := tx.MetaString("listen_addr"); got != "" {
			t.Errorf("listen_addr copied: %q", got)
		}
		return nil
	})
	if fileHash(t, src) != before {
		t.Error("the original store changed")
	}
}

// nodesOf returns a store's nodes by id, read with bbolt: the store must
// be sound.
func nodesOf(t *testing.T, path string) map[uint64]graph.Node {
	t.Helper()
	s, err := kv.Open(path, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := map[uint64]graph.Node{}
	if err := s.View(func(tx *kv.Tx) error {
		return graph.ForEachNode(tx, func(n *graph.Node) error { out[n.ID] = *n; return nil })
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// keyAt returns the key of element i on leaf, in the file's bytes data.
func keyAt(data []byte, leaf storetest.Leaf, i int) []byte {
	le := binary.LittleEndian
	h := leaf.Offset + 16 + int64(i)*16
	k := h + int64(le.Uint32(data[h+4:]))
	return bytes.Clone(data[k : k+int64(le.Uint32(data[h+8:]))])
}

// damage is one way of breaking a leaf page, and the report it must give.
type damage struct {
	bucket []byte
	kind   string // "value": a value's first byte made invalid; "element": an element points off its page; "page": the page's count made impossible; "overflow": the page claims 4 G more
}

// TestRepair_FlippedLeafBytes damages leaf pages of nodes, edges,
// frontier and leases three ways — a value's type byte, an element's
// offset, a page's element count (bbolt faults on the last two) — and
// checks that exactly those records, and the records of the page whose
// header is damaged, are dropped and named; that every other node is kept
// as it was; and that the original file is left as it is.
func TestRepair_FlippedLeafBytes(t *testing.T) {
	dir := t.TempDir()
	pristine := crawlLike(t, filepath.Join(dir, "pristine.bolt"), 1200)
	src := filepath.Join(dir, "damaged.bolt")
	copyFile(t, pristine, src)
	data, err := os.ReadFile(pristine)
	if err != nil {
		t.Fatal(err)
	}
	var wantKeys []string // "bucket key" of each record that must be named
	var wantPages []string
	lostNodes := map[uint64]bool{}
	for _, d := range []damage{
		{kv.BucketNodes, "value"}, {kv.BucketNodes, "element"}, {kv.BucketNodes, "page"},
		{kv.BucketEdges, "value"}, {kv.BucketEdges, "element"}, {kv.BucketEdges, "page"}, {kv.BucketEdges, "overflow"},
		{kv.BucketFrontier, "value"}, {kv.BucketFrontier, "element"},
		{kv.BucketLeases, "value"},
	} {
		_, leaves := storetest.LeafPages(t, pristine, d.bucket)
		if len(leaves) < 2 {
			t.Fatalf("%s has %d leaf pages: the store is too small for this test", d.bucket, len(leaves))
		}
		// A different leaf for each kind of damage.
		leaf := leaves[map[string]int{"value": 1, "element": 2, "page": 3, "overflow": 4}[d.kind]]
		switch d.kind {
		case "value":
			_, _, v := storetest.LeafElement(t, pristine, leaf, 2)
			storetest.Patch(t, src, v, []byte{0xc1}) // a code msgpack never uses
			k := keyAt(data, leaf, 2)
			wantKeys = append(wantKeys, fmt.Sprintf("%s %x", d.bucket, k))
			if string(d.bucket) == "nodes" {
				lostNodes[binary.BigEndian.Uint64(k)] = true
			}
		case "element":
			h, _, _ := storetest.LeafElement(t, pristine, leaf, 3)
			storetest.Patch(t, src, h+4, []byte{0xff, 0xff, 0xff, 0x7f}) // pos: 2 GiB on
			wantKeys = append(wantKeys, fmt.Sprintf("%s: element 3 points outside its page", d.bucket))
			if string(d.bucket) == "nodes" {
				lostNodes[binary.BigEndian.Uint64(keyAt(data, leaf, 3))] = true
			}
		case "overflow":
			storetest.Patch(t, src, leaf.Offset+12, []byte{0xff, 0xff, 0xff, 0xff}) // 4 G pages of overflow
			wantPages = append(wantPages, fmt.Sprintf("%s page %d", d.bucket, leaf.Page))
		case "page":
			storetest.Patch(t, src, leaf.Offset+10, []byte{0xff, 0xff}) // count 65535
			wantPages = append(wantPages, fmt.Sprintf("%s page %d", d.bucket, leaf.Page))
			if string(d.bucket) == "nodes" {
				for i := range leaf.Count {
					lostNodes[binary.BigEndian.Uint64(keyAt(data, leaf, i))] = true
				}
			}
		}
	}
	before := fileHash(t, src)

	problems, err := archive.CheckPages(src)
	if err != nil || len(problems) != 6 { // the damaged element headers, counts and overflow
		t.Errorf("CheckPages: %v, %d problems: %v", err, len(problems), problems)
	}
	out := filepath.Join(dir, "out.bolt")
	res, drops, err := repair(t, src, out)
	if err != nil {
		t.Fatal(err)
	}
	if fileHash(t, src) != before {
		t.Error("the original store changed")
	}
	var lines []string
	for _, d := range drops {
		lines = append(lines, d.String())
		if d.Page != 0 {
			lines = append(lines, fmt.Sprintf("%s page %d", d.Bucket, d.Page))
		} else if d.Key != nil {
			lines = append(lines, fmt.Sprintf("%s %x", d.Bucket, d.Key))
		}
	}
	all := strings.Join(lines, "\n")
	for _, want := range append(wantKeys, wantPages...) {
		if !strings.Contains(all, want) {
			t.Errorf("no drop reported for %q", want)
		}
	}
	if res.LostPages != 3 {
		t.Errorf("%d pages lost, want 3\n%s", res.LostPages, all)
	}
	got, orig := nodesOf(t, out), nodesOf(t, pristine)
	for id, n := range orig {
		kept, ok := got[id]
		switch {
		case lostNodes[id] && ok:
			t.Errorf("node %d (%s) was damaged but kept", id, n.Host)
		case !lostNodes[id] && !ok:
			t.Errorf("node %d (%s) was lost", id, n.Host)
		case ok && !reflect.DeepEqual(kept, n):
			t.Errorf("node %d changed:\ngot  %+v\nwant %+v", id, kept, n)
		}
	}
	if len(got) != len(orig)-len(lostNodes) || res.Out.Nodes != uint64(len(got)) {
		t.Errorf("%d nodes kept of %d, %d damaged; result says %d", len(got), len(orig), len(lostNodes), res.Out.Nodes)
	}
	if res.Returned == 0 || res.Out.Leases != 0 {
		t.Errorf("leases: %d returned, %d left", res.Returned, res.Out.Leases)
	}
}

// TestRepair_DamagedValues: records whose msgpack lies about its lengths
// (written through kv, so bbolt's pages are sound) are dropped and named,
// and so are the records that named a dropped node.
func TestRepair_DamagedValues(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.bolt")
	copyFile(t, build(t, filepath.Join(dir, "pristine.bolt"), sample), src)
	lie := []byte{0x81, 0xa1, 'h', 0xdb, 0x7f, 0xff, 0xff, 0xff, 'a'} // {"h": <2 GiB string>}
	s, err := kv.Open(src, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(func(tx *kv.Tx) error {
		a, _ := graph.Lookup(tx, "a.test")
		for _, p := range []struct{ bucket, key, value []byte }{
			{kv.BucketNodes, kv.U64(a), lie},
			// An extension where a node's map belongs: msgpack reads the
			// bytes after it as the map, past kv's length checks.
			{kv.BucketNodes, kv.U64(9), []byte("\xc7\x000\x86\xdb0000")},
			{kv.BucketEdges, append(kv.U64(2), kv.U64(3)...), []byte{0xc9, 0x7f, 0xff, 0xff, 0xff, 0xff}},
			{kv.BucketLeases, []byte{1}, lie[:2]},
			{kv.BucketFrontier, append(kv.U32(1), kv.U64(99)...), []byte{0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0}},
		} {
			if err := tx.PutRaw(p.bucket, p.key, p.value); err != nil {
				return err
			}
		}
		// Sound records that name node 0, which is never a node: the
		// bit flips of TestRepair_RandomFlips make such keys.
		if err := tx.Put(kv.BucketEdges, append(kv.U64(2), kv.U64(0)...), &graph.Edge{Weight: 1}); err != nil {
			return err
		}
		return tx.PutRaw(kv.BucketVisited, append(kv.U64(0), kv.U32(0)...), []byte{})
	})
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	res, drops, err := repair(t, src, filepath.Join(dir, "out.bolt"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range drops {
		got = append(got, d.String())
	}
	want := []string{
		"nodes 0000000000000001: kv: damaged value: length 2147483647 at byte 8 exceeds the 1 bytes left",
		"nodes 0000000000000009: an extension value, not a node",
		"edges 0000000000000001000000000000000" + "2: node 1 is not in the repaired store",
		"edges 00000000000000020000000000000003: kv: damaged value: length 2147483648 at byte 5 exceeds the 1 bytes left",
		"edges 00000000000000020000000000000001: node 1 is not in the repaired store",
		"edges 00000000000000020000000000000000: node 0 is not in the repaired store",
		"visited 000000000000000000000000: node 0 is not in the repaired store",
		"leases 01: kv: damaged value: 2 elements at byte 1 exceed the 1 bytes left",
		"frontier 000000010000000000000063: kv: damaged value: 4294967295 elements at byte 5 exceed the 1 bytes left",
		// sample's robots.txt record holds made-up rules, not robots.Rules'
		// encoding: a crawl would fetch robots.txt again.
		`robots "a.test": rules: robots: unmarshal: version 97: robots: unknown encoding version of cached rules`,
	}
	slices.Sort(got)
	slices.Sort(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("drops:\ngot  %q\nwant %q", got, want)
	}
	if res.Out.Nodes != 3 || res.Out.Edges != 0 || res.Out.Queued != 2 || res.Returned != 1 {
		t.Errorf("result: %+v", res.Out)
	}
}

// newestMeta returns the body of a bbolt file's newest meta page: magic,
// version, page size, flags (4 bytes each), root bucket (16), free list
// page, high-water mark and txid (8 each).
func newestMeta(data []byte) []byte {
	le := binary.LittleEndian
	ps := int(le.Uint32(data[24:]))
	m0, m1 := data[16:], data[ps+16:]
	if le.Uint64(m1[48:]) > le.Uint64(m0[48:]) {
		return m1
	}
	return m0
}

// boltNeed returns the bytes the store at path needs: its newest meta
// page's high-water mark times its page size.
func boltNeed(t *testing.T, path string) int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := newestMeta(data)
	return int64(binary.LittleEndian.Uint64(m[40:])) * int64(binary.LittleEndian.Uint32(m[8:]))
}

// TestRepair_Truncated cuts a store's file at points along its length.
// What is before the cut is recovered, unchanged; what is after is lost
// and reported, with the records that named it; a cut that loses the
// bucket list itself is refused with kv.ErrCorrupt.
func TestRepair_Truncated(t *testing.T) {
	dir := t.TempDir()
	pristine := crawlLike(t, filepath.Join(dir, "pristine.bolt"), 1200)
	orig, origView := nodesOf(t, pristine), read(t, pristine)
	need := boltNeed(t, pristine)
	data, err := os.ReadFile(pristine)
	if err != nil {
		t.Fatal(err)
	}
	ps, leaves := storetest.LeafPages(t, pristine, kv.BucketNodes)
	freelist := binary.LittleEndian.Uint64(newestMeta(data)[32:])
	recovered, checked := 0, 0
	for _, pct := range []int{95, 80, 65, 50, 35, 20} {
		cut := need*int64(pct)/100 + 123
		src := filepath.Join(dir, fmt.Sprintf("cut%d.bolt", pct))
		if err := os.WriteFile(src, data[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		intact := map[uint64]bool{}
		for _, l := range leaves {
			if l.Offset+int64(ps) <= cut {
				for i := range l.Count {
					intact[binary.BigEndian.Uint64(keyAt(data, l, i))] = true
				}
			}
		}
		if _, err := kv.Open(src, kv.Options{ReadOnly: true}); !errors.Is(err, kv.ErrTruncated) {
			t.Fatalf("%d%%: kv.Open: %v, want ErrTruncated", pct, err)
		}
		out := filepath.Join(dir, fmt.Sprintf("cut%d.repaired", pct))
		res, drops, err := repair(t, src, out)
		if errors.Is(err, kv.ErrCorrupt) {
			t.Logf("cut at %d%%: %v", pct, err)
			if pct >= 50 {
				t.Errorf("cut at %d%%: nothing recovered", pct)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%d%%: %v", pct, err)
		}
		recovered++
		for _, d := range drops {
			if d.Page != 0 || d.Key == nil {
				t.Logf("%d%%: %s", pct, d)
			}
		}
		got := nodesOf(t, out)
		for id, n := range got {
			if !reflect.DeepEqual(n, orig[id]) {
				t.Errorf("%d%%: node %d differs from the original:\ngot  %+v\nwant %+v", pct, id, n, orig[id])
			}
		}
		for pair, e := range read(t, out).Edges {
			if w, ok := origView.Edges[pair]; !ok || !reflect.DeepEqual(e, w) {
				t.Errorf("%d%%: edge %s→%s differs from the original: got %+v, want %+v", pct, pair[0], pair[1], e, w)
			}
		}
		// With the list of free pages before the cut, every node on a leaf
		// before the cut is found, through its branch or as an orphan.
		if int64(freelist+1)*int64(ps) <= cut && res.Txid == res.Newest {
			checked++
			for id := range intact {
				if _, ok := got[id]; !ok {
					t.Errorf("%d%%: node %d was on a leaf before the cut, and is lost", pct, id)
				}
			}
			if len(got) != len(intact) {
				t.Errorf("%d%%: %d nodes kept, %d on leaves before the cut", pct, len(got), len(intact))
			}
		}
		t.Logf("cut at %d%% of %d bytes: kept %d/%d nodes, %d edges, %d queued, %d leases returned; %d records dropped, %d pages lost; notes %q",
			pct, need, res.Out.Nodes, len(orig), res.Out.Edges, res.Out.Queued, res.Returned, res.Dropped, res.LostPages, res.Notes)
	}
	if recovered < 3 {
		t.Errorf("only %d of 6 cuts recovered", recovered)
	}
	t.Logf("%d cuts left the list of free pages, and were checked node by node", checked)
}

// TestRepair_RandomFlips flips random bits anywhere in a store's pages —
// branches, the bucket list, the free list, leaves; half of them in page
// headers — and repairs it:
// Repair must return an error or a store that passes Verify, never panic
// or hang.
func TestRepair_RandomFlips(t *testing.T) {
	dir := t.TempDir()
	pristine := crawlLike(t, filepath.Join(dir, "pristine.bolt"), 400)
	data, err := os.ReadFile(pristine)
	if err != nil {
		t.Fatal(err)
	}
	need := boltNeed(t, pristine)
	ps := int64(binary.LittleEndian.Uint32(data[24:]))
	rounds := 40
	if testing.Short() {
		rounds = 10
	}
	src, out := filepath.Join(dir, "src.bolt"), filepath.Join(dir, "out.bolt")
	ok := 0
	for round := range rounds {
		rng := rand.New(rand.NewPCG(uint64(round), 7))
		d := bytes.Clone(data)
		for range 1 + rng.IntN(40) {
			off := 2*ps + rng.Int64N(need-2*ps)
			if rng.IntN(2) == 0 { // a page header: id, flags, count, overflow
				off = off/ps*ps + rng.Int64N(16)
			}
			d[off] ^= 1 << rng.IntN(8)
		}
		if err := os.WriteFile(src, d, 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := repair(t, src, out)
		switch {
		case err == nil:
			ok++
		case errors.Is(err, kv.ErrCorrupt), errors.Is(err, kv.ErrNotStore):
		default:
			t.Errorf("round %d: %v", round, err)
		}
	}
	if ok < rounds/2 {
		t.Errorf("only %d of %d damaged stores repaired", ok, rounds)
	}
}

func TestRepair_Refuses(t *testing.T) {
	dir := t.TempDir()
	src := build(t, filepath.Join(dir, "src.bolt"), sample)
	exists := filepath.Join(dir, "exists.bolt")
	if err := os.WriteFile(exists, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	newer := filepath.Join(dir, "newer.bolt")
	copyFile(t, src, newer)
	s, err := kv.Open(newer, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx *kv.Tx) error { return tx.SetMetaString("schema_version", "99") }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	ctx := context.Background()
	for _, c := range []struct {
		src, out string
		force    bool
		want     error
	}{
		{src, exists, false, archive.ErrExists},
		{src, src, true, archive.ErrSameFile},
		{src, dir, true, archive.ErrIsDir},
		{filepath.Join(dir, "missing.bolt"), filepath.Join(dir, "o1"), false, os.ErrNotExist},
		{write("empty.bolt", nil), filepath.Join(dir, "o2"), false, kv.ErrEmptyFile},
		{write("text.bolt", bytes.Repeat([]byte("hello "), 2000)), filepath.Join(dir, "o3"), false, kv.ErrNotStore},
		{newer, filepath.Join(dir, "o4"), false, kv.ErrNewerSchema},
	} {
		if _, err := archive.Repair(ctx, c.src, c.out, archive.RepairOptions{Force: c.force}); !errors.Is(err, c.want) {
			t.Errorf("Repair(%s, %s): %v, want %v", filepath.Base(c.src), filepath.Base(c.out), err, c.want)
		}
	}
	if got, _ := os.ReadFile(exists); string(got) != "keep me" {
		t.Errorf("an existing output was replaced without Force")
	}
	for _, o := range []string{"o1", "o2", "o3", "o4"} {
		if _, err := os.Stat(filepath.Join(dir, o)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was written by a refused repair", o)
		}
	}

	// A store a crawl holds is being written: it is not read.
	held := storetest.MustOpenPath(t, src, kv.Options{})
	_ = held
	if _, err := archive.Repair(ctx, src, filepath.Join(dir, "o5"), archive.RepairOptions{}); !errors.Is(err, kv.ErrInUse) {
		t.Errorf("a store in use: %v, want kv.ErrInUse", err)
	}
}
