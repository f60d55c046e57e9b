// Merge's edges: every input's edges read once, renumbered, sorted in
// memory in large batches (spilled to sorted runs beyond the memory
// allowed) and merged in key order into the output's empty edges bucket,
// the records of one edge added up.

package archive

import (
	"bufio"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/srcsort"
	"github.com/weaver-crawler/weaver/kv"
)

// mEdge is an edge being merged: its output key, counts and times (Unix
// nanoseconds, 0 for none).
type mEdge struct {
	from, to                       uint64
	weight, nofollow, redir, frame uint64
	first, last                    int64
}

// mEdgeBytes is an mEdge's size in memory.
const mEdgeBytes = 64

func (a *mEdge) compare(b *mEdge) int {
	return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.to, b.to))
}

// add adds b, a record of a's edge, to a: counts summed, first seen the
// earliest, last seen the latest (as addEdge did).
func (a *mEdge) add(b *mEdge) {
	a.weight += b.weight
	a.nofollow += b.nofollow
	a.redir += b.redir
	a.frame += b.frame
	if a.first == 0 || (b.first != 0 && b.first < a.first) {
		a.first = b.first
	}
	a.last = max(a.last, b.last)
}

func (a *mEdge) edge() graph.Edge {
	return graph.Edge{From: a.from, To: a.to, Weight: a.weight, Nofollow: a.nofollow, Redirect: a.redir, Frame: a.frame,
		FirstSeen: graph.FromUnixNano(a.first), LastSeen: graph.FromUnixNano(a.last)}
}

// sortEdges sorts es in place by key (srcsort: a counting sort by
// source when the batch's sources are dense), adds up the records of one
// edge, and returns the sorted edges, a prefix of es.
func sortEdges(s *srcsort.Sorter[mEdge], es []mEdge) []mEdge {
	s.Sort(es, func(e mEdge) uint64 { return e.from }, func(a, b mEdge) int { return cmp.Compare(a.to, b.to) })
	return combine(es)
}

// combine adds up the records of one edge in sorted es, in place.
func combine(es []mEdge) []mEdge {
	out := es[:0]
	for i := range es {
		if n := len(out); n > 0 && out[n-1].from == es[i].from && out[n-1].to == es[i].to {
			out[n-1].add(&es[i])
			continue
		}
		out = append(out, es[i])
	}
	return out
}

// edges merges every input's edges into dst: each input's edges bucket
// is read once, in key order, its ids renumbered; the renumbered edges
// are sorted in batches of what MergeOptions.SortMemory allows, a batch
// spilled to a run file beside the output when another follows, and the
// runs merged in key order into the output's edges bucket, which nothing
// has written yet, in transactions of batch edges.
func (m *merger) edges(srcs []*kv.Store) error {
	limit := max(m.sortMemory/mEdgeBytes, 64)
	var total uint64
	for _, src := range srcs {
		if err := src.View(func(tx *kv.Tx) error { total += graph.GetCounts(tx).Edges; return nil }); err != nil {
			return err
		}
	}
	buf := make([]mEdge, 0, min(uint64(limit), total+1))
	var sorter srcsort.Sorter[mEdge]
	var runs []*edgeRun
	defer func() {
		for _, r := range runs {
			r.close()
		}
	}()
	for i, src := range srcs {
		ids := &m.ids[i]
		err := src.View(func(tx *kv.Tx) error {
			c := tx.Cursor(kv.BucketEdges)
			count := 0
			var e graph.Edge // one for all: DecodeEdge's fallback makes it escape
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if len(k) != 16 {
					return fmt.Errorf("%s: edge key %x: %w", src.Path(), k, graph.ErrInconsistent)
				}
				e = graph.Edge{}
				if err := graph.DecodeEdge(v, &e); err != nil {
					return fmt.Errorf("%s: edge %x: %w", src.Path(), k, err)
				}
				from, to := binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:])
				me := mEdge{from: ids.get(from), to: ids.get(to), weight: e.Weight, nofollow: e.Nofollow, redir: e.Redirect, frame: e.Frame,
					first: graph.UnixNano(e.FirstSeen), last: graph.UnixNano(e.LastSeen)}
				if me.from == 0 || me.to == 0 {
					return fmt.Errorf("%s: edge %d→%d names a missing node: %w", src.Path(), from, to, graph.ErrInconsistent)
				}
				if e.Nofollow > e.Weight || e.Redirect > e.Weight || e.Frame > e.Weight {
					return fmt.Errorf("%s: edge %d→%d: %w: weight %d, nofollow %d, redirect %d, frame %d", src.Path(), from, to, graph.ErrBadFacts, e.Weight, e.Nofollow, e.Redirect, e.Frame)
				}
				buf = append(buf, me)
				if len(buf) == limit {
					r, err := m.spill(sortEdges(&sorter, buf))
					if err != nil {
						return err
					}
					runs = append(runs, r)
					buf = buf[:0]
				}
				if count++; count%m.batch == 0 {
					if err := m.ctx.Err(); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return m.writeEdges(runs, sortEdges(&sorter, buf))
}

// writeEdges merges the runs and the sorted batch last in key order into
// dst, in transactions of at most appendBatch edges (fewer when
// m.batch says so).
func (m *merger) writeEdges(runs []*edgeRun, last []mEdge) error {
	size := min(m.batch, appendBatch)
	out := make([]graph.Edge, 0, size)
	var app graph.EdgeAppender
	flush := func() error {
		if err := m.ctx.Err(); err != nil {
			return err
		}
		err := m.dst.Update(func(tx *kv.Tx) error { return app.Append(tx, out) })
		out = out[:0]
		return err
	}
	var h runHeap
	for _, r := range append(runs, &edgeRun{mem: last}) {
		if err := r.rewind(); err != nil {
			return err
		}
		switch err := r.next(); {
		case errors.Is(err, io.EOF):
		case err != nil:
			return err
		default:
			h = append(h, r)
		}
	}
	heap.Init(&h)
	var acc mEdge
	have := false
	for len(h) > 0 {
		r := h[0]
		switch {
		case have && acc.from == r.cur.from && acc.to == r.cur.to:
			acc.add(&r.cur)
		default:
			if have {
				if out = append(out, acc.edge()); len(out) == size {
					if err := flush(); err != nil {
						return err
					}
				}
			}
			acc, have = r.cur, true
		}
		switch err := r.next(); {
		case errors.Is(err, io.EOF):
			heap.Pop(&h)
		case err != nil:
			return err
		default:
			heap.Fix(&h, 0)
		}
	}
	if have {
		out = append(out, acc.edge())
	}
	if len(out) == 0 {
		return nil
	}
	return flush()
}

// appendBatch is how many edges one transaction appends: bbolt grows the
// last leaf in memory until the commit splits it, and each put searches
// it twice, so small transactions put faster (1M edges appended in
// transactions of 1,000: 1.87 s; of 50,000: 2.43 s; BenchmarkAppendEdges).
const appendBatch = 2048

// edgeRun is a sorted run of edges: a file without a name in its
// directory (runFile), so that nothing is left behind whatever ends the
// merge, or, for the last batch, memory.
type edgeRun struct {
	f *os.File
	w *bufio.Writer
	r *bufio.Reader
	n int // edges in the file
	// named says the file had a name in its directory (createRun): close
	// removes it again, for the systems that kept it while it was open.
	named bool
	mem   []mEdge
	cur   mEdge
}

// spill writes es, sorted, to a new run file in the output's directory.
func (m *merger) spill(es []mEdge) (*edgeRun, error) {
	f, named, err := runFile(m.tmpDir)
	if err != nil {
		return nil, fmt.Errorf("merge: sorted run: %w", err)
	}
	r := &edgeRun{f: f, w: bufio.NewWriterSize(f, 1<<20), n: len(es), named: named}
	var b [16 + 6*binary.MaxVarintLen64]byte
	for i := range es {
		e := &es[i]
		p := binary.BigEndian.AppendUint64(b[:0], e.from)
		p = binary.BigEndian.AppendUint64(p, e.to)
		p = binary.AppendUvarint(p, e.weight)
		p = binary.AppendUvarint(p, e.nofollow)
		p = binary.AppendUvarint(p, e.redir)
		p = binary.AppendUvarint(p, e.frame)
		p = binary.AppendVarint(p, e.first)
		p = binary.AppendVarint(p, e.last)
		if _, err := r.w.Write(p); err != nil {
			r.close()
			return nil, fmt.Errorf("merge: sorted run: %w", err)
		}
	}
	if err := r.w.Flush(); err != nil {
		r.close()
		return nil, fmt.Errorf("merge: sorted run: %w", err)
	}
	return r, nil
}

func (r *edgeRun) rewind() error {
	if r.f == nil {
		return nil
	}
	if _, err := r.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("merge: sorted run: %w", err)
	}
	r.r = bufio.NewReaderSize(r.f, 256<<10)
	return nil
}

// next reads the run's next edge into cur; io.EOF after the last.
func (r *edgeRun) next() error {
	if r.f == nil {
		if len(r.mem) == 0 {
			return io.EOF
		}
		r.cur, r.mem = r.mem[0], r.mem[1:]
		return nil
	}
	if r.n == 0 {
		return io.EOF
	}
	var key [16]byte
	_, err := io.ReadFull(r.r, key[:])
	var vals [4]uint64
	var errs [6]error
	for i := range vals {
		vals[i], errs[i] = binary.ReadUvarint(r.r)
	}
	first, err5 := binary.ReadVarint(r.r)
	last, err6 := binary.ReadVarint(r.r)
	errs[4], errs[5] = err5, err6
	if err := errors.Join(err, errors.Join(errs[:]...)); err != nil {
		return fmt.Errorf("merge: sorted run: %w", err)
	}
	r.n--
	r.cur = mEdge{from: binary.BigEndian.Uint64(key[:]), to: binary.BigEndian.Uint64(key[8:]),
		weight: vals[0], nofollow: vals[1], redir: vals[2], frame: vals[3], first: first, last: last}
	return nil
}

func (r *edgeRun) close() {
	if r.f != nil {
		r.f.Close()
		if r.named {
			os.Remove(r.f.Name())
		}
	}
}

// createRun makes a sorted run's file in dir under a temporary name and
// removes the name at once where the system lets an open file go (Unix);
// elsewhere close removes it. It reports the file named.
func createRun(dir string) (*os.File, bool, error) {
	f, err := os.CreateTemp(dir, ".weaver-merge-run-*")
	if err != nil {
		return nil, false, err
	}
	os.Remove(f.Name())
	return f, true, nil
}

// runHeap orders the runs being merged by their current key.
type runHeap []*edgeRun

func (h runHeap) Len() int           { return len(h) }
func (h runHeap) Less(i, j int) bool { return h[i].cur.compare(&h[j].cur) < 0 }
func (h runHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)        { *h = append(*h, x.(*edgeRun)) }
func (h *runHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
