package archive

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/weaver-crawler/weaver/kv"
)

// MergeOptions control Merge.
type MergeOptions struct {
	// Force replaces an existing output file (never an input).
	Force bool
	// Verify runs Verify on the output before it is renamed into place.
	Verify bool
	// PageSize is the bbolt page size of the output; zero means 4096, so
	// that the output is the same bytes on every machine.
	PageSize int
	// Batch is how many records one write transaction takes; zero means
	// 50,000. It changes the file's layout, not its content.
	Batch int
	// SortMemory is how many bytes of edges the merge sorts in memory
	// before it spills them to a sorted run beside the output (64 bytes
	// an edge); zero means 256 MiB.
	SortMemory int
	// Meta are records written to the output's meta bucket, such as the
	// crawl settings the caller chose for it: Merge copies no meta record
	// of the inputs.
	Meta map[string]string
}

// MergeResult describes a merge: the output and each input.
type MergeResult struct {
	Out    Info   `json:"out"`
	Inputs []Info `json:"inputs"`
}

// Merge writes to out the union of the stores at inputs, joined by host:
//
//   - nodes are renumbered in order of first appearance (the first input's
//     nodes in id order, then the new hosts of the second input in its id
//     order, ...), so the first input keeps its ids; crawl and fail counts
//     are summed, first/last-seen and last-crawl widened, depth is the
//     smallest; status, title, description and the other fetch fields come
//     from the most recently crawled record (a record with an HTTP answer
//     beats a failed attempt, which beats a mere discovery);
//     the page-level facts (canonical, robots directives, pages fetched)
//     travel with the fetch fields; mirror groups are computed again from
//     the merged nodes' content hashes (graph.NoteContentHash), so that
//     MirrorOf names the output's ids;
//   - edge weights and link facts (nofollow, redirect) are summed, their
//     first/last-seen widened;
//   - frontiers are joined with one entry per host, at its smallest depth,
//     in (depth, arrival, input) order; leases become queued entries (the
//     process that held them is not the output's); visited marks and the
//     subdomain limiter's hosts are unions;
//   - robots.txt caches are kept per host by the freshest fetch;
//   - the example links of an edge (--anchors) are the first input's,
//     then the other inputs' not among them, as many as the longest list;
//   - the stores of a cluster crawl's shards (meta cluster.shard) hold
//     stub records of the hosts other shards own: the owner's record
//     replaces them, whatever their times, and they only widen its times
//     and depth, so the shards merge into the store one process writes.
//
// Entries of hosts whose summed crawl count already reached a crawl's
// max_crawls_per_node stay queued: the crawler drops them when it claims
// them. The output's creation time is the earliest input's. The same inputs
// in the same order give the same records under the same ids, so their
// exports are byte-identical.
//
// Inputs are opened read-only: a store locked by a running crawl is
// refused with kv.ErrInUse (snapshot it first). Merge returns ErrNoInputs,
// checkTarget's errors (ErrSameFile when out is an input or an input is
// given twice, ErrExists, ErrIsDir), kv.Open's errors for an input, a
// decoding error for a damaged input, Verify's errors, and file system
// errors. On any error out is left as it was.
func Merge(ctx context.Context, out string, inputs []string, opt MergeOptions) (MergeResult, error) {
	return mergeWith(ctx, out, inputs, opt, (*merger).graph)
}

// mergeWith is Merge with the pass that merges the nodes and edges given:
// the tests give it the record-by-record merge weaver had before, to
// compare.
func mergeWith(ctx context.Context, out string, inputs []string, opt MergeOptions, graphPass func(*merger, []*kv.Store) error) (MergeResult, error) {
	if len(inputs) == 0 {
		return MergeResult{}, ErrNoInputs
	}
	for i, a := range inputs {
		for _, b := range inputs[:i] {
			if sameFile(a, b) {
				return MergeResult{}, fmt.Errorf("%s %w twice", a, ErrSameFile)
			}
		}
	}
	if err := checkTarget(out, opt.Force, inputs...); err != nil {
		return MergeResult{}, err
	}
	if opt.PageSize == 0 {
		opt.PageSize = 4096
	}
	if opt.Batch <= 0 {
		opt.Batch = 50_000
	}
	if opt.SortMemory <= 0 {
		opt.SortMemory = 256 << 20
	}
	var res MergeResult
	srcs, infos, created, err := openInputs(inputs)
	defer closeAll(srcs)
	if err != nil {
		return MergeResult{}, err
	}
	res.Inputs = infos
	tmp, err := tempName(out)
	if err != nil {
		return MergeResult{}, err
	}
	defer os.Remove(tmp)
	if res.Out, err = writeMerged(ctx, out, tmp, srcs, created, opt, graphPass); err != nil {
		return MergeResult{}, err
	}
	if opt.Verify {
		if _, err := VerifyFile(tmp); err != nil {
			return MergeResult{}, fmt.Errorf("%s: merge produced an unsound store: %w", out, err)
		}
	}
	if err := install(tmp, out); err != nil {
		return MergeResult{}, err
	}
	if fi, err := os.Stat(out); err == nil && fi.Mode().IsRegular() {
		res.Out.Bytes = fi.Size()
	}
	res.Out.Path = out
	return res, nil
}

// openInputs opens inputs read-only, in order, and returns them with what
// each holds and the earliest creation time they record (the Unix epoch
// when none does). The stores it opened are returned on error too, for
// the caller to close.
func openInputs(inputs []string) (srcs []*kv.Store, infos []Info, created time.Time, err error) {
	srcs = make([]*kv.Store, 0, len(inputs))
	for _, in := range inputs {
		s, err := kv.Open(in, kv.Options{ReadOnly: true})
		if err != nil {
			return srcs, nil, time.Time{}, err
		}
		srcs = append(srcs, s)
		var info Info
		err = s.View(func(tx *kv.Tx) error {
			info = countsOf(tx)
			info.Bytes = tx.Size()
			return nil
		})
		if err != nil {
			return srcs, nil, time.Time{}, fmt.Errorf("%s: %w", in, err)
		}
		info.Path = in
		infos = append(infos, info)
		if c := s.Created(); !c.IsZero() && (created.IsZero() || c.Before(created)) {
			created = c
		}
	}
	if created.IsZero() {
		created = time.Unix(0, 0)
	}
	return srcs, infos, created, nil
}

func closeAll(stores []*kv.Store) {
	for _, s := range stores {
		s.Close()
	}
}

// writeMerged merges srcs into a new store at tmp, created at created,
// adds opt.Meta's records, and returns what the store holds. out names
// the merge's output in its errors.
func writeMerged(ctx context.Context, out, tmp string, srcs []*kv.Store, created time.Time, opt MergeOptions, graphPass func(*merger, []*kv.Store) error) (Info, error) {
	dst, err := kv.Open(tmp, kv.Options{NoSync: true, PageSize: opt.PageSize, Now: func() time.Time { return created }})
	if err != nil {
		return Info{}, fmt.Errorf("%s: %w", out, err)
	}
	m := &merger{ctx: ctx, dst: dst, batch: opt.Batch, ids: make([]idMap, len(srcs)),
		sortMemory: opt.SortMemory, tmpDir: filepath.Dir(tmp)}
	err = graphPass(m, srcs)
	if err == nil {
		err = m.run(srcs)
	}
	if err == nil && len(opt.Meta) > 0 {
		err = dst.Update(func(tx *kv.Tx) error {
			for _, k := range slices.Sorted(maps.Keys(opt.Meta)) {
				if err := tx.SetMetaString(k, opt.Meta[k]); err != nil {
					return err
				}
			}
			return nil
		})
	}
	var info Info
	if err == nil {
		err = dst.View(func(tx *kv.Tx) error {
			info = countsOf(tx)
			return nil
		})
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Info{}, fmt.Errorf("%s: merge: %w", out, err)
	}
	return info, nil
}

// merger writes the merged store. Each pass reads one input in key order
// and applies its records to dst in write transactions of batch records.
type merger struct {
	ctx   context.Context
	dst   *kv.Store
	batch int
	ids   []idMap // per input: old node id → output node id
	// sortMemory bounds the edges sorted in memory (bytes); the sorted
	// runs beyond it go to tmpDir, the output's directory.
	sortMemory int
	tmpDir     string
	due        []dueAt // the merged nodes' due times, for rebuildDue
	// dups holds what the inputs counted twice for a host's crawls (see
	// history).
	dups map[uint64]*dupCounts
}

// graph merges the nodes and then the edges. Nodes come first: every
// later pass renumbers by their ids.
func (m *merger) graph(srcs []*kv.Store) error {
	if err := m.nodes(srcs); err != nil {
		return err
	}
	return m.edges(srcs)
}

// run makes the passes after graph's, each over every input in order.
// Edges come before the histories, which take back the weights of a crawl
// two inputs hold, and before the anchors, which are kept only for the
// output's edges.
func (m *merger) run(srcs []*kv.Store) error {
	for i, s := range srcs {
		if err := m.history(i, s); err != nil {
			return err
		}
	}
	if err := m.finishHistory(); err != nil {
		return err
	}
	for i, s := range srcs {
		if err := m.anchors(i, s); err != nil {
			return err
		}
	}
	if err := m.rebuildDue(); err != nil {
		return err
	}
	if err := m.frontier(srcs); err != nil {
		return err
	}
	for i, s := range srcs {
		if err := m.visited(i, s); err != nil {
			return err
		}
		if err := m.roots(s); err != nil {
			return err
		}
		if err := m.robots(s); err != nil {
			return err
		}
	}
	return nil
}

// scan walks bucket of src in key order, calling each for every record and
// flush after every n records and at the end. each must copy what it keeps.
func (m *merger) scan(src *kv.Store, bucket []byte, each func(k, v []byte) error, flush func() error) error {
	return src.View(func(tx *kv.Tx) error {
		c := tx.Cursor(bucket)
		count := 0
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if err := each(k, v); err != nil {
				return err
			}
			if count++; count == m.batch {
				if err := m.ctx.Err(); err != nil {
					return err
				}
				if err := flush(); err != nil {
					return err
				}
				count = 0
			}
		}
		if count == 0 {
			return nil
		}
		return flush()
	})
}

// idMap maps an input's node ids to the output's. Ids are dense (graph
// gives them from a counter), so a slice serves; ids beyond limit, which
// only a damaged store could hold, go to a map.
type idMap struct {
	dense  []uint64
	sparse map[uint64]uint64
	limit  uint64
}

func (m *idMap) set(old, id uint64) {
	if old < m.limit {
		for uint64(len(m.dense)) <= old {
			m.dense = append(m.dense, 0)
		}
		m.dense[old] = id
		return
	}
	if m.sparse == nil {
		m.sparse = map[uint64]uint64{}
	}
	m.sparse[old] = id
}

func (m *idMap) get(old uint64) uint64 {
	if old < uint64(len(m.dense)) {
		return m.dense[old]
	}
	return m.sparse[old]
}
