// Command fakeweb serves the fake internet of package fakeweb on one port:
// thousands of virtual hosts, chosen by the Host header, for trying and
// benchmarking weaver without touching the real web.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "fakeweb:", err)
	}
	os.Exit(exitCode(err))
}

// errUsage marks errors in how the command was called.
var errUsage = errors.New("usage")

// exitCode maps an error from run to the process exit code: 0 ok (or help),
// 2 usage or bad input, 1 any other failure.
func exitCode(err error) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage), errors.Is(err, fakeweb.ErrNoEdges), errors.Is(err, fakeweb.ErrUnknownFault),
		errors.Is(err, os.ErrNotExist):
		return 2
	}
	return 1
}

// faultFlags collects repeated --fault HOST=NAMES flags.
type faultFlags map[string]fakeweb.Fault

func (f faultFlags) String() string {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + f[k].String()
	}
	return strings.Join(parts, ",")
}

func (f faultFlags) Set(s string) error {
	host, names, ok := strings.Cut(s, "=")
	if !ok || host == "" {
		return fmt.Errorf("want HOST=FAULT[|FAULT...], got %q: %w", s, errUsage)
	}
	fault, err := fakeweb.ParseFault(names)
	if err != nil {
		return err
	}
	f[host] |= fault
	return nil
}

// run parses args, builds the web and serves it until ctx is done, writing the
// ready line to stdout and diagnostics to stderr. It returns flag.ErrHelp for
// -h, an error wrapping errUsage for bad flags, and the errors of reading
// --uk or listening.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fakeweb", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8080", "`ADDR` to listen on")
	hosts := fs.Int("hosts", 1000, "number of generated hosts")
	seed := fs.Int64("seed", 0, "seed of the generated web")
	latency := fs.Duration("latency", 0, "delay before every response")
	jitter := fs.Duration("jitter", 0, "add to each response's delay a further `DURATION` at most, drawn at random")
	uk := fs.String("uk", "", "replay the host graph in `FILE` (source<TAB>target<TAB>weight lines) instead of generating one")
	printSeed := fs.Bool("print-seed", false, "print the seed URL and exit")
	disallow := fs.Int("robots-disallow-every", 0, "every `N`th host disallows / for weaver (0: default, negative: none)")
	delay := fs.Int("crawl-delay-every", 0, "every `N`th host sets Crawl-delay: 1 (0: default, negative: none)")
	requestLog := fs.String("request-log", "", "on exit, write every request answered to `FILE` (unix-nanoseconds<TAB>host<TAB>path<TAB>status lines)")
	shellEvery := fs.Int("shell-every", 0, "every `N`th host is a JavaScript shell whose script adds its links (0: none)")
	links := fs.Int("links-per-page", 0, "mean `N` of links from a home page to other hosts (each page draws from [N/2, 3N/2]; 0: 25)")
	topics := fs.Int("topics", 0, "serve a topical web: sites in `N` groups that link mostly among themselves, with hubs and a few links across (fakeweb.Config.Topics; 0: links drawn from one popularity law)")
	pages := fs.Int("pages", 0, "serve a web of sites of `N` pages each (typed links, robots meta tags and headers, mirrors: fakeweb.NewSites) instead of home pages only")
	living := fs.Int("living", 0, "serve instead a web of `N` hosts h0.test … that changes while you crawl it: --volatile of them publish a new edition every --period; every home page has an ETag and a Last-Modified and answers a matching conditional request 304 Not Modified")
	volatile := fs.Int("volatile", -1, "with --living: how many hosts (h1.test …) change, `N` (default half)")
	period := fs.Duration("period", 10*time.Second, "with --living: how often a changing host publishes a new edition")
	useTLS := fs.Bool("tls", false, "serve HTTPS as well on the same port, with certificates from a CA made at start (write it with --ca-out); the seed is then https://")
	caOut := fs.String("ca-out", "", "with --tls: write the CA's certificate (PEM) to `FILE`, for weaver crawl --ca-file FILE")
	faults := faultFlags{}
	fs.Var(faults, "fault", "give `HOST=FAULT[|FAULT...]` misbehaviours (repeatable); a HOST not in the web is added")
	fs.Usage = func() {
		var names []string
		for _, f := range fakeweb.AllFaults() {
			names = append(names, f.String())
		}
		fmt.Fprintf(fs.Output(), `Usage: fakeweb [flags]

Serve a deterministic fake web of many virtual hosts on one port. Reach it
with curl --connect-to ::HOST:PORT (or weaver's connect_to), or use it as an
HTTP proxy. It prints "fakeweb listening on ADDR seed URL" when ready and
serves until interrupted.

Flags:
`)
		fs.PrintDefaults()
		fmt.Fprintf(fs.Output(), `
Faults: %s

Examples:
  fakeweb --hosts 1000 --seed 7
  fakeweb --print-seed --hosts 1000 --seed 7
  fakeweb --listen 127.0.0.1:0 --latency 50ms --fault bomb.test=GzipBomb --fault slow.test=SlowDrip
  fakeweb --hosts 3000 --latency 2ms --jitter 20ms --crawl-delay-every 10
  fakeweb --hosts 1000 --shell-every 10      # one home page in ten needs a browser
  fakeweb --uk ../shared/data/webgraph/uk1996-ac-uk-subgraph.tsv
  fakeweb --hosts 200 --pages 6
  fakeweb --hosts 300 --topics 8 --seed 1   # the web make demo crawls
  fakeweb --living 50 --period 30s          # a web that changes: try weaver crawl --revisit
  fakeweb --tls --ca-out ca.pem             # HTTPS: weaver crawl --ca-file ca.pem
  curl --connect-to ::127.0.0.1:8080 http://www.cobalt-1931.com/
`, strings.Join(names, ", "))
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected arguments %q: %w", fs.Args(), errUsage)
	}
	if *hosts < 1 {
		return fmt.Errorf("--hosts must be positive, got %d: %w", *hosts, errUsage)
	}
	if *shellEvery < 0 {
		return fmt.Errorf("--shell-every must not be negative, got %d: %w", *shellEvery, errUsage)
	}
	if *topics < 0 {
		return fmt.Errorf("--topics must not be negative, got %d: %w", *topics, errUsage)
	}
	if *links < 0 {
		return fmt.Errorf("--links-per-page must not be negative, got %d: %w", *links, errUsage)
	}
	if *latency < 0 || *latency > time.Hour {
		return fmt.Errorf("--latency out of range: %v: %w", *latency, errUsage)
	}
	if *jitter < 0 || *jitter > time.Hour {
		return fmt.Errorf("--jitter out of range: %v: %w", *jitter, errUsage)
	}

	if *living > 0 {
		if *useTLS || *pages > 0 || *uk != "" || *topics > 0 {
			return fmt.Errorf("--living serves its own web: not with --tls, --pages, --uk or --topics: %w", errUsage)
		}
		return serveLiving(ctx, stdout, *listen, *living, *volatile, *period, *printSeed)
	}
	if *caOut != "" && !*useTLS {
		return fmt.Errorf("--ca-out needs --tls: %w", errUsage)
	}

	cfg := fakeweb.Config{
		Hosts:               *hosts,
		Seed:                *seed,
		Latency:             *latency,
		Jitter:              *jitter,
		LinksPerPage:        *links,
		Faults:              faults,
		RobotsDisallowEvery: *disallow,
		CrawlDelayEvery:     *delay,
		ShellEvery:          *shellEvery,
		Topics:              *topics,
	}
	var w *fakeweb.Web
	var err error
	if *pages > 0 {
		w = fakeweb.NewSites(fakeweb.SitesConfig{Hosts: *hosts, Pages: *pages, Seed: *seed, Latency: *latency})
	} else if w, err = build(cfg, *uk); err != nil {
		return err
	}
	if n := w.Malformed(); n > 0 {
		fmt.Fprintf(stderr, "fakeweb: skipped %d malformed lines of %s\n", n, *uk)
	}
	seedURL := w.Seed()
	start := w.Start
	if *useTLS {
		seedURL = "https://" + strings.TrimPrefix(seedURL, "http://")
		start = w.StartTLS
	}
	if *printSeed {
		fmt.Fprintln(stdout, seedURL)
		return nil
	}
	srv, err := start(*listen)
	if err != nil {
		return err
	}
	if *caOut != "" {
		if err := os.WriteFile(*caOut, srv.CAPEM(), 0o644); err != nil {
			srv.Close()
			return fmt.Errorf("--ca-out: %w", err)
		}
	}
	fmt.Fprintf(stdout, "fakeweb listening on %s seed %s\n", srv.Addr(), seedURL)
	<-ctx.Done()
	err = srv.Close()
	if *requestLog != "" {
		if werr := writeRequestLog(*requestLog, w.Requests()); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}

// writeRequestLog writes reqs, one TSV line each, to path.
func writeRequestLog(path string, reqs []fakeweb.Request) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--request-log: %w", err)
	}
	bw := bufio.NewWriter(f)
	for _, r := range reqs {
		fmt.Fprintf(bw, "%d\t%s\t%s\t%d\n", r.At.UnixNano(), r.Host, r.Path, r.Status)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("--request-log: %w", err)
	}
	return f.Close()
}

// serveLiving serves a Living web of n hosts, of which volatile (< 0:
// half) change every period, until ctx is done.
func serveLiving(ctx context.Context, stdout io.Writer, listen string, n, volatile int, period time.Duration, printSeed bool) error {
	if n < 3 {
		return fmt.Errorf("--living must be 3 or more, got %d: %w", n, errUsage)
	}
	if volatile < 0 {
		volatile = n / 2
	}
	if volatile >= n || period <= 0 {
		return fmt.Errorf("--volatile must be below --living (%d) and --period positive: %w", n, errUsage)
	}
	l := fakeweb.NewLiving(fakeweb.LivingConfig{Hosts: n, Volatile: volatile, Period: period})
	if printSeed {
		fmt.Fprintln(stdout, l.Seed())
		return nil
	}
	srv, err := l.Start(listen)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "fakeweb listening on %s seed %s\n", srv.Addr(), l.Seed())
	<-ctx.Done()
	return srv.Close()
}

// build generates the web, or replays the graph in file when it is not "".
func build(cfg fakeweb.Config, file string) (*fakeweb.Web, error) {
	if file == "" {
		return fakeweb.New(cfg), nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("--uk: %w", err)
	}
	defer f.Close()
	w, err := fakeweb.FromEdges(f, cfg)
	if err != nil {
		return nil, fmt.Errorf("--uk %s: %w", file, err)
	}
	return w, nil
}
