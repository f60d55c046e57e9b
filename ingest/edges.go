package ingest

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// An import writes its edges in key order, in large batches (issue 43):
// the links of the records go to memory, (from, to, date) each; when
// Options.SortBytes of them are held they are sorted, the repeats of an
// edge added up, and written to a run file beside the store; at the end
// of the import the runs and what is still in memory are merged, in key
// order, into the edges bucket (graph.MergeEdges), each leaf of the
// bucket rewritten once a transaction instead of once per page's link.
//
// Resuming. Nodes (and their facts) are committed batch by batch with the
// file's offset, as before; a file's state also says up to which offset
// its records' edges are durable (fileState.Edges): in a run file that
// the store's meta lists (runState) or in the store. An import killed
// before its merge reads its files again from there, adding the edges of
// the records whose nodes are already committed without touching their
// nodes again. A merge needs several transactions: before it starts,
// what is in memory is written to a run too, and each transaction records
// the last key merged, so that a killed merge is finished, from its
// durable runs, by the next import before anything else.

// pend is a link waiting in memory: weight w on from→to, added first at
// first and last at last (Unix ns, 0 for the zero time); seq orders the
// adds of one edge as they came.
type pend struct {
	from, to    uint64
	first, last int64
	w, seq      uint32
}

const pendSize = 40 // bytes of a pend

// sortPends sorts p by key and adds up each edge's entries in the order
// they came; it returns the shortened slice.
func sortPends(p []pend) []pend {
	slices.SortFunc(p, func(a, b pend) int {
		if c := cmp.Compare(a.from, b.from); c != 0 {
			return c
		}
		if c := cmp.Compare(a.to, b.to); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	out := p[:0]
	for _, e := range p {
		if n := len(out); n > 0 && out[n-1].from == e.from && out[n-1].to == e.to {
			out[n-1].w += e.w
			out[n-1].last = e.last
			continue
		}
		out = append(out, e)
	}
	return out
}

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
		First: fromNano(first), Last: fromNano(first + span)}
	return nil
}

func fromNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func toNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
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
// time (the slice is reused). It returns fn's error, or a run's.
func mergeRuns(dir string, runs []runFile, chunk int, fn func([]graph.EdgeMerge) error) error {
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
	out := make([]graph.EdgeMerge, 0, chunk)
	for len(h) > 0 {
		r := h[0]
		e := r.cur
		if n := len(out); n > 0 && out[n-1].From == e.From && out[n-1].To == e.To {
			out[n-1].Weight += e.Weight
			out[n-1].Last = e.Last
		} else {
			if len(out) == chunk {
				if err := fn(out); err != nil {
					return err
				}
				out = out[:0]
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
		return fn(out)
	}
	return nil
}

// pendsAsMerges converts sorted pends for graph.MergeEdges.
func pendsAsMerges(p []pend, out []graph.EdgeMerge) []graph.EdgeMerge {
	out = out[:0]
	for i := range p {
		e := &p[i]
		out = append(out, graph.EdgeMerge{From: e.from, To: e.to, Weight: uint64(e.w), First: fromNano(e.first), Last: fromNano(e.last)})
	}
	return out
}

// mergeChunk is how many edges one transaction of a merge writes: the
// transaction holds them and the leaves they touch in memory.
var mergeChunk = 1 << 16

// merger puts the runs into the store, from its own goroutine, while the
// import goes on: each pass takes every run written and not yet merged and
// merges them together, so that when the store's writes fall behind, more
// runs share a pass and each leaf of the bucket is rewritten less often.
// A pass marks its runs in the store's meta and records the last key of
// each of its transactions, so that a pass a kill stopped is finished by
// the next import, from the same runs, before anything else.
type merger struct {
	store  *kv.Store
	cancel context.CancelFunc
	dir    string
	wake   chan struct{} // a run was added; closed: no more will be
	done   chan struct{} // closed when the goroutine has returned
	err    error         // why it stopped early: read after done

	mu   sync.Mutex // guards runs, and orders the writes of metaRuns
	runs runState

	released time.Time // when the store's pages were last given back

	edges, links atomic.Int64 // created and added
	count        atomic.Int64 // runs named
	passes       atomic.Int64
}

func newMerger(store *kv.Store, runs runState) *merger {
	return &merger{store: store, dir: runDir(store), runs: runs, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// start runs the merger until ctx ends or close is called and every run
// is merged.
func (m *merger) start(ctx context.Context) {
	ctx, m.cancel = context.WithCancel(ctx)
	go func() {
		defer close(m.done)
		pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("import", "merge")))
		for {
			if err := m.pass(ctx, false); err != nil {
				m.err = err
				return
			}
			select {
			case _, ok := <-m.wake:
				if !ok {
					// All is written: what a resumed pass left, then the rest.
					for m.pending() && m.err == nil {
						m.err = m.pass(ctx, true)
					}
					return
				}
			case <-ctx.Done():
				m.err = ctx.Err()
				return
			}
		}
	}()
}

// stop stops the merger at the end of its transaction and waits for it.
func (m *merger) stop() {
	m.cancel()
	<-m.done
}

// failed returns the error that stopped the merger, if it has stopped.
func (m *merger) failed() error {
	select {
	case <-m.done:
		return m.err
	default:
		return nil
	}
}

// finish waits for every run to be merged.
func (m *merger) finish() error {
	close(m.wake)
	<-m.done
	return m.err
}

// pending reports whether any run waits or is being merged.
func (m *merger) pending() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.runs.Runs) > 0
}

// add records a run written, in tx, and wakes the merger once tx is
// committed (see wakeUp).
func (m *merger) add(tx *kv.Tx, rf runFile) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runs.Runs = append(m.runs.Runs, rf)
	return saveRuns(tx, &m.runs)
}

// next names a new run: by the time and a count, never the name of a run
// an earlier pass is removing.
func (m *merger) next() string {
	return fmt.Sprintf("run-%d-%d", time.Now().UnixNano(), m.count.Add(1))
}

func (m *merger) wakeUp() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// pass merges the runs marked Merging (a pass a kill stopped), else every
// run written, into the store: when all is written (last), or when the
// runs hold at least half as many edges as the store. A pass rewrites
// about every leaf of the edges bucket its keys fall in, which is all of
// it once the runs are many: so passes come less often as the store
// grows, each growing it by half at least, and a store of E edges is
// rewritten about log(E) times in all, not once per run (a store larger
// than memory would spend its time rewriting itself).
func (m *merger) pass(ctx context.Context, last bool) error {
	m.mu.Lock()
	var runs []runFile
	for _, rf := range m.runs.Runs {
		if rf.Merging {
			runs = append(runs, rf)
		}
	}
	resumed := len(runs) > 0
	if !resumed {
		runs = slices.Clone(m.runs.Runs)
	}
	after := m.runs.Merged
	if !resumed {
		after = ""
	}
	m.mu.Unlock()
	if len(runs) == 0 {
		return nil
	}
	if !resumed && !last {
		var waiting int64
		for _, rf := range runs {
			waiting += rf.Edges
		}
		var stored uint64
		if err := m.store.View(func(tx *kv.Tx) error { stored = graph.GetCounts(tx).Edges; return nil }); err != nil {
			return fmt.Errorf("ingest: merge: %w", err)
		}
		if waiting < int64(stored/2) {
			return nil // until more runs come
		}
	}
	if !resumed {
		if err := update(m.store, func(tx *kv.Tx) error {
			m.mu.Lock()
			defer m.mu.Unlock()
			for i := range runs {
				m.runs.Runs[i].Merging = true
			}
			m.runs.Merged = ""
			return saveRuns(tx, &m.runs)
		}); err != nil {
			return fmt.Errorf("ingest: merge: %w", err)
		}
	}
	m.passes.Add(1)
	var skip []byte
	if after != "" {
		var err error
		if skip, err = hex.DecodeString(after); err != nil || len(skip) != 16 {
			return fmt.Errorf("ingest: %s: bad merged key %q", metaRuns, after)
		}
	}
	err := mergeRuns(m.dir, runs, mergeChunk, func(chunk []graph.EdgeMerge) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if skip != nil {
			from, to := binary.BigEndian.Uint64(skip), binary.BigEndian.Uint64(skip[8:])
			i, _ := slices.BinarySearchFunc(chunk, 0, func(e graph.EdgeMerge, _ int) int {
				if e.From != from {
					return cmp.Compare(e.From, from)
				}
				return cmp.Compare(e.To, to+1) // to+1: the first key after
			})
			if chunk = chunk[i:]; len(chunk) == 0 {
				return nil
			}
		}
		l := &chunk[len(chunk)-1]
		merged := hex.EncodeToString(binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, l.From), l.To))
		err := update(m.store, func(tx *kv.Tx) error {
			if err := m.merge(tx, chunk); err != nil {
				return err
			}
			m.mu.Lock()
			defer m.mu.Unlock()
			m.runs.Merged = merged
			return saveRuns(tx, &m.runs)
		})
		if err == nil && time.Since(m.released) >= time.Second {
			// A pass reads the whole edges bucket through the map: give
			// its pages back (see kv.Tx.ReleasePages).
			m.released = time.Now()
			err = m.store.View(func(tx *kv.Tx) error { tx.ReleasePages(); return nil })
		}
		return err
	})
	if err == nil {
		err = update(m.store, func(tx *kv.Tx) error {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.runs.Runs = slices.DeleteFunc(m.runs.Runs, func(rf runFile) bool { return rf.Merging })
			m.runs.Merged = ""
			return saveRuns(tx, &m.runs)
		})
	}
	if err != nil {
		if errors.Is(err, ctx.Err()) {
			return err
		}
		return fmt.Errorf("ingest: merge: %w", err)
	}
	for _, rf := range runs {
		os.Remove(filepath.Join(m.dir, rf.Name))
	}
	return nil
}

// merge is graph.MergeEdges counting what it adds.
func (m *merger) merge(tx *kv.Tx, edges []graph.EdgeMerge) error {
	before := graph.GetCounts(tx)
	if err := graph.MergeEdges(tx, edges); err != nil {
		return err
	}
	after := graph.GetCounts(tx)
	m.edges.Add(int64(after.Edges - before.Edges))
	m.links.Add(int64(after.Weight - before.Weight))
	return nil
}

// spill sorts the links in memory and writes them to a run, then records
// the run and, for every file read, that its edges are durable, and hands
// the run to the merger.
func (im *importer) spill() error {
	if len(im.pends) == 0 {
		return nil
	}
	im.pends = sortPends(im.pends)
	rf, err := writeRun(im.merger.dir, im.merger.next(), im.pends)
	if err != nil {
		return fmt.Errorf("ingest: run: %w", err)
	}
	err = update(im.store, func(tx *kv.Tx) error {
		if err := im.merger.add(tx, rf); err != nil {
			return err
		}
		for key, st := range im.pending {
			s := *st
			off := s.Offset
			s.Edges = &off
			if err := putState(tx, key, &s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		os.Remove(filepath.Join(im.merger.dir, rf.Name))
		return fmt.Errorf("ingest: run: %w", err)
	}
	im.merger.wakeUp()
	for _, st := range im.pending {
		off := st.Offset
		st.Edges = &off
	}
	im.pends, im.seq = im.pends[:0], 0
	return nil
}

// spillJob is a run sorted and written on a goroutine of its own, off the
// writer's: the next node commit after it is done records it.
type spillJob struct {
	pends []pend
	edges map[string]int64 // each file read: the offset its links in pends reach
	rf    runFile
	err   error
	done  chan struct{} // closed when rf or err is set
}

// offset is where the links of job reach in the file key (false: none,
// or no job).
func (job *spillJob) offset(key string) (int64, bool) {
	if job == nil {
		return 0, false
	}
	off, ok := job.edges[key]
	return off, ok
}

// startSpill hands the links in memory to a spillJob; the writer goes on
// with the buffer of the last one.
func (im *importer) startSpill() {
	job := &spillJob{pends: im.pends, edges: make(map[string]int64, len(im.pending)), done: make(chan struct{})}
	for key, st := range im.pending {
		job.edges[key] = st.Offset
	}
	dir, name := im.merger.dir, im.merger.next()
	go func() {
		defer close(job.done)
		job.pends = sortPends(job.pends)
		job.rf, job.err = writeRun(dir, name, job.pends)
	}()
	im.job = job
	im.pends, im.spare, im.seq = im.spare[:0], nil, 0
}

// doneSpill returns the spill job when it is done (nil while it runs, or
// when there is none), to be recorded.
func (im *importer) doneSpill(wait bool) (*spillJob, error) {
	job := im.job
	if job == nil {
		return nil, nil
	}
	if wait {
		<-job.done
	}
	select {
	case <-job.done:
	default:
		return nil, nil
	}
	im.job = nil
	if job.err != nil {
		return nil, fmt.Errorf("ingest: run: %w", job.err)
	}
	return job, nil
}

// recordSpill records job's run in tx and, for every file read but
// except (whose state the caller writes), that its links are durable up
// to job's offset.
func (im *importer) recordSpill(tx *kv.Tx, job *spillJob, except string) error {
	if err := im.merger.add(tx, job.rf); err != nil {
		return err
	}
	for key, off := range job.edges {
		if key == except {
			continue
		}
		s := *im.pending[key]
		s.Edges = &off
		if err := putState(tx, key, &s); err != nil {
			return err
		}
	}
	return nil
}

// spilled notes, once the transaction recording job is committed, where
// the files' durable links reach, and wakes the merger.
func (im *importer) spilled(job *spillJob) {
	for key, off := range job.edges {
		im.pending[key].Edges = &off
	}
	im.spare = job.pends[:0]
	im.merger.wakeUp()
}

// flushSpill waits for the spill job and records it in a transaction of
// its own.
func (im *importer) flushSpill() error {
	job, err := im.doneSpill(true)
	if err != nil || job == nil {
		return err
	}
	if err := update(im.store, func(tx *kv.Tx) error { return im.recordSpill(tx, job, "") }); err != nil {
		os.Remove(filepath.Join(im.merger.dir, job.rf.Name))
		return fmt.Errorf("ingest: run: %w", err)
	}
	im.spilled(job)
	return nil
}

// dropSpill waits for a spill job an import stops without, and removes
// its run: nothing records it.
func (im *importer) dropSpill() {
	if job := im.job; job != nil {
		<-job.done
		if job.err == nil {
			os.Remove(filepath.Join(im.merger.dir, job.rf.Name))
		}
		im.job = nil
	}
}

func putState(tx *kv.Tx, key string, st *fileState) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return tx.SetMetaString(key, string(data))
}

// finishEdges puts the edges still in memory in the store after every run
// (in one transaction when no run waits and they are few, else as one more
// run), waits for the merger, and records that the files are done.
func (im *importer) finishEdges() error {
	if err := im.flushSpill(); err != nil {
		return err
	}
	if !im.merger.pending() && len(im.pends) <= mergeChunk {
		// Every run is merged: the merger is idle.
		edges := pendsAsMerges(sortPends(im.pends), nil)
		err := update(im.store, func(tx *kv.Tx) error {
			if err := im.merger.merge(tx, edges); err != nil {
				return err
			}
			return im.finish(tx)
		})
		if err != nil {
			return fmt.Errorf("ingest: merge: %w", err)
		}
		im.pends, im.seq = im.pends[:0], 0
		err = im.merger.finish()
		os.Remove(im.merger.dir) // when empty: runs merged earlier leave it
		return err
	}
	if err := im.spill(); err != nil {
		return err
	}
	if err := im.merger.finish(); err != nil {
		return err
	}
	os.Remove(im.merger.dir) // when empty
	if err := update(im.store, im.finish); err != nil {
		return fmt.Errorf("ingest: merge: %w", err)
	}
	return nil
}

// finish records, once every edge is in the store, that every file read
// to its end is done and that the edges of the others are in the store.
func (im *importer) finish(tx *kv.Tx) error {
	type kept struct {
		key string
		st  fileState
	}
	var changed []kept
	c := tx.Cursor(kv.BucketMeta)
	prefix := []byte(metaFilePrefix)
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var st fileState
		if err := json.Unmarshal(v, &st); err != nil {
			return fmt.Errorf("ingest: %s: %w", k, err)
		}
		if st.Done || (st.Edges == nil && !st.Read) {
			continue
		}
		st.Edges, st.Done = nil, st.Read
		changed = append(changed, kept{string(k), st})
	}
	for _, c := range changed {
		if err := putState(tx, c.key, &c.st); err != nil {
			return err
		}
	}
	for _, st := range im.pending {
		st.Edges, st.Done = nil, st.Read
	}
	return nil
}

// update is store.Update for the import's writes after its start. A test
// sets beforeUpdate to stop an import at any of them, as a kill would.
func update(store *kv.Store, fn func(*kv.Tx) error) error {
	if beforeUpdate != nil {
		if err := beforeUpdate(); err != nil {
			return err
		}
	}
	return store.Update(fn)
}

var beforeUpdate func() error
