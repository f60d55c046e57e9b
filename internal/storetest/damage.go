package storetest

import (
	"encoding/binary"
	"os"
	"testing"

	"go.etcd.io/bbolt"
)

// Leaf is one leaf page of a bucket in a bbolt file.
type Leaf struct {
	Page   uint64 // page id
	Offset int64  // byte offset of the page in the file
	Count  int    // elements on the page
}

// LeafPages returns the leaf pages of bucket in the store file at path
// (which no process may hold), in key order, and the file's page size,
// for tests that damage a store the way a failing disk would. A bucket
// small enough to live inline in its parent has none. It reads the
// bucket's root from bbolt and walks the branch pages in the file.
func LeafPages(tb testing.TB, path string, bucket []byte) (pageSize int, leaves []Leaf) {
	tb.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		tb.Fatalf("open %s: %v", path, err)
	}
	var root uint64
	pageSize = db.Info().PageSize
	err = db.View(func(tx *bbolt.Tx) error {
		if b := tx.Bucket(bucket); b != nil {
			root = uint64(b.Root())
		}
		return nil
	})
	db.Close()
	if err != nil {
		tb.Fatal(err)
	}
	if root == 0 {
		return pageSize, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	le := binary.LittleEndian
	var walk func(id uint64)
	walk = func(id uint64) {
		p := data[int(id)*pageSize:]
		flags, count := le.Uint16(p[8:]), int(le.Uint16(p[10:]))
		if flags == 0x02 {
			leaves = append(leaves, Leaf{Page: id, Offset: int64(id) * int64(pageSize), Count: count})
			return
		}
		for i := 0; i < count; i++ {
			walk(le.Uint64(p[16+i*16+8:]))
		}
	}
	walk(root)
	return pageSize, leaves
}

// LeafElement returns the file offset of element i's 16-byte header on
// leaf (flags, pos, key size, value size: 4 bytes each, little-endian) and
// the offsets of its key and value.
func LeafElement(tb testing.TB, path string, leaf Leaf, i int) (header, key, value int64) {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	header = leaf.Offset + 16 + int64(i)*16
	var b [16]byte
	if _, err := f.ReadAt(b[:], header); err != nil {
		tb.Fatal(err)
	}
	le := binary.LittleEndian
	key = header + int64(le.Uint32(b[4:]))
	value = key + int64(le.Uint32(b[8:]))
	return header, key, value
}

// Patch overwrites the file at path with b at offset off.
func Patch(tb testing.TB, path string, off int64, b []byte) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := f.WriteAt(b, off); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// Flip inverts the bits of mask in the byte at off of the file at path.
func Flip(tb testing.TB, path string, off int64, mask byte) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var b [1]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		tb.Fatal(err)
	}
	b[0] ^= mask
	if _, err := f.WriteAt(b[:], off); err != nil {
		tb.Fatal(err)
	}
}
