package kv

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Tx is a transaction on a Store. Values read from it are valid only until
// it ends: Get decodes into fresh values, GetRaw's bytes must be copied
// before they leave the transaction.
type Tx struct {
	btx *bbolt.Tx
	// counters caches meta counters read or written in this transaction;
	// written ones are stored once, when the transaction commits, instead
	// of once per change (a page changes them dozens of times).
	counters map[string]*counter
	// cursors serve Get and GetRaw, one per bucket: a bbolt Get makes a
	// cursor and grows its stack each time, the allocation a page's
	// commit made most of (a lookup per link and bucket). Seek starts
	// from the bucket's root, so writes between lookups do not matter.
	cursors map[string]*bbolt.Cursor
	// resources take part in the commit (Enlist).
	resources []Resource
	// later holds PutLater's writes, by bucket and key, until they are
	// stored in key order; laterErr is why storing them failed where
	// nothing could return it (Cursor, Len), returned by the commit.
	later    map[string]map[string][]byte
	laterErr error
}

type counter struct {
	n     uint64
	dirty bool
}

// flush stores the writes PutLater holds and the counters changed in
// this transaction.
func (tx *Tx) flush() error {
	for bucket := range tx.later {
		tx.storeLater(bucket)
	}
	if tx.laterErr != nil {
		return tx.laterErr
	}
	for name, c := range tx.counters {
		if c.dirty {
			if err := tx.PutRaw(BucketMeta, []byte(name), U64(c.n)); err != nil {
				return err
			}
			c.dirty = false
		}
	}
	return nil
}

func (tx *Tx) bucket(name []byte) *bbolt.Bucket {
	b := tx.btx.Bucket(name)
	if b == nil {
		panic(fmt.Sprintf("kv: bucket %q does not exist (Open creates every bucket)", name))
	}
	if f := fillPercent(name); f != 0 {
		b.FillPercent = f // bbolt does not store it: set in every transaction
	}
	return b
}

// Exists reports whether bucket is in the file: a bucket added by a later
// weaver is missing from an older store opened read-only.
func (tx *Tx) Exists(bucket []byte) bool { return tx.btx.Bucket(bucket) != nil }

// Writable reports whether the transaction may write.
func (tx *Tx) Writable() bool { return tx.btx.Writable() }

// Get decodes the msgpack value at key into v. It reports false when the
// key is absent, and returns a decoding error naming the bucket and key.
func (tx *Tx) Get(bucket, key []byte, v any) (bool, error) {
	data := tx.get(bucket, key)
	if data == nil {
		return false, nil
	}
	if err := Decode(data, v); err != nil {
		return true, fmt.Errorf("kv: decode %s/%x: %w", bucket, key, err)
	}
	return true, nil
}

// GetRaw returns the bytes at key, or nil. They are valid until the
// transaction ends.
func (tx *Tx) GetRaw(bucket, key []byte) []byte { return tx.get(bucket, key) }

// get is bbolt's Bucket.Get on the transaction's cursor of bucket, after
// the writes PutLater holds.
func (tx *Tx) get(bucket, key []byte) []byte {
	if m := tx.later[string(bucket)]; m != nil {
		if v, ok := m[string(key)]; ok {
			return v
		}
	}
	c := tx.cursors[string(bucket)]
	if c == nil {
		c = tx.bucket(bucket).Cursor()
		if tx.cursors == nil {
			tx.cursors = make(map[string]*bbolt.Cursor)
		}
		tx.cursors[string(bucket)] = c
	}
	k, v := c.Seek(key)
	if k == nil || !bytes.Equal(k, key) {
		return nil
	}
	return v
}

// Put encodes v with msgpack and stores it at key. It returns an encoding
// or bbolt error (bbolt.ErrTxNotWritable in a read transaction).
func (tx *Tx) Put(bucket, key []byte, v any) error {
	data, err := msgpack.Marshal(v)
	if err != nil {
		return fmt.Errorf("kv: encode %s/%x: %w", bucket, key, err)
	}
	return tx.PutRaw(bucket, key, data)
}

// PutRaw stores val at key. key and val must not be modified until the
// transaction ends.
func (tx *Tx) PutRaw(bucket, key, val []byte) error {
	if m := tx.later[string(bucket)]; m != nil {
		delete(m, string(key))
	}
	if err := tx.bucket(bucket).Put(key, val); err != nil {
		return fmt.Errorf("kv: put %s/%x: %w", bucket, key, err)
	}
	return nil
}

// Delete removes key; removing an absent key is not an error.
func (tx *Tx) Delete(bucket, key []byte) error {
	if m := tx.later[string(bucket)]; m != nil {
		delete(m, string(key))
	}
	if err := tx.bucket(bucket).Delete(key); err != nil {
		return fmt.Errorf("kv: delete %s/%x: %w", bucket, key, err)
	}
	return nil
}

// PutLater is PutRaw for the many random keys of one transaction, such
// as the hosts a page discovers: it holds the write until the transaction
// commits (or walks or counts bucket), then stores the writes held in key
// order. bbolt splits a leaf only at the commit, so a leaf that takes
// thousands of random keys in one transaction shifts its entries at every
// one of them (the import's cost of a new host grew with the square of
// its batch); in key order each is put after the last. Get and GetRaw
// see the write at once; PutRaw and Delete of its key replace it. key
// and val must not be modified until the transaction ends.
func (tx *Tx) PutLater(bucket, key, val []byte) error {
	switch {
	case !tx.btx.Writable():
		return fmt.Errorf("kv: put %s/%x: %w", bucket, key, berrors.ErrTxNotWritable)
	case len(key) == 0:
		return fmt.Errorf("kv: put %s: %w", bucket, berrors.ErrKeyRequired)
	case len(key) > bbolt.MaxKeySize:
		return fmt.Errorf("kv: put %s/%x: %w", bucket, key[:16], berrors.ErrKeyTooLarge)
	case int64(len(val)) > bbolt.MaxValueSize:
		return fmt.Errorf("kv: put %s/%x: %w", bucket, key, berrors.ErrValueTooLarge)
	}
	tx.bucket(bucket) // it exists
	m := tx.later[string(bucket)]
	if m == nil {
		if tx.later == nil {
			tx.later = make(map[string]map[string][]byte)
		}
		m = make(map[string][]byte)
		tx.later[string(bucket)] = m
	}
	m[string(key)] = val
	return nil
}

// storeLater stores the writes PutLater holds for bucket, in key order.
func (tx *Tx) storeLater(bucket string) {
	m := tx.later[bucket]
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := tx.bucket([]byte(bucket))
	for _, k := range keys {
		if err := b.Put([]byte(k), m[k]); err != nil && tx.laterErr == nil {
			tx.laterErr = fmt.Errorf("kv: put %s/%x: %w", bucket, k, err)
		}
	}
	clear(m)
}

// Cursor returns a cursor over bucket in key order.
func (tx *Tx) Cursor(bucket []byte) *Cursor {
	tx.storeLater(string(bucket))
	return &Cursor{c: tx.bucket(bucket).Cursor()}
}

// Len counts the keys of bucket. It walks the whole bucket: keep it off
// hot paths (graph and frontier keep their own counters).
func (tx *Tx) Len(bucket []byte) int {
	tx.storeLater(string(bucket))
	return tx.bucket(bucket).Stats().KeyN
}

// Size returns the size in bytes of the store as this transaction sees it.
func (tx *Tx) Size() int64 { return tx.btx.Size() }

// WriteTo writes a consistent copy of the whole store file to w, as of
// this transaction.
func (tx *Tx) WriteTo(w io.Writer) (int64, error) {
	for bucket := range tx.later {
		tx.storeLater(bucket)
	}
	if tx.laterErr != nil {
		return 0, tx.laterErr
	}
	return tx.btx.WriteTo(w)
}

// Counter returns the unsigned counter stored under name in the meta bucket
// (zero when absent).
func (tx *Tx) Counter(name string) uint64 {
	if c, ok := tx.counters[name]; ok {
		return c.n
	}
	var n uint64
	if v := tx.bucket(BucketMeta).Get([]byte(name)); len(v) == 8 {
		n = binary.BigEndian.Uint64(v)
	}
	if tx.counters == nil {
		tx.counters = make(map[string]*counter)
	}
	tx.counters[name] = &counter{n: n}
	return n
}

// SetCounter sets a meta counter; it is stored when the transaction
// commits. It returns bbolt.ErrTxNotWritable in a read transaction.
func (tx *Tx) SetCounter(name string, n uint64) error {
	if !tx.btx.Writable() {
		return fmt.Errorf("kv: set counter %s: %w", name, berrors.ErrTxNotWritable)
	}
	tx.Counter(name)
	c := tx.counters[name]
	c.n, c.dirty = n, true
	return nil
}

// AddCounter adds delta (which may be negative) to a meta counter and
// returns the new value.
func (tx *Tx) AddCounter(name string, delta int64) (uint64, error) {
	n := uint64(int64(tx.Counter(name)) + delta)
	return n, tx.SetCounter(name, n)
}

// MetaString returns a string stored in the meta bucket.
func (tx *Tx) MetaString(name string) string { return string(tx.bucket(BucketMeta).Get([]byte(name))) }

// SetMetaString stores a string in the meta bucket.
func (tx *Tx) SetMetaString(name, v string) error {
	return tx.PutRaw(BucketMeta, []byte(name), []byte(v))
}

// SchemaVersion returns the schema version recorded in the file.
func (tx *Tx) SchemaVersion() int {
	v, _ := strconv.Atoi(tx.MetaString(metaSchema))
	return v
}

// Cursor walks a bucket in key order. Keys and values it returns are valid
// until the transaction ends.
type Cursor struct {
	c *bbolt.Cursor
}

// First moves to the first key; nil key when the bucket is empty.
func (c *Cursor) First() (key, val []byte) { return c.c.First() }

// Last moves to the last key.
func (c *Cursor) Last() (key, val []byte) { return c.c.Last() }

// Next moves to the next key; nil key at the end.
func (c *Cursor) Next() (key, val []byte) { return c.c.Next() }

// Prev moves to the previous key.
func (c *Cursor) Prev() (key, val []byte) { return c.c.Prev() }

// Seek moves to the first key ≥ seek.
func (c *Cursor) Seek(seek []byte) (key, val []byte) { return c.c.Seek(seek) }

// Delete removes the current key.
func (c *Cursor) Delete() error { return c.c.Delete() }

// Decode decodes a msgpack value read through a cursor. A damaged value
// gives an error, never a panic, and allocates at most about a MiB more
// than data (see wellFormed and decoders).
func Decode(data []byte, v any) (err error) {
	if err := wellFormed(data); err != nil {
		return fmt.Errorf("kv: damaged value: %w", err)
	}
	dec := decoders.Get().(*msgpack.Decoder)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("kv: damaged value: %v", r)
		}
	}()
	dec.Reset(bytes.NewReader(data))
	err = dec.Decode(v)
	if err == nil && len(data) <= 64<<10 {
		dec.Reset(nil)
		decoders.Put(dec)
	}
	return err
}

// decoders keeps the msgpack decoders of values that decoded. msgpack
// reads a claimed length by growing its decoder's buffer a MiB at a time
// until the data runs out, and keeps the grown buffer: wellFormed bounds
// the lengths of the value, but msgpack decodes an extension header where
// a map is expected as a wrapper around the bytes that follow it, lengths
// wellFormed saw as opaque payload. msgpack.Unmarshal's pool kept those
// buffers, so each such value grew the next decoder by a MiB (8 GiB in a
// fuzz worker within a minute); a decoder that failed is dropped instead.
var decoders = sync.Pool{New: func() any { return msgpack.NewDecoder(nil) }}

// Encode encodes v with msgpack into a new slice of exactly its size.
// msgpack.Marshal grew an empty buffer step by step (four copies for a
// crawled node, most of its cost); Encode writes into a pooled buffer and
// copies the result out once.
func Encode(v any) ([]byte, error) {
	buf := encodeBufs.Get().(*bytes.Buffer)
	buf.Reset()
	enc := msgpack.GetEncoder()
	enc.Reset(buf)
	err := enc.Encode(v)
	msgpack.PutEncoder(enc)
	var out []byte
	if err == nil {
		out = bytes.Clone(buf.Bytes())
	}
	if buf.Cap() <= 64<<10 { // a huge record's buffer is not kept
		encodeBufs.Put(buf)
	}
	return out, err
}

var encodeBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// U64 returns n as 8 big-endian bytes: ids sort numerically as keys.
func U64(n uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, n)
	return b
}

// U32 returns n as 4 big-endian bytes.
func U32(n uint32) []byte {
	b := make([]byte, 4)
	binary.BigEndian.PutUint32(b, n)
	return b
}

// Bytes is a []byte field of a stored record. msgpack decodes a plain
// []byte by allocating the length its header claims before reading, so a
// damaged 10-byte value claiming 3 GB allocated 3 GB; Bytes decodes
// through the string path, which grows only as data actually arrives.
type Bytes []byte

// EncodeMsgpack writes b as msgpack bin.
func (b Bytes) EncodeMsgpack(enc *msgpack.Encoder) error { return enc.EncodeBytes(b) }

// DecodeMsgpack reads a bin or str value without trusting its length.
func (b *Bytes) DecodeMsgpack(dec *msgpack.Decoder) error {
	s, err := dec.DecodeString()
	if err != nil {
		return err
	}
	*b = Bytes(s)
	return nil
}
