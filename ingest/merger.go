package ingest

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
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

	// finishing says the writer is putting its last links in runs: a
	// pass waits for them (finish) instead of merging the runs before,
	// which the last pass would rewrite again.
	finishing atomic.Bool

	// The input's progress (input), for late: bytes of the import's
	// files the writer has yet to apply, and has applied since began.
	left, applied atomic.Int64
	began         time.Time
	passRate      float64 // edges a second the last pass went through (the store's and its runs')

	edges, links atomic.Int64 // created and added
	count        atomic.Int64 // runs named
}

func newMerger(store *kv.Store, runs runState) *merger {
	return &merger{store: store, dir: runDir(store), runs: runs, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// start runs the merger until ctx ends or close is called and every run
// is merged.
func (m *merger) start(ctx context.Context) {
	ctx, m.cancel = context.WithCancel(ctx)
	m.began = time.Now()
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
	runs, after, resumed := m.take()
	if len(runs) == 0 {
		return nil
	}
	var size int64 // of the pass: the store's edges and its runs'
	if !resumed && !last {
		if m.finishing.Load() {
			return nil
		}
		due, edges, err := m.due(runs)
		if err != nil || !due || m.late(edges) {
			return err // or nil, until more runs come
		}
		size = edges
	}
	began := time.Now()
	if !resumed {
		if err := m.mark(runs); err != nil {
			return fmt.Errorf("ingest: merge: %w", err)
		}
	}
	var skip []byte
	if after != "" {
		var err error
		if skip, err = hex.DecodeString(after); err != nil || len(skip) != 16 {
			return fmt.Errorf("ingest: %s: bad merged key %q", metaRuns, after)
		}
	}
	err := mergeRuns(m.dir, runs, mergeChunk, func(chunk []graph.EdgeMerge) error {
		return m.put(ctx, chunk, skip)
	})
	if err == nil {
		err = m.dropMerged()
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
	if d := time.Since(began).Seconds(); size > 0 && d > 0 {
		m.passRate = float64(size) / d
	}
	return nil
}

// input notes the writer's progress: left bytes of the input to apply,
// applied more since the last note.
func (m *merger) input(left, applied int64) {
	m.left.Store(left)
	m.applied.Add(applied)
}

// late reports whether a pass over edges (the store's and its runs')
// would still be under way when the writer has applied the rest of the
// input, by the rates of the last pass and of the writer so far. The last
// pass, which follows the input's end, then merges those runs with the
// rest instead of rewriting the store once more after them: on the
// 10,000-host WAT of docs/performance.md, a pass begun 1.2 s before the
// end and the last pass kept the writer's core alone for 3.4 s, the last
// pass alone 2.2 s.
func (m *merger) late(edges int64) bool {
	applied, secs := m.applied.Load(), time.Since(m.began).Seconds()
	if m.passRate == 0 || applied <= 0 || secs <= 0 {
		return false
	}
	rest := float64(m.left.Load()) * secs / float64(applied)
	return float64(edges)/m.passRate > rest
}

// take returns the runs a pass merges: those marked Merging (resumed)
// and the last key merged of them, else every run written.
func (m *merger) take() (runs []runFile, after string, resumed bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, rf := range m.runs.Runs {
		if rf.Merging {
			runs = append(runs, rf)
		}
	}
	if len(runs) > 0 {
		return runs, m.runs.Merged, true
	}
	return slices.Clone(m.runs.Runs), "", false
}

// due reports whether runs hold at least half as many edges as the
// store, and how many the two hold.
func (m *merger) due(runs []runFile) (bool, int64, error) {
	var waiting int64
	for _, rf := range runs {
		waiting += rf.Edges
	}
	var stored uint64
	if err := m.store.View(func(tx *kv.Tx) error { stored = graph.GetCounts(tx).Edges; return nil }); err != nil {
		return false, 0, fmt.Errorf("ingest: merge: %w", err)
	}
	return waiting >= int64(stored/2), waiting + int64(stored), nil
}

// mark records in the store that a pass merges runs, the first of those
// written.
func (m *merger) mark(runs []runFile) error {
	return update(m.store, func(tx *kv.Tx) error {
		m.mu.Lock()
		defer m.mu.Unlock()
		for i := range runs {
			m.runs.Runs[i].Merging = true
		}
		m.runs.Merged = ""
		return saveRuns(tx, &m.runs)
	})
}

// put merges a chunk of the pass's edges into the store, those up to skip
// (the last key a stopped pass merged, nil: none) left out, and records
// its last key as merged, in one transaction.
func (m *merger) put(ctx context.Context, chunk []graph.EdgeMerge, skip []byte) error {
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
}

// dropMerged records in the store that the runs of the pass are merged.
func (m *merger) dropMerged() error {
	return update(m.store, func(tx *kv.Tx) error {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.runs.Runs = slices.DeleteFunc(m.runs.Runs, func(rf runFile) bool { return rf.Merging })
		m.runs.Merged = ""
		return saveRuns(tx, &m.runs)
	})
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
