// What Open reads of a file before bbolt opens it: bbolt's meta pages.

package kv

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"os"
)

// bbolt's meta page: a 16-byte page header, then the magic number.
const (
	bboltMagic      = 0xED0CDAED
	bboltMagicAt    = 16
	bboltPageSizeAt = 24
)

// sniff checks the file without bbolt, so that a file that is not bbolt at
// all (SQLite, random bytes) or a truncated one is refused before bbolt
// opens it: bbolt itself faults reading pages past the end of a file. It
// reads both meta pages, keeps the valid one with the newest transaction,
// and requires the file to hold every page up to its high-water mark.
func sniff(path string, size int64) (meta metaPage, err error) {
	f, err := os.Open(path)
	if err != nil {
		return meta, pathError(path, err)
	}
	defer f.Close()
	var hdr [metaEnd]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return meta, fmt.Errorf("%s %w (only %d bytes)", path, ErrNotStore, size)
	}
	// A first page without bbolt's magic is another kind of file, unless
	// the second meta page is valid: bbolt keeps two so that one damaged
	// meta page costs only the last transaction, and opens with the other.
	notBolt := binary.LittleEndian.Uint32(hdr[bboltMagicAt:]) != bboltMagic
	best, ok := parseMeta(hdr[:])
	candidates := []int{4096, 8192, 16384, 32768, 65536}
	if ok {
		candidates = append([]int{best.pageSize}, candidates...)
	}
	ok0, ok1 := ok, false
	for _, ps := range candidates {
		var m1 [metaEnd]byte
		if _, err := f.ReadAt(m1[:], int64(ps)); err != nil {
			continue
		}
		if m, valid := parseMeta(m1[:]); valid && m.pageSize == ps && (!ok0 || ps == best.pageSize) {
			if !ok || m.txid > best.txid {
				best = m
			}
			ok, ok1 = true, true
			break
		}
	}
	switch {
	case !ok && notBolt && bytes.HasPrefix(hdr[:], []byte("SQLite format 3\x00")):
		return meta, fmt.Errorf("%s %w: it is a SQLite database (did you mean an export?)", path, ErrNotStore)
	case !ok && notBolt:
		return meta, fmt.Errorf("%s %w", path, ErrNotStore)
	case !ok:
		return meta, corruptf(path, "no valid meta page")
	case !ok1 && size < 2*int64(best.pageSize):
		return meta, fmt.Errorf("%s %w: %d bytes, its pages need %d", path, ErrTruncated, size, int64(best.hwm)*int64(best.pageSize))
	case !ok0 || !ok1:
		// bbolt would open it with the other one, as of the transaction
		// before the last, and weaver check reports it: a damaged page
		// like any other, for check --repair.
		damaged := 0
		if ok0 {
			damaged = 1
		}
		return meta, corruptf(path, "meta page %d is damaged (the other one is valid)", damaged)
	}
	if need := int64(best.hwm) * int64(best.pageSize); size < need {
		return meta, fmt.Errorf("%s %w: %d bytes, its pages need %d", path, ErrTruncated, size, need)
	}
	return best, nil
}

// bbolt's meta page layout: a 16-byte page header, then magic, version,
// page size, flags (4 bytes each), the root bucket (16), the freelist page
// id, the high-water mark page id and the transaction id (8 each), and an
// FNV-64a checksum of everything from magic to txid.
const (
	metaStart = 16
	metaSum   = 72
	metaEnd   = 80
)

type metaPage struct {
	pageSize int
	root     uint64 // the root bucket's page
	freelist uint64 // the page of the list of free pages
	hwm      uint64
	txid     uint64
}

func parseMeta(b []byte) (metaPage, bool) {
	if len(b) < metaEnd || binary.LittleEndian.Uint32(b[bboltMagicAt:]) != bboltMagic {
		return metaPage{}, false
	}
	h := fnv.New64a()
	h.Write(b[metaStart:metaSum])
	if h.Sum64() != binary.LittleEndian.Uint64(b[metaSum:]) {
		return metaPage{}, false
	}
	m := metaPage{
		pageSize: int(binary.LittleEndian.Uint32(b[bboltPageSizeAt:])),
		root:     binary.LittleEndian.Uint64(b[32:]),
		freelist: binary.LittleEndian.Uint64(b[48:]),
		hwm:      binary.LittleEndian.Uint64(b[56:]),
		txid:     binary.LittleEndian.Uint64(b[64:]),
	}
	if m.pageSize < 512 || m.pageSize > 1<<20 || m.pageSize&(m.pageSize-1) != 0 || m.hwm < 4 {
		return metaPage{}, false
	}
	return m, true
}
