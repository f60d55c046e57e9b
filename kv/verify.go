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
// The walk reads, with ReadAt and never through bbolt's map, the list of
// free pages and then every page reachable from the root: each must be
// inside the file's high-water mark, name itself, be a branch or a leaf,
// hold its elements (every key and value inside the page and its
// overflow), be reached once, and not be listed free. Bucket headers are
// followed into their trees and inline pages. Keys and values are not
// decoded and overflow pages are not read: the walk costs one read of a
// page per reachable page (see docs/store-damage.md for figures), where
// bbolt's Tx.Check compares every key. A damaged key or value is found
// by the reads that decode it (Decode) and by weaver check.

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

type walker struct {
	f    *os.File
	path string
	ps   uint64 // page size
	hwm  uint64 // pages at or above it are not part of the file's trees
	seen []uint64
	free []uint64
	bufs [][]byte // one first-page buffer per depth
}

// verify walks the trees of the meta page m of the store at path and
// returns a CorruptError for the first structural damage it finds.
func verify(path string, m metaPage) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	words := (m.hwm + 63) / 64
	w := &walker{f: f, path: path, ps: uint64(m.pageSize), hwm: m.hwm, seen: make([]uint64, words), free: make([]uint64, words)}
	if m.freelist != noFreelist {
		if err := w.freelist(m.freelist); err != nil {
			return err
		}
	}
	return w.tree(m.root, 0)
}

func has(set []uint64, id uint64) bool { return set[id/64]&(1<<(id%64)) != 0 }
func add(set []uint64, id uint64)      { set[id/64] |= 1 << (id % 64) }

func (w *walker) corrupt(format string, a ...any) error { return corruptf(w.path, format, a...) }

// header reads page id's first page into buf and checks its header: the
// page names itself, has one of flags, and fits below the high-water
// mark with its overflow, which is marked seen.
func (w *walker) header(id uint64, buf []byte, flags ...uint16) (flag, count uint16, span uint64, err error) {
	if id < 2 || id >= w.hwm {
		return 0, 0, 0, w.corrupt("a pointer to page %d, outside the file's %d pages (a damaged page)", id, w.hwm)
	}
	if _, err := w.f.ReadAt(buf, int64(id*w.ps)); err != nil && !errors.Is(err, io.EOF) {
		return 0, 0, 0, fmt.Errorf("%s: reading page %d: %w", w.path, id, err)
	}
	le := binary.LittleEndian
	if self := le.Uint64(buf); self != id {
		return 0, 0, 0, w.corrupt("page %d names itself page %d (a damaged page)", id, self)
	}
	flag, count = le.Uint16(buf[8:]), le.Uint16(buf[10:])
	ok := false
	for _, f := range flags {
		ok = ok || flag == f
	}
	if !ok {
		return 0, 0, 0, w.corrupt("page %d has flags %#x where a %s page is expected (a damaged page)", id, flag, flagName(flags[0]))
	}
	overflow := uint64(le.Uint32(buf[12:]))
	if overflow >= w.hwm-id {
		return 0, 0, 0, w.corrupt("page %d claims %d overflow pages, past the file's %d pages (a damaged page)", id, overflow, w.hwm)
	}
	for o := id; o <= id+overflow; o++ {
		switch {
		case has(w.seen, o):
			return 0, 0, 0, w.corrupt("page %d is reached twice (a damaged page)", o)
		case has(w.free, o):
			return 0, 0, 0, w.corrupt("page %d is in use and listed as free (a damaged page)", o)
		}
		add(w.seen, o)
	}
	return flag, count, (1 + overflow) * w.ps, nil
}

func flagName(f uint16) string {
	switch f {
	case freelistFlag:
		return "freelist"
	case leafFlag:
		return "leaf"
	}
	return "branch or leaf"
}

// freelist reads the list of free pages at page id into w.free.
func (w *walker) freelist(id uint64) error {
	buf := make([]byte, w.ps)
	_, count, span, err := w.header(id, buf, freelistFlag)
	if err != nil {
		return err
	}
	start, n := uint64(pageHeader), uint64(count)
	if count == 0xFFFF { // the real count is the first id
		start, n = pageHeader+8, binary.LittleEndian.Uint64(buf[pageHeader:])
	}
	if n > (span-start)/8 {
		return w.corrupt("the free list on page %d claims %d pages, more than it holds (a damaged page)", id, n)
	}
	if need := start + 8*n; need > uint64(len(buf)) {
		buf = make([]byte, need)
		if _, err := w.f.ReadAt(buf, int64(id*w.ps)); err != nil {
			return fmt.Errorf("%s: reading page %d: %w", w.path, id, err)
		}
	}
	for i := range n {
		p := binary.LittleEndian.Uint64(buf[start+8*i:])
		if p < 2 || p >= w.hwm {
			return w.corrupt("the free list on page %d holds page %d, outside the file's %d pages (a damaged page)", id, p, w.hwm)
		}
		add(w.free, p)
	}
	return nil
}

// buf returns the first-page buffer of depth.
func (w *walker) buf(depth int) []byte {
	for len(w.bufs) <= depth {
		w.bufs = append(w.bufs, make([]byte, w.ps))
	}
	return w.bufs[depth]
}

// tree walks the tree whose root is page id.
func (w *walker) tree(id uint64, depth int) error {
	if depth > maxDepth {
		return w.corrupt("page %d is deeper than %d levels (a damaged page)", id, maxDepth)
	}
	buf := w.buf(depth)
	flag, count, span, err := w.header(id, buf, branchFlag, leafFlag)
	if err != nil {
		return err
	}
	if flag == branchFlag && count == 0 {
		return w.corrupt("branch page %d is empty (a damaged page)", id)
	}
	if need := uint64(pageHeader) + uint64(count)*pageElem; need > uint64(len(buf)) {
		// Elements past the first page: a page with overflow, rare.
		if need > span {
			return w.corrupt("page %d holds %d elements, more than fit in it (a damaged page)", id, count)
		}
		buf = make([]byte, need)
		if _, err := w.f.ReadAt(buf, int64(id*w.ps)); err != nil {
			return fmt.Errorf("%s: reading page %d: %w", w.path, id, err)
		}
	}
	if flag == branchFlag {
		// The children are read after the elements: the buffer of this
		// depth is reused below, so they are copied out first.
		children := make([]uint64, count)
		for i := range children {
			at := pageHeader + uint64(i)*pageElem
			pos, ksize := uint64(binary.LittleEndian.Uint32(buf[at:])), uint64(binary.LittleEndian.Uint32(buf[at+4:]))
			if at+pos+ksize > span {
				return w.corrupt("element %d of page %d lies outside the page (a damaged page)", i, id)
			}
			children[i] = binary.LittleEndian.Uint64(buf[at+8:])
		}
		for _, c := range children {
			if err := w.tree(c, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return w.leaf(id, buf, int(count), span, depth, func(off, n uint64) ([]byte, error) {
		v := make([]byte, n)
		_, err := w.f.ReadAt(v, int64(id*w.ps+off))
		return v, err
	})
}

// leaf checks the count elements of a leaf held in b (its first len(b)
// bytes of span) and walks the buckets it holds; read returns bytes of
// the page past b.
func (w *walker) leaf(id uint64, b []byte, count int, span uint64, depth int, read func(off, n uint64) ([]byte, error)) error {
	le := binary.LittleEndian
	var buckets [][]byte
	for i := range count {
		at := pageHeader + uint64(i)*pageElem
		flags, pos := le.Uint32(b[at:]), uint64(le.Uint32(b[at+4:]))
		ksize, vsize := uint64(le.Uint32(b[at+8:])), uint64(le.Uint32(b[at+12:]))
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
		var v []byte
		if start+vsize <= uint64(len(b)) {
			v = append([]byte(nil), b[start:start+vsize]...)
		} else {
			var err error
			if v, err = read(start, vsize); err != nil {
				return fmt.Errorf("%s: reading page %d: %w", w.path, id, err)
			}
		}
		buckets = append(buckets, v)
	}
	for _, v := range buckets {
		if root := le.Uint64(v); root != 0 {
			if err := w.tree(root, depth+1); err != nil {
				return err
			}
			continue
		}
		inline := v[bucketHdrSize:]
		if len(inline) < pageHeader || le.Uint16(inline[8:]) != leafFlag {
			return w.corrupt("an inline bucket on page %d is not a leaf (a damaged page)", id)
		}
		n := int(le.Uint16(inline[10:]))
		if pageHeader+n*pageElem > len(inline) {
			return w.corrupt("an inline bucket on page %d holds %d elements, more than fit in it (a damaged page)", id, n)
		}
		if depth > maxDepth {
			return w.corrupt("buckets on page %d nest deeper than %d levels (a damaged page)", id, maxDepth)
		}
		if err := w.leaf(id, inline, n, uint64(len(inline)), depth+1, nil); err != nil {
			return err
		}
	}
	return nil
}
