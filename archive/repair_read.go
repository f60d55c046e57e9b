// Reading the pages of a store to repair: which transaction's trees to
// read, what they lose, the unreferenced leaves that stand in for lost
// pages, and the walk that hands each bucket's records to the copy.

package archive

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/weaver-crawler/weaver/kv"
)

// layout is what a first read of one meta page's trees finds: where the
// buckets are, what cannot be read, and the leaf pages that hold the
// records of lost branches.
type layout struct {
	meta      boltMeta
	buckets   map[string][]byte   // bucket name → its header in the root tree
	rootLost  []string            // why parts of the bucket list cannot be read
	orphans   map[string][]orphan // by bucket, in key order: unreferenced leaves holding keys of lost pages
	otherFree bool                // the list read was the other meta page's
	stale     bool                // no list could be read: orphans may be free pages
	records   int                 // records readable, in the trees and the orphans, of the buckets copied
	lost      int                 // pages that cannot be read (whole subtrees)
	bad       int                 // elements that cannot be read
}

// keyRange is a lost page's [from, to); nil bounds are open.
type keyRange struct{ from, to []byte }

func (kr keyRange) holds(k []byte) bool {
	return (kr.from == nil || bytes.Compare(k, kr.from) >= 0) && (kr.to == nil || bytes.Compare(k, kr.to) < 0)
}

// readLayout walks every tree of m without decoding a record, then looks
// for the orphans of the pages it lost, with m's list of free pages, or
// other's when m's is lost (other may be nil).
func readLayout(f *os.File, size int64, m boltMeta, other *boltMeta) *layout {
	l := &layout{meta: m, buckets: map[string][]byte{}}
	p := newPageFile(f, size, m)
	_ = p.walk(m.root, nil, nil, 0, &treeVisitor{
		record: func(k, v []byte, bucket bool) error {
			if bucket {
				l.buckets[string(k)] = bytes.Clone(v)
			}
			return nil
		},
		bad: func(_, _ []byte, why string) { l.rootLost = append(l.rootLost, why) },
		lost: func(page uint64, _, _ []byte, why string) error {
			l.rootLost = append(l.rootLost, fmt.Sprintf("page %d %s", page, why))
			return nil
		},
	})
	lost := map[string][]keyRange{}
	for name, hdr := range l.buckets {
		copied := slices.ContainsFunc(copiedBuckets, func(b []byte) bool { return string(b) == name })
		err := p.walkBucket(hdr, &treeVisitor{
			record: func(_, _ []byte, _ bool) error {
				if copied {
					l.records++
				}
				return nil
			},
			bad: func(_, _ []byte, _ string) { l.bad++ },
			lost: func(_ uint64, from, to []byte, _ string) error {
				l.lost++
				lost[name] = append(lost[name], keyRange{clone(from), clone(to)})
				return nil
			},
		})
		if err != nil {
			l.lost++
			lost[name] = append(lost[name], keyRange{})
		}
	}
	for _, name := range copiedBuckets {
		if _, ok := l.buckets[string(name)]; !ok {
			lost[string(name)] = append(lost[string(name)], keyRange{})
		}
	}
	if len(lost) == 0 {
		return l
	}
	free, ok := p.freePages()
	if !ok && other != nil {
		// The previous transaction's list: a page the last transaction
		// rewrote is not in it, and may give the older version of records
		// whose newer version is lost.
		free, ok = newPageFile(f, size, *other).freePages()
		l.otherFree = ok
	}
	if !ok {
		// No list at all: the unreferenced leaves are read as they are
		// found, free ones too, rather than nothing. Of two versions of a
		// record, the copy keeps the later (nodeNewer, heavier edges).
		free, l.stale = p.newSet(), true
	}
	all := p.orphans(free)
	l.orphans = map[string][]orphan{}
	for name, list := range all {
		for _, o := range list {
			if slices.ContainsFunc(lost[name], func(kr keyRange) bool { return kr.holds(o.first) }) {
				l.orphans[name] = append(l.orphans[name], o)
				l.records += o.n
			}
		}
	}
	return l
}

// chooseLayout picks the meta page whose trees to read: the newest,
// unless its trees lose pages and the older one's lose fewer and give at
// least as many records. bbolt leaves the older transaction's pages
// intact until the next write commits, so after a crash or a cut copy it
// may be the more complete; it lacks only the last transaction. Damaged
// elements do not count: both trees share most leaves.
func chooseLayout(f *os.File, size int64, metas []boltMeta, res *RepairResult) *layout {
	var other *boltMeta
	if len(metas) == 2 {
		other = &metas[1]
	}
	l := readLayout(f, size, metas[0], other)
	if len(metas) == 1 {
		res.Notes = append(res.Notes, fmt.Sprintf("one of the two meta pages is damaged; read transaction %d from the other", metas[0].txid))
	} else if l.lost > 0 || len(l.rootLost) > 0 {
		older := readLayout(f, size, metas[1], nil)
		if older.lost+len(older.rootLost) < l.lost+len(l.rootLost) && older.records >= l.records {
			res.Notes = append(res.Notes, fmt.Sprintf("read the previous transaction (%d: %d records readable, %d pages lost) instead of the newest (%d: %d records readable, %d pages lost)",
				metas[1].txid, older.records, older.lost+len(older.rootLost), metas[0].txid, l.records, l.lost+len(l.rootLost)))
			l = older
		}
	}
	switch {
	case l.stale:
		res.Notes = append(res.Notes, "no list of free pages is readable: the leaves of lost branch pages were read as found, and may give older versions of records")
	case l.otherFree:
		res.Notes = append(res.Notes, "the list of free pages is unreadable: the leaves of lost branch pages were looked for with the previous transaction's")
	}
	return l
}

// copiedBuckets are the buckets whose records Repair copies; hosts and
// queued and mirrors are rebuilt from them.
var copiedBuckets = [][]byte{
	kv.BucketMeta, kv.BucketNodes, kv.BucketEdges, kv.BucketRoots, kv.BucketFrontier,
	kv.BucketVisited, kv.BucketLeases, kv.BucketRobots,
}

// visitor hands bucket's records to record and reports what cannot be
// read. In place of a lost page, it reads the orphan leaves that hold
// keys of its range.
func (r *repairer) visitor(bucket []byte, record func(k, v []byte, bucket bool) error) *treeVisitor {
	name := string(bucket)
	v := &treeVisitor{
		record: record,
		bad: func(key, after []byte, why string) {
			d := Drop{Bucket: name, Key: bytes.Clone(key), Why: why}
			if key == nil && after != nil {
				d.Why = fmt.Sprintf("%s, after key %s", why, keyString(name, after))
			}
			r.drop(d)
		},
	}
	v.lost = func(page uint64, from, to []byte, why string) error {
		found := r.takeOrphans(name, keyRange{from, to})
		if len(found) > 0 {
			why = fmt.Sprintf("%s; %d unreferenced leaf pages holding keys of its range were read in its place", why, len(found))
		}
		r.drop(Drop{Bucket: name, Page: page, From: clone(from), To: clone(to), Why: why})
		return r.readOrphans(found, keyRange{from, to}, v)
	}
	return v
}

// takeOrphans removes from the layout and returns, in key order, the
// orphan leaves of bucket whose first key is in kr.
func (r *repairer) takeOrphans(bucket string, kr keyRange) []orphan {
	if len(r.lay.orphans[bucket]) == 0 {
		return nil
	}
	var found, rest []orphan
	for _, o := range r.lay.orphans[bucket] {
		if kr.holds(o.first) {
			found = append(found, o)
		} else {
			rest = append(rest, o)
		}
	}
	r.lay.orphans[bucket] = rest
	return found
}

// readOrphans reads orphan leaves of bucket in place of the lost range
// kr: their records outside kr belong to pages that were read, so they
// are older versions, and are skipped.
func (r *repairer) readOrphans(list []orphan, kr keyRange, v *treeVisitor) error {
	inRange := &treeVisitor{
		record: func(k, val []byte, bucket bool) error {
			if !kr.holds(k) {
				return nil
			}
			return v.record(k, val, bucket)
		},
		bad: v.bad, lost: v.lost,
	}
	for _, o := range list {
		buf, err := r.pf.read(o.page)
		if err != nil {
			continue // read in another range's place already
		}
		branch, elems, err := parsePage(buf)
		if err != nil || branch {
			continue
		}
		if err := leafRecords(elems, nil, inRange); err != nil {
			return err
		}
	}
	return nil
}

// checkBuckets reports the buckets missing from the bucket list and the
// ones weaver does not use.
func (r *repairer) checkBuckets() {
	for _, why := range r.lay.rootLost {
		r.note("part of the bucket list is unreadable (%s)", why)
	}
	known := map[string]bool{string(kv.BucketHosts): true, string(kv.BucketQueued): true,
		string(kv.BucketOutbox): true, string(kv.BucketInbox): true, string(kv.BucketMirrors): true,
		string(kv.BucketCrawls): true, string(kv.BucketHistory): true, string(kv.BucketRecent): true,
		string(kv.BucketDue): true, string(kv.BucketAnchors): true,
		// Folded into roots by copyRoots.
		string(kv.BucketRootLog): true,
		// Derived, not copied: the next export or weaver layout computes it again.
		string(kv.BucketLayout): true}
	for _, b := range copiedBuckets {
		known[string(b)] = true
		if _, ok := r.lay.buckets[string(b)]; !ok {
			if n := len(r.lay.orphans[string(b)]); n > 0 {
				r.note("bucket %s not found: %d unreferenced leaf pages that look like its records were read instead", b, n)
			} else {
				r.drop(Drop{Bucket: string(b), Why: "bucket not found: its records are lost"})
			}
		}
	}
	for name := range r.lay.buckets {
		if !known[name] {
			r.drop(Drop{Bucket: name, Why: "not a bucket weaver uses: not copied"})
		}
	}
}

// scan walks bucket, calling each for every record in key order and flush
// after every opt.Batch records and at the end. each must copy what it
// keeps.
func (r *repairer) scan(bucket []byte, each func(k, v []byte) error, flush func() error) error {
	count := 0
	v := r.visitor(bucket, func(k, v []byte, nested bool) error {
		if nested {
			r.dropKey(bucket, k, "a nested bucket, which weaver never writes")
			return nil
		}
		if err := each(k, v); err != nil {
			return err
		}
		if count++; count < r.opt.Batch {
			return nil
		}
		count = 0
		if err := r.ctx.Err(); err != nil {
			return err
		}
		return flush()
	})
	var err error
	if hdr, ok := r.lay.buckets[string(bucket)]; ok {
		err = r.pf.walkBucket(hdr, v)
		var pe errPage
		if errors.As(err, &pe) {
			err = v.lost(0, nil, nil, "bucket header damaged: "+pe.why)
		}
	} else {
		err = r.readOrphans(r.takeOrphans(string(bucket), keyRange{}), keyRange{}, v)
	}
	if err != nil {
		return err
	}
	return flush()
}

// CheckPages reads every page of the store at path as Repair does,
// without decoding a record, and returns the pages and elements that
// cannot be read: damage that bbolt, which trusts its pages, may meet with
// a fault that ends the process rather than an error. Run it before bbolt
// reads a file of unknown health. It returns Repair's errors for a file
// that is not a store, and one wrapping kv.ErrTruncated for a file
// shorter than its pages need.
func CheckPages(path string) ([]Drop, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such store: %w", path, os.ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory: %w", path, kv.ErrNotStore)
	}
	if err := lockShared(f); err != nil {
		return nil, err
	}
	metas, err := readMetas(f, fi.Size())
	if err != nil {
		return nil, err
	}
	m := metas[0]
	if need := int64(m.hwm) * int64(m.pageSize); fi.Size() < need {
		return nil, fmt.Errorf("%s %w: %d bytes, its pages need %d", path, kv.ErrTruncated, fi.Size(), need)
	}
	var drops []Drop
	visitor := func(name string) *treeVisitor {
		return &treeVisitor{
			record: func(_, _ []byte, _ bool) error { return nil },
			bad: func(key, after []byte, why string) {
				if key == nil && after != nil {
					why = fmt.Sprintf("%s, after key %s", why, keyString(name, after))
				}
				drops = append(drops, Drop{Bucket: name, Key: clone(key), Why: why})
			},
			lost: func(page uint64, from, to []byte, why string) error {
				drops = append(drops, Drop{Bucket: name, Page: page, From: clone(from), To: clone(to), Why: why})
				return nil
			},
		}
	}
	p := newPageFile(f, fi.Size(), m)
	buckets := map[string][]byte{}
	root := visitor("")
	root.record = func(k, v []byte, bucket bool) error {
		if bucket {
			buckets[string(k)] = bytes.Clone(v)
		}
		return nil
	}
	_ = p.walk(m.root, nil, nil, 0, root)
	names := slices.Sorted(maps.Keys(buckets))
	for _, name := range names {
		if err := p.walkBucket(buckets[name], visitor(name)); err != nil {
			drops = append(drops, Drop{Bucket: name, Why: "bucket header damaged: " + err.Error()})
		}
	}
	return drops, nil
}
