package archive

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/shard"
)

// RepairOptions control Repair.
type RepairOptions struct {
	// Force replaces an existing output file (never the store repaired).
	Force bool
	// DropMeta names meta keys not copied: values that describe the process
	// that held the store (such as its status API address).
	DropMeta []string
	// Batch is how many records one write transaction takes; zero means
	// 10,000.
	Batch int
	// Report, when set, is called for each record or page left out, as it
	// is found.
	Report func(Drop)
}

// Drop is a record, or a whole page of records, that Repair left out.
type Drop struct {
	Bucket string `json:"bucket"`
	// Key is the record's key; nil when its key could not be read, or for
	// a lost page.
	Key []byte `json:"key,omitempty"`
	// Page is the lost page; zero for a single record.
	Page uint64 `json:"page,omitempty"`
	// From and To bound a lost page's keys ([From, To); nil when unknown or
	// open), as its parent page records them.
	From []byte `json:"from,omitempty"`
	To   []byte `json:"to,omitempty"`
	Why  string `json:"why"`
}

// String is the line `weaver check --repair` prints: the bucket, the key
// (hex for ids, quoted for names), or the page and its key range, then why.
func (d Drop) String() string {
	switch {
	case d.Page != 0:
		keys := ""
		if d.From != nil || d.To != nil {
			from, to := "start", "end"
			if d.From != nil {
				from = keyString(d.Bucket, d.From)
			}
			if d.To != nil {
				to = keyString(d.Bucket, d.To)
			}
			keys = fmt.Sprintf(", keys %s to %s", from, to)
		}
		return fmt.Sprintf("%s: page %d%s lost: it %s", d.Bucket, d.Page, keys, d.Why)
	case d.Key != nil:
		return fmt.Sprintf("%s %s: %s", d.Bucket, keyString(d.Bucket, d.Key), d.Why)
	}
	return fmt.Sprintf("%s: %s", d.Bucket, d.Why)
}

// keyString writes a key the way `weaver check` does: hex for binary keys,
// quoted for the buckets keyed by names.
func keyString(bucket string, k []byte) string {
	switch bucket {
	case string(kv.BucketMeta), string(kv.BucketHosts), string(kv.BucketRobots), string(kv.BucketRoots), "":
		if len(k) > 100 {
			return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(string(k[:100])), len(k))
		}
		return strconv.Quote(string(k))
	}
	if len(k) > 32 {
		return fmt.Sprintf("%x… (%d bytes)", k[:32], len(k))
	}
	return hex.EncodeToString(k)
}

// RepairResult describes a repair.
type RepairResult struct {
	Source string `json:"source"`
	Out    Info   `json:"out"`
	// Txid is the bbolt transaction whose trees were read; Newest is the
	// file's newest. They differ when the newest one's trees lose pages and
	// the previous one's lose fewer and give as many records.
	Txid   uint64 `json:"txid"`
	Newest uint64 `json:"newest_txid"`
	// Dropped counts the records left out, LostPages the pages that could
	// not be read (whose records are not counted in Dropped).
	Dropped   int            `json:"dropped"`
	LostPages int            `json:"lost_pages"`
	ByBucket  map[string]int `json:"dropped_by_bucket,omitempty"` // records and pages left out, per bucket
	Returned  uint64         `json:"leases_returned"`             // leases put back in the queue
	Notes     []string       `json:"notes,omitempty"`             // decisions made, in words
}

// ErrUnsound means the repaired store was written but fails Verify.
var ErrUnsound = errors.New("archive: the repaired store fails weaver check")

// The meta keys Repair computes instead of copying: kv's own, and the
// counters graph and frontier keep (graph/store.go, frontier/frontier.go;
// graph.Check and frontier.Check verify them on the output).
var (
	metaComputed = []string{
		"magic", "schema_version", "created_at",
		"graph.nodes", "graph.edges", "graph.weight", "graph.next_id",
		"frontier.size", "frontier.leases", "frontier.seq",
	}
	// The cluster's outbox size and sequence, recomputed when present.
	metaOutbox    = shard.MetaOutbox
	metaOutboxSeq = shard.MetaOutboxSeq
)

// Repair writes to out a new store made of every readable record of the
// store at src, which it never modifies. It reads src's pages itself
// (pages.go), so flipped bytes, damaged pages and a truncated tail cost
// only the records they hold; kv.Open would refuse such a file. Records
// are kept when they decode and agree with each other:
//
//   - nodes keyed by their own id, with a normalised host no earlier node
//     holds; the hosts index is rebuilt from them;
//   - edges of positive weight between two kept nodes, not self-loops;
//   - frontier entries at the depth their key says, of a kept node whose
//     host they name, with an http(s) URL; leases likewise, returned to
//     the queue at their old place. Entries are queued again through
//     frontier.Push in their old order, which rebuilds the queued index
//     and the counters;
//   - visited marks of kept nodes; the subdomain limiter's records whose
//     domain is their host's (rebuilt from the nodes, queued or crawled,
//     when pages of them were lost);
//   - robots.txt cache records whose rules decode; the cluster's outbox
//     and inbox records with well-formed keys;
//   - meta records (creation time, crawl and job configuration, ...) with
//     printable keys, except opt.DropMeta; counters are recomputed.
//
// Each record or page left out is passed to opt.Report. The output is
// built beside out, checked with Verify and renamed into place; when the
// check fails it is still installed (it holds what could be read) and the
// error wraps ErrUnsound.
//
// Repair returns checkTarget's errors (ErrSameFile, ErrExists, ErrIsDir),
// kv.ErrInUse when a process holds src, kv.ErrEmptyFile, kv.ErrNotStore
// or kv.ErrCorrupt (no valid meta page, or neither a bucket list nor a
// page of records can be read) when nothing can be read,
// kv.ErrNewerSchema, ctx's error, and file system errors. On such an
// error out is left as it was.
func Repair(ctx context.Context, src, out string, opt RepairOptions) (RepairResult, error) {
	if err := checkTarget(out, opt.Force, src); err != nil {
		return RepairResult{}, err
	}
	if opt.Batch <= 0 {
		opt.Batch = 10_000
	}
	f, err := os.Open(src)
	if errors.Is(err, os.ErrNotExist) {
		return RepairResult{}, fmt.Errorf("%s: no such store: %w", src, os.ErrNotExist)
	}
	if err != nil {
		return RepairResult{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return RepairResult{}, err
	}
	if fi.IsDir() {
		return RepairResult{}, fmt.Errorf("%s is a directory: %w", src, kv.ErrNotStore)
	}
	if err := lockShared(f); err != nil {
		return RepairResult{}, err
	}
	metas, err := readMetas(f, fi.Size())
	if err != nil {
		return RepairResult{}, err
	}
	r := &repairer{ctx: ctx, opt: opt, res: RepairResult{Source: src, Newest: metas[0].txid, ByBucket: map[string]int{}}}
	r.lay = chooseLayout(f, fi.Size(), metas, &r.res)
	if len(r.lay.buckets) == 0 && len(r.lay.orphans) == 0 {
		why := "no buckets"
		if len(r.lay.rootLost) > 0 {
			why = "its bucket list is unreadable: " + strings.Join(r.lay.rootLost, "; ")
		}
		return RepairResult{}, fmt.Errorf("%s %w: %s", src, kv.ErrCorrupt, why)
	}
	r.res.Txid = r.lay.meta.txid
	r.pf = newPageFile(f, fi.Size(), r.lay.meta)
	r.checkBuckets()
	created, err := r.readMeta()
	if err != nil {
		return RepairResult{}, err
	}

	tmp, err := tempName(out)
	if err != nil {
		return RepairResult{}, err
	}
	defer os.Remove(tmp)
	r.dst, err = kv.Open(tmp, kv.Options{NoSync: true, PageSize: r.lay.meta.pageSize, Now: func() time.Time { return created }})
	if err != nil {
		return RepairResult{}, fmt.Errorf("%s: %w", out, err)
	}
	err = r.run()
	if cerr := r.dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return RepairResult{}, fmt.Errorf("%s: repair: %w", out, err)
	}
	if err := ctx.Err(); err != nil {
		return RepairResult{}, err
	}
	info, verr := VerifyFile(tmp)
	if verr != nil {
		info, err = countFile(tmp)
		if err != nil {
			return RepairResult{}, fmt.Errorf("%s: %w", out, err)
		}
	}
	if err := install(tmp, out); err != nil {
		return RepairResult{}, err
	}
	info.Path = out
	if fi, err := os.Stat(out); err == nil {
		info.Bytes = fi.Size()
	}
	r.res.Out = info
	if verr != nil {
		return r.res, fmt.Errorf("%s: %w: %w", out, ErrUnsound, verr)
	}
	return r.res, nil
}

// countFile reads the counters of the store at path.
func countFile(path string) (Info, error) {
	s, err := kv.Open(path, kv.Options{ReadOnly: true})
	if err != nil {
		return Info{}, err
	}
	defer s.Close()
	var info Info
	err = s.View(func(tx *kv.Tx) error {
		info = countsOf(tx)
		return nil
	})
	return info, err
}

// repairer copies the readable records of one meta page's trees to dst.
type repairer struct {
	ctx  context.Context
	opt  RepairOptions
	res  RepairResult
	lay  *layout
	pf   *pageFile
	dst  *kv.Store
	meta []kvPair // the source's meta records

	nodes, maxID, edges, weight uint64 // kept, for the counters
	leases                      []queuedAt
	outboxKept, outboxMax       uint64
	hasCreated                  bool      // the source's creation time was read
	firstSeen                   time.Time // the earliest first-seen time of a kept node
}

// drop reports a record left out.
func (r *repairer) drop(d Drop) {
	if d.Page != 0 {
		r.res.LostPages++
	} else {
		r.res.Dropped++
	}
	r.res.ByBucket[d.Bucket]++
	if r.opt.Report != nil {
		r.opt.Report(d)
	}
}

func (r *repairer) dropKey(bucket []byte, key []byte, format string, a ...any) {
	r.drop(Drop{Bucket: string(bucket), Key: bytes.Clone(key), Why: fmt.Sprintf(format, a...)})
}

func (r *repairer) note(format string, a ...any) {
	r.res.Notes = append(r.res.Notes, fmt.Sprintf(format, a...))
}

func (r *repairer) run() error {
	for _, step := range []func() error{
		r.copyNodes, r.rebuildMirrors, r.copyEdges, r.readLeases, r.copyFrontier, r.copyVisited,
		r.copyRoots, r.copyRobots, r.copyOutbox, r.copyInbox, r.copyHistory, r.copyDue, r.copyAnchors, r.copyMeta,
	} {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// rebuildMirrors files the copied nodes in the mirror index again, from
// their content hashes, so that MirrorOf agrees with the nodes kept.
func (r *repairer) rebuildMirrors() error {
	return r.dst.Update(graph.RebuildMirrors)
}
