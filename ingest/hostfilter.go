package ingest

import (
	"hash/maphash"
	"math/bits"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// hostFilter says of a host that the store certainly has no node for it,
// so that the import creates the node of a new host without first looking
// its name up in the hosts bucket: on a web still being discovered, about
// every fifth link names a new host, and the lookup that misses is a walk
// down the bucket on the writer's core, serial with everything else the
// store does (docs/performance.md, "Issue 54, sixth round").
//
// It is a Bloom filter of every host the store held when the import began
// and of every host the import has created since (a host it finds was one
// or the other, and is not added again, which would count it twice
// towards a part's capacity): a host it has never been told of is absent.
// Telling it of a host is always safe (a host it holds is only looked up,
// as without it), so a transaction rolled back after adding leaves it
// right. It is wrong only if a node is created by a path that does not
// tell it, which is why the import keeps one only while it alone writes
// the store, and every node the import makes passes through
// importer.ensure or importer.target.
//
// It grows as a sequence of filters, each twice the capacity of the last
// (a host is absent when no part holds it), up to maxFilterBits in all;
// past that it answers "maybe" to everything and the import looks every
// new host up, as before.
type hostFilter struct {
	seed  maphash.Seed
	parts []bloom
	off   bool // grown past maxFilterBits: no answers
}

// bloom is one part of a hostFilter: bitsPerHost bits a host of its
// capacity, filterProbes probes, about 1 % false "maybe" when full.
type bloom struct {
	bits     []uint64
	mask     uint64 // len(bits)*64 - 1: the length is a power of two
	n, limit int
}

const (
	bitsPerHost  = 10
	filterProbes = 7
	// maxFilterBits bounds a hostFilter's memory: 128 MiB, about 50
	// million hosts in its parts.
	maxFilterBits = 1 << 30
	// maxScanHosts is the most hosts a store may hold for the import to
	// read them all into a filter when it begins (a sequential walk of the
	// hosts bucket: 4-5 ms for 98,430 hosts in the page cache, so about
	// 0.4 s at this bound); a larger store is imported into without one.
	maxScanHosts = 1 << 23
)

// newHostFilter returns a filter of the hosts of the store tx reads, or
// nil when the store holds too many to read (maxScanHosts).
func newHostFilter(tx *kv.Tx) *hostFilter {
	stored := graph.GetCounts(tx).Nodes
	if stored > maxScanHosts {
		return nil
	}
	f := &hostFilter{seed: maphash.MakeSeed()}
	f.grow(max(int(stored)*2, 1<<16))
	c := tx.Cursor(kv.BucketHosts)
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		f.addHash(maphash.Bytes(f.seed, k))
	}
	return f
}

// grow adds a part for limit hosts.
func (f *hostFilter) grow(limit int) {
	words := 1 << bits.Len(uint(limit*bitsPerHost/64))
	total := words * 64
	for _, p := range f.parts {
		total += len(p.bits) * 64
	}
	if total > maxFilterBits {
		f.off, f.parts = true, nil
		return
	}
	f.parts = append(f.parts, bloom{bits: make([]uint64, words), mask: uint64(words*64 - 1), limit: limit})
}

// absent reports whether host is certainly not in the store.
func (f *hostFilter) absent(host string) bool {
	if f == nil || f.off {
		return false
	}
	h := maphash.String(f.seed, host)
	for i := range f.parts {
		if f.parts[i].has(h) {
			return false
		}
	}
	return true
}

// add tells the filter of host.
func (f *hostFilter) add(host string) {
	if f != nil && !f.off {
		f.addHash(maphash.String(f.seed, host))
	}
}

func (f *hostFilter) addHash(h uint64) {
	p := &f.parts[len(f.parts)-1]
	if p.n >= p.limit {
		if f.grow(p.limit * 2); f.off {
			return
		}
		p = &f.parts[len(f.parts)-1]
	}
	p.n++
	h1, h2 := h, bits.RotateLeft64(h, 32)|1 // double hashing: h1 + i·h2
	for i := range uint64(filterProbes) {
		b := (h1 + i*h2) & p.mask
		p.bits[b/64] |= 1 << (b % 64)
	}
}

func (p *bloom) has(h uint64) bool {
	h1, h2 := h, bits.RotateLeft64(h, 32)|1
	for i := range uint64(filterProbes) {
		b := (h1 + i*h2) & p.mask
		if p.bits[b/64]&(1<<(b%64)) == 0 {
			return false
		}
	}
	return true
}
