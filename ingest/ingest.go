package ingest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/crawl/pick"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/srcsort"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/warc"
)

// MapAhead is the memory map an import's store is opened with
// (kv.Options.MapAhead): 256 MiB of address space on a 64-bit machine,
// none on a 32-bit one, whose 3 GiB are better left to the heap.
const MapAhead = (strconv.IntSize / 64) * 256 << 20

// Options say how records become graph. The zero value selects like a
// crawl's defaults except MaxOutboundLinks (0: no limit): use Defaults.
type Options struct {
	MaxOutboundLinks int      // distinct other hosts kept per page; 0: no limit
	ExcludeHosts     []string // regular expressions on the normalised host
	// Scope, when set, are regular expressions on the normalised host, as
	// a crawl's --scope: a record of another host is not imported (counted
	// out of scope), and a link to one is an edge to an out_of_scope node.
	Scope        []string
	MaxBodyBytes int64 // bytes of a page read, as the crawl's cap (0: 1 MiB)
	BatchRecords int   // records per transaction (0: 5,000)
	BatchBytes   int64 // file bytes per transaction (0: 64 MiB)
	// SortBytes is the memory that links wait in (0: 64 MiB, 40 bytes a
	// link): half of it fills while the other half is sorted and written
	// to a run file beside the store; the runs are merged into the store
	// in key order as the import goes on (edges.go).
	SortBytes int64
	// Workers is how many goroutines parse records (0: GOMAXPROCS); one
	// reads the file and the caller's applies and commits, in the file's
	// order: the store is the same for any number.
	Workers int
	// Progress, when set, is called about every ProgressEvery (0: 5 s)
	// with the import's state, and once at the end of each file.
	Progress      func(Progress)
	ProgressEvery time.Duration
	// Log, when set, receives one line per notable event (a file skipped
	// as already imported, resumed, damaged).
	Log func(msg string)
	Now func() time.Time // nil: time.Now
}

// Defaults are a crawl's defaults: 10 outbound hosts per page, seed 000's
// exclusions, a 1 MiB body cap.
func Defaults() Options {
	return Options{MaxOutboundLinks: 10, ExcludeHosts: append([]string(nil), pick.DefaultExcludeHosts...), MaxBodyBytes: 1 << 20}
}

// Stats count what an import read and recorded.
type Stats struct {
	Files        int   `json:"files"`         // files read (to their end or their damage)
	FilesSkipped int   `json:"files_skipped"` // files already imported
	FilesDamaged int   `json:"files_damaged"`
	Records      int64 `json:"records"`
	Bytes        int64 `json:"bytes"` // file bytes read
	Pages        int64 `json:"pages"` // HTML answers recorded as crawled pages
	Redirects    int64 `json:"redirects"`
	NonHTML      int64 `json:"non_html"`
	// BadHeaders counts responses whose HTTP headers do not parse (a
	// Content-Length of -1): no type can be read, and no page is taken.
	BadHeaders int64 `json:"bad_headers"`
	Failed     int64 `json:"failed"`      // answers cut by the connection or the clock, or whose body does not decode: no link
	HTTPErrors int64 `json:"http_errors"` // 4xx and 5xx answers
	Robots     int64 `json:"robots"`
	// RobotsDisallowed counts the hosts whose archived robots.txt
	// disallows their home page for the archive's agent.
	RobotsDisallowed int64 `json:"robots_disallowed"`
	Requests         int64 `json:"requests"`
	Revisits         int64 `json:"revisits"`
	Metadata         int64 `json:"metadata"`     // WAT records of requests, warcinfo, ...
	Other            int64 `json:"other"`        // warcinfo, resource, dns:, unparsable target URIs
	OutOfScope       int64 `json:"out_of_scope"` // records of hosts outside Options.Scope
	Links            int64 `json:"links"`        // weight added
	NodesCreated     int64 `json:"nodes_created"`
	EdgesCreated     int64 `json:"edges_created"`
}

// add adds a record's counts to s.
func (s *Stats) add(d *Stats) {
	s.Pages += d.Pages
	s.Redirects += d.Redirects
	s.NonHTML += d.NonHTML
	s.BadHeaders += d.BadHeaders
	s.Failed += d.Failed
	s.HTTPErrors += d.HTTPErrors
	s.Robots += d.Robots
	s.Requests += d.Requests
	s.Revisits += d.Revisits
	s.Metadata += d.Metadata
	s.Other += d.Other
	s.OutOfScope += d.OutOfScope
}

// Progress is the state of an import, reported as it goes.
type Progress struct {
	File   string
	Offset int64 // in File
	Size   int64 // of File
	Stats  Stats // the whole import's so far
	// FileStats are File's own: its records, bytes, pages, nodes created
	// and links read (the weight they add, once merged). Edges are merged
	// once the links of every file are in (see edges.go), so a file's
	// EdgesCreated is 0 and the import's grows at the end.
	FileStats Stats
	Elapsed   time.Duration
	Done      bool // File is finished
}

// since returns the counts of s that came after b: the records, bytes,
// pages, nodes and links of a file, from the import's before and after.
func (s Stats) since(b Stats) Stats {
	return Stats{Records: s.Records - b.Records, Bytes: s.Bytes - b.Bytes, Pages: s.Pages - b.Pages,
		NodesCreated: s.NodesCreated - b.NodesCreated, Links: s.Links - b.Links}
}

// Run imports files (as Files returns them) into store. It returns the
// stats and, after reading every file, an error joining a *warc.DamageError
// (wrapped with ErrDamaged) per damaged file, each of whose whole records
// before the damage were imported; a store or file system error, or ctx's
// error, stops it at once, after committing the records already read.
// Nothing else may write store's nodes while Run runs (see hostFilter).
func Run(ctx context.Context, store *kv.Store, files []string, opts Options) (Stats, error) {
	im, err := newImporter(store, opts)
	if err != nil {
		return Stats{}, err
	}
	if err := im.saveSettings(files); err != nil {
		return Stats{}, err
	}
	var runs runState
	if err := store.Update(func(tx *kv.Tx) error {
		if _, err := graph.EnsureMirrorIndex(tx); err != nil {
			return err
		}
		im.hosts = newHostFilter(tx)
		runs, err = loadRuns(tx)
		return err
	}); err != nil {
		return Stats{}, fmt.Errorf("ingest: %w", err)
	}
	if len(runs.Runs) > 0 {
		im.logf("%d runs of edges a stopped import left are merged first", len(runs.Runs))
	}
	im.merger = newMerger(store, runs)
	im.merger.start(ctx)
	defer im.merger.stop()
	var damaged []error
	sizes := make([]int64, len(files))
	for i, f := range files {
		if fi, err := os.Stat(f); err == nil {
			sizes[i] = fi.Size()
			im.after += sizes[i]
		}
	}
	// The stages are labelled in CPU profiles (go tool pprof -tags): read,
	// parse, apply (this goroutine: nodes and commits) and merge.
	defer pprof.SetGoroutineLabels(ctx)
	pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("import", "apply")))
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return im.stopped(err)
		}
		im.final = i == len(files)-1
		im.after -= sizes[i]
		err := im.file(ctx, f)
		var de *warc.DamageError
		if errors.As(err, &de) {
			im.stats.FilesDamaged++
			damaged = append(damaged, fmt.Errorf("%w: %w", ErrDamaged, de))
			continue
		}
		if err != nil {
			return im.stopped(err)
		}
	}
	if err := im.finishEdges(); err != nil {
		return im.current(), err
	}
	return im.current(), errors.Join(damaged...)
}

// newImporter returns the importer of a Run into store, opts' zero values
// set to their defaults. It returns an error when Options.ExcludeHosts or
// Options.Scope holds an expression that does not compile.
func newImporter(store *kv.Store, opts Options) (*importer, error) {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.BatchRecords <= 0 {
		opts.BatchRecords = 5000
	}
	if opts.BatchBytes <= 0 {
		opts.BatchBytes = 64 << 20
	}
	if opts.SortBytes <= 0 {
		opts.SortBytes = 64 << 20
	}
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	x, err := pick.NewExcluder(opts.ExcludeHosts)
	if err != nil {
		return nil, fmt.Errorf("ingest: exclude_hosts: %w", err)
	}
	im := &importer{store: store, opts: opts, exclude: x, start: time.Now(), lastProgress: time.Now(),
		pending: map[string]*fileState{}, ids: map[string]uint64{}}
	if len(opts.Scope) > 0 {
		parts := make([]string, len(opts.Scope))
		for i, p := range opts.Scope {
			parts[i] = "(?:" + p + ")"
		}
		if im.scope, err = regexp.Compile(strings.Join(parts, "|")); err != nil {
			return nil, fmt.Errorf("ingest: scope: %w", err)
		}
	}
	return im, nil
}

// current is the stats so far, the merger's counts included.
func (im *importer) current() Stats {
	st := im.stats
	st.EdgesCreated += im.merger.edges.Load()
	st.Links += im.merger.links.Load()
	return st
}

// stopped stops the merger (at the end of its transaction) and returns the
// stats and err.
func (im *importer) stopped(err error) (Stats, error) {
	im.dropSpill()
	im.merger.stop()
	return im.current(), err
}

// importer is one Run's state.
type importer struct {
	store   *kv.Store
	opts    Options
	exclude *pick.Excluder
	scope   *regexp.Regexp // nil: every host
	stats   Stats
	ua      string // the User-Agent of the archive's last robots.txt request read
	// linksRead counts the links applied (pends), for the progress of a
	// file: Stats.Links grows only as they are merged.
	linksRead int64
	start     time.Time

	batch        []page
	relinks      []page                // pages whose nodes are committed: their links only
	pends        []pend                // the links of the records committed since the last run was written
	seq          uint32                // of the next pend
	merger       *merger               // merges the runs of edges written
	job          *spillJob             // the run being sorted and written, if any
	sorter       srcsort.Sorter[pend]  // the job's, then finishEdges'
	spare        []pend                // the last run's buffer, for the next links
	pending      map[string]*fileState // the files read whose edges are not all in the store
	ids          map[string]uint64     // host → node id, of hosts met (cleared when large)
	hosts        *hostFilter           // the hosts the store may hold (nil: any); see ensure
	lastProgress time.Time
	lastRelease  time.Time // when the store's pages were last given back
	commits      uint      // committed batches (batchRecords)
	final        bool      // the file being read is the last
	after        int64     // bytes of the files after it
}

func (im *importer) logf(format string, a ...any) {
	if im.opts.Log != nil {
		im.opts.Log(fmt.Sprintf(format, a...))
	}
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
