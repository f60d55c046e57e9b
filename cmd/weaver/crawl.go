package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/cluster"
	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/crawlwarc"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/outfile"
	"github.com/weaver-crawler/weaver/render"
	"github.com/weaver-crawler/weaver/serve"
	"github.com/weaver-crawler/weaver/warc"
)

func init() {
	register(&command{Name: "crawl", Summary: "crawl from seed URLs (or resume) into the store", Run: runCrawl})
}

func runCrawl(ctx context.Context, e *env, args []string) error {
	c := &crawlCommand{e: e}
	if err := c.ParseFlags(args); err != nil {
		return err
	}
	return c.Run(ctx)
}

// crawlCommand is weaver crawl. ParseFlags reads its flags; Run makes
// the configuration, checks everything that can refuse the start, opens
// the store, and crawls. Each step keeps what the steps after it need.
type crawlCommand struct {
	e *env

	flags crawlFlagValues // ParseFlags'

	cfg   crawl.Config
	seeds []string   // the seed URLs given as arguments, else the config's
	file  *seedsFile // seeds_file, checked whole; nil: none, or read into seeds (a cluster)

	auth    serve.Auth
	ln      net.Listener // --listen's, or a loopback port's (private), bound before the store is opened; nil: none
	private bool         // ln is the loopback API for this machine's readers, not --listen's
	// listenNote is a warning of listen's, said once the log is set up.
	listenNote string
	logf       func(level, msg string)
	crawlLog   func(level, msg string) // the crawler's lines: logf, or the live line's
	live       *liveLine               // the progress line redrawn on a terminal; nil: none
	store      *kv.Store
	node       *cluster.Node // a cluster shard's; nil: none
	crawler    *crawl.Crawler
	started    bool // the crawl ran: its store is kept, whatever it returns

	cleanups []func() // what Run closes when it returns, last opened first
}

// ParseFlags reads weaver crawl's command line.
func (c *crawlCommand) ParseFlags(args []string) error {
	fs := newFlagSet(c.e, "crawl", "weaver crawl [flags] [SEED_URL ...]", `  weaver crawl https://example.com
  weaver crawl --workers 8 --max-depth 3 --delay 2s https://example.com https://example.org
  weaver crawl --config crawl.json          # seeds and limits from a file
  weaver crawl --db weaver.bolt             # resume a stopped crawl, by the settings it started with
  weaver crawl --connect-to ::127.0.0.1:8080 http://www.example.com/   # every host to one local server`)
	c.flags.define(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	c.flags.args = fs.Args()
	if c.flags.noWarc && c.flags.gives("warc_dir") {
		return usageHelpf("--warc and --no-warc: give one")
	}
	return nil
}

// Run crawls, or resumes, by the flags ParseFlags read.
func (c *crawlCommand) Run(ctx context.Context) error {
	defer c.close()
	for _, step := range []func() error{c.config, c.seedArgs, c.validate, c.openSeedsFile, c.checkStart, c.listen} {
		if err := step(); err != nil {
			return err
		}
	}
	c.startLog()
	if c.listenNote != "" {
		c.logf("WARN", c.listenNote)
	}
	if err := c.openStore(ctx); err != nil {
		return err
	}
	if err := c.recordSettings(); err != nil {
		return err
	}
	if err := c.newCrawler(); err != nil {
		return err
	}
	if err := c.prepare(); err != nil {
		return err
	}
	return c.run(ctx)
}

// onClose has Run call f when it returns, before what was opened earlier
// is closed (as a defer in Run would).
func (c *crawlCommand) onClose(f func()) { c.cleanups = append(c.cleanups, f) }

func (c *crawlCommand) close() {
	for i := len(c.cleanups) - 1; i >= 0; i-- {
		c.cleanups[i]()
	}
}

// config makes the configuration from its sources (see buildConfig):
// first without stored settings, to learn where the store is, then with
// the settings stored there, if any. A stored warc_dir that is gone, or a
// browser that cannot be found for --render, is refused now, before
// anything is written.
func (c *crawlCommand) config() error {
	cfg, err := c.flags.buildConfig(c.e, nil, "")
	if err != nil {
		return err
	}
	if stored := storedSettings(cfg.DBPath); stored != nil {
		if cfg, err = c.flags.buildConfig(c.e, stored, cfg.DBPath); err != nil {
			return err
		}
	}
	c.cfg = cfg
	if err := checkStoredWarcDir(&c.cfg); err != nil {
		return err
	}
	if err := checkStoredCAFile(&c.cfg); err != nil {
		return err
	}
	if err := checkStoredMetrics(&c.cfg); err != nil {
		return err
	}
	if cfg.Render != crawl.RenderNever && cfg.Render != "" {
		if _, err := render.FindBrowser(cfg.Browser, c.e.Getenv); err != nil {
			if src := cfg.Source("browser"); src != "" {
				return usagef("--render %s: %v (the browser is from the %s)", cfg.Render, err, src)
			}
			return usagef("--render %s: %v", cfg.Render, err)
		}
	}
	return nil
}

// seedArgs checks the seed URLs given as arguments; none given, the
// config's are the seeds.
func (c *crawlCommand) seedArgs() error {
	c.seeds = c.flags.args
	for _, s := range c.seeds {
		if _, err := crawl.ParseFailCauses(s); err == nil && c.flags.retryFailed.set && !strings.Contains(s, ":") {
			return usagef("%q is not a seed URL: write --retry-failed=%s", s, s)
		}
		if err := crawl.CheckSeed(s); err != nil {
			return usageError{err: err}
		}
	}
	if len(c.seeds) == 0 {
		c.seeds = c.cfg.Seeds()
	}
	return nil
}

// validate checks every value of the configuration, and metrics_path,
// which is refused now rather than after the crawl, when it is written.
func (c *crawlCommand) validate() error {
	if err := c.cfg.Validate(); err != nil {
		return usageError{err: err}
	}
	if c.cfg.MetricsPath != "" {
		if _, err := outfile.Resolve(c.cfg.MetricsPath); err != nil {
			return usageError{err: fmt.Errorf("metrics_path: %w", err)}
		}
	}
	return nil
}

// openSeedsFile checks a seeds file whole, streaming, before anything is
// written; Prepare reads it again to queue its seeds. A cluster's are
// read into the seeds: it names its crawl by the set of its seeds, and
// stores them.
func (c *crawlCommand) openSeedsFile() error {
	if c.cfg.SeedsFile == "" {
		return nil
	}
	file, err := openSeedsFile(c.e, c.cfg.SeedsFile)
	if err != nil {
		return err
	}
	c.onClose(func() { file.Close() })
	if file.n, err = crawl.CheckSeeds(c.cfg, file.Seeds()); err != nil {
		return usageError{err: err}
	}
	if file.n == 0 {
		return usagef("seeds file %s holds no seed URL (one a line; # starts a comment)", file.name)
	}
	if c.cfg.Cluster != "" {
		if err := file.Seeds()(func(s string) error { c.seeds = append(c.seeds, s); return nil }); err != nil {
			return usageError{err: err}
		}
		return nil
	}
	c.file = file
	return nil
}

// checkStart refuses a start with nothing to crawl, a seed the crawl
// would refuse, or a WARC directory that cannot be written. Everything
// that can refuse the start is checked before the store, the WARC
// directory or metrics.log is created: a refused start leaves nothing
// behind for the next bare 'weaver crawl' to resume.
func (c *crawlCommand) checkStart() error {
	if len(c.seeds) == 0 && c.file == nil {
		if _, err := os.Stat(c.cfg.DBPath); err != nil {
			return usageHelpf("nothing to crawl: give a seed URL, or --db an existing store to resume (%s does not exist)", c.cfg.DBPath)
		}
	}
	if _, err := crawl.CheckSeeds(c.cfg, crawl.SeedList(c.seeds)); err != nil {
		return usageError{err: err}
	}
	if c.cfg.WarcDir != "" {
		if err := warc.CheckDir(c.cfg.WarcDir); err != nil {
			return usagef("warc_dir: %v", err)
		}
	}
	return nil
}

// listen binds --listen before the store is opened, so that a bad or
// busy address, or one exposed without a token, fails before anything is
// written.
func (c *crawlCommand) listen() error {
	auth, err := apiAuth(c.e, c.cfg.TokenFile, c.cfg.MetricsPublic)
	if err != nil {
		return err
	}
	if err := checkExposure(c.cfg.Listen, auth); err != nil {
		return err
	}
	ln, err := listenIfSet(c.cfg.Listen)
	if err != nil && !strings.HasPrefix(c.cfg.Source("listen"), "settings stored in ") {
		return err
	}
	if err != nil {
		// The address an earlier run served on is taken now: the crawl
		// goes on, serving this machine's readers as below.
		c.listenNote = fmt.Sprintf("Status API: the stored listen %s cannot be bound (%v): serving on loopback only; give --listen ADDR for another address", c.cfg.Listen, err)
	}
	if ln == nil {
		// Without --listen the crawl still answers this machine's weaver
		// status, show, rank, export, snapshot and diff: on a loopback
		// port of its own, behind a fresh token that only the file
		// beside the store (mode 0600) holds.
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			c.listenNote = fmt.Sprintf("Status API: no loopback port (%v): weaver status and export will not reach this crawl while it runs", err)
			c.auth = auth
			return nil
		}
		// A token of its own, whatever WEAVER_TOKEN says: the file beside
		// the store never holds the user's.
		auth = serve.Auth{Token: freshToken()}
		c.private = true
	}
	c.onClose(func() { ln.Close() })
	c.auth, c.ln = auth, ln
	return nil
}

// freshToken is a token no one else knows: 128 random bits, in hex.
func freshToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on Linux
	return hex.EncodeToString(b[:])
}

// startLog chooses where the log lines go: lines of text or JSON, and on
// a terminal the progress line redrawn in place.
func (c *crawlCommand) startLog() {
	logger := newLogger(c.e.Stdout, c.cfg.JSONLogs)
	c.logf, c.crawlLog = logger.log, logger.log
	if !c.cfg.Quiet && !c.cfg.JSONLogs && isTerminal(c.e.Stdout) {
		c.live = newLiveLine(c.e.Stdout, logger.log)
		c.logf, c.crawlLog = c.live.Log, c.live.CrawlerLog
	}
}

// openStore opens the store, or for a cluster shard reaches the NATS
// server, and checks the crawl's configuration there, before the store
// is created.
func (c *crawlCommand) openStore(ctx context.Context) error {
	if c.cfg.Cluster != "" {
		node, store, err := joinCluster(ctx, c.e, &c.cfg, c.seeds, c.logf)
		if err != nil {
			return err
		}
		c.onClose(func() { store.Close() })
		c.onClose(func() { node.Close() })
		c.node, c.store = node, store
		c.logf("INFO", fmt.Sprintf("Cluster: shard %s of crawl %s on %s", c.cfg.Shard, node.Name(), cluster.Redact(c.cfg.Cluster)))
	} else if err := c.openLocal(); err != nil {
		return err
	}
	// This process holds the store's lock: an address beside it, or in its
	// meta, was left by a crawl that did not exit cleanly.
	os.Remove(archive.ListenPath(c.cfg.DBPath))
	return nil
}

// openLocal opens the store of a crawl that is not a cluster's shard.
func (c *crawlCommand) openLocal() error {
	path := c.cfg.DBPath
	_, statErr := os.Lstat(path)
	fresh := errors.Is(statErr, os.ErrNotExist)
	store, err := kv.Open(path, kv.Options{})
	if errors.Is(err, kv.ErrInUse) {
		return inUseError(err, path, func(base string) string {
			return fmt.Sprintf("watch it with 'weaver status --db %s', add seeds with curl -d '{\"url\": \"…\"}' %s/seeds, or crawl into another --db", path, base)
		})
	} else if err != nil {
		return storeError(err)
	}
	c.store = store
	c.onClose(func() { store.Close() })
	if fresh {
		// A store this run created is removed when the start is
		// refused after all (a seed Prepare rejects, a WARC directory
		// that fails to open): the checks before should have said so.
		c.onClose(func() {
			if !c.started {
				store.Close()
				os.Remove(path)
			}
		})
	}
	return checkNotShard(store)
}

// recordSettings stores the settings before anything is queued, so that
// every run on the store, this one's first, resumes by them, and says
// how they differ from those the store held.
func (c *crawlCommand) recordSettings() error {
	var old crawl.Settings
	crawled := false // the store held nodes: a crawl ran on it before
	if err := c.store.Update(func(tx *kv.Tx) error {
		old, _ = crawl.ReadSettings(tx) // a damaged record is replaced by this run's
		crawled = graph.GetCounts(tx).Nodes > 0
		if err := crawl.PutSettings(tx, c.cfg.Settings()); err != nil {
			return err
		}
		if tx.MetaString(metaListenAddr) == "" {
			return nil
		}
		return tx.SetMetaString(metaListenAddr, "")
	}); err != nil {
		return err
	}
	logSettings(c.logf, c.cfg, old, crawled)
	return nil
}

// newCrawler makes the crawler, with its WARC writer, browser pool and
// cluster peer when the configuration asks for them.
func (c *crawlCommand) newCrawler() error {
	proxy, err := proxyFunc(c.e)
	if err != nil {
		return err
	}
	opts := crawl.Options{Proxy: proxy, Log: c.crawlLog, RetryFailed: c.flags.retryFailed.causes, ForceMetrics: c.flags.force}
	if c.cfg.WarcDir != "" {
		w, err := c.openWarc()
		if err != nil {
			return err
		}
		opts.Archive = w
	}
	if c.cfg.Render != crawl.RenderNever {
		pool, err := newRenderPool(c.e, c.cfg.Browser, &c.cfg, proxy, func(r *http.Request) error { return c.crawler.RenderPolicy(r) }, c.logf)
		if err != nil {
			return err
		}
		c.onClose(func() { pool.Close() })
		opts.Renderer = render.ForCrawl{Pool: pool}
	}
	if c.node != nil {
		opts.Peer = c.node
	}
	if c.crawler, err = crawl.New(c.cfg, c.store, opts); err != nil {
		return usageError{err: err}
	}
	return nil
}

// openWarc opens the WARC writer of --warc, closed (and its figures
// said) when Run returns, and records its directory and file prefix in
// the store's meta.
func (c *crawlCommand) openWarc() (*crawlwarc.Archive, error) {
	w, err := openWarc(&c.cfg, c.store, c.logf)
	if err != nil {
		return nil, err
	}
	c.onClose(func() {
		st := w.Stats()
		if err := w.Close(); err != nil {
			c.logf("ERROR", "WARC: "+err.Error())
		}
		c.logf("INFO", fmt.Sprintf("WARC: %s, %s, %d bytes in %s", count(st.Files, "file", ""), count(st.Records, "record", ""), st.Bytes, c.cfg.WarcDir))
	})
	// c.cfg.WarcDir is absolute (buildConfig).
	return w, c.store.Update(func(tx *kv.Tx) error { return crawlwarc.RecordDir(tx, &c.cfg) })
}

// prepare queues the seeds (or recovers a stopped crawl's leases) and
// says what the crawl starts from; a cluster shard then starts its node.
func (c *crawlCommand) prepare() error {
	src := crawl.SeedList(c.seeds)
	if c.file != nil {
		src = concatSeeds(src, c.file.Seeds())
	}
	prepared, err := c.crawler.PrepareSeeds(src)
	if err != nil {
		var ce *crawl.ConfigError
		if errors.As(err, &ce) || errors.Is(err, crawl.ErrSeed) {
			return usageError{err: err}
		}
		return err
	}
	switch file, seeds := c.file, c.seeds; {
	case file != nil && len(seeds) > 0:
		c.logf("INFO", fmt.Sprintf("Starting crawl from %s and %s in %s", strings.Join(seeds, ", "), count(file.n, "seed", ""), file.name))
	case file != nil:
		c.logf("INFO", fmt.Sprintf("Starting crawl from %s in %s", count(file.n, "seed", ""), file.name))
	case len(seeds) > 0:
		c.logf("INFO", "Starting crawl from "+strings.Join(seeds, ", "))
	default:
		c.logf("INFO", "Resuming crawl in "+c.cfg.DBPath)
	}
	if n := prepared.Recovered; n > 0 {
		c.logf("INFO", fmt.Sprintf("Recovered %s left by a stopped crawl", count(n, "in-flight entry", "in-flight entries")))
	}
	if n := prepared.Queued; n > 0 {
		c.logf("INFO", fmt.Sprintf("Queued %s at depth 0", count(n, "entry", "entries")))
	}
	if n := prepared.Requeued; n > 0 {
		c.logf("INFO", fmt.Sprintf("A known seed and an empty frontier: re-queued %s at their depth, for another round", count(n, "host", "")))
	}
	if c.node != nil {
		return c.node.Start(c.crawler)
	}
	return nil
}

// run crawls until the crawl ends or a signal (or POST /stop) stops it,
// serving the status API meanwhile; a second signal exits at once.
func (c *crawlCommand) run(ctx context.Context) error {
	runCtx, cancelCause := context.WithCancelCause(ctx)
	cancel := func() { cancelCause(nil) }
	defer cancel()
	if c.ln != nil {
		// POST /stop cancels runCtx: the same graceful stop as SIGTERM,
		// recorded as termination reason api_stop.
		defer startStatusServer(c.ln, c.crawler, c.store, func() { cancelCause(crawl.ErrStopRequested) }, c.auth, c.private, c.logf)()
	}
	go c.stopOnSignals(runCtx, cancel)
	if c.live != nil {
		c.live.Start(c.crawler.Status)
	}
	c.started = true
	res, err := c.crawler.Run(runCtx)
	if c.live != nil {
		c.live.Stop()
	}
	c.logf("INFO", fmt.Sprintf("Crawl ended (%s): %s fetched, %d failed, %d skipped, %s, %s, %.1f pages/s",
		res.TerminationReason, count(res.PagesFetched, "page", ""), res.PagesFailed, res.PagesSkipped,
		count(res.TotalNodes, "node", ""), count(res.TotalEdges, "edge", ""), res.PagesPerSecond))
	if err != nil {
		return err
	}
	return reachedNothing(res)
}

// stopOnSignals cancels the crawl at the first signal, and exits at the
// second, until runCtx ends.
func (c *crawlCommand) stopOnSignals(runCtx context.Context, cancel func()) {
	select {
	case <-c.e.Signals:
	case <-runCtx.Done():
		return
	}
	cancel()
	select {
	case <-c.e.Signals:
		c.logf("WARN", "Second signal: exiting now (the store holds only whole pages)")
		os.Exit(130)
	case <-runCtx.Done():
	}
}

// reachedNothing is the error of a crawl that ended by itself having
// tried pages and received not one answer (offline, a wrong proxy, every
// seed failing): exit 1 and one line that says so. A crawl stopped by a
// signal, or with nothing left to do, exits 0 as seed 000 says.
func reachedNothing(res crawl.Result) error {
	if res.TerminationReason == crawl.ReasonSignal || res.TerminationReason == crawl.ReasonAPIStop || res.PagesAnswered > 0 || res.RobotsFetched > 0 || res.PagesFailed == 0 {
		return nil
	}
	kinds := make([]string, 0, len(res.ErrorsByType))
	var advice []string
	for k, n := range res.ErrorsByType {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		if a := crawl.Advice(crawl.ErrorKind(k)); a != "" {
			advice = append(advice, a)
		}
	}
	sort.Strings(kinds)
	sort.Strings(advice)
	if len(advice) > 0 {
		return fmt.Errorf("nothing could be fetched: %s failed (%s); %s",
			plural(res.PagesFailed, "page"), strings.Join(kinds, ", "), strings.Join(advice, "; "))
	}
	return fmt.Errorf("nothing could be fetched: %s failed (%s); check the network, the proxy variables or --connect-to",
		plural(res.PagesFailed, "page"), strings.Join(kinds, ", "))
}

// plural writes n and noun, with an s unless n is 1.
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// newRenderPool starts the browser pool of --render: the browser from
// --browser, WEAVER_BROWSER or PATH (none: exit 2 naming --browser), a tab
// per worker, and every request through the crawl's own transport and
// policy.
func newRenderPool(e *env, browserFlag string, cfg *crawl.Config, proxy func(*url.URL) (*url.URL, error), policy func(*http.Request) error, logf func(level, msg string)) (*render.Pool, error) {
	path, err := render.FindBrowser(browserFlag, e.Getenv)
	if err != nil {
		return nil, usagef("--render %s: %v", cfg.Render, err)
	}
	tr, err := crawl.NewTransport(cfg, proxy)
	if err != nil {
		return nil, usageError{err: err}
	}
	pool, err := render.New(render.Config{
		Browser: path, Transport: tr, Policy: policy, UserAgent: cfg.UserAgent,
		Tabs: cfg.ConcurrentWorkers, MaxBodyBytes: cfg.MaxBodyBytes,
		Logf: func(format string, a ...any) { logf("INFO", fmt.Sprintf(format, a...)) },
	})
	if err != nil {
		return nil, fmt.Errorf("--render: %w", err)
	}
	return pool, nil
}
