package archive

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/shard"
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
	var res MergeResult
	srcs := make([]*kv.Store, 0, len(inputs))
	defer func() {
		for _, s := range srcs {
			s.Close()
		}
	}()
	var created time.Time
	for _, in := range inputs {
		s, err := kv.Open(in, kv.Options{ReadOnly: true})
		if err != nil {
			return MergeResult{}, err
		}
		srcs = append(srcs, s)
		var info Info
		err = s.View(func(tx *kv.Tx) error {
			info = countsOf(tx)
			info.Bytes = tx.Size()
			return nil
		})
		if err != nil {
			return MergeResult{}, fmt.Errorf("%s: %w", in, err)
		}
		info.Path = in
		res.Inputs = append(res.Inputs, info)
		if c := s.Created(); !c.IsZero() && (created.IsZero() || c.Before(created)) {
			created = c
		}
	}
	if created.IsZero() {
		created = time.Unix(0, 0)
	}

	tmp, err := tempName(out)
	if err != nil {
		return MergeResult{}, err
	}
	defer os.Remove(tmp)
	dst, err := kv.Open(tmp, kv.Options{NoSync: true, PageSize: opt.PageSize, Now: func() time.Time { return created }})
	if err != nil {
		return MergeResult{}, fmt.Errorf("%s: %w", out, err)
	}
	m := &merger{ctx: ctx, dst: dst, batch: opt.Batch, ids: make([]idMap, len(srcs)), stubs: map[uint64]bool{}}
	err = m.run(srcs)
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
	if err == nil {
		err = dst.View(func(tx *kv.Tx) error {
			res.Out = countsOf(tx)
			return nil
		})
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return MergeResult{}, fmt.Errorf("%s: merge: %w", out, err)
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

// merger writes the merged store. Each pass reads one input in key order
// and applies its records to dst in write transactions of batch records.
type merger struct {
	ctx   context.Context
	dst   *kv.Store
	batch int
	ids   []idMap // per input: old node id → output node id
	// stubs holds the output ids of hosts known so far only from cluster
	// shards that do not own them (shard stubs): the owner's record,
	// when it comes, replaces what they say.
	stubs map[uint64]bool
	// dups holds what the inputs counted twice for a host's crawls (see
	// history).
	dups map[uint64]*dupCounts
}

// shardOf returns the shard spec a cluster shard's store records, if any.
func shardOf(src *kv.Store) (shard.Spec, bool, error) {
	var v string
	if err := src.View(func(tx *kv.Tx) error { v = tx.MetaString(shard.MetaSpec); return nil }); err != nil {
		return shard.Spec{}, false, fmt.Errorf("%s: %w", src.Path(), err)
	}
	if v == "" {
		return shard.Spec{}, false, nil
	}
	spec, err := shard.Parse(v)
	return spec, err == nil, nil
}

func (m *merger) run(srcs []*kv.Store) error {
	for i, s := range srcs {
		if err := m.nodes(i, s); err != nil {
			return err
		}
	}
	for i, s := range srcs {
		if err := m.edges(i, s); err != nil {
			return err
		}
	}
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

// nodes merges input i's nodes into dst by host and records their new ids.
func (m *merger) nodes(i int, src *kv.Store) error {
	ids := &m.ids[i]
	err := src.View(func(tx *kv.Tx) error {
		ids.limit = 4*graph.GetCounts(tx).Nodes + 1<<20
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", src.Path(), err)
	}
	spec, sharded, err := shardOf(src)
	if err != nil {
		return err
	}
	var batch []graph.Node
	return m.scan(src, kv.BucketNodes, func(k, v []byte) error {
		var n graph.Node
		if err := kv.Decode(v, &n); err != nil {
			return fmt.Errorf("%s: node %x: %w", src.Path(), k, err)
		}
		batch = append(batch, n)
		return nil
	}, func() error {
		err := m.dst.Update(func(tx *kv.Tx) error {
			for j := range batch {
				stub := sharded && !spec.Owns(batch[j].Host)
				id, err := m.putNode(tx, &batch[j], stub)
				if err != nil {
					return fmt.Errorf("%s: %w", src.Path(), err)
				}
				ids.set(batch[j].ID, id)
			}
			return nil
		})
		batch = batch[:0]
		return err
	})
}

// putNode merges n into the node of its host in tx, creating it with the
// next id when new, and returns the node's id. stub says n comes from a
// cluster shard that does not own its host: such a record (a link's
// target, never fetched there) gives way to the owner's, whatever their
// times say; it only widens the times and depth.
func (m *merger) putNode(tx *kv.Tx, n *graph.Node, stub bool) (uint64, error) {
	cur, ok, err := graph.GetByHost(tx, n.Host)
	if err != nil {
		return 0, err
	}
	switch {
	case !ok:
		created, _, err := graph.Ensure(tx, n.Host, n.Scheme, n.FirstSeen)
		if err != nil {
			return 0, fmt.Errorf("node %d: %w", n.ID, err)
		}
		cur = *n
		cur.ID = created.ID
		if stub {
			m.stubs[cur.ID] = true
		}
	case stub == m.stubs[cur.ID]:
		mergeNode(&cur, n)
	case stub:
		// The owner's record is in: the stub only widens it.
		cur.Depth = min(cur.Depth, n.Depth)
		cur.FirstSeen = earliest(cur.FirstSeen, n.FirstSeen)
		cur.LastSeen = latest(cur.LastSeen, n.LastSeen)
	default:
		// The owner's record replaces the stubs'.
		acc := *n
		acc.ID = cur.ID
		acc.Depth = min(cur.Depth, n.Depth)
		acc.FirstSeen = earliest(cur.FirstSeen, n.FirstSeen)
		acc.LastSeen = latest(cur.LastSeen, n.LastSeen)
		acc.CrawlCount += cur.CrawlCount
		acc.FailCount += cur.FailCount
		cur = acc
		delete(m.stubs, cur.ID)
	}
	// MirrorOf from an input names that input's ids: file the node again.
	if _, err := graph.NoteContentHash(tx, &cur); err != nil {
		return 0, err
	}
	return cur.ID, graph.Put(tx, &cur)
}

// fetchRank orders what records know of a host: an HTTP answer (3), a
// failed fetch attempt (2), a queued discovery (1), a discovery the
// limits kept out of the queue (0).
func fetchRank(n *graph.Node) int {
	switch {
	case n.CrawlCount > 0 || !n.LastCrawl.IsZero():
		return 3
	case n.Status == graph.StatusDiscovered:
		return 1
	case n.Status == graph.StatusExcludedByLimit || n.Status == graph.StatusOutOfScope || n.Status == "":
		return 0
	}
	return 2
}

// fresher reports whether n's fetch fields should replace acc's: it is of
// a higher rank, or of the same rank and more recent. Ties keep acc, the
// earlier input's.
func fresher(n, acc *graph.Node) bool {
	rn, ra := fetchRank(n), fetchRank(acc)
	switch {
	case rn != ra:
		return rn > ra
	case rn == 3:
		return n.LastCrawl.After(acc.LastCrawl)
	case rn == 2:
		return n.LastSeen.After(acc.LastSeen)
	}
	return false
}

// mergeNode merges n, a later input's record of acc's host, into acc.
func mergeNode(acc, n *graph.Node) {
	if fresher(n, acc) {
		if n.Scheme != "" {
			acc.Scheme = n.Scheme
		}
		acc.Status, acc.Title, acc.Description = n.Status, n.Title, n.Description
		acc.HTTPStatus, acc.ContentType, acc.Server = n.HTTPStatus, n.ContentType, n.Server
		acc.Bytes, acc.FetchMS, acc.ContentHash, acc.Error = n.Bytes, n.FetchMS, n.ContentHash, n.Error
		acc.Canonical, acc.RobotsDirectives, acc.PagesFetched = n.Canonical, n.RobotsDirectives, n.PagesFetched
		acc.ETag, acc.LastModified = n.ETag, n.LastModified
		if !n.NextDue.IsZero() {
			acc.NextDue, acc.IntervalMS = n.NextDue, n.IntervalMS
		}
	}
	acc.Changes += n.Changes
	acc.NotModified += n.NotModified
	acc.LastChange = latest(acc.LastChange, n.LastChange)
	if acc.Domain == "" {
		acc.Domain = n.Domain
	}
	acc.CrawlCount += n.CrawlCount
	acc.FailCount += n.FailCount
	acc.Depth = min(acc.Depth, n.Depth)
	acc.FirstSeen = earliest(acc.FirstSeen, n.FirstSeen)
	acc.LastSeen = latest(acc.LastSeen, n.LastSeen)
	acc.LastCrawl = latest(acc.LastCrawl, n.LastCrawl)
}

// earliest returns the earlier of two times, ignoring zero ones.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// edges adds input i's edges to dst, renumbered. Each batch is sorted by
// its new key so that it is written in key order.
func (m *merger) edges(i int, src *kv.Store) error {
	ids := &m.ids[i]
	var batch []graph.Edge
	return m.scan(src, kv.BucketEdges, func(k, v []byte) error {
		if len(k) != 16 {
			return fmt.Errorf("%s: edge key %x: %w", src.Path(), k, graph.ErrInconsistent)
		}
		var e graph.Edge
		if err := kv.Decode(v, &e); err != nil {
			return fmt.Errorf("%s: edge %x: %w", src.Path(), k, err)
		}
		from, to := binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:])
		e.From, e.To = ids.get(from), ids.get(to)
		if e.From == 0 || e.To == 0 {
			return fmt.Errorf("%s: edge %d→%d names a missing node: %w", src.Path(), from, to, graph.ErrInconsistent)
		}
		batch = append(batch, e)
		return nil
	}, func() error {
		slices.SortFunc(batch, func(a, b graph.Edge) int {
			return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
		})
		err := m.dst.Update(func(tx *kv.Tx) error {
			for j := range batch {
				if err := addEdge(tx, &batch[j]); err != nil {
					return err
				}
			}
			return nil
		})
		batch = batch[:0]
		return err
	})
}

// addEdge adds e's weight and link facts to the edge e.From→e.To in tx
// and widens its first/last-seen to e's. graph.AddEdgeFacts keeps the
// counters; the record is then rewritten with the merged times, which
// AddEdgeFacts sets to its now.
func addEdge(tx *kv.Tx, e *graph.Edge) error {
	old, ok, err := graph.GetEdge(tx, e.From, e.To)
	if err != nil {
		return err
	}
	if err := graph.AddEdgeFacts(tx, e.From, e.To, e.Weight, e.Nofollow, e.Redirect, e.LastSeen); err != nil {
		return err
	}
	merged := graph.Edge{From: e.From, To: e.To, Weight: e.Weight, FirstSeen: e.FirstSeen, LastSeen: e.LastSeen, Nofollow: e.Nofollow, Redirect: e.Redirect}
	if ok {
		merged.Weight += old.Weight
		merged.Nofollow += old.Nofollow
		merged.Redirect += old.Redirect
		merged.FirstSeen = earliest(old.FirstSeen, e.FirstSeen)
		merged.LastSeen = latest(old.LastSeen, e.LastSeen)
	}
	return graph.PutEdge(tx, &merged)
}

// frontier queues every input's entries and leases in dst, one per host at
// its smallest depth. frontier.Push, called in (depth, arrival, input)
// order, keeps the first entry of each host and numbers the arrivals anew.
func (m *merger) frontier(srcs []*kv.Store) error {
	var all []queuedAt // renumbered
	for i, src := range srcs {
		ids := &m.ids[i]
		err := src.View(func(tx *kv.Tx) error {
			c := tx.Cursor(kv.BucketFrontier)
			for k, v := c.First(); k != nil; k, v = c.Next() {
				var e frontier.Entry
				if err := kv.Decode(v, &e); err != nil {
					return fmt.Errorf("%s: frontier entry %x: %w", src.Path(), k, err)
				}
				all = append(all, queuedAt{depth: e.Depth, seq: keySeq(k), input: i, e: e})
			}
			return frontier.ForEachLease(tx, func(l *frontier.Lease) error {
				all = append(all, queuedAt{depth: l.Depth, seq: keySeq(l.Key), input: i, e: l.Entry})
				return nil
			})
		})
		if err != nil {
			return err
		}
		for j := len(all) - 1; j >= 0 && all[j].input == i; j-- {
			old := all[j].e.NodeID
			if all[j].e.NodeID = ids.get(old); all[j].e.NodeID == 0 {
				return fmt.Errorf("%s: frontier entry of %s names missing node %d: %w", src.Path(), all[j].e.Host, old, frontier.ErrInconsistent)
			}
		}
	}
	slices.SortFunc(all, queuedAt.compare)
	for start := 0; start < len(all); start += m.batch {
		if err := m.ctx.Err(); err != nil {
			return err
		}
		chunk := all[start:min(start+m.batch, len(all))]
		err := m.dst.Update(func(tx *kv.Tx) error {
			for _, q := range chunk {
				if _, err := frontier.Push(tx, q.e); err != nil {
					return fmt.Errorf("frontier entry of %s: %w", q.e.Host, err)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// visited copies input i's visited marks (node | depth, kv/schema.go),
// renumbered.
func (m *merger) visited(i int, src *kv.Store) error {
	ids := &m.ids[i]
	var batch [][]byte
	return m.scan(src, kv.BucketVisited, func(k, _ []byte) error {
		if len(k) != 12 {
			return nil // not a mark this weaver writes; the crawler never reads it
		}
		id := ids.get(binary.BigEndian.Uint64(k))
		if id == 0 {
			return nil // a mark of a node the input lacks: meaningless, dropped
		}
		nk := make([]byte, 12)
		binary.BigEndian.PutUint64(nk, id)
		copy(nk[8:], k[8:])
		batch = append(batch, nk)
		return nil
	}, func() error {
		slices.SortFunc(batch, bytes.Compare)
		return keysFlush(m.dst, kv.BucketVisited, &batch)()
	})
}

// roots copies the subdomain limiter's admitted hosts: the union.
func (m *merger) roots(src *kv.Store) error {
	var batch [][]byte
	return m.scan(src, kv.BucketRoots, func(k, _ []byte) error {
		batch = append(batch, bytes.Clone(k))
		return nil
	}, keysFlush(m.dst, kv.BucketRoots, &batch))
}

// robots keeps, per host, the freshest robots.txt record of all inputs (the
// earlier input's on a tie).
func (m *merger) robots(src *kv.Store) error {
	var batch []kvPair
	return m.scan(src, kv.BucketRobots, func(k, v []byte) error {
		batch = append(batch, kvPair{bytes.Clone(k), bytes.Clone(v)})
		return nil
	}, func() error {
		err := m.dst.Update(func(tx *kv.Tx) error {
			for _, r := range batch {
				if cur := tx.GetRaw(kv.BucketRobots, r.k); cur != nil && !fetchedAt(r.v).After(fetchedAt(cur)) {
					continue
				}
				if err := tx.PutRaw(kv.BucketRobots, r.k, r.v); err != nil {
					return err
				}
			}
			return nil
		})
		batch = batch[:0]
		return err
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

// history merges input i's crawl history (graph/history.go) into dst, its
// node ids remapped: each host's history is the union of its inputs'
// crawls, by crawl time, each with its own links, written anew as the
// crawler writes it (a crawl whose links are those of the merged crawl
// before it stores none). A crawl two inputs both hold (a store and its
// copy, or a copy that crawled on: the same host and time) is kept once,
// and what the second input counted for it (the node's crawl, change and
// 304 counts, its edges' weights) is taken back.
func (m *merger) history(i int, src *kv.Store) error {
	ids := &m.ids[i]
	if m.dups == nil {
		m.dups = map[uint64]*dupCounts{}
	}
	type hist struct {
		node   uint64 // the output's
		crawls []graph.Crawl
	}
	var batch []hist
	records := 0
	flush := func() error {
		err := m.dst.Update(func(tx *kv.Tx) error {
			for _, h := range batch {
				if err := m.putHistory(tx, h.node, h.crawls); err != nil {
					return err
				}
			}
			return nil
		})
		batch, records = batch[:0], 0
		return err
	}
	err := src.View(func(tx *kv.Tx) error {
		if !graph.HasHistory(tx) {
			return nil // an older weaver's store, or no crawl answered
		}
		c := tx.Cursor(kv.BucketNodes)
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if len(k) != 8 || !graph.HasCrawls(tx, binary.BigEndian.Uint64(k)) {
				continue
			}
			id := binary.BigEndian.Uint64(k)
			h := hist{node: ids.get(id)}
			err := graph.ForEachCrawl(tx, id, func(c *graph.Crawl) error {
				cr := *c
				cr.Links = make([]graph.Link, len(c.Links))
				for j, l := range c.Links {
					if l.To = ids.get(l.To); l.To == 0 {
						return fmt.Errorf("%w: node %d's crawl at %s links to a node the store lacks", graph.ErrBadHistory, id, c.At)
					}
					cr.Links[j] = l
				}
				graph.SortLinks(cr.Links)
				h.crawls = append(h.crawls, cr)
				return nil
			})
			if err != nil {
				return fmt.Errorf("%s: %w", src.Path(), err)
			}
			batch = append(batch, h)
			if records += len(h.crawls); records >= m.batch {
				if err := m.ctx.Err(); err != nil {
					return err
				}
				if err := flush(); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil || len(batch) == 0 {
		return err
	}
	return flush()
}

// putHistory makes node's history in tx the union of what it holds and
// crawls (times strictly increasing); a crawl at a time it holds is kept
// once (see history).
func (m *merger) putHistory(tx *kv.Tx, node uint64, crawls []graph.Crawl) error {
	var old []graph.Crawl
	err := graph.ForEachCrawl(tx, node, func(c *graph.Crawl) error {
		cr := *c
		cr.Links = slices.Clone(c.Links)
		old = append(old, cr)
		return nil
	})
	if err != nil || len(old) == 0 {
		if err == nil {
			err = graph.ReplaceHistory(tx, node, crawls)
		}
		return err
	}
	merged := make([]graph.Crawl, 0, len(old)+len(crawls))
	for len(old) > 0 || len(crawls) > 0 {
		switch {
		case len(crawls) == 0 || len(old) > 0 && old[0].At.Before(crawls[0].At):
			merged, old = append(merged, old[0]), old[1:]
		case len(old) == 0 || crawls[0].At.Before(old[0].At):
			merged, crawls = append(merged, crawls[0]), crawls[1:]
		default: // the same crawl, in two inputs
			if err := m.dup(tx, node, &crawls[0]); err != nil {
				return err
			}
			merged, old, crawls = append(merged, old[0]), old[1:], crawls[1:]
		}
	}
	return graph.ReplaceHistory(tx, node, merged)
}

// dupCounts are what the inputs counted twice for a host: crawls met in
// two inputs, and how many of them changed something or answered 304.
type dupCounts struct{ crawls, changed, notModified int }

// dup takes back what a second input counted for its crawl c of node,
// which the output already holds: its links' weights now, the node's
// counts in finishHistory.
func (m *merger) dup(tx *kv.Tx, node uint64, c *graph.Crawl) error {
	d := m.dups[node]
	if d == nil {
		d = &dupCounts{}
		m.dups[node] = d
	}
	d.crawls++
	if c.Changed {
		d.changed++
	}
	if c.NotModified {
		d.notModified++
	}
	return graph.Uncount(tx, node, c)
}

// finishHistory takes back from each node's counts the crawls two inputs
// both held.
func (m *merger) finishHistory() error {
	nodes := slices.Sorted(maps.Keys(m.dups))
	for lo := 0; lo < len(nodes); lo += m.batch {
		err := m.dst.Update(func(tx *kv.Tx) error {
			for _, id := range nodes[lo:min(lo+m.batch, len(nodes))] {
				d := m.dups[id]
				n, ok, err := graph.Get(tx, id)
				if err != nil || !ok {
					return err
				}
				n.CrawlCount = max(n.CrawlCount-d.crawls, 0)
				n.Changes = max(n.Changes-d.changed, 0)
				n.NotModified = max(n.NotModified-d.notModified, 0)
				if err := graph.Put(tx, &n); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// anchors copies input i's example links (graph.Anchor) with their edge's
// ids remapped; an edge that has some in two inputs keeps the first
// input's, then the other's, as many as the longer list had.
func (m *merger) anchors(i int, src *kv.Store) error {
	ids := &m.ids[i]
	has := false
	if err := src.View(func(tx *kv.Tx) error { has = tx.Exists(kv.BucketAnchors); return nil }); err != nil || !has {
		return err // an older weaver's store: no anchors
	}
	type rec struct {
		from, to uint64
		list     []graph.Anchor
	}
	var batch []rec
	return m.scan(src, kv.BucketAnchors, func(k, v []byte) error {
		if len(k) != 16 {
			return fmt.Errorf("%s: anchors key %x: %w", src.Path(), k, graph.ErrInconsistent)
		}
		var list []graph.Anchor
		if err := kv.Decode(v, &list); err != nil {
			return fmt.Errorf("%s: anchors %x: %w", src.Path(), k, err)
		}
		batch = append(batch, rec{ids.get(binary.BigEndian.Uint64(k)), ids.get(binary.BigEndian.Uint64(k[8:])), list})
		return nil
	}, func() error {
		err := m.dst.Update(func(tx *kv.Tx) error {
			for _, r := range batch {
				if _, ok, err := graph.GetEdge(tx, r.from, r.to); err != nil || !ok {
					if err != nil {
						return err
					}
					continue // no edge of the output: the anchors have nothing to stand for
				}
				old, err := graph.GetAnchors(tx, r.from, r.to)
				if err != nil {
					return err
				}
				list := graph.MergeAnchors(old, r.list, max(len(old), len(r.list)))
				if err := graph.PutAnchors(tx, r.from, r.to, list); err != nil {
					return err
				}
			}
			return nil
		})
		batch = batch[:0]
		return err
	})
}

// rebuildDue files every merged node with a due time in the revisit
// schedule (frontier.Schedule), to fetch its home page.
func (m *merger) rebuildDue() error {
	return m.dst.Update(func(tx *kv.Tx) error {
		type due struct {
			node uint64
			at   time.Time
		}
		var all []due
		err := graph.ForEachNode(tx, func(n *graph.Node) error {
			if !n.NextDue.IsZero() {
				all = append(all, due{n.ID, n.NextDue})
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, d := range all {
			if err := frontier.Schedule(tx, d.node, d.at, ""); err != nil {
				return err
			}
		}
		return nil
	})
}
