package ingest

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/srcsort"
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
//
// Here, the writer's side: the links in memory and their runs, sorted and
// written off its goroutine. The run files and their k-way merge are
// runs.go's; the goroutine that merges them into the store, merger.go's.

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
// they came (seq); it returns the shortened slice. A counting sort by
// source (srcsort) took the sorts of the 10,000-host WAT of
// docs/performance.md (5M links) from 1.34 to 0.86 CPU-s.
func sortPends(s *srcsort.Sorter[pend], p []pend) []pend {
	s.Sort(p, func(e pend) uint64 { return e.from }, func(a, b pend) int {
		return cmp.Or(cmp.Compare(a.to, b.to), cmp.Compare(a.seq, b.seq))
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

// pendsAsMerges converts sorted pends for graph.MergeEdges.
func pendsAsMerges(p []pend, out []graph.EdgeMerge) []graph.EdgeMerge {
	out = out[:0]
	for i := range p {
		e := &p[i]
		out = append(out, graph.EdgeMerge{From: e.from, To: e.to, Weight: uint64(e.w), First: graph.FromUnixNano(e.first), Last: graph.FromUnixNano(e.last)})
	}
	return out
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
		job.pends = sortPends(&im.sorter, job.pends)
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

// finishEdges puts the edges still in memory in the store after every run
// (in one transaction when no run waits and they are few, else as one more
// run), waits for the merger, and records that the files are done.
func (im *importer) finishEdges() error {
	im.merger.finishing.Store(true)
	if err := im.flushSpill(); err != nil {
		return err
	}
	if !im.merger.pending() && len(im.pends) <= mergeChunk {
		// Every run is merged: the merger is idle.
		edges := pendsAsMerges(sortPends(&im.sorter, im.pends), nil)
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
	if len(im.pends) > 0 {
		// The last run, sorted and recorded as any other.
		im.startSpill()
		if err := im.flushSpill(); err != nil {
			return err
		}
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
