package ingest

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// runState is the meta record (metaRuns) of the runs not yet merged, in
// the order they were written.
type runState struct {
	Runs []runFile `json:"runs"`
	// Merged is the last key the merge under way (of the runs marked
	// Merging) has put in the store, hex; "" before its first.
	Merged string `json:"merged,omitempty"`
}

// runFile is one sorted run: its file's name in the run directory, how
// many edges and bytes it holds and their CRC-32, and whether the merge
// under way reads it.
type runFile struct {
	Name    string `json:"name"`
	Edges   int64  `json:"edges"`
	Bytes   int64  `json:"bytes"`
	CRC     uint32 `json:"crc"`
	Merging bool   `json:"merging,omitempty"`
}

// runDir is where an import of store keeps its runs.
func runDir(store *kv.Store) string { return store.Path() + ".import" }

func loadRuns(tx *kv.Tx) (runState, error) {
	var rs runState
	if v := tx.MetaString(metaRuns); v != "" {
		if err := json.Unmarshal([]byte(v), &rs); err != nil {
			return rs, fmt.Errorf("ingest: %s: %w", metaRuns, err)
		}
	}
	return rs, nil
}

func saveRuns(tx *kv.Tx, rs *runState) error {
	if len(rs.Runs) == 0 {
		return tx.Delete(kv.BucketMeta, []byte(metaRuns))
	}
	data, err := json.Marshal(rs)
	if err != nil {
		return err
	}
	return tx.SetMetaString(metaRuns, string(data))
}

// writeRun writes sorted pends to a new file in dir, durably: a record per
// edge of its key (16 bytes), its weight, first and last times (varints).
func writeRun(dir, name string, p []pend) (runFile, error) {
	rf := runFile{Name: name, Edges: int64(len(p))}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return rf, err
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return rf, err
	}
	sum := crc32.NewIEEE()
	w := bufio.NewWriterSize(io.MultiWriter(f, sum), 1<<20)
	var rec [16 + 3*binary.MaxVarintLen64]byte
	for i := range p {
		e := &p[i]
		binary.BigEndian.PutUint64(rec[:], e.from)
		binary.BigEndian.PutUint64(rec[8:], e.to)
		n := 16 + binary.PutUvarint(rec[16:], uint64(e.w))
		n += binary.PutVarint(rec[n:], e.first)
		n += binary.PutVarint(rec[n:], e.last-e.first)
		w.Write(rec[:n])
		rf.Bytes += int64(n)
	}
	err = w.Flush()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(dir)
	}
	rf.CRC = sum.Sum32()
	return rf, err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// runReader reads a run file's edges in order, checking its length and
// CRC at its end.
type runReader struct {
	rf   runFile
	f    *os.File
	r    *bufio.Reader
	sum  hash.Hash32
	read int64
	cur  graph.EdgeMerge
	i    int // the run's place among the merge's: equal keys add up in this order
}

func openRun(dir string, rf runFile, i int) (*runReader, error) {
	f, err := os.Open(filepath.Join(dir, rf.Name))
	if err != nil {
		return nil, fmt.Errorf("ingest: run: %w", err)
	}
	sum := crc32.NewIEEE()
	// A pass may read hundreds of runs at once: small buffers.
	return &runReader{rf: rf, f: f, r: bufio.NewReaderSize(io.TeeReader(f, sum), 64<<10), sum: sum, i: i}, nil
}

// next reads the next edge into cur; it returns io.EOF after the last.
func (r *runReader) next() error {
	if r.read == r.rf.Edges {
		if _, err := r.r.ReadByte(); err != io.EOF || r.sum.Sum32() != r.rf.CRC {
			return fmt.Errorf("ingest: run %s is damaged (its CRC or length differs from the store's record)", r.rf.Name)
		}
		return io.EOF
	}
	var key [16]byte
	_, err := io.ReadFull(r.r, key[:])
	w, err2 := binary.ReadUvarint(r.r)
	first, err3 := binary.ReadVarint(r.r)
	span, err4 := binary.ReadVarint(r.r)
	if err := errors.Join(err, err2, err3, err4); err != nil {
		return fmt.Errorf("ingest: run %s: %w", r.rf.Name, err)
	}
	r.read++
	r.cur = graph.EdgeMerge{From: binary.BigEndian.Uint64(key[:]), To: binary.BigEndian.Uint64(key[8:]), Weight: w,
		First: graph.FromUnixNano(first), Last: graph.FromUnixNano(first + span)}
	return nil
}

// runHeap orders the runs being merged by their current key, then by
// their place.
type runHeap []*runReader

func (h runHeap) Len() int { return len(h) }
func (h runHeap) Less(i, j int) bool {
	a, b := &h[i].cur, &h[j].cur
	if a.From != b.From {
		return a.From < b.From
	}
	if a.To != b.To {
		return a.To < b.To
	}
	return h[i].i < h[j].i
}
func (h runHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)   { *h = append(*h, x.(*runReader)) }
func (h *runHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// mergeRuns calls fn with the runs' edges in key order, the entries of one
// key added up in the runs' order, a chunk of at most chunk edges at a
// time (the slice is reused once fn returns). The runs are read and merged
// on a goroutine of their own, a chunk ahead of fn, which puts them in the
// store on the one write transaction: the last pass of an import has the
// writer's core alone. It returns fn's error, or a run's.
func mergeRuns(dir string, runs []runFile, chunk int, fn func([]graph.EdgeMerge) error) error {
	full, free := make(chan []graph.EdgeMerge, 1), make(chan []graph.EdgeMerge, 2)
	for range 2 {
		free <- make([]graph.EdgeMerge, 0, chunk)
	}
	stop := make(chan struct{})
	var readErr error
	go func() {
		defer close(full)
		readErr = readRuns(dir, runs, <-free, func(out []graph.EdgeMerge) ([]graph.EdgeMerge, bool) {
			select {
			case full <- out:
			case <-stop:
				return nil, false
			}
			select {
			case next := <-free:
				return next[:0], true
			case <-stop:
				return nil, false
			}
		})
	}()
	var err error
	for out := range full {
		if err != nil {
			continue // until the reader has seen stop and closed its runs
		}
		if err = fn(out); err != nil {
			close(stop)
			continue
		}
		free <- out
	}
	if err != nil {
		return err
	}
	return readErr
}

// errStopped is readRuns' error when emit reports that the chunks are no
// longer wanted.
var errStopped = errors.New("ingest: merge stopped")

// readRuns merges the runs' edges in key order into out, the entries of
// one key added up in the runs' order, and hands out to emit when it holds
// cap(out) edges and at the end; emit returns the slice to fill next, or
// false to stop (errStopped).
func readRuns(dir string, runs []runFile, out []graph.EdgeMerge, emit func([]graph.EdgeMerge) ([]graph.EdgeMerge, bool)) error {
	chunk := cap(out)
	var h runHeap
	defer func() {
		for _, r := range h {
			r.f.Close()
		}
	}()
	for i, rf := range runs {
		r, err := openRun(dir, rf, i)
		if err != nil {
			return err
		}
		err = r.next()
		if errors.Is(err, io.EOF) {
			r.f.Close()
			continue
		}
		if err != nil {
			r.f.Close()
			return err
		}
		h = append(h, r)
	}
	heap.Init(&h)
	for len(h) > 0 {
		r := h[0]
		e := r.cur
		if n := len(out); n > 0 && out[n-1].From == e.From && out[n-1].To == e.To {
			out[n-1].Weight += e.Weight
			out[n-1].Last = e.Last
		} else {
			if len(out) == chunk {
				var ok bool
				if out, ok = emit(out); !ok {
					return errStopped
				}
			}
			out = append(out, e)
		}
		switch err := r.next(); {
		case errors.Is(err, io.EOF):
			r.f.Close()
			heap.Pop(&h)
		case err != nil:
			return err
		default:
			heap.Fix(&h, 0)
		}
	}
	if len(out) > 0 {
		if _, ok := emit(out); !ok {
			return errStopped
		}
	}
	return nil
}
