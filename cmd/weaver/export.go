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
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/layout"
	"github.com/weaver-crawler/weaver/outfile"
	"github.com/weaver-crawler/weaver/rank"
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
	c := &exportCommand{e: e}
	if err := c.ParseFlags(args); err != nil {
		return err
	}
	return c.Run(ctx)
}

// exportCommand is weaver export: ParseFlags reads and checks the command
// line, Run opens the store, checks every file it is to write, and
// writes them.
type exportCommand struct {
	e *env

	db          string
	paths       map[export.Format]*string // a single-file format's FILE
	minWeight   *uint64
	crawledOnly bool
	domains     bool
	force       bool
	noLayout    bool
	noRanks     bool
	noMirrors   bool
	at          string
	weights     string
	top         *int64
	by          string
	timeline    bool
	ccPrefix    string
	csvPrefix   string

	set      map[string]bool // the flags given
	atTime   time.Time       // --at's; zero: the store as it is
	wts      export.Weights  // --weights
	targets  []exportTarget  // the single-file formats given, in their order
	toStdout int             // how many of them write to stdout
}

// flagSet defines weaver export's flags on c.
func (c *exportCommand) flagSet() *flag.FlagSet {
	fs := newFlagSet(c.e, "export", exportSynopsis, exportExamples)
	fs.StringVar(&c.db, "db", "", "the weaver store `FILE` to export, opened read-only (default $WEAVER_DB_PATH, else weaver.bolt)")
	c.paths = map[export.Format]*string{
		export.FormatSQLite:  fs.String("sqlite", "", "write a SQLite database (tables nodes and edges, see the README) to `FILE`"),
		export.FormatGraphML: fs.String("graphml", "", "write GraphML to `FILE` (stdout without FILE or with -)"),
		export.FormatDOT:     fs.String("dot", "", "write Graphviz DOT to `FILE` (stdout without FILE or with -)"),
		export.FormatJSON:    fs.String("json", "", "write node-link JSON to `FILE` (stdout without FILE or with -)"),
		export.FormatHTML:    fs.String("html", "", "write the map page, one self-contained HTML file, to `FILE` (stdout without FILE or with -)"),
		export.FormatGEXF:    fs.String("gexf", "", "write GEXF 1.2 for Gephi and networkx to `FILE` (stdout without FILE or with -)"),
	}
	c.minWeight = uintFlag(fs, "min-weight", 0, "leave out edges of weight below `N`")
	fs.BoolVar(&c.crawledOnly, "crawled-only", false, "only hosts that were fetched, and the edges between them")
	fs.BoolVar(&c.domains, "domains", false, "collapse hosts into registrable domains, summing weights (self-loops dropped)")
	fs.BoolVar(&c.force, "force", false, "replace existing files (never the store)")
	fs.BoolVar(&c.noLayout, "no-layout", false, "leave out community, x and y (computed when the store's layout, from weaver layout, is missing or stale)")
	fs.BoolVar(&c.noRanks, "no-ranks", false, "compute no ranks: no pagerank or harmonic on nodes, no node_ranks table (faster, less memory on a big store)")
	fs.BoolVar(&c.noMirrors, "no-mirrors", false, "leave out mirror copies (hosts whose home page is an earlier host's) and their edges")
	fs.StringVar(&c.at, "at", "", "export the graph as it was at `TIME` (RFC 3339, e.g. 2026-03-03T12:00:00Z, or now): nodes seen by then, edges present then, each weighted by its source's last crawl at or before then; node attributes as then where the crawl history has them, as_of says how far")
	c.top = rangeFlag(fs, "top", 1, math.MaxInt32, "keep only the `N` highest hosts (by --by) and the edges among them: the core of a large crawl")
	fs.StringVar(&c.weights, "weights", string(export.WeightsAll), "what an edge's `WEIGHT` counts: all (the pages that linked, summed over every crawl: a host revisited often weighs more) or latest (its source's latest crawl only)")
	fs.StringVar(&c.by, "by", string(export.TopPageRank), "what --top ranks hosts by, a `MEASURE`: pagerank, harmonic or in-weight (ties by host name)")
	fs.BoolVar(&c.timeline, "gexf-timeline", false, "with --gexf, over a crawl history: a dynamic graph Gephi's timeline plays (hosts from their first sighting, links while their source's crawls had them); networkx cannot read it")
	fs.StringVar(&c.ccPrefix, "cc-hostgraph", "", "write Common Crawl's host graph text format to `PREFIX`-vertices.txt.gz and PREFIX-edges.txt.gz")
	fs.StringVar(&c.csvPrefix, "csv", "", "write CSV (RFC 4180, a header row) to `PREFIX`-nodes.csv and PREFIX-edges.csv")
	return fs
}

// ParseFlags reads weaver export's command line and checks it: which
// formats, to which files, with which filters.
func (c *exportCommand) ParseFlags(args []string) error {
	fs := c.flagSet()
	isFlag := func(arg string) bool {
		name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-"), "=")
		return strings.HasPrefix(arg, "-") && fs.Lookup(name) != nil
	}
	if err := parseFlags(fs, exportArgs(args, isFlag)); err != nil {
		return err
	}
	c.db = dbPath(c.e, c.db)
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (a format flag takes at most one FILE)", fs.Arg(0))
	}
	if c.at != "" {
		t, err := parseAt(c.at, time.Now)
		if err != nil {
			return usagef("--at: %v", err)
		}
		c.atTime = t
	}
	wts, err := export.ParseWeights(c.weights)
	if err != nil {
		return usageError{err: err}
	}
	c.wts = wts
	c.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { c.set[f.Name] = true })
	if c.set["weights"] && c.set["at"] && wts == export.WeightsLatest {
		return usagef("--weights latest and --at: an export at a time weighs each edge by its source's crawl by then; give one of them")
	}
	if err := c.chooseTargets(); err != nil {
		return err
	}
	if err := c.checkCombinations(); err != nil {
		return err
	}
	return c.checkPaths()
}

// chooseTargets lists the single-file formats given, in their order: a
// FILE of - is stdout, which SQLite cannot be written to.
func (c *exportCommand) chooseTargets() error {
	for _, f := range []export.Format{export.FormatSQLite, export.FormatGraphML, export.FormatDOT, export.FormatJSON, export.FormatHTML, export.FormatGEXF} {
		if !c.set[string(f)] {
			continue
		}
		path := *c.paths[f]
		if path == "-" {
			path = ""
		}
		if path == "" {
			if f == export.FormatSQLite {
				return usagef("--sqlite needs a FILE: a database is built as a file (--sqlite /dev/stdout copies it to stdout once built)")
			}
			c.toStdout++
		}
		c.targets = append(c.targets, exportTarget{f, path})
	}
	return nil
}

// checkCombinations refuses flags that need a value or another flag
// they were not given, and a command line with no format, or with two
// to stdout.
func (c *exportCommand) checkCombinations() error {
	if c.set["cc-hostgraph"] && c.ccPrefix == "" {
		return usagef("--cc-hostgraph needs a PREFIX")
	}
	if c.set["csv"] && c.csvPrefix == "" {
		return usagef("--csv needs a PREFIX")
	}
	// A format of several files has no stdout form: "-" made files named
	// --nodes.csv and --edges.csv.
	if c.csvPrefix == "-" {
		return usagef("--csv -: CSV is two files (PREFIX-nodes.csv, PREFIX-edges.csv) and cannot go to stdout; give a PREFIX")
	}
	if c.ccPrefix == "-" {
		return usagef("--cc-hostgraph -: the host graph is two files (PREFIX-vertices.txt.gz, PREFIX-edges.txt.gz) and cannot go to stdout; give a PREFIX")
	}
	if c.timeline && !c.set["gexf"] {
		return usagef("--gexf-timeline needs --gexf")
	}
	if c.set["by"] && !c.set["top"] {
		return usagef("--by needs --top N")
	}
	if !slices.Contains(export.TopMeasures, export.TopMeasure(c.by)) {
		return usagef("--by %q: one of pagerank, harmonic, in-weight", c.by)
	}
	switch {
	case len(c.targets) == 0 && c.ccPrefix == "" && c.csvPrefix == "":
		return usageHelpf("no format given: choose one or more of --sqlite FILE, --graphml [FILE], --dot [FILE], --json [FILE], --html [FILE], --gexf [FILE], --csv PREFIX, --cc-hostgraph PREFIX")
	case c.toStdout > 1:
		return usagef("only one format can be written to stdout; give the others a FILE")
	}
	return nil
}

// checkPaths refuses two formats written to one file.
func (c *exportCommand) checkPaths() error {
	seen := map[string]export.Format{}
	for _, t := range c.targets {
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
	return nil
}

// Run opens the store, checks every file before any is written, so that
// a refused one does not come after others were already replaced, and
// writes them, until a signal stops it.
func (c *exportCommand) Run(ctx context.Context) error {
	rs, err := openReading(ctx, c.db, "")
	if err != nil {
		return err
	}
	defer rs.Close()
	s := rs.Store
	if rs.Copy != "" {
		fmt.Fprintf(c.e.Stderr, "weaver export: %s is in use by a running crawl: exporting a snapshot of it taken now\n", c.db)
	}
	if err := c.checkTargets(s); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if c.e.Signals != nil {
		go func() {
			select {
			case <-c.e.Signals:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	opt, err := c.options(ctx, s)
	if err != nil {
		return err
	}
	for _, t := range c.targets {
		if err := c.write(ctx, s, t, opt); err != nil {
			return err
		}
	}
	if c.ccPrefix != "" {
		if err := c.writeCCHostGraph(ctx, s, opt); err != nil {
			return err
		}
	}
	if c.csvPrefix != "" {
		return c.writeCSV(ctx, s, opt)
	}
	return nil
}

// checkTargets checks every file to be written (export.CheckTarget).
func (c *exportCommand) checkTargets(s *kv.Store) error {
	var files []exportTarget
	for _, t := range c.targets {
		if t.path != "" {
			files = append(files, t)
		}
	}
	if c.ccPrefix != "" {
		vpath, epath := export.CCHostGraphFiles(c.ccPrefix)
		files = append(files, exportTarget{export.FormatCCHostGraph, vpath}, exportTarget{export.FormatCCHostGraph, epath})
	}
	if c.csvPrefix != "" {
		npath, epath := export.CSVFiles(c.csvPrefix)
		files = append(files, exportTarget{export.FormatCSV, npath}, exportTarget{export.FormatCSV, epath})
	}
	for _, f := range files {
		if err := export.CheckTarget(s, f.path, f.format, c.force); err != nil {
			return exportError(err)
		}
		if outfile.SameFile(f.path, c.db) {
			// A snapshot is read: the store itself is c.db.
			return exportError(fmt.Errorf("%s %w", f.path, export.ErrWouldOverwriteStore))
		}
	}
	return nil
}

// options are the export's options, the same for every file. Every
// target but the Common Crawl one carries the hosts' layout: without a
// fresh one in the store, the graph is laid out once here, for all of
// them, and said so: on a big store it is most of the time.
func (c *exportCommand) options(ctx context.Context, s *kv.Store) (export.Options, error) {
	opt := export.Options{
		MinWeight: *c.minWeight, CrawledOnly: c.crawledOnly, Domains: c.domains,
		Force: c.force, NoRanks: c.noRanks, NoLayout: c.noLayout, NoMirrors: c.noMirrors, Version: Version, At: c.atTime,
		Weights: c.wts, Top: int(*c.top), TopBy: export.TopMeasure(c.by), GEXFTimeline: c.timeline,
		// Every file has the same filters: the graph is ranked once.
		Ranks: &export.RankCache{},
	}
	if !c.atTime.IsZero() {
		c.warnEarlyAt(s)
	}
	avail, from := availableMemory()
	if err := c.fitMemory(s, &opt, avail, from); err != nil {
		return opt, err
	}
	if opt.NoLayout || c.domains || !c.atTime.IsZero() || (len(c.targets) == 0 && c.csvPrefix == "") {
		return opt, nil
	}
	lay, took, err := layoutForExport(ctx, s)
	if errors.Is(err, context.Canceled) {
		return opt, errors.New("interrupted: nothing written")
	}
	if err != nil {
		return opt, err
	}
	if lay != nil {
		opt.Layout = lay
		fmt.Fprintf(c.e.Stderr, "weaver export: laid out %s in memory in %s: the store has no layout of its graph as it is now (weaver layout --db %s stores one for the next exports)\n",
			count(lay.Stamp.Nodes, "host", ""), took.Round(time.Millisecond), c.db)
	}
	return opt, nil
}

// fitMemory leaves the ranks and the layout out of opt when computing
// them would take more memory than the machine (or the process's control
// group) has left, each with one line saying so and how to get them,
// instead of running out of memory hours in: rank.MemoryNeed and
// layout.MemoryNeed estimate from the store's counts, before anything is
// read. A fresh stored layout (weaver layout) needs no computing. --top,
// which ranks the hosts to choose them, stops instead.
// avail is what is left, from where it is read (availableMemory).
func (c *exportCommand) fitMemory(s *kv.Store, opt *export.Options, avail uint64, from string) error {
	if avail == 0 || (opt.NoRanks && opt.NoLayout && opt.Top == 0) {
		return nil
	}
	var counts graph.Counts
	fresh := false
	if err := s.View(func(tx *kv.Tx) error {
		counts, fresh = graph.GetCounts(tx), layout.Fresh(tx)
		return nil
	}); err != nil {
		return err
	}
	if need := rank.MemoryNeed(counts.Nodes, counts.Edges); need > avail && (!opt.NoRanks || opt.Top > 0) {
		if opt.Top > 0 {
			return usagef("--top ranks the hosts, which for %s takes %s: export without --top, or on a machine with more memory",
				graphSize(counts), memoryLeft(need, avail, from))
		}
		opt.NoRanks = true
		fmt.Fprintf(c.e.Stderr, "weaver export: ranks left out: for %s they take %s; an export on a machine with more memory computes them; --no-ranks leaves them out without this note\n",
			graphSize(counts), memoryLeft(need, avail, from))
	}
	computed := !fresh || c.domains || !c.atTime.IsZero()
	if need := layout.MemoryNeed(counts.Nodes, counts.Edges); !opt.NoLayout && computed && need > avail {
		opt.NoLayout = true
		fmt.Fprintf(c.e.Stderr, "weaver export: layout left out: for %s it takes %s; weaver layout --db %s on a machine with more memory stores one that exports then read; --no-layout leaves it out without this note\n",
			graphSize(counts), memoryLeft(need, avail, from), c.db)
	}
	return nil
}

// write writes one single-file format, to its file or to stdout, and
// says what it wrote.
func (c *exportCommand) write(ctx context.Context, s *kv.Store, t exportTarget, opt export.Options) error {
	var st export.Stats
	var err error
	name := t.path
	if t.path == "" {
		name = "stdout"
		st, err = export.Write(ctx, c.e.Stdout, s, t.format, opt)
	} else {
		st, err = export.WriteFile(ctx, s, t.path, t.format, opt)
	}
	if err != nil {
		return notWritten(err, name)
	}
	fmt.Fprintf(c.e.Stderr, "weaver export: %s: %s, %s, %s, total weight %d\n",
		name, t.format, count(st.Nodes, "node", ""), count(st.Edges, "edge", ""), st.Weight)
	if t.format == export.FormatHTML {
		if note := bigMapNote(st.Nodes); note != "" {
			fmt.Fprintf(c.e.Stderr, "weaver export: %s: %s\n", name, note)
		}
	}
	return nil
}

// writeCCHostGraph writes Common Crawl's host graph files.
func (c *exportCommand) writeCCHostGraph(ctx context.Context, s *kv.Store, opt export.Options) error {
	st, err := export.CCHostGraph(ctx, s, c.ccPrefix, opt)
	if err != nil {
		return notWritten(err, c.ccPrefix)
	}
	fmt.Fprintf(c.e.Stderr, "weaver export: %s: %s, %d vertices, %d edges\n", c.ccPrefix, export.FormatCCHostGraph, st.Nodes, st.Edges)
	return nil
}

// writeCSV writes the two CSV files.
func (c *exportCommand) writeCSV(ctx context.Context, s *kv.Store, opt export.Options) error {
	st, err := export.CSV(ctx, s, c.csvPrefix, opt)
	if err != nil {
		return notWritten(err, c.csvPrefix)
	}
	npath, epath := export.CSVFiles(c.csvPrefix)
	fmt.Fprintf(c.e.Stderr, "weaver export: %s, %s: %s, %s, %s, total weight %d\n",
		npath, epath, export.FormatCSV, count(st.Nodes, "node", ""), count(st.Edges, "edge", ""), st.Weight)
	return nil
}

// notWritten is the error of name, a file (or files) not written: an
// interruption says so, export's errors are exportError's.
func notWritten(err error, name string) error {
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("interrupted: %s not written", name)
	}
	return exportError(err)
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
// a flag of export's (isFlag: its name, with its dashes) gets an empty
// value, which ParseFlags reports; followed by another word that starts
// with '-', it is refused as a FILE flag's value (parseFlags). The values
// of the other flags are skipped over, so "--db --dot" means a store named
// "--dot", as package flag reads it, and is refused as such.
func exportArgs(args []string, isFlag func(arg string) bool) []string {
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
		case name == "sqlite" && (i+1 == len(args) || isFlag(args[i+1])):
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
		// A bare date is its midnight, UTC.
		if d, derr := time.Parse(time.DateOnly, s); derr == nil {
			return d.UTC(), nil
		}
		return time.Time{}, fmt.Errorf("%q is not a time: want RFC 3339 (2026-03-03T12:00:00Z), a date (2026-03-03: its midnight UTC) or now", s)
	}
	return t.UTC(), nil
}

// warnEarlyAt says, in one line, when --at is before anything the store
// saw: the graph then is empty, which is no mistake of the export's.
func (c *exportCommand) warnEarlyAt(s *kv.Store) {
	var first time.Time
	_ = s.View(func(tx *kv.Tx) error {
		return graph.ForEachNode(tx, func(n *graph.Node) error {
			if !n.FirstSeen.IsZero() && (first.IsZero() || n.FirstSeen.Before(first)) {
				first = n.FirstSeen
			}
			return nil
		})
	})
	if !first.IsZero() && c.atTime.Before(first) {
		fmt.Fprintf(c.e.Stderr, "weaver export: warning: --at %s is before the store's first host was seen (%s): the graph was empty then\n",
			c.atTime.Format(time.RFC3339), first.UTC().Format(time.RFC3339))
	}
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
