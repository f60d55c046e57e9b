package graph

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/weaver-crawler/weaver/kv"
)

// Schema 1's history: one record per crawl in kv.BucketCrawls, key = node
// id (8 B) | crawl time (8 B, Unix ns), value = the flags byte, then
// unless crawlSame the links as varints (target delta, weight<<2 |
// nofollow?<<1 | redirect?, the counts when flagged) up to the value's
// end. A store of schema 1 opened by this weaver keeps them: they are
// read as they are, and a node's are rewritten into the segments of
// history_codec.go (and deleted) when a crawl is added to its history.

// decodeV1 reads a schema 1 record; same reports a record without links.
func decodeV1(k, v []byte) (c Crawl, same bool, err error) {
	if len(k) != 16 || len(v) < 1 {
		return c, false, fmt.Errorf("%w: key %x", ErrBadHistory, k)
	}
	c.At = time.Unix(0, int64(binary.BigEndian.Uint64(k[8:]))).UTC()
	c.Changed = v[0]&crawlChanged != 0
	c.NotModified = v[0]&crawlNotModified != 0
	if v[0]&crawlSame != 0 {
		return c, true, nil
	}
	r := bytes.NewReader(v[1:])
	var last uint64
	for r.Len() > 0 {
		d, err1 := binary.ReadUvarint(r)
		f, err2 := binary.ReadUvarint(r)
		if err1 != nil || err2 != nil {
			return c, false, fmt.Errorf("%w: key %x", ErrBadHistory, k)
		}
		l := Link{To: last + d, Weight: f >> 2}
		last = l.To
		if f&2 != 0 {
			if l.Nofollow, err1 = binary.ReadUvarint(r); err1 != nil {
				return c, false, fmt.Errorf("%w: key %x", ErrBadHistory, k)
			}
		}
		if f&1 != 0 {
			if l.Redirect, err1 = binary.ReadUvarint(r); err1 != nil {
				return c, false, fmt.Errorf("%w: key %x", ErrBadHistory, k)
			}
		}
		c.Links = append(c.Links, l)
	}
	return c, false, nil
}

// hasV1 reports whether node has schema 1 records.
func hasV1(tx *kv.Tx, node uint64) bool {
	if !tx.Exists(kv.BucketCrawls) {
		return false
	}
	prefix := kv.U64(node)
	k, _ := tx.Cursor(kv.BucketCrawls).Seek(prefix)
	return k != nil && bytes.HasPrefix(k, prefix)
}

// eachV1 calls fn for node's schema 1 records, oldest first, each with its
// links resolved (a record without links takes those of the one before).
func eachV1(tx *kv.Tx, node uint64, fn func(c *Crawl) error) error {
	if !tx.Exists(kv.BucketCrawls) {
		return nil
	}
	cur := tx.Cursor(kv.BucketCrawls)
	prefix := kv.U64(node)
	var links []Link
	for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
		c, same, err := decodeV1(k, v)
		if err != nil {
			return err
		}
		if same {
			c.Links = links
		}
		links = c.Links
		if err := fn(&c); err != nil {
			return err
		}
	}
	return nil
}

// deleteV1 deletes node's schema 1 records.
func deleteV1(tx *kv.Tx, node uint64) error {
	if !tx.Exists(kv.BucketCrawls) {
		return nil
	}
	prefix := kv.U64(node)
	cur := tx.Cursor(kv.BucketCrawls)
	for k, _ := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = cur.Seek(prefix) {
		if err := cur.Delete(); err != nil {
			return err
		}
	}
	return nil
}
