package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/layout"
)

func init() {
	register(&command{
		Name:    "export",
		Summary: "write the graph as SQLite, GraphML, DOT, JSON, GEXF, CSV or an HTML map",
		Run:     runExport,
	})
}

const exportSynopsis = `weaver export [--db weaver.bolt] (--sqlite FILE | --graphml [FILE] | --dot [FILE] | --json [FILE] | --html [FILE] | --gexf [FILE] | --csv PREFIX | --cc-hostgraph PREFIX) [flags]

Writes the store's host graph in one or more formats. A format flag without
FILE, or with -, writes to stdout (at most one format may). Files are built
under a temporary name and renamed into place when complete; an existing
file is replaced only with --force. A device or pipe (/dev/stdout) is
written in place. --html writes the map page: one self-contained file a
browser opens from disk. --cc-hostgraph writes PREFIX-vertices.txt.gz and
PREFIX-edges.txt.gz, the text form of Common Crawl's host-level graphs
(reversed host names). --csv writes PREFIX-nodes.csv and PREFIX-edges.csv.`

const exportExamples = `  weaver export --sqlite crawler.db
  weaver export --dot | dot -Tsvg > map.svg
  weaver export --graphml map.graphml --json map.json --crawled-only
  weaver export --db crawl.bolt --domains --min-weight 3 --dot domains.dot
  weaver export --html map.html
  weaver export --db huge.bolt --no-ranks --graphml huge.graphml
  weaver export --cc-hostgraph ac-uk --no-mirrors
  weaver export --csv crawl
  weaver export --db huge.bolt --top 200 --by in-weight --gexf core.gexf
  weaver export --gexf-timeline --gexf crawl.gexf`

// exportFlagsWithOptionalFile are the format flags whose FILE may be left
// out; exportFlagsWithValue the other flags that take a value.
var (
	exportFlagsWithOptionalFile = map[string]bool{"graphml": true, "dot": true, "json": true, "html": true, "gexf": true}
	exportFlagsWithValue        = map[string]bool{"db": true, "sqlite": true, "min-weight": true, "cc-hostgraph": true, "csv": true, "top": true, "by": true}
)

// exportTarget is one format to write, to a file or to stdout.
type exportTarget struct {
	format export.Format
	path   string // "" for stdout
}

func runExport(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "export", exportSynopsis, exportExamples)
	db := fs.String("db", "", "the weaver store `FILE` to export, opened read-only (default $WEAVER_DB_PATH, else weaver.bolt)")
	paths := map[export.Format]*string{
		export.FormatSQLite:  fs.String("sqlite", "", "write a SQLite database (tables nodes and edges, see the README) to `FILE`"),
		export.FormatGraphML: fs.String("graphml", "", "write GraphML to `FILE` (stdout without FILE or with -)"),
		export.FormatDOT:     fs.String("dot", "", "write Graphviz DOT to `FILE` (stdout without FILE or with -)"),
		export.FormatJSON:    fs.String("json", "", "write node-link JSON to `FILE` (stdout without FILE or with -)"),
		export.FormatHTML:    fs.String("html", "", "write the map page, one self-contained HTML file, to `FILE` (stdout without FILE or with -)"),
		export.FormatGEXF:    fs.String("gexf", "", "write GEXF 1.2 for Gephi and networkx to `FILE` (stdout without FILE or with -)"),
	}
	minWeight := uintFlag(fs, "min-weight", 0, "leave out edges of weight below `N`")
	crawledOnly := fs.Bool("crawled-only", false, "only hosts that were fetched, and the edges between them")
	domains := fs.Bool("domains", false, "collapse hosts into registrable domains, summing weights (self-loops dropped)")
	force := fs.Bool("force", false, "replace existing files (never the store)")
	noLayout := fs.Bool("no-layout", false, "leave out community, x and y (computed when the store's layout, from weaver layout, is missing or stale)")
	noRanks := fs.Bool("no-ranks", false, "compute no ranks: no pagerank or harmonic on nodes, no node_ranks table (faster, less memory on a big store)")
	noMirrors := fs.Bool("no-mirrors", false, "leave out mirror copies (hosts whose home page is an earlier host's) and their edges")
	at := fs.String("at", "", "export the graph as it was at `TIME` (RFC 3339, e.g. 2026-03-03T12:00:00Z, or now): nodes seen by then, edges present then, each weighted by its source's last crawl at or before then; node attributes as then where the crawl history has them, as_of says how far")
	top := rangeFlag(fs, "top", 1, math.MaxInt32, "keep only the `N` highest hosts (by --by) and the edges among them: the core of a large crawl")
	by := fs.String("by", string(export.TopPageRank), "what --top ranks hosts by, a `MEASURE`: pagerank, harmonic or in-weight (ties by host name)")
	timeline := fs.Bool("gexf-timeline", false, "with --gexf, over a crawl history: a dynamic graph Gephi's timeline plays (hosts from their first sighting, links while their source's crawls had them); networkx cannot read it")
	ccPrefix := fs.String("cc-hostgraph", "", "write Common Crawl's host graph text format to `PREFIX`-vertices.txt.gz and PREFIX-edges.txt.gz")
	csvPrefix := fs.String("csv", "", "write CSV (RFC 4180, a header row) to `PREFIX`-nodes.csv and PREFIX-edges.csv")
	if err := parseFlags(fs, exportArgs(args)); err != nil {
		return err
	}
	*db = dbPath(e, *db)
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (a format flag takes at most one FILE)", fs.Arg(0))
	}
	var atTime time.Time
	if *at != "" {
		t, err := parseAt(*at, time.Now)
		if err != nil {
			return usagef("--at: %v", err)
		}
		atTime = t
	}

	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var targets []exportTarget
	toStdout := 0
	for _, f := range []export.Format{export.FormatSQLite, export.FormatGraphML, export.FormatDOT, export.FormatJSON, export.FormatHTML, export.FormatGEXF} {
		if !set[string(f)] {
			continue
		}
		path := *paths[f]
		if path == "-" {
			path = ""
		}
		if path == "" {
			if f == export.FormatSQLite {
				return usagef("--sqlite needs a FILE: a database is built as a file (--sqlite /dev/stdout copies it to stdout once built)")
			}
			toStdout++
		}
		targets = append(targets, exportTarget{f, path})
	}
	if set["cc-hostgraph"] && *ccPrefix == "" {
		return usagef("--cc-hostgraph needs a PREFIX")
	}
	if set["csv"] && *csvPrefix == "" {
		return usagef("--csv needs a PREFIX")
	}
	// A format of several files has no stdout form: "-" made files named
	// --nodes.csv and --edges.csv.
	if *csvPrefix == "-" {
		return usagef("--csv -: CSV is two files (PREFIX-nodes.csv, PREFIX-edges.csv) and cannot go to stdout; give a PREFIX")
	}
	if *ccPrefix == "-" {
		return usagef("--cc-hostgraph -: the host graph is two files (PREFIX-vertices.txt.gz, PREFIX-edges.txt.gz) and cannot go to stdout; give a PREFIX")
	}
	if *timeline && !set["gexf"] {
		return usagef("--gexf-timeline needs --gexf")
	}
	if set["by"] && !set["top"] {
		return usagef("--by needs --top N")
	}
	if !slices.Contains(export.TopMeasures, export.TopMeasure(*by)) {
		return usagef("--by %q: one of pagerank, harmonic, in-weight", *by)
	}
	switch {
	case len(targets) == 0 && *ccPrefix == "" && *csvPrefix == "":
		return usageHelpf("no format given: choose one or more of --sqlite FILE, --graphml [FILE], --dot [FILE], --json [FILE], --html [FILE], --gexf [FILE], --csv PREFIX, --cc-hostgraph PREFIX")
	case toStdout > 1:
		return usagef("only one format can be written to stdout; give the others a FILE")
	}
	seen := map[string]export.Format{}
	for _, t := range targets {
		if t.path == "" {
			continue
		}
		abs, err := filepath.Abs(t.path)
		if err != nil {
			return usagef("%s: %v", t.path, err)
		}
		if other, ok := seen[abs]; ok {
			return usagef("--%s and --%s both write %s", other, t.format, t.path)
		}
		seen[abs] = t.format
	}

	s, err := kv.Open(*db, kv.Options{ReadOnly: true})
	if errors.Is(err, kv.ErrInUse) {
		return inUseError(err, *db, func(base string) string {
			return fmt.Sprintf("export a copy (weaver snapshot --db %s copy.bolt && weaver export --db copy.bolt …), or download the graph so far: curl '%s/graph?format=graphml' (or json, dot)", *db, base)
		})
	}
	if err != nil {
		return storeError(err)
	}
	defer s.Close()
	// Every target is checked before any is written, so that a refused
	// one does not come after others were already replaced.
	for _, t := range targets {
		if t.path != "" {
			if err := export.CheckTarget(s, t.path, t.format, *force); err != nil {
				return exportError(err)
			}
		}
	}
	if *ccPrefix != "" {
		vpath, epath := export.CCHostGraphFiles(*ccPrefix)
		for _, p := range []string{vpath, epath} {
			if err := export.CheckTarget(s, p, export.FormatCCHostGraph, *force); err != nil {
				return exportError(err)
			}
		}
	}
	if *csvPrefix != "" {
		npath, epath := export.CSVFiles(*csvPrefix)
		for _, p := range []string{npath, epath} {
			if err := export.CheckTarget(s, p, export.FormatCSV, *force); err != nil {
				return exportError(err)
			}
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if e.Signals != nil {
		go func() {
			select {
			case <-e.Signals:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	opt := export.Options{
		MinWeight: *minWeight, CrawledOnly: *crawledOnly, Domains: *domains,
		Force: *force, NoRanks: *noRanks, NoLayout: *noLayout, NoMirrors: *noMirrors, Version: Version, At: atTime,
		Top: int(*top), TopBy: export.TopMeasure(*by), GEXFTimeline: *timeline,
		// Every file has the same filters: the graph is ranked once.
		Ranks: &export.RankCache{},
	}
	// Every target but the Common Crawl one carries the hosts' layout.
	// Without a fresh one in the store, lay the graph out once here, for
	// all of them, and say so: on a big store it is most of the time.
	if !*noLayout && !*domains && atTime.IsZero() && (len(targets) > 0 || *csvPrefix != "") {
		lay, took, err := layoutForExport(ctx, s)
		if errors.Is(err, context.Canceled) {
			return errors.New("interrupted: nothing written")
		}
		if err != nil {
			return err
		}
		if lay != nil {
			opt.Layout = lay
			fmt.Fprintf(e.Stderr, "weaver export: laid out %s in memory in %s: the store has no layout of its graph as it is now (weaver layout --db %s stores one for the next exports)\n",
				count(lay.Stamp.Nodes, "host", ""), took.Round(time.Millisecond), *db)
		}
	}
	for _, t := range targets {
		var st export.Stats
		var err error
		name := t.path
		if t.path == "" {
			name = "stdout"
			st, err = export.Write(ctx, e.Stdout, s, t.format, opt)
		} else {
			st, err = export.WriteFile(ctx, s, t.path, t.format, opt)
		}
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("interrupted: %s not written", name)
		}
		if err != nil {
			return exportError(err)
		}
		fmt.Fprintf(e.Stderr, "weaver export: %s: %s, %s, %s, total weight %d\n",
			name, t.format, count(st.Nodes, "node", ""), count(st.Edges, "edge", ""), st.Weight)
		if t.format == export.FormatHTML {
			if note := bigMapNote(st.Nodes); note != "" {
				fmt.Fprintf(e.Stderr, "weaver export: %s: %s\n", name, note)
			}
		}
	}
	if *ccPrefix != "" {
		st, err := export.CCHostGraph(ctx, s, *ccPrefix, opt)
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("interrupted: %s not written", *ccPrefix)
		}
		if err != nil {
			return exportError(err)
		}
		fmt.Fprintf(e.Stderr, "weaver export: %s: %s, %d vertices, %d edges\n", *ccPrefix, export.FormatCCHostGraph, st.Nodes, st.Edges)
	}
	if *csvPrefix != "" {
		st, err := export.CSV(ctx, s, *csvPrefix, opt)
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("interrupted: %s not written", *csvPrefix)
		}
		if err != nil {
			return exportError(err)
		}
		npath, epath := export.CSVFiles(*csvPrefix)
		fmt.Fprintf(e.Stderr, "weaver export: %s, %s: %s, %s, %s, total weight %d\n",
			npath, epath, export.FormatCSV, count(st.Nodes, "node", ""), count(st.Edges, "edge", ""), st.Weight)
	}
	return nil
}

// exportError turns the errors that say the command line named the wrong
// file into usage errors (exit 2).
func exportError(err error) error {
	for _, bad := range []error{
		export.ErrWouldOverwriteStore, export.ErrExists, export.ErrIsDirectory,
		fs.ErrNotExist, // a target in a missing directory
	} {
		if errors.Is(err, bad) {
			return usageError{err: err}
		}
	}
	return err
}

// exportArgs rewrites args so that package flag, which has no optional
// values, can parse them: a format flag whose FILE is optional and that
// is followed by nothing or by another flag gets "-" (stdout); one
// followed by a word gets it as its value. --sqlite followed by nothing or
// a flag gets an empty value, which runExport reports. The values of the
// other flags are skipped over, so "--db --dot" means a store named
// "--dot", as package flag reads it.
func exportArgs(args []string) []string {
	out := make([]string, 0, len(args)+2)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...) // flag parsing stops here
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			out = append(out, a) // an argument: flags may follow it
			continue
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if strings.Contains(name, "=") {
			out = append(out, a)
			continue
		}
		switch {
		case exportFlagsWithOptionalFile[name]:
			if i+1 < len(args) && (args[i+1] == "-" || !strings.HasPrefix(args[i+1], "-")) {
				out = append(out, a+"="+args[i+1])
				i++
			} else {
				out = append(out, a+"=-")
			}
		case name == "sqlite" && (i+1 == len(args) || strings.HasPrefix(args[i+1], "-") && args[i+1] != "-"):
			out = append(out, a+"=") // no FILE: reported as such, not a file named "--dot"
		case exportFlagsWithValue[name] && i+1 < len(args):
			out = append(out, a, args[i+1])
			i++
		default:
			out = append(out, a)
		}
	}
	return out
}

// parseAt reads a time for --at, --from and --to: RFC 3339 (with or
// without fractional seconds), or now.
func parseAt(s string, now func() time.Time) (time.Time, error) {
	if s == "now" {
		return now().UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a time: want RFC 3339 (2026-03-03T12:00:00Z) or now", s)
	}
	return t.UTC(), nil
}

// layoutForExport returns a layout of the store's graph computed now and
// how long it took, or nil when the store holds a fresh one.
func layoutForExport(ctx context.Context, s *kv.Store) (*layout.Stored, time.Duration, error) {
	start := time.Now()
	var lay *layout.Stored
	err := s.View(func(tx *kv.Tx) error {
		if layout.Fresh(tx) {
			return nil
		}
		var err error
		lay, err = layout.ComputeStored(ctx, tx, layout.Options{})
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("layout: %w", err)
	}
	return lay, time.Since(start), nil
}

// mapComfort is the most hosts a map page is measured to draw well on a
// laptop without a GPU (docs/map.md: 20,000 hosts pan at 47–58
// frames/s); five times that still opens, slowly.
const mapComfort = 100_000

// bigMapNote is what an HTML export of nodes hosts says beside its
// summary: nothing for a map a browser draws, else that it will not and
// what to export instead.
func bigMapNote(nodes uint64) string {
	if nodes <= mapComfort {
		return ""
	}
	return fmt.Sprintf("a map of %s is more than a browser draws (it is measured up to %s); --top 20000 maps the core of the graph, and --gexf opens in Gephi",
		count(nodes, "host", ""), count(mapComfort, "host", ""))
}
