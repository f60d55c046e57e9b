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

// errUsage marks errors in how the command was called (errors.Is).
var errUsage = errors.New("usage")

// usageError is an error in how the command was called: its message is
// all it says, and it is errUsage.
type usageError string

func (e usageError) Error() string        { return string(e) }
func (e usageError) Is(target error) bool { return target == errUsage }

// usagef is a usageError of the message format and args give.
func usagef(format string, args ...any) error { return usageError(fmt.Sprintf(format, args...)) }

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
		return usagef("want HOST=FAULT[|FAULT...], got %q", s)
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
	c := &command{stdout: stdout, stderr: stderr, faults: faultFlags{}}
	if err := c.parseFlags(args); err != nil {
		return err
	}
	return c.run(ctx)
}

// command is fakeweb's flags, once parsed, and where it writes.
type command struct {
	stdout, stderr io.Writer

	listen     string
	hosts      int
	seed       int64
	latency    time.Duration
	jitter     time.Duration
	uk         string
	printSeed  bool
	disallow   int
	delay      int
	requestLog string
	shellEvery int
	links      int
	topics     int
	pages      int
	living     int
	volatile   int
	period     time.Duration
	useTLS     bool
	caOut      string
	faults     faultFlags
	cases      string
	apexEvery  int
}

// parseFlags reads args into c and checks them.
func (c *command) parseFlags(args []string) error {
	fs := flag.NewFlagSet("fakeweb", flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.StringVar(&c.listen, "listen", "127.0.0.1:8080", "`ADDR` to listen on")
	fs.IntVar(&c.hosts, "hosts", 1000, "number of generated hosts")
	fs.Int64Var(&c.seed, "seed", 0, "seed of the generated web")
	fs.DurationVar(&c.latency, "latency", 0, "delay before every response")
	fs.DurationVar(&c.jitter, "jitter", 0, "add to each response's delay a further `DURATION` at most, drawn at random")
	fs.StringVar(&c.uk, "uk", "", "replay the host graph in `FILE` (source<TAB>target<TAB>weight lines) instead of generating one")
	fs.BoolVar(&c.printSeed, "print-seed", false, "print the seed URL and exit")
	fs.IntVar(&c.disallow, "robots-disallow-every", 0, "every `N`th host disallows / for weaver (0: default, negative: none)")
	fs.IntVar(&c.delay, "crawl-delay-every", 0, "every `N`th host sets Crawl-delay: 1 (0: default, negative: none)")
	fs.StringVar(&c.requestLog, "request-log", "", "on exit, write every request answered to `FILE` (unix-nanoseconds<TAB>host<TAB>path<TAB>status lines)")
	fs.IntVar(&c.shellEvery, "shell-every", 0, "every `N`th host is a JavaScript shell whose script adds its links (0: none)")
	fs.IntVar(&c.links, "links-per-page", 0, "mean `N` of links from a home page to other hosts (each page draws from [N/2, 3N/2]; 0: 25)")
	fs.IntVar(&c.topics, "topics", 0, "serve a topical web: sites in `N` groups that link mostly among themselves, with hubs and a few links across (fakeweb.Config.Topics; 0: links drawn from one popularity law)")
	fs.IntVar(&c.pages, "pages", 0, "serve a web of sites of `N` pages each (typed links, robots meta tags and headers, mirrors: fakeweb.NewSites) instead of home pages only")
	fs.IntVar(&c.living, "living", 0, "serve instead a web of `N` hosts h0.test … that changes while you crawl it: --volatile of them publish a new edition every --period; every home page has an ETag and a Last-Modified and answers a matching conditional request 304 Not Modified")
	fs.IntVar(&c.volatile, "volatile", -1, "with --living: how many hosts (h1.test …) change, `N` (default half)")
	fs.DurationVar(&c.period, "period", 10*time.Second, "with --living: how often a changing host publishes a new edition")
	fs.BoolVar(&c.useTLS, "tls", false, "serve HTTPS as well on the same port, with certificates from a CA made at start (write it with --ca-out); the seed is then https://")
	fs.StringVar(&c.caOut, "ca-out", "", "with --tls: write the CA's certificate (PEM) to `FILE`, for weaver crawl --ca-file FILE")
	fs.StringVar(&c.cases, "cases", "", "add the scripted hosts of `SET`: \"redirects\" answers as the real web's redirects, refreshes, cookie walls and cut bodies do (fakeweb.RedirectCases; their seeds: fakeweb.RedirectSeeds)")
	fs.IntVar(&c.apexEvery, "apex-every", 0, "every `N`th host is linked to by a twin name (its apex, or www.) that redirects to it, robots.txt included, as most real sites are (0: none)")
	fs.Var(c.faults, "fault", "give `HOST=FAULT[|FAULT...]` misbehaviours (repeatable); a HOST not in the web is added")
	fs.Usage = func() { usage(fs) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError(err.Error())
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usagef("unexpected arguments %q", fs.Args())
	}
	return c.check()
}

// usage writes fakeweb's help.
func usage(fs *flag.FlagSet) {
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
  fakeweb --hosts 10 --cases redirects      # also http://src.test/, http://apex.test/, ...: the real web's redirects
  fakeweb --hosts 1000 --apex-every 2       # half the hosts linked to by a twin name that redirects to them
  curl --connect-to ::127.0.0.1:8080 http://www.cobalt-1931.com/
`, strings.Join(names, ", "))
}

// check refuses flags out of range, and flags that do not go together.
func (c *command) check() error {
	switch {
	case c.hosts < 1:
		return usagef("--hosts must be positive, got %d", c.hosts)
	case c.shellEvery < 0:
		return usagef("--shell-every must not be negative, got %d", c.shellEvery)
	case c.topics < 0:
		return usagef("--topics must not be negative, got %d", c.topics)
	case c.links < 0:
		return usagef("--links-per-page must not be negative, got %d", c.links)
	case c.latency < 0 || c.latency > time.Hour:
		return usagef("--latency out of range: %v", c.latency)
	case c.jitter < 0 || c.jitter > time.Hour:
		return usagef("--jitter out of range: %v", c.jitter)
	case c.living > 0 && (c.pages > 0 || c.uk != "" || c.topics > 0 || c.requestLog != ""):
		return usagef("--living serves its own web: not with --pages, --uk, --topics or --request-log")
	case c.caOut != "" && !c.useTLS:
		return usagef("--ca-out needs --tls")
	case c.cases != "" && c.cases != "redirects":
		return usagef("--cases: unknown set %q (known: redirects)", c.cases)
	case c.apexEvery < 0:
		return usagef("--apex-every must not be negative, got %d", c.apexEvery)
	}
	return nil
}

// run builds the web (--living's, a web of sites, the --uk graph or a
// generated one) and serves it until ctx is done, or prints its seed.
func (c *command) run(ctx context.Context) error {
	if c.living > 0 {
		return c.serveLiving(ctx)
	}
	w, err := c.web()
	if err != nil {
		return err
	}
	if n := w.Malformed(); n > 0 {
		fmt.Fprintf(c.stderr, "fakeweb: skipped %d malformed lines of %s\n", n, c.uk)
	}
	return c.launch(ctx, w.Seed(), w.Start, w.StartTLS, w)
}

// launch prints the seed (--print-seed), or starts the web over HTTP or,
// with --tls, HTTPS (the seed then https://) and serves it until ctx is
// done; w (nil: none) keeps the request log.
func (c *command) launch(ctx context.Context, seedURL string, start, startTLS func(string) (*fakeweb.Server, error), w *fakeweb.Web) error {
	if c.useTLS {
		seedURL, start = "https://"+strings.TrimPrefix(seedURL, "http://"), startTLS
	}
	if c.printSeed {
		fmt.Fprintln(c.stdout, seedURL)
		return nil
	}
	srv, err := start(c.listen)
	if err != nil {
		return err
	}
	return c.serve(ctx, srv, seedURL, w)
}

// serve writes the CA's certificate (--ca-out), says where srv listens,
// and serves until ctx is done; then it writes w's request log
// (--request-log; w nil: none kept).
func (c *command) serve(ctx context.Context, srv *fakeweb.Server, seedURL string, w *fakeweb.Web) error {
	if c.caOut != "" {
		if err := os.WriteFile(c.caOut, srv.CAPEM(), 0o644); err != nil {
			srv.Close()
			return fmt.Errorf("--ca-out: %w", err)
		}
	}
	fmt.Fprintf(c.stdout, "fakeweb listening on %s seed %s\n", srv.Addr(), seedURL)
	<-ctx.Done()
	err := srv.Close()
	if c.requestLog != "" && w != nil {
		if werr := writeRequestLog(c.requestLog, w.Requests()); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}

// web makes the web the flags describe: a web of sites with --pages, else
// the --uk graph or a generated web.
func (c *command) web() (*fakeweb.Web, error) {
	if c.pages > 0 {
		return fakeweb.NewSites(fakeweb.SitesConfig{Hosts: c.hosts, Pages: c.pages, Seed: c.seed, Latency: c.latency}), nil
	}
	return build(fakeweb.Config{
		Hosts:               c.hosts,
		Seed:                c.seed,
		Latency:             c.latency,
		Jitter:              c.jitter,
		LinksPerPage:        c.links,
		Faults:              c.faults,
		RobotsDisallowEvery: c.disallow,
		CrawlDelayEvery:     c.delay,
		ShellEvery:          c.shellEvery,
		Topics:              c.topics,
		Scripts:             c.scripts(),
		ApexEvery:           c.apexEvery,
	}, c.uk)
}

// scripts are the scripted hosts of --cases.
func (c *command) scripts() map[string]fakeweb.Script {
	if c.cases == "redirects" {
		return fakeweb.RedirectCases()
	}
	return nil
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

// serveLiving serves a Living web of --living hosts, of which --volatile
// (< 0: half) change every --period, over HTTPS too with --tls, until ctx
// is done.
func (c *command) serveLiving(ctx context.Context) error {
	n, volatile := c.living, c.volatile
	if n < 3 {
		return usagef("--living must be 3 or more, got %d", n)
	}
	if volatile < 0 {
		volatile = n / 2
	}
	if volatile >= n || c.period <= 0 {
		return usagef("--volatile must be below --living (%d) and --period positive", n)
	}
	l := fakeweb.NewLiving(fakeweb.LivingConfig{Hosts: n, Volatile: volatile, Period: c.period})
	return c.launch(ctx, l.Seed(), l.Start, l.StartTLS, nil)
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
