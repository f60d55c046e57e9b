package archive

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"slices"

	"github.com/weaver-crawler/weaver/kv"
)

// pages.go reads a bbolt file's B+trees page by page, trusting nothing in
// them: Repair's reader. bbolt itself trusts its pages (a flipped byte in
// a leaf's header sends a cursor off the page, a truncated file faults on
// access), so a damaged file cannot be walked through it. Here every page
// is read with ReadAt and checked before use: inside the file and below
// the high-water mark, naming itself, a branch or a leaf, every element
// inside the page, no page read twice in a walk (a damaged pointer cannot
// loop). A page that fails is reported as lost with the keys its parent
// says it held; its siblings are still read.
//
// The layout (go.etcd.io/bbolt/internal/common): a page starts with a
// 16-byte header (id u64, flags u16, count u16, overflow u32), then count
// elements of 16 bytes, then the keys and values they point at. A branch
// element is (pos u32, ksize u32, child u64), a leaf element (flags u32,
// pos u32, ksize u32, vsize u32); pos counts from the element itself. A
// leaf element with flag 1 is a bucket: its value is the bucket's root
// page and sequence (u64 each), followed, when the root is 0, by the
// bucket's own page inline. All integers are little-endian.

const (
	pageHeaderSize   = 16
	pageElemSize     = 16
	branchPageFlag   = 0x01
	leafPageFlag     = 0x02
	freelistPageFlag = 0x10
	bucketLeafFlag   = 0x01
	bucketHeader     = 16
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	maxTreeDepth     = 32 // far deeper than any real tree: a bound on damaged pointers
)

// boltMeta is one of the file's two meta pages.
type boltMeta struct {
	page     int    // 0 or 1
	pageSize int    // bytes
	root     uint64 // page of the root bucket's tree
	freelist uint64 // page of the list of free pages
	hwm      uint64 // high-water mark: pages at or above it are not in the file's trees
	txid     uint64 // the transaction that wrote it
}

// readMetas returns the file's valid meta pages (magic, version and
// checksum right), the newest transaction first. It returns an error
// wrapping kv.ErrEmptyFile, kv.ErrNotStore or kv.ErrCorrupt when there
// is none.
func readMetas(f *os.File, size int64) ([]boltMeta, error) {
	if size == 0 {
		return nil, fmt.Errorf("%s %w", f.Name(), kv.ErrEmptyFile)
	}
	var hdr [80]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return nil, fmt.Errorf("%s %w (only %d bytes)", f.Name(), kv.ErrNotStore, size)
	}
	m0, ok0 := parseBoltMeta(hdr[:], 0)
	notBolt := !ok0 && binary.LittleEndian.Uint32(hdr[16:]) != boltMagic // unless the second meta page is valid
	// The second meta page sits one page in; its size is in the first, or
	// one of the sizes bbolt uses when the first is damaged.
	sizes := []int{4096, 8192, 16384, 32768, 65536}
	if ok0 {
		sizes = append([]int{m0.pageSize}, sizes...)
	}
	var metas []boltMeta
	if ok0 {
		metas = append(metas, m0)
	}
	for _, ps := range sizes {
		if _, err := f.ReadAt(hdr[:], int64(ps)); err != nil {
			continue
		}
		if m1, ok := parseBoltMeta(hdr[:], 1); ok && m1.pageSize == ps && (!ok0 || ps == m0.pageSize) {
			metas = append(metas, m1)
			break
		}
	}
	if len(metas) == 0 && notBolt {
		return nil, fmt.Errorf("%s %w", f.Name(), kv.ErrNotStore)
	}
	if len(metas) == 0 {
		return nil, fmt.Errorf("%s %w: no valid meta page", f.Name(), kv.ErrCorrupt)
	}
	if len(metas) == 2 && metas[1].txid > metas[0].txid {
		metas[0], metas[1] = metas[1], metas[0]
	}
	return metas, nil
}

// parseBoltMeta reads a meta page: magic, version, page size, flags, root
// bucket (root page, sequence), freelist page, high-water mark, txid and
// an FNV-64a checksum of everything from the magic to the txid.
func parseBoltMeta(b []byte, page int) (boltMeta, bool) {
	le := binary.LittleEndian
	if len(b) < 80 || le.Uint32(b[16:]) != boltMagic || le.Uint32(b[20:]) != boltVersion {
		return boltMeta{}, false
	}
	h := fnv.New64a()
	h.Write(b[16:72])
	if h.Sum64() != le.Uint64(b[72:]) {
		return boltMeta{}, false
	}
	m := boltMeta{
		page: page, pageSize: int(le.Uint32(b[24:])), root: le.Uint64(b[32:]),
		freelist: le.Uint64(b[48:]), hwm: le.Uint64(b[56:]), txid: le.Uint64(b[64:]),
	}
	if m.pageSize < 512 || m.pageSize > 1<<20 || m.pageSize&(m.pageSize-1) != 0 || m.hwm < 4 || m.root < 2 || m.root >= m.hwm {
		return boltMeta{}, false
	}
	return m, true
}

// pageFile reads the trees of one meta page.
type pageFile struct {
	f    *os.File
	size int64
	meta boltMeta
	seen pageSet // pages read: each is in one tree, once
}

func newPageFile(f *os.File, size int64, m boltMeta) *pageFile {
	p := &pageFile{f: f, size: size, meta: m}
	p.seen = p.newSet()
	return p
}

// newSet returns an empty set of this file's pages.
func (p *pageFile) newSet() pageSet {
	return make(pageSet, (uint64(p.size)/uint64(p.meta.pageSize)+64)/64)
}

// maxSpan bounds the bytes of one page with its overflow: the largest
// record weaver writes is a robots.txt cache entry of about 500 KiB, and a
// damaged header must not make a reader allocate the whole file.
const maxSpan = 64 << 20

// pageSet is a set of the pages of a file, one bit each (pages past the
// end of the file are never added).
type pageSet []uint64

func (s pageSet) has(id uint64) bool { return id/64 < uint64(len(s)) && s[id/64]&(1<<(id%64)) != 0 }

func (s pageSet) add(id uint64) {
	if id/64 < uint64(len(s)) {
		s[id/64] |= 1 << (id % 64)
	}
}

// errPage describes why a page cannot be read.
type errPage struct{ why string }

func (e errPage) Error() string { return e.why }

func pageErr(format string, a ...any) error { return errPage{fmt.Sprintf(format, a...)} }

// read returns page id with its overflow pages, checked to lie inside the
// file and below the high-water mark, to name itself, to be a branch or a
// leaf, and not to have been read before in this walk.
func (p *pageFile) read(id uint64) ([]byte, error) {
	ps := uint64(p.meta.pageSize)
	switch {
	case id < 2:
		return nil, pageErr("points at a meta page")
	case id >= p.meta.hwm:
		return nil, pageErr("is past the file's high-water mark (%d pages)", p.meta.hwm)
	case p.seen.has(id):
		return nil, pageErr("is reached twice (a damaged pointer)")
	case (id+1)*ps > uint64(p.size):
		return nil, pageErr("is beyond the end of the file (%d bytes: truncated)", p.size)
	}
	var hdr [pageHeaderSize]byte
	if _, err := p.f.ReadAt(hdr[:], int64(id*ps)); err != nil {
		return nil, pageErr("cannot be read: %v", err)
	}
	le := binary.LittleEndian
	if self := le.Uint64(hdr[:]); self != id {
		return nil, pageErr("names itself page %d (damaged header, or not written)", self)
	}
	if flags := le.Uint16(hdr[8:]); flags != branchPageFlag && flags != leafPageFlag {
		return nil, pageErr("is neither a branch nor a leaf (flags %#x)", flags)
	}
	overflow := uint64(le.Uint32(hdr[12:]))
	span := (1 + overflow) * ps
	if id+overflow >= p.meta.hwm || id*ps+span > uint64(p.size) || span > maxSpan {
		return nil, pageErr("claims %d overflow pages, past the end of the file or more than any record needs", overflow)
	}
	for o := id; o <= id+overflow; o++ {
		if p.seen.has(o) {
			return nil, pageErr("overlaps page %d, already read (a damaged pointer)", o)
		}
	}
	for o := id; o <= id+overflow; o++ {
		p.seen.add(o)
	}
	buf := make([]byte, span)
	if _, err := p.f.ReadAt(buf, int64(id*ps)); err != nil && !errors.Is(err, io.EOF) {
		return nil, pageErr("cannot be read: %v", err)
	}
	return buf, nil
}

// elem is one element of a page: a branch's child, or a leaf's record.
type elem struct {
	key, val []byte
	child    uint64 // branch
	bucket   bool   // leaf: the value is a bucket header
	bad      string // why the element cannot be read; key is then nil
}

// parsePage returns the elements of a branch or leaf page held in b (a
// file page with its overflow, or a bucket's inline page). An element
// whose key or value runs outside b is returned with bad set. It returns
// an error when the header's count cannot fit in b at all.
func parsePage(b []byte) (branch bool, elems []elem, err error) {
	le := binary.LittleEndian
	flags := le.Uint16(b[8:])
	if flags != branchPageFlag && flags != leafPageFlag {
		return false, nil, pageErr("is neither a branch nor a leaf (flags %#x)", flags)
	}
	branch = flags == branchPageFlag
	count := int(le.Uint16(b[10:]))
	if pageHeaderSize+count*pageElemSize > len(b) {
		return branch, nil, pageErr("holds %d elements, more than fit in its %d bytes", count, len(b))
	}
	elems = make([]elem, count)
	for i := range elems {
		at := pageHeaderSize + i*pageElemSize
		e := &elems[i]
		var pos, ksize, vsize uint64
		if branch {
			pos, ksize = uint64(le.Uint32(b[at:])), uint64(le.Uint32(b[at+4:]))
			e.child = le.Uint64(b[at+8:])
		} else {
			e.bucket = le.Uint32(b[at:])&bucketLeafFlag != 0
			pos, ksize, vsize = uint64(le.Uint32(b[at+4:])), uint64(le.Uint32(b[at+8:])), uint64(le.Uint32(b[at+12:]))
		}
		start := uint64(at) + pos
		if end := start + ksize + vsize; pos < pageElemSize || end > uint64(len(b)) {
			e.bad = fmt.Sprintf("element %d points outside its page (offset %d, %d+%d bytes, page of %d)", i, start, ksize, vsize, len(b))
			continue
		}
		e.key = b[start : start+ksize]
		if !branch {
			e.val = b[start+ksize : start+ksize+vsize]
		}
	}
	return branch, elems, nil
}

// treeVisitor receives what a walk finds. key and val are valid only
// during the call.
type treeVisitor struct {
	// record is called for each leaf element in key order; bucket reports
	// a nested bucket's header. An error ends the walk.
	record func(key, val []byte, bucket bool) error
	// bad is called for a leaf element that cannot be read (its key is
	// unknown: after is the key before it, if any) or whose key breaks the
	// order of its neighbours (key is then given).
	bad func(key, after []byte, why string)
	// lost is called for a page that cannot be read, with the range of
	// keys its parent says it held (from, inclusive; to, exclusive; nil
	// when unknown or open). An error ends the walk.
	lost func(page uint64, from, to []byte, why string) error
}

// walkBucket walks the bucket whose header (the value of its bucket
// element) is hdr. It returns an errPage when the header or the inline
// page it holds is damaged, or record's error.
func (p *pageFile) walkBucket(hdr []byte, v *treeVisitor) error {
	if len(hdr) < bucketHeader {
		return pageErr("bucket header of %d bytes, want at least %d", len(hdr), bucketHeader)
	}
	root := binary.LittleEndian.Uint64(hdr)
	if root != 0 {
		return p.walk(root, nil, nil, 0, v)
	}
	inline := hdr[bucketHeader:]
	if len(inline) < pageHeaderSize {
		return pageErr("inline bucket of %d bytes", len(inline))
	}
	branch, elems, err := parsePage(inline)
	if err == nil && branch {
		err = pageErr("inline bucket is a branch page")
	}
	if err != nil {
		return err
	}
	return leafRecords(elems, nil, v)
}

// walk reads the subtree rooted at page id, whose keys its parent puts in
// [from, to). It returns record's error.
func (p *pageFile) walk(id uint64, from, to []byte, depth int, v *treeVisitor) (err error) {
	defer func() {
		// Every slice is bounds-checked; a panic here would be a bug in
		// this reader, and must still cost only this subtree.
		if r := recover(); r != nil {
			err = v.lost(id, from, to, fmt.Sprintf("could not be read: %v", r))
		}
	}()
	if depth > maxTreeDepth {
		return v.lost(id, from, to, fmt.Sprintf("is deeper than %d levels (a damaged pointer)", maxTreeDepth))
	}
	buf, err := p.read(id)
	if err != nil {
		return v.lost(id, from, to, err.Error())
	}
	branch, elems, err := parsePage(buf)
	if err != nil {
		return v.lost(id, from, to, err.Error())
	}
	if !branch {
		return leafRecords(elems, from, v)
	}
	for i, e := range elems {
		lo, hi := e.key, to
		if i == 0 {
			lo = from
		}
		if i+1 < len(elems) && elems[i+1].bad == "" {
			hi = elems[i+1].key
		}
		if e.bad != "" {
			// The child's page number is in the element's fixed part, which
			// was read; only its key is out of the page.
			lo = nil
		}
		if err := p.walk(e.child, clone(lo), clone(hi), depth+1, v); err != nil {
			return err
		}
	}
	return nil
}

// leafRecords hands a leaf's elements to v. An element whose key is out
// of order with both its neighbours, which are in order with each other,
// has a damaged key: it is reported, not returned.
func leafRecords(elems []elem, from []byte, v *treeVisitor) error {
	prev := from
	for i, e := range elems {
		if e.bad != "" {
			v.bad(nil, prev, e.bad)
			continue
		}
		var before, after []byte
		if i > 0 && elems[i-1].bad == "" {
			before = elems[i-1].key
		}
		if i+1 < len(elems) && elems[i+1].bad == "" {
			after = elems[i+1].key
		}
		if before != nil && after != nil && bytes.Compare(before, after) < 0 &&
			(bytes.Compare(e.key, before) <= 0 || bytes.Compare(e.key, after) >= 0) {
			v.bad(e.key, prev, "key out of order with its neighbours (a damaged key)")
			continue
		}
		if err := v.record(e.key, e.val, e.bucket); err != nil {
			return err
		}
		prev = e.key
	}
	return nil
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return bytes.Clone(b)
}

// freePages reads the meta page's list of free pages (free and pending:
// bbolt writes both), with the pages the list itself takes. ok is false
// when the list cannot be read.
func (p *pageFile) freePages() (free pageSet, ok bool) {
	ps := uint64(p.meta.pageSize)
	id := p.meta.freelist
	if id < 2 || id >= p.meta.hwm || (id+1)*ps > uint64(p.size) {
		return nil, false
	}
	var hdr [pageHeaderSize + 8]byte
	if _, err := p.f.ReadAt(hdr[:], int64(id*ps)); err != nil {
		return nil, false
	}
	le := binary.LittleEndian
	if le.Uint64(hdr[:]) != id || le.Uint16(hdr[8:]) != freelistPageFlag {
		return nil, false
	}
	overflow := uint64(le.Uint32(hdr[12:]))
	span := (1 + overflow) * ps
	if id+overflow >= p.meta.hwm || id*ps+span > uint64(p.size) || span > 16*maxSpan {
		return nil, false
	}
	start, count := uint64(pageHeaderSize), uint64(le.Uint16(hdr[10:]))
	if count == 0xFFFF {
		start, count = pageHeaderSize+8, le.Uint64(hdr[pageHeaderSize:])
	}
	if count > span/8 || start+count*8 > span {
		return nil, false
	}
	buf := make([]byte, start+count*8)
	if _, err := p.f.ReadAt(buf, int64(id*ps)); err != nil {
		return nil, false
	}
	free = p.newSet()
	for i := uint64(0); i < count; i++ {
		free.add(le.Uint64(buf[start+8*i:]))
	}
	for o := id; o <= id+overflow; o++ {
		free.add(o)
	}
	return free, true
}

// orphan is a leaf page that no readable branch points at.
type orphan struct {
	page  uint64
	first []byte // its first readable key
	n     int    // its elements
}

// orphans returns, by the bucket their records look like they belong to,
// the leaf pages below the high-water mark that no walk of this pageFile
// has read and that are not in free: when a branch page is lost, its
// leaves are still in the file, unreferenced. Each list is in key order.
// A free page holds an old version of its records: without the list of
// free pages the two cannot be told apart.
func (p *pageFile) orphans(free pageSet) map[string][]orphan {
	out := map[string][]orphan{}
	ps := uint64(p.meta.pageSize)
	last := min(p.meta.hwm, uint64(p.size)/ps)
	var hdr [pageHeaderSize]byte
	for id := uint64(2); id < last; id++ {
		if p.seen.has(id) || free.has(id) {
			continue
		}
		if _, err := p.f.ReadAt(hdr[:], int64(id*ps)); err != nil {
			continue
		}
		le := binary.LittleEndian
		if le.Uint64(hdr[:]) != id || le.Uint16(hdr[8:]) != leafPageFlag {
			continue // a branch (its leaves are found one by one), or not a page
		}
		overflow := uint64(le.Uint32(hdr[12:]))
		if id+overflow >= last || (1+overflow)*ps > maxSpan {
			continue // a damaged header: checked before its span is allocated
		}
		buf := make([]byte, (1+overflow)*ps)
		if _, err := p.f.ReadAt(buf, int64(id*ps)); err != nil {
			continue
		}
		_, elems, err := parsePage(buf)
		if err != nil || len(elems) == 0 {
			continue
		}
		bucket, first := classify(elems)
		if bucket != "" {
			out[bucket] = append(out[bucket], orphan{page: id, first: bytes.Clone(first), n: len(elems)})
		}
		id += overflow
	}
	for _, list := range out {
		slices.SortFunc(list, func(a, b orphan) int { return bytes.Compare(a.first, b.first) })
	}
	return out
}

// classify names the bucket a leaf's records look like they come from
// (the shape of most of its keys and values), and returns its first key.
// It names only the buckets whose records Repair copies and cannot
// rebuild; "" when unsure.
func classify(elems []elem) (bucket string, first []byte) {
	votes := map[string]int{}
	for _, e := range elems {
		if e.bad != "" {
			continue
		}
		if first == nil {
			first = e.key
		}
		if e.bucket {
			return "", nil // the root tree's: bucket headers
		}
		votes[shape(e.key, e.val)]++
	}
	for b, n := range votes {
		if b != "" && 2*n > len(elems) {
			return b, first
		}
	}
	return "", nil
}

// shape guesses a record's bucket from its key and value (kv/schema.go).
func shape(k, v []byte) string {
	var c byte
	if len(v) > 0 {
		c = v[0]
	}
	isMap := c&0xf0 == 0x80 || c == 0xde || c == 0xdf
	switch {
	case len(k) == 16 && c&0xf0 == 0x90 && len(v) > 1 && v[1] == 0x95: // a list of anchors, each [page, url, text, rel, redirect]
		return string(kv.BucketAnchors)
	case len(k) == 16 && (c == 0x92 || c == 0x93 || c == 0x95): // [weight, first(, last(, nofollow, redirect))]
		return string(kv.BucketEdges)
	case len(k) == 12 && len(v) == 0:
		return string(kv.BucketVisited)
	case len(k) == 12 && c == 0x94: // [node, host, url, depth]
		return string(kv.BucketFrontier)
	case len(k) == 8 && k[0] == 0 && (c == 0x96 || c == 0x94): // a lease, or an older entry-only one
		return string(kv.BucketLeases)
	case len(k) == 8 && k[0] == 0 && isMap: // ids stay below 2^56; host names never start with 0
		return string(kv.BucketNodes)
	case len(v) == 0 && bytes.IndexByte(k, 0) > 0:
		return string(kv.BucketRoots)
	case len(k) > 0 && k[0] != 0 && isMap && bytes.IndexByte(k, 0) < 0:
		return string(kv.BucketRobots)
	}
	return ""
}
