package ingest

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/crawl/extract"
	"github.com/weaver-crawler/weaver/crawl/pick"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/warc"
)

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
	BatchRecords int   // records per transaction (0: 1,000)
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
	HTTPErrors   int64 `json:"http_errors"` // 4xx and 5xx answers
	Robots       int64 `json:"robots"`
	Requests     int64 `json:"requests"`
	Revisits     int64 `json:"revisits"`
	Metadata     int64 `json:"metadata"`     // WAT records of requests, warcinfo, ...
	Other        int64 `json:"other"`        // warcinfo, resource, dns:, unparsable target URIs
	OutOfScope   int64 `json:"out_of_scope"` // records of hosts outside Options.Scope
	Links        int64 `json:"links"`        // weight added
	NodesCreated int64 `json:"nodes_created"`
	EdgesCreated int64 `json:"edges_created"`
}

// Progress is the state of an import, reported as it goes.
type Progress struct {
	File    string
	Offset  int64 // in File
	Size    int64 // of File
	Stats   Stats
	Elapsed time.Duration
	Done    bool // File is finished
}

// Meta keys of the store.
const (
	// MetaSettings holds the last import's settings, as JSON.
	MetaSettings = "import.settings"
	// metaFilePrefix + file key holds a fileState, as JSON.
	metaFilePrefix = "import.file/"
	// metaRuns holds the runs of sorted edges waiting to be merged, as
	// JSON (runState).
	metaRuns = "import.runs"
	// metaStandInPrefix + a node's decimal id holds the path of the page
	// whose facts the node carries while no capture of its home page has
	// been imported (see importer.apply); the key goes when one is.
	metaStandInPrefix = "import.standin/"
)

// fileState is how far an import got in one file.
type fileState struct {
	Path    string `json:"path"`
	Offset  int64  `json:"offset"` // just past the last record whose node is committed
	Records int64  `json:"records"`
	// Edges is just past the last record whose edges are durable, in a
	// run file or in the store; nil when they all are (and an import
	// before issue 43 wrote none): Offset.
	Edges *int64 `json:"edges,omitempty"`
	Read  bool   `json:"read,omitempty"` // every record's node is committed
	Done  bool   `json:"done"`           // and every edge is in the store
}

// edgesAt is where the records whose edges are not durable start.
func (st *fileState) edgesAt() int64 {
	if st.Edges != nil {
		return *st.Edges
	}
	return st.Offset
}

// Files expands paths: a directory gives its .warc, .warc.gz, .wat and
// .wat.gz files (recursively, in name order); a file is taken as it is.
// It returns the first file system error.
func Files(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && isArchive(d.Name()) {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

func isArchive(name string) bool {
	for _, ext := range []string{".warc", ".warc.gz", ".wat", ".wat.gz"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// Run imports files (as Files returns them) into store. It returns the
// stats and, after reading every file, an error joining a *warc.DamageError
// (wrapped with ErrDamaged) per damaged file, each of whose whole records
// before the damage were imported; a store or file system error, or ctx's
// error, stops it at once, after committing the records already read.
func Run(ctx context.Context, store *kv.Store, files []string, opts Options) (Stats, error) {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.BatchRecords <= 0 {
		opts.BatchRecords = 1000
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
		return Stats{}, fmt.Errorf("ingest: exclude_hosts: %w", err)
	}
	im := &importer{store: store, opts: opts, exclude: x, start: time.Now(), lastProgress: time.Now(),
		pending: map[string]*fileState{}, ids: map[string]uint64{}}
	if len(opts.Scope) > 0 {
		parts := make([]string, len(opts.Scope))
		for i, p := range opts.Scope {
			parts[i] = "(?:" + p + ")"
		}
		if im.scope, err = regexp.Compile(strings.Join(parts, "|")); err != nil {
			return Stats{}, fmt.Errorf("ingest: scope: %w", err)
		}
	}
	if err := im.saveSettings(files); err != nil {
		return Stats{}, err
	}
	var runs runState
	if err := store.Update(func(tx *kv.Tx) error {
		if _, err := graph.EnsureMirrorIndex(tx); err != nil {
			return err
		}
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
	// The stages are labelled in CPU profiles (go tool pprof -tags): read,
	// parse, apply (this goroutine: nodes and commits) and merge.
	defer pprof.SetGoroutineLabels(ctx)
	pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("import", "apply")))
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return im.stopped(err)
		}
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
	start   time.Time

	batch        []page
	relinks      []page                // pages whose nodes are committed: their links only
	pends        []pend                // the links of the records committed since the last run was written
	seq          uint32                // of the next pend
	merger       *merger               // merges the runs of edges written
	job          *spillJob             // the run being sorted and written, if any
	spare        []pend                // the last run's buffer, for the next links
	pending      map[string]*fileState // the files read whose edges are not all in the store
	ids          map[string]uint64     // host → node id, of hosts met (cleared when large)
	lastProgress time.Time
	lastRelease  time.Time // when the store's pages were last given back
}

// parser turns records into pages (parse.go): one per goroutine that
// parses. What it parsed since the caller last took it is in stats,
// batch and logs.
type parser struct {
	opts    Options
	exclude *pick.Excluder
	scope   *regexp.Regexp

	sel  pick.Selector
	ex   extract.Extractor
	body bytes.Buffer
	gz   *gzip.Reader

	stats Stats    // the counts of the records parsed
	batch []page   // the pages they add
	logs  []string // the lines they log
}

func (im *parser) logf(format string, a ...any) {
	if im.opts.Log != nil {
		im.logs = append(im.logs, fmt.Sprintf(format, a...))
	}
}

// page is what one record adds to the graph.
type page struct {
	host, scheme string
	date         time.Time
	crawled      bool   // an HTML answer: the node's crawl fields may be set
	path         string // the URL's path ("/" for the home page)
	status       int
	ctype        string
	server       string
	bytes        int64
	hash         string
	title, desc  string
	targets      []pick.Target
}

func (im *importer) saveSettings(files []string) error {
	settings := map[string]any{
		"max_outbound_links": im.opts.MaxOutboundLinks,
		"exclude_hosts":      im.opts.ExcludeHosts,
		"scope":              im.opts.Scope,
		"max_body_bytes":     im.opts.MaxBodyBytes,
		"files":              files,
		"started_at":         im.opts.Now().UTC().Format(time.RFC3339),
	}
	data, err := json.Marshal(settings)
	if err != nil {
		return err
	}
	return im.store.Update(func(tx *kv.Tx) error { return tx.SetMetaString(MetaSettings, string(data)) })
}

// fileKey names a file by its base name and a digest of its first 4 KiB
// (its warcinfo record, usually, which names it uniquely).
func fileKey(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", err
	}
	sum := sha256.Sum256(head[:n])
	return metaFilePrefix + filepath.Base(path) + "@" + hex.EncodeToString(sum[:8]), nil
}

func (im *importer) logf(format string, a ...any) {
	if im.opts.Log != nil {
		im.opts.Log(fmt.Sprintf(format, a...))
	}
}

// file imports one file from where an earlier import stopped: from the
// first record whose edges are not durable, adding only the edges of the
// records whose nodes are already committed.
func (im *importer) file(ctx context.Context, path string) error {
	key, err := fileKey(path)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	st := im.pending[key]
	if st == nil {
		st = new(fileState)
		if err := im.store.View(func(tx *kv.Tx) error {
			if v := tx.MetaString(key); v != "" {
				return json.Unmarshal([]byte(v), st)
			}
			return nil
		}); err != nil {
			return fmt.Errorf("ingest: %s: state: %w", path, err)
		}
	}
	if st.Done || (st.Read && st.edgesAt() == st.Offset) {
		im.stats.FilesSkipped++
		im.logf("%s: already imported (%d records), skipped", path, st.Records)
		return nil
	}
	from, nodesTo := st.edgesAt(), st.Offset
	switch {
	case from < nodesTo:
		im.logf("%s: resuming at offset %d after %d records (the links of those after offset %d are read again)", path, nodesTo, st.Records, from)
	case nodesTo > 0:
		im.logf("%s: resuming at offset %d after %d records", path, nodesTo, st.Records)
	}
	st.Path = path
	st.Edges = &from // the links read from here on wait in memory
	r, err := warc.NewReader(path, from)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	defer r.Close()
	im.stats.Files++
	im.pending[key] = st
	var batchBytes, batchRecords int64 // read since the last commit
	commit := func() error {
		err := im.commit(key, st)
		batchBytes, batchRecords = 0, 0
		return err
	}
	chunks, stop := im.pipeline(ctx, r)
	defer stop()
	for c := range chunks {
		for i, rec := range c.recs {
			if err := ctx.Err(); err != nil {
				if cerr := commit(); cerr != nil {
					return cerr
				}
				return err
			}
			out := &c.out[i]
			if de := (*warc.DamageError)(nil); errors.As(out.err, &de) {
				// The reader met it: what came before is imported.
				if cerr := commit(); cerr != nil {
					return cerr
				}
				return de
			}
			if out.err != nil {
				return fmt.Errorf("ingest: %s at offset %d: %w", path, rec.Offset, out.err)
			}
			if rec.End <= nodesTo {
				// Its node is committed: its links only.
				im.relinks = append(im.relinks, out.pages...)
				continue
			}
			for _, l := range out.logs {
				im.opts.Log(l)
			}
			im.stats.add(&out.stats)
			im.batch = append(im.batch, out.pages...)
			im.stats.Records++
			im.stats.Bytes += rec.End - rec.Offset
			batchBytes += rec.End - rec.Offset
			batchRecords++
			st.Offset = rec.End
			st.Records++
			if batchRecords >= int64(im.opts.BatchRecords) || batchBytes >= im.opts.BatchBytes {
				if err := commit(); err != nil {
					return err
				}
			}
			if im.opts.Progress != nil && time.Since(im.lastProgress) >= im.opts.ProgressEvery {
				im.lastProgress = time.Now()
				im.opts.Progress(Progress{File: path, Offset: st.Offset, Size: r.Size(), Stats: im.current(), Elapsed: time.Since(im.start)})
			}
		}
		if c.err == nil {
			continue
		}
		if errors.Is(c.err, io.EOF) {
			break
		}
		if cerr := commit(); cerr != nil {
			return cerr
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		return c.err
	}
	if err := ctx.Err(); err != nil {
		// The pipeline stopped early: what was applied is committed.
		if cerr := commit(); cerr != nil {
			return cerr
		}
		return err
	}
	st.Read = true
	if err := commit(); err != nil {
		return err
	}
	if im.opts.Progress != nil {
		im.opts.Progress(Progress{File: path, Offset: st.Offset, Size: r.Size(), Stats: im.current(), Elapsed: time.Since(im.start), Done: true})
	}
	return nil
}

// commit writes the batch's nodes and the file's state in one
// transaction, its links to memory, and the links in memory to a run
// when they fill Options.SortBytes.
func (im *importer) commit(key string, st *fileState) error {
	job, err := im.doneSpill(false) // recorded by this transaction
	if err != nil {
		return err
	}
	if off, ok := job.offset(key); ok {
		st.Edges = &off
	}
	state, err := json.Marshal(st)
	if err != nil {
		return err
	}
	var nodes int64
	var edges uint64 // in the store
	n0 := len(im.pends)
	err = update(im.store, func(tx *kv.Tx) error {
		before := graph.GetCounts(tx)
		for i := range im.relinks {
			if err := im.relink(tx, &im.relinks[i]); err != nil {
				return err
			}
		}
		for i := range im.batch {
			if err := im.apply(tx, &im.batch[i]); err != nil {
				return err
			}
		}
		after := graph.GetCounts(tx)
		nodes, edges = int64(after.Nodes-before.Nodes), after.Edges
		if job != nil {
			if err := im.recordSpill(tx, job, key); err != nil {
				return err
			}
		}
		return tx.SetMetaString(key, string(state))
	})
	if err != nil {
		im.pends = im.pends[:n0]
		clear(im.ids)
		return fmt.Errorf("ingest: commit: %w", err)
	}
	im.stats.NodesCreated += nodes
	im.batch, im.relinks = im.batch[:0], im.relinks[:0]
	if job != nil {
		im.spilled(job)
	}
	if err := im.merger.failed(); err != nil {
		return err
	}
	if len(im.pends) >= im.pendLimit() || len(im.pends) >= max(minRun, int(edges)) {
		// Full, or as many links as the store has edges: a store that
		// is small yet takes them from the merger while the import
		// goes on, not all at its end, at a cost that stays a small
		// multiple of the links merged. One run is sorted and written
		// at a time, beside the writer.
		if err := im.flushSpill(); err != nil {
			return err
		}
		im.startSpill()
	}
	if time.Since(im.lastRelease) >= 2*time.Second {
		// Keeps RSS flat as the store grows: see kv.Tx.ReleasePages.
		im.lastRelease = time.Now()
		return im.store.View(func(tx *kv.Tx) error { tx.ReleasePages(); return nil })
	}
	return nil
}

// apply records one page in tx, as a crawl's commit does, its links in
// memory.
func (im *importer) apply(tx *kv.Tx, p *page) error {
	n, _, err := graph.EnsureAt(tx, p.host, p.scheme, 0, p.date)
	if err != nil {
		return err
	}
	if p.date.After(n.LastSeen) {
		n.LastSeen = p.date
	}
	if p.crawled {
		if err := im.facts(tx, &n, p); err != nil {
			return err
		}
	}
	if err := graph.Put(tx, &n); err != nil {
		return err
	}
	at := toNano(p.date)
	for _, t := range p.targets {
		to, err := im.target(tx, t.Host, t.Scheme, p.date)
		if err != nil {
			return err
		}
		im.link(n.ID, to, at)
	}
	return nil
}

// target returns the id of a page's link's host, creating its node as a
// crawl does.
func (im *importer) target(tx *kv.Tx, host, scheme string, date time.Time) (uint64, error) {
	if im.scope == nil {
		if id, ok := im.ids[host]; ok {
			return id, nil
		}
		id, ok := graph.Lookup(tx, host)
		if !ok {
			n, _, err := graph.EnsureAt(tx, host, scheme, 1, date)
			if err != nil {
				return 0, err
			}
			id = n.ID
		}
		if len(im.ids) >= maxIDs {
			clear(im.ids)
		}
		im.ids[host] = id
		return id, nil
	}
	dst, _, err := graph.EnsureHeadAt(tx, host, scheme, 1, date)
	if err != nil {
		return 0, err
	}
	if dst.Status == graph.StatusDiscovered && !im.scope.MatchString(host) {
		if d, ok, err := graph.Get(tx, dst.ID); err == nil && ok {
			d.Status = graph.StatusOutOfScope
			if err := graph.Put(tx, &d); err != nil {
				return 0, err
			}
		}
	}
	return dst.ID, nil
}

// pendLimit is how many links fill memory: half of Options.SortBytes, the
// other half being sorted and written to a run meanwhile.
func (im *importer) pendLimit() int { return max(int(im.opts.SortBytes/pendSize/2), 1) }

// minRun is the fewest links written to a run before memory is full.
const minRun = 1 << 16

// maxIDs bounds importer.ids: about 20 MB.
const maxIDs = 1 << 18

// relink adds the links of a page whose node an earlier import committed
// (see file): its host and its links' hosts have their nodes.
func (im *importer) relink(tx *kv.Tx, p *page) error {
	from, ok := graph.Lookup(tx, p.host)
	if !ok {
		return fmt.Errorf("ingest: %s: %w: its node is missing where the store says it was committed", p.host, graph.ErrInconsistent)
	}
	at := toNano(p.date)
	for _, t := range p.targets {
		to, ok := graph.Lookup(tx, t.Host)
		if !ok {
			return fmt.Errorf("ingest: %s: %w: its node is missing where the store says it was committed", t.Host, graph.ErrInconsistent)
		}
		im.link(from, to, at)
	}
	return nil
}

// link puts a link in memory.
func (im *importer) link(from, to uint64, at int64) {
	if c := cap(im.pends); len(im.pends) == c {
		// Grown by doubling up to what Options.SortBytes holds, not
		// past it as append would, then (until the batch's commit
		// writes them to a run) an eighth of it at a time.
		limit := im.pendLimit()
		n := min(max(2*c, 1024), limit)
		if c >= limit {
			n = c + max(limit/8, 1024)
		}
		grown := make([]pend, len(im.pends), n)
		copy(grown, im.pends)
		im.pends = grown
	}
	im.pends = append(im.pends, pend{from: from, to: to, first: at, last: at, w: 1, seq: im.seq})
	im.seq++
}

// facts records an HTML capture's facts in n. A host's facts (title,
// description, HTTP status, hash, ...) are those of its home page: its
// crawl_count counts the captures of its home page (path "/" or empty, no
// query), whose last one read gives the facts. A capture of another page
// adds its links only, but while the host has no capture of its home page
// the page with the shortest path (the first read of equal length) stands
// in for it, with a crawl_count of 1; a capture of the home page read
// later replaces it.
func (im *importer) facts(tx *kv.Tx, n *graph.Node, p *page) error {
	key := metaStandInPrefix + strconv.FormatUint(n.ID, 10)
	standIn := tx.MetaString(key)
	home := p.path == "/"
	switch {
	case home && standIn != "":
		n.CrawlCount = 1
		if err := tx.Delete(kv.BucketMeta, []byte(key)); err != nil {
			return err
		}
	case home:
		n.CrawlCount++
	case n.CrawlCount == 0, standIn != "" && len(p.path) < len(standIn):
		n.CrawlCount = 1
		if err := tx.SetMetaString(key, p.path); err != nil {
			return err
		}
	default:
		// Another page of a host whose facts come from a better page.
		if p.date.After(n.LastCrawl) {
			n.LastCrawl = p.date
		}
		return nil
	}
	if p.date.After(n.LastCrawl) || n.LastCrawl.IsZero() {
		n.LastCrawl = p.date
	}
	n.Status = graph.StatusCrawled
	n.HTTPStatus, n.ContentType, n.Server = p.status, p.ctype, p.server
	n.Bytes, n.ContentHash = p.bytes, p.hash
	n.Title, n.Description, n.Error = p.title, p.desc, ""
	_, err := graph.NoteContentHash(tx, n)
	return err
}

// pagePath is the path by which facts chooses a host's page: "/" for
// the home page, else the path with any query.
func pagePath(u *url.URL) string {
	switch {
	case (u.Path == "" || u.Path == "/") && u.RawQuery == "":
		return "/"
	case u.Path == "" || u.Path == "/":
		return "/?" + u.RawQuery
	case u.RawQuery != "":
		return u.Path + "?" + u.RawQuery
	}
	return u.Path
}

// record turns one record into a page of the batch, or a count.
func (im *parser) record(rec *raw) error {
	switch rec.Type {
	case "response":
		return im.response(rec)
	case "metadata":
		if strings.HasPrefix(strings.ToLower(rec.ContentType), "application/json") {
			return im.wat(rec)
		}
		im.stats.Metadata++
	case "request":
		im.stats.Requests++
	case "revisit":
		im.stats.Revisits++
	default:
		im.stats.Other++
	}
	return nil
}

// source parses a record's target URI into its URL and normalised host;
// ok is false (and the record counted as other) when it has none.
func (im *parser) source(uri string) (*url.URL, string, bool) {
	u, err := url.Parse(strings.TrimSpace(uri))
	if err != nil {
		im.stats.Other++
		return nil, "", false
	}
	host, err := graph.HostOf(u)
	if err != nil {
		im.stats.Other++
		return nil, "", false
	}
	if im.scope != nil && !im.scope.MatchString(host) {
		im.stats.OutOfScope++
		return nil, "", false
	}
	return u, host, true
}

func (im *parser) response(rec *raw) error {
	status, ok := rec.HTTPStatus()
	if !ok {
		im.stats.Other++
		return nil
	}
	u, host, ok := im.source(rec.TargetURI)
	if !ok {
		return nil
	}
	h := rec.HTTPHeader()
	p := page{host: host, scheme: u.Scheme, date: rec.Date, status: status}
	switch {
	case u.Path == "/robots.txt":
		im.stats.Robots++
		return nil
	case status >= 300 && status < 400:
		im.redirect(&p, u, h.Get("Location"))
		return nil
	case status >= 400:
		im.stats.HTTPErrors++
		return nil
	case !extract.IsHTML(h.Get("Content-Type")):
		im.stats.NonHTML++
		return nil
	}
	body, err := rec.Payload()
	if err != nil {
		return err
	}
	if err := im.readBody(body, h.Get("Transfer-Encoding"), h.Get("Content-Encoding")); err != nil {
		// An answer whose encoding does not decode is still a page, as
		// the crawl parses what it could read.
		im.logf("%s: offset %d: %s: body: %v", rec.TargetURI, rec.Offset, host, err)
	}
	data := im.body.Bytes()
	sum := sha256.Sum256(data)
	p.crawled, p.path = true, pagePath(u)
	p.ctype, p.server = h.Get("Content-Type"), h.Get("Server")
	p.bytes, p.hash = int64(len(data)), hex.EncodeToString(sum[:])
	im.sel.Reset(host, im.opts.MaxOutboundLinks, im.exclude)
	info, _ := im.ex.Page(bytes.NewReader(data), u, im.sel.Add)
	p.title, p.desc = info.Title, info.Description
	if p.desc == "" {
		p.desc = p.title
	}
	p.targets = append([]pick.Target(nil), im.sel.Picked()...)
	im.stats.Pages++
	im.batch = append(im.batch, p)
	return nil
}

// redirect records a 3xx answer whose Location is on another host as an
// edge to that host.
func (im *parser) redirect(p *page, u *url.URL, location string) {
	im.stats.Redirects++
	if location == "" {
		return
	}
	to, err := u.Parse(strings.TrimSpace(location))
	if err != nil {
		return
	}
	im.sel.Reset(p.host, im.opts.MaxOutboundLinks, im.exclude)
	im.sel.Add(to)
	if len(im.sel.Picked()) == 0 {
		return
	}
	p.targets = append([]pick.Target(nil), im.sel.Picked()...)
	im.batch = append(im.batch, *p)
}

// readBody reads at most MaxBodyBytes of a payload into im.body, undoing
// chunked transfer coding and gzip or deflate content coding as an HTTP
// client would (archives keep the bytes as they were sent).
func (im *parser) readBody(r io.Reader, te, ce string) error {
	im.body.Reset()
	if strings.Contains(strings.ToLower(te), "chunked") {
		r = httputil.NewChunkedReader(r)
	}
	switch strings.ToLower(strings.TrimSpace(ce)) {
	case "gzip", "x-gzip":
		var err error
		if im.gz == nil {
			im.gz, err = gzip.NewReader(r)
		} else {
			err = im.gz.Reset(r)
		}
		if err != nil {
			return err
		}
		r = im.gz
	}
	_, err := im.body.ReadFrom(io.LimitReader(r, im.opts.MaxBodyBytes))
	return err
}
