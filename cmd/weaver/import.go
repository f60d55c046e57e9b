package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/ingest"
	"github.com/weaver-crawler/weaver/kv"
)

func init() {
	register(&command{Name: "import", Summary: "build or extend the host graph from WARC and WAT files", Run: runImport})
}

func runImport(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "import", "weaver import [--db FILE] [flags] FILE|DIR ...", `  weaver import crawl-00000.warc.gz crawl-00001.warc.gz
  weaver import --db web.bolt warcs/                 # every .warc, .warc.gz, .wat, .wat.gz below warcs/
  weaver import --max-outbound-links 0 CC-MAIN-*.warc.wat.gz
  weaver import --db web.bolt warcs/                 # again after a kill: continues where it stopped`)
	opts := ingest.Defaults()
	db := fs.String("db", "", "the store `FILE` to build or extend (default $WEAVER_DB_PATH, else weaver.bolt)")
	fs.IntVar(&opts.MaxOutboundLinks, "max-outbound-links", opts.MaxOutboundLinks, "distinct other hosts `N` kept per page; 0 = no limit")
	fs.Int64Var(&opts.MaxBodyBytes, "max-body-bytes", opts.MaxBodyBytes, "read at most `N` bytes of a page, as a crawl does")
	fs.Func("exclude-host", "`REGEXP` of hosts to leave out, added to the crawl's default exclusions; repeatable", func(v string) error {
		opts.ExcludeHosts = append(opts.ExcludeHosts, v)
		return nil
	})
	fs.Func("scope", "`REGEXP` on the normalised host: only records of matching hosts are imported (links to others are edges to out_of_scope nodes); repeatable", func(v string) error {
		if _, err := regexp.Compile(v); err != nil {
			return fmt.Errorf("bad regular expression: %v", err)
		}
		opts.Scope = append(opts.Scope, v)
		return nil
	})
	fs.IntVar(&opts.BatchRecords, "batch", 5000, "records `N` per transaction (more: fewer fsyncs, more memory)")
	sortMiB := fs.Int("sort-memory", 64, "`MIB` mebibytes of links held in memory (40 bytes a link): half fills while the other half is sorted and written to a run file beside the store")
	fs.IntVar(&opts.Workers, "workers", 0, "goroutines `N` parsing records (0: one per CPU); one reads, one writes, the store is the same for any N")
	progress := durationFlag(fs, "progress", 5*time.Second, "print a progress line every `DURATION`")
	quiet := fs.Bool("quiet", false, "no progress lines")
	paths, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	opts.ProgressEvery = *progress
	*db = dbPath(e, *db)
	if len(paths) == 0 {
		fs.Usage()
		return usagef("give the WARC or WAT files (or directories) to import")
	}
	if opts.MaxOutboundLinks < 0 || opts.MaxBodyBytes <= 0 || opts.BatchRecords <= 0 || opts.Workers < 0 || *sortMiB <= 0 {
		return usagef("--max-outbound-links and --workers must not be negative, --max-body-bytes, --batch and --sort-memory must be positive")
	}
	opts.SortBytes = int64(*sortMiB) << 20
	files, err := ingest.Files(paths)
	if err != nil {
		return usageError{err: err}
	}
	if len(files) == 0 {
		return usagef("no .warc, .warc.gz, .wat or .wat.gz file in %v", paths)
	}
	for _, f := range files {
		// Before the store is made: a file that is no archive is a
		// mistake of the command line, and leaves nothing behind.
		if err := checkArchive(f); err != nil {
			return usageError{err: err}
		}
	}
	store, err := kv.Open(*db, kv.Options{MapAhead: ingest.MapAhead})
	if errors.Is(err, kv.ErrInUse) {
		return inUseError(err, *db, snapshotFirst(*db, "import", "weaver import --db copy.bolt FILE …"))
	}
	if err != nil {
		return storeError(err)
	}
	defer store.Close()
	ctx, cancel := withSignals(ctx, e)
	defer cancel()
	opts.Log = func(msg string) { fmt.Fprintln(e.Stderr, "import:", msg) }
	if !*quiet {
		opts.Progress = func(p ingest.Progress) { printImportProgress(e, p) }
	}
	start := time.Now()
	st, err := ingest.Run(ctx, store, files, opts)
	var counts graph.Counts
	if verr := store.View(func(tx *kv.Tx) error { counts = graph.GetCounts(tx); return nil }); verr != nil && err == nil {
		err = verr
	}
	took := time.Since(start)
	fmt.Fprintf(e.Stdout, "imported %s (%d already imported, %d damaged): %s, %s, %s, %s, %d non-HTML%s, %s, %d robots.txt, %s, %s, %d metadata, %d other, %d out of scope; +%s, +%s, +%s in %s (%.0f records/s, %.1f MB/s)\n",
		count(st.Files, "file", ""), st.FilesSkipped, st.FilesDamaged, count(st.Records, "record", ""), humanBytes(st.Bytes), count(st.Pages, "page", ""),
		count(st.Redirects, "redirect", ""), st.NonHTML+st.BadHeaders, unparsed(st.BadHeaders), count(st.HTTPErrors, "HTTP error", ""), st.Robots, count(st.Requests, "request", ""),
		count(st.Revisits, "revisit", ""), st.Metadata, st.Other, st.OutOfScope, count(st.NodesCreated, "node", ""), count(st.EdgesCreated, "edge", ""),
		count(st.Links, "link", ""), took.Round(time.Millisecond), float64(st.Records)/took.Seconds(), float64(st.Bytes)/1e6/took.Seconds())
	fmt.Fprintf(e.Stdout, "store %s: %s, %s (total weight %d)\n", *db, count(counts.Nodes, "node", ""), count(counts.Edges, "edge", ""), counts.Weight)
	if errors.Is(err, ingest.ErrDamaged) {
		// One line per damaged file (the joined errors), then exit 1.
		return fmt.Errorf("%s, imported up to the damage:\n%w", count(st.FilesDamaged, "damaged file", ""), err)
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("stopped by a signal; run the same command to continue")
	}
	return err
}

// checkArchive reads the first bytes of path: a WARC or WAT file starts
// with "WARC/", gzip-compressed or not (an empty file holds no record).
// Anything else is refused, saying what it looks like.
func checkArchive(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, 20)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w", path, err)
	}
	head = head[:n]
	switch {
	case n == 0, bytes.HasPrefix(head, []byte("WARC/")), bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return nil
	case bytes.HasPrefix(head, []byte("SQLite format 3\x00")):
		return fmt.Errorf("%s is a SQLite database, not a WARC or WAT file: weaver import reads .warc, .warc.gz, .wat and .wat.gz files (WARC/1.0 or 1.1 records)", path)
	case n == 20 && binary.LittleEndian.Uint32(head[16:]) == 0xED0CDAED: // bbolt's magic, in its meta page
		return fmt.Errorf("%s is a bbolt file (a weaver store?), not a WARC or WAT file: to combine stores, use weaver merge", path)
	}
	return fmt.Errorf("%s is not a WARC or WAT file (it starts with %q, not \"WARC/\" or gzip's bytes): weaver import reads .warc, .warc.gz, .wat and .wat.gz files", path, head)
}

func printImportProgress(e *env, p ingest.Progress) {
	pct := 100.0
	if p.Size > 0 {
		pct = 100 * float64(p.Offset) / float64(p.Size)
	}
	secs := max(p.Elapsed.Seconds(), 1e-9)
	state := "at"
	if p.Done {
		state = "done"
	}
	// The file's own counts, which add up to the summary's; the edges are
	// merged from the links once every file is read.
	f := p.FileStats
	fmt.Fprintf(e.Stderr, "import: %s %s %.0f%% (%d/%d) | records %d (import %.0f/s, %.1f MB/s) | pages %d | nodes +%d | links +%d (merged into edges at the end)\n",
		p.File, state, pct, p.Offset, p.Size, f.Records, float64(p.Stats.Records)/secs, float64(p.Stats.Bytes)/1e6/secs,
		f.Pages, f.NodesCreated, f.Links)
}

// unparsed says how many of the non-HTML answers had HTTP headers that do
// not parse; "" for none.
func unparsed(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d with headers that do not parse)", n)
}
