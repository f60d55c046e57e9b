// Command benchrun measures weaver against the ideal and against Colly on
// the same fake internet, and prints one markdown table (also written to
// bench/RESULTS.md with the machine, the Go version and the date). It is
// what `make bench` runs, after `make build`.
//
// Every crawler and every main-module benchmark runs in a process of its
// own, so that its CPU time and peak RSS are read from its rusage: weaver
// is bin/weaver, Colly is bench/colly (built here), and the storage,
// extraction and export benchmarks are compiled with `go test -c` and run
// by name. A benchmark that does not exist yet is reported as "missing".
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		os.Exit(1)
	}
}

// errUsage marks errors in how the command was called.
var errUsage = errors.New("usage")

// sections are the parts of the run, in the order.
var sections = []string{"polite", "throughput", "cpu", "scale", "export", "micro", "rank", "cluster", "render", "warc", "links", "history", "redirects"}

// options are benchrun's flags.
type options struct {
	root            string
	pairs           int
	cpuPairs        int
	hosts           int
	hostsSmall      int
	linksHosts      int
	historyHosts    int
	historyDuration time.Duration
	hosts3          int
	hosts32         int
	latency         time.Duration
	queued          int
	seedChunk       int
	commitPages     int
	only, skip      string
	out             string
	work            string
	keep            bool
}

// harness is one benchrun invocation.
type harness struct {
	opt      options
	root     string // the main module
	benchDir string // the bench module
	work     string // scratch directory: stores, binaries, CSV files
	env      []string
	log      io.Writer
	cmdline  string
	machine  machine

	weaverBin, fakewebBin, collyBin, measureBin string
	testBins                                    map[string]*testBin

	seq   int        // numbers crawl stores
	runs  []crawlRun // every crawl, for RESULTS.md
	notes []string   // what a reader of the table needs to know
}

func (h *harness) logf(format string, a ...any) {
	fmt.Fprintf(h.log, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

// note adds a line under the table, once.
func (h *harness) note(format string, a ...any) {
	n := fmt.Sprintf(format, a...)
	if !slices.Contains(h.notes, n) {
		h.notes = append(h.notes, n)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("benchrun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.root, "root", "..", "the weaver checkout `DIR` (bin/weaver and bin/fakeweb built)")
	fs.IntVar(&o.pairs, "pairs", 5, "weaver/Colly pairs `N` per 20 ms throughput configuration (section 2)")
	fs.IntVar(&o.cpuPairs, "cpu-pairs", 3, "weaver/Colly pairs `N` per zero-latency configuration (section 3)")
	fs.IntVar(&o.hosts, "hosts", 20000, "fakeweb hosts `N` of the large zero-latency crawls (section 3)")
	fs.IntVar(&o.linksHosts, "links-hosts", 20000, "fakeweb hosts `N` of the 40-links page shape (section 11)")
	fs.IntVar(&o.historyHosts, "history-hosts", 5000, "fakeweb hosts `N` of the revisit crawl (section 12)")
	fs.DurationVar(&o.historyDuration, "history-duration", 40*time.Second, "how long `D` the revisit crawl of section 12 runs")
	fs.IntVar(&o.hostsSmall, "hosts-small", 2000, "fakeweb hosts `N` of the small zero-latency crawls (section 3)")
	fs.IntVar(&o.hosts3, "hosts-3", 1000, "fakeweb hosts `N` of the 3-worker 20 ms crawls")
	fs.IntVar(&o.hosts32, "hosts-32", 5000, "fakeweb hosts `N` of the 32-worker 20 ms crawls")
	fs.DurationVar(&o.latency, "latency", 20*time.Millisecond, "fakeweb latency `D` of the throughput crawls")
	fs.IntVar(&o.queued, "queued", 1_000_000, "hosts `N` queued for the scale measurements (section 4)")
	fs.IntVar(&o.seedChunk, "seed-chunk", 100_000, "seeds `N` given to one weaver process while queueing the scale frontier")
	fs.IntVar(&o.commitPages, "commit-pages", 20000, "pages `N` per BenchmarkCommitPages run (its -benchtime Nx)")
	fs.StringVar(&o.only, "only", "", "run only these `SECTIONS` (comma-separated: "+strings.Join(sections, ",")+")")
	fs.StringVar(&o.skip, "skip", "", "skip these `SECTIONS` (comma-separated)")
	fs.StringVar(&o.out, "out", "", "write the results to `FILE` (default RESULTS.md in the bench module; \"-\": nowhere)")
	fs.StringVar(&o.work, "work", "", "scratch `DIR` (default: a new temporary directory, removed at the end)")
	fs.BoolVar(&o.keep, "keep", false, "keep the scratch directory")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: benchrun [flags]

Measure weaver against the ideal and against Colly on fakeweb and print one
markdown table; write it with the machine, Go version and date to
bench/RESULTS.md. Sections: 0 polite (the defaults: 1 s delay, robots.txt,
100,000 hosts at 20 ms, 3 and 32 workers), 1-2 throughput (20 ms latency, 3 and 32 workers,
weaver and Colly alternately), 3 cpu (zero latency, robots off and on),
4 scale (1M queued hosts), 5 export, 6 micro, 7 rank (PageRank and
HyperBall on 1M hosts / 10M edges), 8 cluster, 9 render, 10 warc, 11 links
(40 links a page, every link kept: CPU per page and per link, bytes per
edge), 12 history (unchanged revisits: the store's growth per revisit, the
history's page fill), 13 redirects (the bundled web, and with every second
host behind a twin name that redirects: requests by kind, pages fetched
twice). Progress goes to stderr.

Flags:
`)
		fs.PrintDefaults()
		fmt.Fprintf(fs.Output(), `
Examples:
  make bench                                    # make build, then the full run (~10 min on 2 cores)
  go run ./cmd/benchrun --root ..               # from bench/, after make build
  go run ./cmd/benchrun --root .. --only throughput --pairs 5
  go run ./cmd/benchrun --root .. --hosts 5000 --cpu-pairs 1 --queued 200000 --out -   # a quick look
  go run ./cmd/benchrun --root .. --only links --links-hosts 2000 --cpu-pairs 1 --out -
  go run ./cmd/benchrun --root .. --only history --out RESULTS-history.md
`)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	want, err := chosen(o.only, o.skip)
	if err != nil {
		return err
	}
	if o.pairs < 1 || o.cpuPairs < 1 || o.hosts < 2 || o.hostsSmall < 2 || o.hosts3 < 2 || o.hosts32 < 2 || o.queued < 1 || o.seedChunk < 1 || o.commitPages < 1 ||
		o.historyHosts < 2 || o.historyDuration <= 0 {
		return fmt.Errorf("%w: counts must be positive", errUsage)
	}

	h := &harness{opt: o, log: stderr, testBins: map[string]*testBin{}, cmdline: "benchrun " + strings.Join(args, " ")}
	if h.root, err = filepath.Abs(o.root); err != nil {
		return err
	}
	// The bench module is the working directory (go run ./cmd/benchrun
	// from bench/), else ROOT/bench.
	h.benchDir = filepath.Join(h.root, "bench")
	if wd, err := os.Getwd(); err == nil {
		if _, err := os.Stat(filepath.Join(wd, "colly", "main.go")); err == nil {
			h.benchDir = wd
		}
	}
	h.weaverBin = filepath.Join(h.root, "bin", "weaver")
	h.fakewebBin = filepath.Join(h.root, "bin", "fakeweb")
	for _, b := range []string{h.weaverBin, h.fakewebBin} {
		if _, err := os.Stat(b); err != nil {
			return fmt.Errorf("%w: %s: run make build first (%v)", errUsage, b, err)
		}
	}
	if o.work != "" {
		h.work, err = filepath.Abs(o.work)
		if err == nil {
			err = os.MkdirAll(h.work, 0o755)
		}
	} else {
		h.work, err = os.MkdirTemp("", "weaver-bench-")
	}
	if err != nil {
		return err
	}
	if !o.keep && o.work == "" {
		defer os.RemoveAll(h.work)
	}
	if err := os.MkdirAll(filepath.Join(h.work, "bin"), 0o755); err != nil {
		return err
	}
	h.env = childEnv(h.work)
	h.machine = describeMachine("go")
	start := time.Now()
	h.logf("scratch directory %s; load average %s", h.work, h.machine.LoadStart)

	h.collyBin = filepath.Join(h.work, "bin", "colly")
	h.measureBin = filepath.Join(h.work, "bin", "measure")
	h.logf("building bench/colly and bench/cmd/measure")
	for pkg, bin := range map[string]string{"./colly": h.collyBin, "./cmd/measure": h.measureBin} {
		if _, err := h.run(ctx, h.benchDir, "go", "build", "-o", bin, pkg); err != nil {
			return err
		}
	}

	var rows []row
	steps := map[string]func(context.Context) ([]row, error){
		"polite": h.polite, "throughput": h.throughput, "cpu": h.cpu, "scale": h.scale, "export": h.export, "micro": h.micro,
		"rank": h.ranks, "cluster": h.clusterSection, "render": h.renderSection, "warc": h.warcSection,
		"links": h.linksSection, "history": h.historySection, "redirects": h.redirectsSection,
	}
	for _, s := range sections {
		if !want[s] {
			continue
		}
		h.logf("section %s", s)
		before := load1()
		r, err := steps[s](ctx)
		for i := range r {
			if r[i].Load == "" { // the section's span: its rows' runs are its own
				r[i].Load = fmt.Sprintf("%.2f–%.2f", min(before, load1()), max(before, load1()))
			}
		}
		rows = append(rows, r...)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// One broken section must not hide the others' figures.
			rows = append(rows, row{Metric: s + ": stopped by an error", Weaver: "error", Met: "error"})
			h.note("section %s stopped: %v", s, err)
			h.logf("section %s stopped: %v", s, err)
		}
	}

	fmt.Fprint(stdout, table(rows))
	if len(h.notes) > 0 {
		fmt.Fprintln(stdout)
		for _, n := range h.notes {
			fmt.Fprintf(stdout, "- %s\n", n)
		}
	}
	out := o.out
	if out == "" {
		out = filepath.Join(h.benchDir, "RESULTS.md")
	}
	if out != "-" {
		if err := os.WriteFile(out, h.results(start, rows), 0o644); err != nil {
			return err
		}
		h.logf("wrote %s", out)
	}
	return nil
}

// chosen turns --only and --skip into the set of sections to run.
func chosen(only, skip string) (map[string]bool, error) {
	known := map[string]bool{}
	for _, s := range sections {
		known[s] = true
	}
	parse := func(list string) (map[string]bool, error) {
		m := map[string]bool{}
		for _, s := range strings.Split(list, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			if !known[s] {
				return nil, fmt.Errorf("%w: unknown section %q (want %s)", errUsage, s, strings.Join(sections, ","))
			}
			m[s] = true
		}
		return m, nil
	}
	o, err := parse(only)
	if err != nil {
		return nil, err
	}
	sk, err := parse(skip)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, s := range sections {
		want[s] = (len(o) == 0 || o[s]) && !sk[s]
	}
	return want, nil
}
