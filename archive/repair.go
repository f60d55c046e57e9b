package archive

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/weaver-crawler/weaver/cluster/shard"
	"github.com/weaver-crawler/weaver/crawl/robots"
	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// RepairOptions control Repair.
type RepairOptions struct {
	// Force replaces an existing output file (never the store repaired).
	Force bool
	// DropMeta names meta keys not copied: values that describe the process
	// that held the store (such as its status API address).
	DropMeta []string
	// Batch is how many records one write transaction takes; zero means
	// 10,000.
	Batch int
	// Report, when set, is called for each record or page left out, as it
	// is found.
	Report func(Drop)
}

// Drop is a record, or a whole page of records, that Repair left out.
type Drop struct {
	Bucket string `json:"bucket"`
	// Key is the record's key; nil when its key could not be read, or for
	// a lost page.
	Key []byte `json:"key,omitempty"`
	// Page is the lost page; zero for a single record.
	Page uint64 `json:"page,omitempty"`
	// From and To bound a lost page's keys ([From, To); nil when unknown or
	// open), as its parent page records them.
	From []byte `json:"from,omitempty"`
	To   []byte `json:"to,omitempty"`
	Why  string `json:"why"`
}

// String is the line `weaver check --repair` prints: the bucket, the key
// (hex for ids, quoted for names), or the page and its key range, then why.
func (d Drop) String() string {
	switch {
	case d.Page != 0:
		keys := ""
		if d.From != nil || d.To != nil {
			from, to := "start", "end"
			if d.From != nil {
				from = keyString(d.Bucket, d.From)
			}
			if d.To != nil {
				to = keyString(d.Bucket, d.To)
			}
			keys = fmt.Sprintf(", keys %s to %s", from, to)
		}
		return fmt.Sprintf("%s: page %d%s lost: it %s", d.Bucket, d.Page, keys, d.Why)
	case d.Key != nil:
		return fmt.Sprintf("%s %s: %s", d.Bucket, keyString(d.Bucket, d.Key), d.Why)
	}
	return fmt.Sprintf("%s: %s", d.Bucket, d.Why)
}

// keyString writes a key the way `weaver check` does: hex for binary keys,
// quoted for the buckets keyed by names.
func keyString(bucket string, k []byte) string {
	switch bucket {
	case string(kv.BucketMeta), string(kv.BucketHosts), string(kv.BucketRobots), string(kv.BucketRoots), "":
		if len(k) > 100 {
			return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(string(k[:100])), len(k))
		}
		return strconv.Quote(string(k))
	}
	if len(k) > 32 {
		return fmt.Sprintf("%x… (%d bytes)", k[:32], len(k))
	}
	return hex.EncodeToString(k)
}

// RepairResult describes a repair.
type RepairResult struct {
	Source string `json:"source"`
	Out    Info   `json:"out"`
	// Txid is the bbolt transaction whose trees were read; Newest is the
	// file's newest. They differ when the newest one's trees lose pages and
	// the previous one's lose fewer and give as many records.
	Txid   uint64 `json:"txid"`
	Newest uint64 `json:"newest_txid"`
	// Dropped counts the records left out, LostPages the pages that could
	// not be read (whose records are not counted in Dropped).
	Dropped   int            `json:"dropped"`
	LostPages int            `json:"lost_pages"`
	ByBucket  map[string]int `json:"dropped_by_bucket,omitempty"` // records and pages left out, per bucket
	Returned  uint64         `json:"leases_returned"`             // leases put back in the queue
	Notes     []string       `json:"notes,omitempty"`             // decisions made, in words
}

// ErrUnsound means the repaired store was written but fails Verify.
var ErrUnsound = errors.New("archive: the repaired store fails weaver check")

// The meta keys Repair computes instead of copying: kv's own, and the
// counters graph and frontier keep (graph/store.go, frontier/frontier.go;
// graph.Check and frontier.Check verify them on the output).
var (
	metaComputed = []string{
		"magic", "schema_version", "created_at",
		"graph.nodes", "graph.edges", "graph.weight", "graph.next_id",
		"frontier.size", "frontier.leases", "frontier.seq",
	}
	// The cluster's outbox size and sequence, recomputed when present.
	metaOutbox    = shard.MetaOutbox
	metaOutboxSeq = shard.MetaOutboxSeq
)

// Repair writes to out a new store made of every readable record of the
// store at src, which it never modifies. It reads src's pages itself
// (pages.go), so flipped bytes, damaged pages and a truncated tail cost
// only the records they hold; kv.Open would refuse such a file. Records
// are kept when they decode and agree with each other:
//
//   - nodes keyed by their own id, with a normalised host no earlier node
//     holds; the hosts index is rebuilt from them;
//   - edges of positive weight between two kept nodes, not self-loops;
//   - frontier entries at the depth their key says, of a kept node whose
//     host they name, with an http(s) URL; leases likewise, returned to
//     the queue at their old place. Entries are queued again through
//     frontier.Push in their old order, which rebuilds the queued index
//     and the counters;
//   - visited marks of kept nodes; the subdomain limiter's records whose
//     domain is their host's (rebuilt from the nodes, queued or crawled,
//     when pages of them were lost);
//   - robots.txt cache records whose rules decode; the cluster's outbox
//     and inbox records with well-formed keys;
//   - meta records (creation time, crawl and job configuration, ...) with
//     printable keys, except opt.DropMeta; counters are recomputed.
//
// Each record or page left out is passed to opt.Report. The output is
// built beside out, checked with Verify and renamed into place; when the
// check fails it is still installed (it holds what could be read) and the
// error wraps ErrUnsound.
//
// Repair returns checkTarget's errors (ErrSameFile, ErrExists, ErrIsDir),
// kv.ErrInUse when a process holds src, kv.ErrEmptyFile, kv.ErrNotStore
// or kv.ErrCorrupt (no valid meta page, or neither a bucket list nor a
// page of records can be read) when nothing can be read,
// kv.ErrNewerSchema, ctx's error, and file system errors. On such an
// error out is left as it was.
func Repair(ctx context.Context, src, out string, opt RepairOptions) (RepairResult, error) {
	if err := checkTarget(out, opt.Force, src); err != nil {
		return RepairResult{}, err
	}
	if opt.Batch <= 0 {
		opt.Batch = 10_000
	}
	f, err := os.Open(src)
	if errors.Is(err, os.ErrNotExist) {
		return RepairResult{}, fmt.Errorf("%s: no such store: %w", src, os.ErrNotExist)
	}
	if err != nil {
		return RepairResult{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return RepairResult{}, err
	}
	if fi.IsDir() {
		return RepairResult{}, fmt.Errorf("%s is a directory: %w", src, kv.ErrNotStore)
	}
	if err := lockShared(f); err != nil {
		return RepairResult{}, err
	}
	metas, err := readMetas(f, fi.Size())
	if err != nil {
		return RepairResult{}, err
	}
	r := &repairer{ctx: ctx, opt: opt, res: RepairResult{Source: src, Newest: metas[0].txid, ByBucket: map[string]int{}}}
	r.lay = chooseLayout(f, fi.Size(), metas, &r.res)
	if len(r.lay.buckets) == 0 && len(r.lay.orphans) == 0 {
		why := "no buckets"
		if len(r.lay.rootLost) > 0 {
			why = "its bucket list is unreadable: " + strings.Join(r.lay.rootLost, "; ")
		}
		return RepairResult{}, fmt.Errorf("%s %w: %s", src, kv.ErrCorrupt, why)
	}
	r.res.Txid = r.lay.meta.txid
	r.pf = newPageFile(f, fi.Size(), r.lay.meta)
	r.checkBuckets()
	created, err := r.readMeta()
	if err != nil {
		return RepairResult{}, err
	}

	tmp, err := tempName(out)
	if err != nil {
		return RepairResult{}, err
	}
	defer os.Remove(tmp)
	r.dst, err = kv.Open(tmp, kv.Options{NoSync: true, PageSize: r.lay.meta.pageSize, Now: func() time.Time { return created }})
	if err != nil {
		return RepairResult{}, fmt.Errorf("%s: %w", out, err)
	}
	err = r.run()
	if cerr := r.dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return RepairResult{}, fmt.Errorf("%s: repair: %w", out, err)
	}
	if err := ctx.Err(); err != nil {
		return RepairResult{}, err
	}
	info, verr := VerifyFile(tmp)
	if verr != nil {
		info, err = countFile(tmp)
		if err != nil {
			return RepairResult{}, fmt.Errorf("%s: %w", out, err)
		}
	}
	if err := install(tmp, out); err != nil {
		return RepairResult{}, err
	}
	info.Path = out
	if fi, err := os.Stat(out); err == nil {
		info.Bytes = fi.Size()
	}
	r.res.Out = info
	if verr != nil {
		return r.res, fmt.Errorf("%s: %w: %w", out, ErrUnsound, verr)
	}
	return r.res, nil
}

// countFile reads the counters of the store at path.
func countFile(path string) (Info, error) {
	s, err := kv.Open(path, kv.Options{ReadOnly: true})
	if err != nil {
		return Info{}, err
	}
	defer s.Close()
	var info Info
	err = s.View(func(tx *kv.Tx) error {
		info = countsOf(tx)
		return nil
	})
	return info, err
}

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

// copiedBuckets are the buckets whose records Repair copies; hosts,
// queued and mirrors are rebuilt from them.
var copiedBuckets = [][]byte{
	kv.BucketMeta, kv.BucketNodes, kv.BucketEdges, kv.BucketRoots, kv.BucketFrontier,
	kv.BucketVisited, kv.BucketLeases, kv.BucketRobots,
}

// repairer copies the readable records of one meta page's trees to dst.
type repairer struct {
	ctx  context.Context
	opt  RepairOptions
	res  RepairResult
	lay  *layout
	pf   *pageFile
	dst  *kv.Store
	meta []kvPair // the source's meta records

	nodes, maxID, edges, weight uint64 // kept, for the counters
	leases                      []queuedAt
	outboxKept, outboxMax       uint64
	hasCreated                  bool      // the source's creation time was read
	firstSeen                   time.Time // the earliest first-seen time of a kept node
}

type kvPair struct{ k, v []byte }

// queuedAt is a frontier entry or lease to queue again, at its old place.
type queuedAt struct {
	depth int
	seq   uint64 // arrival; max for a lease whose key is unknown: after its depth's entries
	e     frontier.Entry
}

func (q queuedAt) compare(o queuedAt) int {
	return cmp.Or(cmp.Compare(q.depth, o.depth), cmp.Compare(q.seq, o.seq))
}

// drop reports a record left out.
func (r *repairer) drop(d Drop) {
	if d.Page != 0 {
		r.res.LostPages++
	} else {
		r.res.Dropped++
	}
	r.res.ByBucket[d.Bucket]++
	if r.opt.Report != nil {
		r.opt.Report(d)
	}
}

func (r *repairer) dropKey(bucket []byte, key []byte, format string, a ...any) {
	r.drop(Drop{Bucket: string(bucket), Key: bytes.Clone(key), Why: fmt.Sprintf(format, a...)})
}

func (r *repairer) note(format string, a ...any) {
	r.res.Notes = append(r.res.Notes, fmt.Sprintf(format, a...))
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
		string(kv.BucketOutbox): true, string(kv.BucketInbox): true, string(kv.BucketMirrors): true}
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

// readMeta reads the source's meta records and returns its creation time.
// It refuses a store of a newer schema, and a file that is bbolt but not
// a weaver store.
func (r *repairer) readMeta() (time.Time, error) {
	err := r.scan(kv.BucketMeta, func(k, v []byte) error {
		r.meta = append(r.meta, kvPair{bytes.Clone(k), bytes.Clone(v)})
		return nil
	}, func() error { return nil })
	if err != nil {
		return time.Time{}, err
	}
	get := func(k string) (string, bool) {
		for _, p := range r.meta {
			if string(p.k) == k {
				return string(p.v), true
			}
		}
		return "", false
	}
	magic, ok := get("magic")
	switch {
	case ok && magic != "weaver store":
		return time.Time{}, fmt.Errorf("%s %w (its meta bucket's magic is %q)", r.res.Source, kv.ErrNotStore, magic)
	case !ok && r.lay.buckets[string(kv.BucketNodes)] == nil && len(r.lay.orphans[string(kv.BucketNodes)]) == 0:
		return time.Time{}, fmt.Errorf("%s %w (a bbolt file without weaver's buckets)", r.res.Source, kv.ErrNotStore)
	case !ok:
		r.note("the meta records are lost or damaged: read as a weaver store of schema %d", kv.SchemaVersion)
	}
	if v, ok := get("schema_version"); ok {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil:
			r.dropKey(kv.BucketMeta, []byte("schema_version"), "not a number (%q): read as schema %d", v, kv.SchemaVersion)
		case n > kv.SchemaVersion:
			return time.Time{}, fmt.Errorf("%s %w: file has %d, this weaver reads up to %d", r.res.Source, kv.ErrNewerSchema, n, kv.SchemaVersion)
		}
	}
	created := time.Unix(0, 0).UTC()
	if v, ok := get("created_at"); ok {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			r.dropKey(kv.BucketMeta, []byte("created_at"), "not a time (%q)", v)
		} else {
			created, r.hasCreated = t, true
		}
	}
	return created, nil
}

func (r *repairer) run() error {
	for _, step := range []func() error{
		r.copyNodes, r.rebuildMirrors, r.copyEdges, r.readLeases, r.copyFrontier, r.copyVisited,
		r.copyRoots, r.copyRobots, r.copyOutbox, r.copyInbox, r.copyMeta,
	} {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// rebuildMirrors files the copied nodes in the mirror index again, from
// their content hashes, so that MirrorOf agrees with the nodes kept.
func (r *repairer) rebuildMirrors() error {
	return r.dst.Update(graph.RebuildMirrors)
}

type keyed[T any] struct {
	k []byte
	v T
}

// copyNodes keeps the nodes keyed by their own id whose host is
// normalised and held by no earlier node, and indexes them by host.
func (r *repairer) copyNodes() error {
	var batch []keyed[graph.Node]
	return r.scan(kv.BucketNodes, func(k, v []byte) error {
		if len(k) != 8 {
			r.dropKey(kv.BucketNodes, k, "key of %d bytes, want 8", len(k))
			return nil
		}
		var n graph.Node
		if len(v) > 0 && isExt(v[0]) {
			r.dropKey(kv.BucketNodes, k, "an extension value, not a node")
			return nil
		}
		if err := kv.Decode(v, &n); err != nil {
			r.dropKey(kv.BucketNodes, k, "%v", err)
			return nil
		}
		if id := binary.BigEndian.Uint64(k); n.ID != id || id == 0 {
			r.dropKey(kv.BucketNodes, k, "holds node %d (a damaged key or value)", n.ID)
			return nil
		}
		if h, err := graph.NormalizeHost(n.Host, ""); err != nil || h != n.Host {
			r.dropKey(kv.BucketNodes, k, "host %q is not a normalised host name", n.Host)
			return nil
		}
		batch = append(batch, keyed[graph.Node]{bytes.Clone(k), n})
		return nil
	}, func() error {
		err := r.dst.Update(func(tx *kv.Tx) error {
			for i := range batch {
				n := &batch[i].v
				if old, ok, err := graph.Get(tx, n.ID); err != nil {
					return err
				} else if ok {
					// Two versions of one node: from an unreferenced page, or
					// a damaged key. A crawl only ever adds to a node.
					if old.Host != n.Host || !nodeNewer(n, &old) {
						r.dropKey(kv.BucketNodes, batch[i].k, "a second record under the same key, older or of another host")
						continue
					}
					r.dropKey(kv.BucketNodes, batch[i].k, "a second record under the same key: the older one is left out")
					if err := graph.Put(tx, n); err != nil {
						return err
					}
					continue
				}
				if id, ok := graph.Lookup(tx, n.Host); ok {
					r.dropKey(kv.BucketNodes, batch[i].k, "host %q already belongs to node %d", n.Host, id)
					continue
				}
				if err := graph.Put(tx, n); err != nil {
					return err
				}
				if err := tx.PutRaw(kv.BucketHosts, []byte(n.Host), batch[i].k); err != nil {
					return err
				}
				r.nodes++
				r.maxID = max(r.maxID, n.ID)
				if !n.FirstSeen.IsZero() && (r.firstSeen.IsZero() || n.FirstSeen.Before(r.firstSeen)) {
					r.firstSeen = n.FirstSeen
				}
			}
			return nil
		})
		batch = batch[:0]
		return err
	})
}

// copyEdges keeps the edges of positive weight between two kept nodes.
func (r *repairer) copyEdges() error {
	var batch []keyed[graph.Edge]
	return r.scan(kv.BucketEdges, func(k, v []byte) error {
		if len(k) != 16 {
			r.dropKey(kv.BucketEdges, k, "key of %d bytes, want 16", len(k))
			return nil
		}
		var e graph.Edge
		if err := kv.Decode(v, &e); err != nil {
			r.dropKey(kv.BucketEdges, k, "%v", err)
			return nil
		}
		e.From, e.To = binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:])
		switch {
		case e.Weight == 0:
			r.dropKey(kv.BucketEdges, k, "weight 0")
		case e.From == e.To:
			r.dropKey(kv.BucketEdges, k, "a self-loop")
		default:
			batch = append(batch, keyed[graph.Edge]{bytes.Clone(k), e})
		}
		return nil
	}, func() error {
		err := r.dst.Update(func(tx *kv.Tx) error {
			for i := range batch {
				e := &batch[i].v
				if missing := r.missingNode(tx, e.From, e.To); missing != 0 {
					r.dropKey(kv.BucketEdges, batch[i].k, "node %d is not in the repaired store", missing)
					continue
				}
				var old graph.Edge
				if ok, err := tx.Get(kv.BucketEdges, batch[i].k, &old); err != nil {
					return err
				} else if ok {
					// Two versions of one edge: weights only grow.
					r.dropKey(kv.BucketEdges, batch[i].k, "a second record under the same key: the lighter one is left out")
					if e.Weight > old.Weight || (e.Weight == old.Weight && e.LastSeen.After(old.LastSeen)) {
						if err := tx.Put(kv.BucketEdges, batch[i].k, e); err != nil {
							return err
						}
						r.weight += e.Weight - old.Weight
					}
					continue
				}
				if err := tx.Put(kv.BucketEdges, batch[i].k, e); err != nil {
					return err
				}
				r.edges++
				r.weight += e.Weight
			}
			return nil
		})
		batch = batch[:0]
		return err
	})
}

// isExt reports whether c starts a msgpack extension value. Node and
// robots records are maps, and msgpack reads an extension where it wants
// a map as a wrapper around the bytes after it, lengths kv.Decode's
// checks take for payload: its pooled decoder then grows its buffer a
// MiB per such value and keeps it. Repair never hands it one.
func isExt(c byte) bool { return (c >= 0xc7 && c <= 0xc9) || (c >= 0xd4 && c <= 0xd8) }

// nodeNewer reports whether a is a later version of node b: more
// fetches, or as many and seen later.
func nodeNewer(a, b *graph.Node) bool {
	fa, fb := a.CrawlCount+a.FailCount, b.CrawlCount+b.FailCount
	switch {
	case fa != fb:
		return fa > fb
	case !a.LastCrawl.Equal(b.LastCrawl):
		return a.LastCrawl.After(b.LastCrawl)
	}
	return a.LastSeen.After(b.LastSeen)
}

// missingNode returns the first of ids that is not a node in tx, or 0.
func (r *repairer) missingNode(tx *kv.Tx, ids ...uint64) uint64 {
	for _, id := range ids {
		if tx.GetRaw(kv.BucketNodes, kv.U64(id)) == nil {
			return id
		}
	}
	return 0
}

// entryProblem says why e cannot be queued in tx, or "".
func entryProblem(tx *kv.Tx, e *frontier.Entry) string {
	if e.NodeID == 0 || e.Host == "" || e.Depth < 0 {
		return "no node, no host or a negative depth"
	}
	if id, ok := graph.Lookup(tx, e.Host); !ok || id != e.NodeID {
		return fmt.Sprintf("node %d (%s) is not in the repaired store", e.NodeID, e.Host)
	}
	u, err := url.Parse(e.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Sprintf("URL %q is not an http(s) URL", e.URL)
	}
	return ""
}

// readLeases reads the leases to return to the queue: every process that
// held them is gone (Repair holds the file's lock).
func (r *repairer) readLeases() error {
	var batch []keyed[frontier.Lease]
	return r.scan(kv.BucketLeases, func(k, v []byte) error {
		var l frontier.Lease
		if err := kv.Decode(v, &l); err != nil {
			r.dropKey(kv.BucketLeases, k, "%v", err)
			return nil
		}
		if len(k) != 8 || binary.BigEndian.Uint64(k) != l.NodeID {
			r.dropKey(kv.BucketLeases, k, "holds a lease of node %d (a damaged key or value)", l.NodeID)
			return nil
		}
		batch = append(batch, keyed[frontier.Lease]{bytes.Clone(k), l})
		return nil
	}, func() error {
		err := r.dst.View(func(tx *kv.Tx) error {
			for i := range batch {
				l := &batch[i].v
				if why := entryProblem(tx, &l.Entry); why != "" {
					r.dropKey(kv.BucketLeases, batch[i].k, "%s", why)
					continue
				}
				q := queuedAt{depth: l.Depth, seq: ^uint64(0), e: l.Entry}
				if len(l.Key) == 12 && int(binary.BigEndian.Uint32(l.Key)) == l.Depth {
					q.seq = binary.BigEndian.Uint64(l.Key[4:])
				}
				r.leases = append(r.leases, q)
			}
			return nil
		})
		batch = batch[:0]
		return err
	})
}

// copyFrontier queues the entries again in their old order, with the
// leases at their old places, through frontier.Push.
func (r *repairer) copyFrontier() error {
	slices.SortStableFunc(r.leases, queuedAt.compare)
	leases := r.leases
	var batch []keyed[queuedAt]
	push := func(tx *kv.Tx, q queuedAt) error {
		_, err := frontier.Push(tx, q.e)
		return err
	}
	err := r.scan(kv.BucketFrontier, func(k, v []byte) error {
		if len(k) != 12 {
			r.dropKey(kv.BucketFrontier, k, "key of %d bytes, want 12", len(k))
			return nil
		}
		var e frontier.Entry
		if err := kv.Decode(v, &e); err != nil {
			r.dropKey(kv.BucketFrontier, k, "%v", err)
			return nil
		}
		q := queuedAt{depth: int(binary.BigEndian.Uint32(k)), seq: binary.BigEndian.Uint64(k[4:]), e: e}
		if q.depth != e.Depth {
			r.dropKey(kv.BucketFrontier, k, "entry of %s at depth %d under a key of depth %d", e.Host, e.Depth, q.depth)
			return nil
		}
		batch = append(batch, keyed[queuedAt]{bytes.Clone(k), q})
		return nil
	}, func() error {
		err := r.dst.Update(func(tx *kv.Tx) error {
			for _, b := range batch {
				for len(leases) > 0 && leases[0].compare(b.v) < 0 {
					if err := push(tx, leases[0]); err != nil {
						return err
					}
					leases = leases[1:]
					r.res.Returned++
				}
				if why := entryProblem(tx, &b.v.e); why != "" {
					r.dropKey(kv.BucketFrontier, b.k, "%s", why)
					continue
				}
				if err := push(tx, b.v); err != nil {
					return err
				}
			}
			return nil
		})
		batch = batch[:0]
		return err
	})
	if err != nil {
		return err
	}
	return r.dst.Update(func(tx *kv.Tx) error {
		for _, q := range leases {
			if err := push(tx, q); err != nil {
				return err
			}
			r.res.Returned++
		}
		return nil
	})
}

// copyVisited keeps the visited marks (node | depth) of kept nodes.
func (r *repairer) copyVisited() error {
	var batch [][]byte
	return r.scan(kv.BucketVisited, func(k, _ []byte) error {
		if len(k) != 12 {
			r.dropKey(kv.BucketVisited, k, "key of %d bytes, want 12", len(k))
			return nil
		}
		batch = append(batch, bytes.Clone(k))
		return nil
	}, func() error {
		err := r.dst.Update(func(tx *kv.Tx) error {
			for _, k := range batch {
				if id := binary.BigEndian.Uint64(k); r.missingNode(tx, id) != 0 {
					r.dropKey(kv.BucketVisited, k, "node %d is not in the repaired store", id)
					continue
				}
				if err := tx.PutRaw(kv.BucketVisited, k, []byte{}); err != nil {
					return err
				}
			}
			return nil
		})
		batch = batch[:0]
		return err
	})
}

// rootKey is the roots bucket's key (kv/schema.go): domain | 0 | host.
func rootKey(host string) []byte {
	d := graph.RegistrableDomain(host)
	return append(append(append(make([]byte, 0, len(d)+1+len(host)), d...), 0), host...)
}

// copyRoots keeps the subdomain limiter's records whose domain is their
// host's. When pages or records of them were lost, the hosts of kept
// nodes that were queued or crawled (not excluded by a limit or the scope) are
// admitted again, as the crawl had admitted them.
func (r *repairer) copyRoots() error {
	before := r.res.ByBucket[string(kv.BucketRoots)]
	var batch [][]byte
	err := r.scan(kv.BucketRoots, func(k, _ []byte) error {
		i := bytes.IndexByte(k, 0)
		if i < 0 {
			r.dropKey(kv.BucketRoots, k, "no separator between domain and host")
			return nil
		}
		host := string(k[i+1:])
		if h, err := graph.NormalizeHost(host, ""); err != nil || h != host || !bytes.Equal(rootKey(host), k) {
			r.dropKey(kv.BucketRoots, k, "not a host under its registrable domain")
			return nil
		}
		batch = append(batch, bytes.Clone(k))
		return nil
	}, func() error {
		err := r.dst.Update(func(tx *kv.Tx) error {
			for _, k := range batch {
				if err := tx.PutRaw(kv.BucketRoots, k, []byte{}); err != nil {
					return err
				}
			}
			return nil
		})
		batch = batch[:0]
		return err
	})
	if err != nil || r.res.ByBucket[string(kv.BucketRoots)] == before {
		return err
	}
	r.note("the subdomain limiter lost records: hosts of queued or crawled nodes admitted again")
	var last uint64
	for {
		var keys [][]byte
		err := r.dst.View(func(tx *kv.Tx) error {
			return graph.ForEachNodeFrom(tx, last+1, func(n *graph.Node) error {
				last = n.ID
				// Out-of-scope hosts never count toward the subdomain cap.
				if n.Status != graph.StatusExcludedByLimit && n.Status != graph.StatusOutOfScope {
					keys = append(keys, rootKey(n.Host))
				}
				if len(keys) == r.opt.Batch {
					return graph.ErrStop
				}
				return nil
			})
		})
		if err != nil || len(keys) == 0 {
			return err
		}
		slices.SortFunc(keys, bytes.Compare)
		err = r.dst.Update(func(tx *kv.Tx) error {
			for _, k := range keys {
				if err := tx.PutRaw(kv.BucketRoots, k, []byte{}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
}

// robotsRecord is crawl's robots cache value (crawl/page.go); its rules
// must decode for the record to be kept.
type robotsRecord struct {
	Fetched time.Time `msgpack:"t"`
	Rules   kv.Bytes  `msgpack:"r"`
}

// copyRobots keeps the robots.txt cache records that decode, under a
// host name.
func (r *repairer) copyRobots() error {
	var batch []kvPair
	return r.scan(kv.BucketRobots, func(k, v []byte) error {
		if h, err := graph.NormalizeHost(string(k), ""); err != nil || h != string(k) {
			r.dropKey(kv.BucketRobots, k, "not a host name")
			return nil
		}
		var rec robotsRecord
		if len(v) > 0 && isExt(v[0]) {
			r.dropKey(kv.BucketRobots, k, "an extension value, not a robots.txt record")
			return nil
		}
		if err := kv.Decode(v, &rec); err != nil {
			r.dropKey(kv.BucketRobots, k, "%v", err)
			return nil
		}
		var rules robots.Rules
		if err := rules.UnmarshalBinary(rec.Rules); err != nil {
			r.dropKey(kv.BucketRobots, k, "rules: %v", err)
			return nil
		}
		batch = append(batch, kvPair{bytes.Clone(k), bytes.Clone(v)})
		return nil
	}, r.putAll(kv.BucketRobots, &batch))
}

// putAll returns a flush that writes batch to bucket and empties it.
func (r *repairer) putAll(bucket []byte, batch *[]kvPair) func() error {
	return func() error {
		err := r.dst.Update(func(tx *kv.Tx) error {
			for _, p := range *batch {
				if err := tx.PutRaw(bucket, p.k, p.v); err != nil {
					return err
				}
			}
			return nil
		})
		*batch = (*batch)[:0]
		return err
	}
}

// copyOutbox keeps the cluster's unpublished links (sequence → link) as
// they are: their encoding is the cluster's.
func (r *repairer) copyOutbox() error {
	var batch []kvPair
	return r.scan(kv.BucketOutbox, func(k, v []byte) error {
		if len(k) != 8 {
			r.dropKey(kv.BucketOutbox, k, "key of %d bytes, want 8", len(k))
			return nil
		}
		r.outboxKept++
		r.outboxMax = max(r.outboxMax, binary.BigEndian.Uint64(k))
		batch = append(batch, kvPair{bytes.Clone(k), bytes.Clone(v)})
		return nil
	}, r.putAll(kv.BucketOutbox, &batch))
}

// copyInbox keeps the ids of the messages already applied.
func (r *repairer) copyInbox() error {
	var batch []kvPair
	return r.scan(kv.BucketInbox, func(k, _ []byte) error {
		batch = append(batch, kvPair{bytes.Clone(k), []byte{}})
		return nil
	}, r.putAll(kv.BucketInbox, &batch))
}

// printable reports whether a meta key is text a program wrote.
func printable(k []byte) bool {
	if len(k) == 0 || len(k) > 256 || !utf8.Valid(k) {
		return false
	}
	return !strings.ContainsFunc(string(k), func(c rune) bool { return !unicode.IsPrint(c) })
}

// copyMeta copies the meta records (but the computed ones and
// opt.DropMeta) and writes the counters of what was kept.
func (r *repairer) copyMeta() error {
	skip := map[string]bool{}
	for _, k := range append(slices.Clone(metaComputed), r.opt.DropMeta...) {
		skip[k] = true
	}
	return r.dst.Update(func(tx *kv.Tx) error {
		var srcNext, srcOutboxSeq uint64
		outbox := false
		for _, p := range r.meta {
			k := string(p.k)
			switch {
			case k == "created_at":
				if _, err := time.Parse(time.RFC3339Nano, string(p.v)); err == nil {
					if err := tx.PutRaw(kv.BucketMeta, p.k, p.v); err != nil {
						return err
					}
				}
				continue
			case k == "graph.next_id" && len(p.v) == 8:
				srcNext = binary.BigEndian.Uint64(p.v)
			case k == metaOutbox:
				outbox = true
				continue
			case k == metaOutboxSeq && len(p.v) == 8:
				srcOutboxSeq = binary.BigEndian.Uint64(p.v)
				continue
			case !printable(p.k):
				r.dropKey(kv.BucketMeta, p.k, "not a key weaver writes (a damaged key)")
				continue
			}
			if skip[k] {
				continue
			}
			if err := tx.PutRaw(kv.BucketMeta, p.k, p.v); err != nil {
				return err
			}
		}
		if !r.hasCreated && !r.firstSeen.IsZero() {
			// The store was created at its first seed, or just before.
			created := r.firstSeen.UTC()
			r.note("the creation time is lost: the earliest first-seen time of a node, %s, stands in for it", created.Format(time.RFC3339))
			if err := tx.PutRaw(kv.BucketMeta, []byte("created_at"), []byte(created.Format(time.RFC3339Nano))); err != nil {
				return err
			}
		}
		// Ids of lost nodes above the largest kept one are not given again,
		// unless the stored next id is itself implausible.
		next := r.maxID
		if srcNext > next && srcNext-next < 1<<32 {
			next = srcNext
		}
		for _, c := range []struct {
			name string
			n    uint64
		}{{"graph.nodes", r.nodes}, {"graph.edges", r.edges}, {"graph.weight", r.weight}, {"graph.next_id", next}} {
			if err := tx.SetCounter(c.name, c.n); err != nil {
				return err
			}
		}
		if outbox || r.outboxKept > 0 {
			if err := tx.SetCounter(metaOutbox, r.outboxKept); err != nil {
				return err
			}
			if err := tx.SetCounter(metaOutboxSeq, max(srcOutboxSeq, r.outboxMax)); err != nil {
				return err
			}
		}
		return nil
	})
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
