package layout

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// This file keeps a layout in a store: the algorithms above never see
// one. kv.BucketLayout holds a record per node (community, x, y) and the
// meta key metaStamp the Stamp of the graph they were computed for.

// metaStamp is the meta key of the stored layout's Stamp.
const metaStamp = "layout_stamp"

// recordLen is the size of a node's record: community, x, y.
const recordLen = 4 + 8 + 8

// Stamp identifies the graph a layout was computed for: the store's node
// and edge counts and its total edge weight, kept by package graph on
// every change, so that comparing stamps costs nothing. A change that
// keeps all three (a link moved between two pages' hosts with the same
// weight) goes unnoticed until the next change; `weaver layout`
// recomputes whatever the stamp says.
type Stamp struct {
	Nodes, Edges, Weight uint64
}

// String is the stamp as stored: "nodes=N edges=E weight=W".
func (s Stamp) String() string {
	return fmt.Sprintf("nodes=%d edges=%d weight=%d", s.Nodes, s.Edges, s.Weight)
}

// CurrentStamp returns the stamp of the store's graph now.
func CurrentStamp(tx *kv.Tx) Stamp {
	c := graph.GetCounts(tx)
	return Stamp{Nodes: c.Nodes, Edges: c.Edges, Weight: c.Weight}
}

// Stored is a layout keyed by node id.
type Stored struct {
	Stamp Stamp
	IDs   []uint64 // ascending
	Layout
}

// Lookup returns the community and position of the node id.
func (s *Stored) Lookup(id uint64) (comm uint32, x, y float64, ok bool) {
	if s == nil {
		return 0, 0, 0, false
	}
	i, ok := slices.BinarySearch(s.IDs, id)
	if !ok {
		return 0, 0, 0, false
	}
	return s.Community[i], s.X[i], s.Y[i], true
}

// Load returns the layout stored in tx, and whether there is one whose
// stamp matches the store's graph now (fresh). A store without a layout
// (or an older one without the bucket) returns ok false. It returns
// ErrDamaged for a record it cannot read.
func Load(tx *kv.Tx) (st *Stored, fresh bool, err error) {
	stamp, ok := storedStamp(tx)
	if !ok {
		return nil, false, nil
	}
	n := tx.Len(kv.BucketLayout)
	st = &Stored{Stamp: stamp, IDs: make([]uint64, 0, n)}
	st.Community, st.X, st.Y = make([]uint32, 0, n), make([]float64, 0, n), make([]float64, 0, n)
	c := tx.Cursor(kv.BucketLayout)
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 8 || len(v) != recordLen {
			return nil, false, fmt.Errorf("%w: key of %d bytes, value of %d", ErrDamaged, len(k), len(v))
		}
		x, y := math.Float64frombits(binary.BigEndian.Uint64(v[4:])), math.Float64frombits(binary.BigEndian.Uint64(v[12:]))
		if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
			return nil, false, fmt.Errorf("%w: node %d at (%v, %v)", ErrDamaged, binary.BigEndian.Uint64(k), x, y)
		}
		st.IDs = append(st.IDs, binary.BigEndian.Uint64(k))
		st.Community = append(st.Community, binary.BigEndian.Uint32(v))
		st.X, st.Y = append(st.X, x), append(st.Y, y)
	}
	return st, stamp.fresh(tx, len(st.IDs)), nil
}

// Walker reads the layout stored in a transaction node by node, for
// nodes asked in ascending id order (graph.ForEachNode's): its cursor
// moves along beside them, so asking every node reads each record once.
type Walker struct {
	c    *kv.Cursor
	k, v []byte // the record the cursor is at; k nil past the last
}

// NewWalker returns a Walker over the layout stored in tx, fresh or not
// (a crawl goes on after its layout: its hosts keep their positions), or
// nil when tx holds none; a nil Walker finds no node.
func NewWalker(tx *kv.Tx) *Walker {
	if _, ok := storedStamp(tx); !ok {
		return nil
	}
	w := &Walker{c: tx.Cursor(kv.BucketLayout)}
	w.k, w.v = w.c.First()
	return w
}

// At returns the community and position stored for node id, and whether
// there is a record, a readable one, for it. Each id must be above the
// previous call's.
func (w *Walker) At(id uint64) (comm uint32, x, y float64, ok bool) {
	if w == nil {
		return 0, 0, 0, false
	}
	// A few steps forward, then a seek: the ids asked may be all of the
	// nodes (a whole graph) or a few far apart (what changed).
	for step := 0; w.k != nil && walkerKey(w.k) < id; step++ {
		if step == 4 {
			w.k, w.v = w.c.Seek(kv.U64(id))
			break
		}
		w.k, w.v = w.c.Next()
	}
	if w.k == nil || len(w.k) != 8 || walkerKey(w.k) != id || len(w.v) != recordLen {
		return 0, 0, 0, false
	}
	x, y = math.Float64frombits(binary.BigEndian.Uint64(w.v[4:])), math.Float64frombits(binary.BigEndian.Uint64(w.v[12:]))
	if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
		return 0, 0, 0, false
	}
	return binary.BigEndian.Uint32(w.v), x, y, true
}

// walkerKey is a record key's id; a key of another length (there is
// none) sorts as 0, before every node's.
func walkerKey(k []byte) uint64 {
	if len(k) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(k)
}

// Fresh reports whether tx holds a layout of the store's graph now, as
// Load would, without reading its records.
func Fresh(tx *kv.Tx) bool {
	stamp, ok := storedStamp(tx)
	return ok && stamp.fresh(tx, tx.Len(kv.BucketLayout))
}

// storedStamp returns the stamp of the layout stored in tx, if any.
func storedStamp(tx *kv.Tx) (Stamp, bool) {
	if !tx.Exists(kv.BucketLayout) {
		return Stamp{}, false
	}
	return parseStamp(tx.MetaString(metaStamp))
}

// fresh reports whether a layout of records records stamped s is of the
// store's graph now: the graph's stamp, a record per node.
func (s Stamp) fresh(tx *kv.Tx, records int) bool {
	return s == CurrentStamp(tx) && uint64(records) == s.Nodes
}

// parseStamp reads String's form.
func parseStamp(s string) (Stamp, bool) {
	var st Stamp
	f := strings.Fields(s)
	if len(f) != 3 {
		return Stamp{}, false
	}
	for i, dst := range []*uint64{&st.Nodes, &st.Edges, &st.Weight} {
		_, v, ok := strings.Cut(f[i], "=")
		n, err := strconv.ParseUint(v, 10, 64)
		if !ok || err != nil {
			return Stamp{}, false
		}
		*dst = n
	}
	return st, true
}

// Read builds the undirected graph of the store in tx: every node, every
// edge (weights of a→b and b→a summed). It returns the store's or the
// context's error.
func Read(ctx context.Context, tx *kv.Tx) (*Graph, error) {
	counts := graph.GetCounts(tx)
	b := NewBuilder(int(min(counts.Nodes, 1<<31)), int(min(counts.Edges, 1<<31)))
	c := tx.Cursor(kv.BucketNodes)
	rows := 0
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if len(k) != 8 {
			continue
		}
		if err := b.AddNode(binary.BigEndian.Uint64(k)); err != nil {
			return nil, err
		}
	}
	err := graph.ForEachEdge(tx, func(e *graph.Edge) error {
		if rows++; rows%65536 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			tx.ReleasePages()
		}
		if e.Weight == 0 {
			return nil
		}
		return b.AddEdge(e.From, e.To, float64(e.Weight))
	})
	if err != nil {
		return nil, err
	}
	return b.Graph()
}

// ComputeStored reads the store's graph in tx and computes its layout,
// stamped with the graph it was computed for; it writes nothing.
func ComputeStored(ctx context.Context, tx *kv.Tx, opt Options) (*Stored, error) {
	stamp := CurrentStamp(tx)
	g, err := Read(ctx, tx)
	if err != nil {
		return nil, err
	}
	l, err := Compute(ctx, g, opt)
	if err != nil {
		return nil, err
	}
	return &Stored{Stamp: stamp, IDs: g.ids, Layout: l}, nil
}

// Save replaces the layout stored in tx, a write transaction, with st.
// It returns the store's error.
//
// The records of hosts still in the graph are overwritten in place; only
// those of hosts gone are deleted, found by one walk beside st.IDs (both
// in id order). Emptying the bucket first, by deleting at a cursor's
// First until none was left, cost a walk over every emptied leaf per
// delete (bbolt rebalances at the commit): on a million hosts the second
// `weaver layout` never finished.
func Save(tx *kv.Tx, st *Stored) error {
	var gone [][]byte
	c := tx.Cursor(kv.BucketLayout)
	i := 0
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if len(k) != 8 {
			gone = append(gone, slices.Clone(k))
			continue
		}
		id := binary.BigEndian.Uint64(k)
		for i < len(st.IDs) && st.IDs[i] < id {
			i++
		}
		if i == len(st.IDs) || st.IDs[i] != id {
			gone = append(gone, slices.Clone(k))
		}
	}
	for _, k := range gone {
		if err := tx.Delete(kv.BucketLayout, k); err != nil {
			return err
		}
	}
	// bbolt holds on to values until the commit: one slab for them all.
	slab := make([]byte, len(st.IDs)*recordLen)
	for i, id := range st.IDs {
		v := slab[i*recordLen : (i+1)*recordLen : (i+1)*recordLen]
		binary.BigEndian.PutUint32(v[:], st.Community[i])
		binary.BigEndian.PutUint64(v[4:], math.Float64bits(st.X[i]))
		binary.BigEndian.PutUint64(v[12:], math.Float64bits(st.Y[i]))
		if err := tx.PutRaw(kv.BucketLayout, kv.U64(id), v); err != nil {
			return err
		}
	}
	return tx.SetMetaString(metaStamp, st.Stamp.String())
}
