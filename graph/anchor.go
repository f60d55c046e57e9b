package graph

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/weaver-crawler/weaver/kv"
)

// Anchor is one link that made an edge: the page of the source host it
// was on, the URL it pointed at, its text and its rel attribute. With
// --anchors N (config anchors_per_edge) a crawl keeps up to N of them per
// edge, in their own bucket (kv.BucketAnchors: from id | to id → a list of
// anchors), so that the edge records, the most numerous of a store, keep
// their size whether anchors are kept or not.
type Anchor struct {
	//lint:ignore U1000 read by msgpack: its tag makes the record an array
	_msgpack struct{} `msgpack:",as_array"` // five fields, no keys: smaller than a map

	Page     string `json:"page"`               // URL of the source host's page that held the link ("" when unknown)
	URL      string `json:"url"`                // the link's target, absolute, without fragment
	Text     string `json:"text,omitempty"`     // the anchor text (an image's alt inside it, an <area>'s alt), normalised, at most MaxAnchorText runes
	Rel      string `json:"rel,omitempty"`      // the rel attribute's keywords, lower case, space-separated
	Redirect bool   `json:"redirect,omitempty"` // the page redirected to URL rather than linking to it
}

// Limits on the anchors a store keeps.
const (
	MaxAnchors    = 100 // most anchors kept per edge (anchors_per_edge's ceiling)
	MaxAnchorText = 100 // Anchor.Text is cut to this many runes by the extractor
)

// same reports whether a and b are the same link of the same page.
func (a *Anchor) same(b Anchor) bool { return a.Page == b.Page && a.URL == b.URL }

// equal reports whether a and b are equal in every field.
func (a *Anchor) equal(b *Anchor) bool {
	return a.Page == b.Page && a.URL == b.URL && a.Text == b.Text && a.Rel == b.Rel && a.Redirect == b.Redirect
}

// AddAnchors records the anchors of the edge from→to a crawl found: they
// come first, in the order given, followed by the ones stored before that
// are not among them (same page, same URL), up to n in all. The record is
// written only when it changes, so a revisit that finds the same links
// writes nothing. n ≤ 0 keeps nothing and writes nothing. It returns a
// decoding error for a damaged record and the store's errors.
func AddAnchors(tx *kv.Tx, from, to uint64, fresh []Anchor, n int) error {
	if n <= 0 || len(fresh) == 0 {
		return nil
	}
	n = min(n, MaxAnchors)
	k := edgeKey(from, to)
	old, err := getAnchors(tx, k)
	if err != nil {
		return fmt.Errorf("graph: anchors %d→%d: %w", from, to, err)
	}
	list := MergeAnchors(fresh, old, n)
	if slices.EqualFunc(list, old, func(a, b Anchor) bool { return a.equal(&b) }) {
		return nil
	}
	if err := tx.Put(kv.BucketAnchors, k, list); err != nil {
		return fmt.Errorf("graph: anchors %d→%d: %w", from, to, err)
	}
	return nil
}

// MergeAnchors returns the anchors of first, then those of then, without
// a second link of the same page to the same URL, at most n.
func MergeAnchors(first, then []Anchor, n int) []Anchor {
	list := make([]Anchor, 0, min(n, len(first)+len(then)))
	for _, from := range [][]Anchor{first, then} {
		for i := range from {
			if len(list) < n && !slices.ContainsFunc(list, from[i].same) {
				list = append(list, from[i])
			}
		}
	}
	return list
}

// GetAnchors returns the anchors kept for the edge from→to, none in a
// store written before anchors existed. It returns a decoding error for a
// damaged record.
func GetAnchors(tx *kv.Tx, from, to uint64) ([]Anchor, error) {
	list, err := getAnchors(tx, edgeKey(from, to))
	if err != nil {
		return nil, fmt.Errorf("graph: anchors %d→%d: %w", from, to, err)
	}
	return list, nil
}

func getAnchors(tx *kv.Tx, k []byte) ([]Anchor, error) {
	if !tx.Exists(kv.BucketAnchors) {
		return nil, nil // a read-only store of an older weaver
	}
	var list []Anchor
	_, err := tx.Get(kv.BucketAnchors, k, &list)
	return list, err
}

// HasAnchors reports whether the store keeps any anchors.
func HasAnchors(tx *kv.Tx) bool {
	if !tx.Exists(kv.BucketAnchors) {
		return false
	}
	k, _ := tx.Cursor(kv.BucketAnchors).First()
	return k != nil
}

// ForEachAnchors calls fn for every edge that has anchors, in (from, to)
// order. The list is fn's to keep. It returns fn's first error (other
// than ErrStop) or a decoding error.
func ForEachAnchors(tx *kv.Tx, fn func(from, to uint64, list []Anchor) error) error {
	if !tx.Exists(kv.BucketAnchors) {
		return nil
	}
	c := tx.Cursor(kv.BucketAnchors)
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 16 {
			return fmt.Errorf("graph: anchors key %x: %w", k, ErrInconsistent)
		}
		var list []Anchor
		if err := kv.Decode(v, &list); err != nil {
			return fmt.Errorf("graph: anchors %x: %w", k, err)
		}
		if err := fn(binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:]), list); err != nil {
			if errors.Is(err, ErrStop) {
				return nil
			}
			return err
		}
	}
	return nil
}

// PutAnchors writes the anchors of the edge from→to as given (weaver
// merge and repair, which copy them); an empty list deletes the record.
func PutAnchors(tx *kv.Tx, from, to uint64, list []Anchor) error {
	k := edgeKey(from, to)
	if len(list) == 0 {
		return tx.Delete(kv.BucketAnchors, k)
	}
	return tx.Put(kv.BucketAnchors, k, list)
}

// checkAnchors adds a problem for every anchors record that does not
// decode or whose edge does not exist.
func checkAnchors(tx *kv.Tx, add func(format string, a ...any)) {
	if !tx.Exists(kv.BucketAnchors) {
		return
	}
	c := tx.Cursor(kv.BucketAnchors)
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var list []Anchor
		if err := kv.Decode(v, &list); err != nil || len(k) != 16 {
			if err == nil {
				err = fmt.Errorf("key of %d bytes, want 16", len(k))
			}
			add("anchors %x: %v", k, err)
			continue
		}
		if tx.GetRaw(kv.BucketEdges, k) == nil {
			add("anchors of edge %d→%d, which does not exist", binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:]))
		}
		if len(list) == 0 || len(list) > MaxAnchors {
			add("anchors of edge %d→%d: %d, want 1 to %d", binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:]), len(list), MaxAnchors)
		}
	}
}

// anchorsPrefix is the key prefix of the anchors of from's edges.
func anchorsPrefix(from uint64) []byte { return kv.U64(from) }

// OutAnchors returns the anchors of every edge leaving from that has
// some, by target id. It returns a decoding error for a damaged record.
func OutAnchors(tx *kv.Tx, from uint64) (map[uint64][]Anchor, error) {
	if !tx.Exists(kv.BucketAnchors) {
		return nil, nil
	}
	out := map[uint64][]Anchor{}
	prefix := anchorsPrefix(from)
	c := tx.Cursor(kv.BucketAnchors)
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var list []Anchor
		if err := kv.Decode(v, &list); err != nil || len(k) != 16 {
			return nil, fmt.Errorf("graph: anchors %x: %w", k, errors.Join(err, ErrInconsistent))
		}
		out[binary.BigEndian.Uint64(k[8:])] = list
	}
	return out, nil
}
