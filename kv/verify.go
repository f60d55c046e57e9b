package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// verify.go proves, before bbolt reads a page of it, that a file's page
// structure is what bbolt will trust: Open runs it on every store. bbolt
// follows page numbers and element offsets without checking them, and
// asserts by panicking (or faults) when one is wrong; a store with one
// page overwritten crashed every command, and a crawl wrote into it.
//
// It reads the file once, in order, in large chunks with ReadAt (never
// through bbolt's map), noting each page's header and its elements'
// bounds; then it walks the trees from the root over those notes: every
// page reached must be inside the file's high-water mark, name itself,
// be a branch or a leaf, hold its elements (every key and value inside
// the page and its overflow), be reached once, and not be on the list of
// free pages. Bucket headers are followed into their trees and inline
// pages. Keys and values are not compared or decoded, where bbolt's
// Tx.Check compares every key: the walk costs a sequential read of the
// file and a look at each page's header (docs/store-damage.md has the
// figures). A damaged key or value is found by the reads that decode it
// (Decode) and by weaver check.

// bbolt's page layout (go.etcd.io/bbolt/internal/common): a 16-byte
// header (id u64, flags u16, count u16, overflow u32), then count
// elements of 16 bytes. A branch element is (pos u32, ksize u32, child
// u64), a leaf element (flags u32, pos u32, ksize u32, vsize u32); pos
// counts from the element. A leaf element with flag 1 is a bucket: its
// value is the bucket's root page and sequence (u64 each), followed, when
// the root is 0, by the bucket's one leaf inline.
const (
	pageHeader    = 16
	pageElem      = 16
	branchFlag    = 0x01
	leafFlag      = 0x02
	freelistFlag  = 0x10
	bucketElem    = 0x01
	bucketHdrSize = 16
	noFreelist    = ^uint64(0)
	maxDepth      = 64 // far deeper than any tree of a real file: a bound on pointer loops
)

// pageInfo is what the scan notes of a page that names itself.
type pageInfo struct {
	flags    uint16 // 0: the page does not name itself
	count    uint16
	overflow uint32
}

type walker struct {
	f        *os.File
	path     string
	ps       uint64              // page size
	hwm      uint64              // pages at or above it are not part of the file's trees
	info     []pageInfo          // by page id
	children map[uint64][]uint64 // a branch's children; the bucket roots a leaf holds
	bad      map[uint64]error    // why a page's elements cannot be trusted
	seen     []uint64
	free     []uint64
}

// scanChunk is how much of the file one read takes.
const scanChunk = 4 << 20

// verify checks the trees of the meta page m of the store at path and
// returns a CorruptError for the first structural damage it finds.
func verify(path string, m metaPage) error {
	f, err := os.Open(path)
	if err != nil {
		return pathError(path, err)
	}
	defer f.Close()
	words := (m.hwm + 63) / 64
	w := &walker{
		f: f, path: path, ps: uint64(m.pageSize), hwm: m.hwm, info: make([]pageInfo, m.hwm),
		children: map[uint64][]uint64{}, bad: map[uint64]error{},
		seen: make([]uint64, words), free: make([]uint64, words),
	}
	if m.freelist != noFreelist {
		if err := w.freelist(m.freelist); err != nil {
			return err
		}
	}
	if err := w.scan(); err != nil {
		return err
	}
	return w.walk(m.root, 0)
}

func has(set []uint64, id uint64) bool { return set[id/64]&(1<<(id%64)) != 0 }
func add(set []uint64, id uint64)      { set[id/64] |= 1 << (id % 64) }

func (w *walker) corrupt(format string, a ...any) error { return corruptf(w.path, format, a...) }

// readAt reads n bytes at off.
func (w *walker) readAt(off, n uint64) ([]byte, error) {
	b := make([]byte, n)
	if _, err := w.f.ReadAt(b, int64(off)); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: reading at byte %d: %w", w.path, off, err)
	}
	return b, nil
}

// scan reads every page below the high-water mark, in order, and notes
// the header of each that names itself and what a branch or leaf points
// at. Which pages are in use is known only from the walk: a free page's
// old header, or a large value's bytes, are noted too and never reached.
func (w *walker) scan() error {
	per := max(1, scanChunk/w.ps)
	buf := make([]byte, per*w.ps)
	le := binary.LittleEndian
	for first := uint64(2); first < w.hwm; first += per {
		n := min(per, w.hwm-first)
		b := buf[:n*w.ps]
		if _, err := w.f.ReadAt(b, int64(first*w.ps)); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: reading page %d: %w", w.path, first, err)
		}
		for i := range n {
			id, p := first+i, b[i*w.ps:]
			if le.Uint64(p) != id {
				continue
			}
			inf := pageInfo{flags: le.Uint16(p[8:]), count: le.Uint16(p[10:]), overflow: le.Uint32(p[12:])}
			w.info[id] = inf
			if (inf.flags != branchFlag && inf.flags != leafFlag) || uint64(inf.overflow) >= w.hwm-id {
				continue // reported if reached
			}
			if err := w.elements(id, p, inf); err != nil {
				if _, ok := err.(*CorruptError); !ok {
					return err
				}
				w.bad[id] = err
			}
		}
	}
	return nil
}

// elements checks the elements of page id, whose bytes from its start
// to the end of the chunk are p, and notes its children.
func (w *walker) elements(id uint64, p []byte, inf pageInfo) error {
	le := binary.LittleEndian
	span := (1 + uint64(inf.overflow)) * w.ps
	need := pageHeader + uint64(inf.count)*pageElem
	if need > span {
		return w.corrupt("page %d holds %d elements, more than fit in it (a damaged page)", id, inf.count)
	}
	if need > uint64(len(p)) { // a page with overflow at the end of a chunk
		var err error
		if p, err = w.readAt(id*w.ps, need); err != nil {
			return err
		}
	}
	var kids []uint64
	for i := range uint64(inf.count) {
		at := pageHeader + i*pageElem
		if inf.flags == branchFlag {
			pos, ksize := uint64(le.Uint32(p[at:])), uint64(le.Uint32(p[at+4:]))
			if at+pos+ksize > span {
				return w.corrupt("element %d of page %d lies outside the page (a damaged page)", i, id)
			}
			kids = append(kids, le.Uint64(p[at+8:]))
			continue
		}
		flags, pos := le.Uint32(p[at:]), uint64(le.Uint32(p[at+4:]))
		ksize, vsize := uint64(le.Uint32(p[at+8:])), uint64(le.Uint32(p[at+12:]))
		start := at + pos + ksize
		if start+vsize > span {
			return w.corrupt("element %d of page %d lies outside the page (a damaged page)", i, id)
		}
		if flags&bucketElem == 0 {
			continue
		}
		if vsize < bucketHdrSize {
			return w.corrupt("bucket %d of page %d has a header of %d bytes (a damaged page)", i, id, vsize)
		}
		v := p[min(start, uint64(len(p))):min(start+vsize, uint64(len(p)))]
		if uint64(len(v)) < vsize {
			var err error
			if v, err = w.readAt(id*w.ps+start, vsize); err != nil {
				return err
			}
		}
		var err error
		if kids, err = w.bucket(id, v, kids, 0); err != nil {
			return err
		}
	}
	if len(kids) > 0 {
		w.children[id] = kids
	}
	return nil
}

// bucket notes the tree of the bucket whose header is v (on page id): its
// root page, or the roots of the buckets its inline leaf holds.
func (w *walker) bucket(id uint64, v []byte, kids []uint64, depth int) ([]uint64, error) {
	le := binary.LittleEndian
	if root := le.Uint64(v); root != 0 {
		return append(kids, root), nil
	}
	inline := v[bucketHdrSize:]
	if len(inline) < pageHeader || le.Uint16(inline[8:]) != leafFlag {
		return kids, w.corrupt("an inline bucket on page %d is not a leaf (a damaged page)", id)
	}
	n := uint64(le.Uint16(inline[10:]))
	if pageHeader+n*pageElem > uint64(len(inline)) {
		return kids, w.corrupt("an inline bucket on page %d holds %d elements, more than fit in it (a damaged page)", id, n)
	}
	if depth > maxDepth {
		return kids, w.corrupt("buckets on page %d nest deeper than %d levels (a damaged page)", id, maxDepth)
	}
	for i := range n {
		at := pageHeader + i*pageElem
		flags, pos := le.Uint32(inline[at:]), uint64(le.Uint32(inline[at+4:]))
		ksize, vsize := uint64(le.Uint32(inline[at+8:])), uint64(le.Uint32(inline[at+12:]))
		start := at + pos + ksize
		if start+vsize > uint64(len(inline)) {
			return kids, w.corrupt("element %d of an inline bucket on page %d lies outside it (a damaged page)", i, id)
		}
		if flags&bucketElem == 0 {
			continue
		}
		if vsize < bucketHdrSize {
			return kids, w.corrupt("a bucket in an inline bucket on page %d has a header of %d bytes (a damaged page)", id, vsize)
		}
		var err error
		if kids, err = w.bucket(id, inline[start:start+vsize], kids, depth+1); err != nil {
			return kids, err
		}
	}
	return kids, nil
}

// walk checks the tree whose root is page id over the scan's notes.
func (w *walker) walk(id uint64, depth int) error {
	if depth > maxDepth {
		return w.corrupt("page %d is deeper than %d levels (a damaged page)", id, maxDepth)
	}
	if id < 2 || id >= w.hwm {
		return w.corrupt("a pointer to page %d, outside the file's %d pages (a damaged page)", id, w.hwm)
	}
	inf := w.info[id]
	if inf.flags == 0 {
		hdr, err := w.readAt(id*w.ps, 8)
		if err != nil {
			return err
		}
		return w.corrupt("page %d names itself page %d (a damaged page)", id, binary.LittleEndian.Uint64(hdr))
	}
	if inf.flags != branchFlag && inf.flags != leafFlag {
		return w.corrupt("page %d has flags %#x where a branch or leaf page is expected (a damaged page)", id, inf.flags)
	}
	if err := w.mark(id, uint64(inf.overflow)); err != nil {
		return err
	}
	if err := w.bad[id]; err != nil {
		return err
	}
	if inf.flags == branchFlag && inf.count == 0 {
		return w.corrupt("branch page %d is empty (a damaged page)", id)
	}
	for _, c := range w.children[id] {
		if err := w.walk(c, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// mark notes page id and its overflow as in use: below the high-water
// mark, reached once, not free.
func (w *walker) mark(id, overflow uint64) error {
	if overflow >= w.hwm-id {
		return w.corrupt("page %d claims %d overflow pages, past the file's %d pages (a damaged page)", id, overflow, w.hwm)
	}
	for o := id; o <= id+overflow; o++ {
		switch {
		case has(w.seen, o):
			return w.corrupt("page %d is reached twice (a damaged page)", o)
		case has(w.free, o):
			return w.corrupt("page %d is in use and listed as free (a damaged page)", o)
		}
		add(w.seen, o)
	}
	return nil
}

// freelist reads the list of free pages at page id into w.free.
func (w *walker) freelist(id uint64) error {
	if id < 2 || id >= w.hwm {
		return w.corrupt("the free list is on page %d, outside the file's %d pages (a damaged meta page)", id, w.hwm)
	}
	buf, err := w.readAt(id*w.ps, w.ps)
	if err != nil {
		return err
	}
	le := binary.LittleEndian
	if self := le.Uint64(buf); self != id {
		return w.corrupt("page %d names itself page %d (a damaged page)", id, self)
	}
	if flags := le.Uint16(buf[8:]); flags != freelistFlag {
		return w.corrupt("page %d has flags %#x where the free list is expected (a damaged page)", id, flags)
	}
	overflow := uint64(le.Uint32(buf[12:]))
	if err := w.mark(id, overflow); err != nil {
		return err
	}
	span := (1 + overflow) * w.ps
	start, n := uint64(pageHeader), uint64(le.Uint16(buf[10:]))
	if n == 0xFFFF { // the real count is the first id
		start, n = pageHeader+8, le.Uint64(buf[pageHeader:])
	}
	if n > (span-start)/8 {
		return w.corrupt("the free list on page %d claims %d pages, more than it holds (a damaged page)", id, n)
	}
	if need := start + 8*n; need > uint64(len(buf)) {
		if buf, err = w.readAt(id*w.ps, need); err != nil {
			return err
		}
	}
	for i := range n {
		p := le.Uint64(buf[start+8*i:])
		if p < 2 || p >= w.hwm {
			return w.corrupt("the free list on page %d holds page %d, outside the file's %d pages (a damaged page)", id, p, w.hwm)
		}
		add(w.free, p)
	}
	return nil
}
