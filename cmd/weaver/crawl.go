package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpproxy"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/cluster"
	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/crawlwarc"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/outfile"
	"github.com/weaver-crawler/weaver/render"
	"github.com/weaver-crawler/weaver/warc"
)

func init() {
	register(&command{Name: "crawl", Summary: "crawl from seed URLs (or resume) into the store", Run: runCrawl})
}

// crawlFlags maps each flag to its config key; durations become *_ms keys.
var crawlFlags = []struct{ flag, key, usage string }{
	{"db", "db_path", "the bbolt store `FILE` (default weaver.bolt)"},
	{"seeds-file", "seeds_file", "read seed URLs from `FILE`, one a line (blank lines and # comments skipped); - for stdin"},
	{"workers", "concurrent_workers", "concurrent workers `N` (default 3)"},
	{"max-depth", "max_depth", "deepest hop `N` from a seed to queue; 0 = no limit (default 5)"},
	{"max-crawls-per-node", "max_crawls_per_node", "times `N` a host may be crawled over the store's life; 0 = no cap (default 3; no cap with --revisit)"},
	{"revisit", "revisit_after_ms", "crawl a host again when due: its interval starts at `DURATION` (e.g. 6h) and adapts to how often it changes; the crawl then runs until a signal, --max-pages or --max-duration (default off)"},
	{"revisit-max", "revisit_max_ms", "with --revisit: the longest interval `DURATION` (default 32 × --revisit)"},
	{"max-duration", "max_duration_ms", "stop after `DURATION` (termination_reason max_duration); 0 = no limit"},
	{"max-subdomains-per-root", "max_subdomains_per_root", "hosts `N` queued per registrable domain; 0 = no limit (default 3)"},
	{"max-outbound-links", "max_outbound_links", "distinct other hosts `N` kept per page; 0 = no limit (default 10)"},
	{"timeout", "request_timeout_ms", "per-request timeout `DURATION`, e.g. 5s or 1500ms (default 5s; +2s per retry)"},
	{"retries", "retry_attempts", "retries `N` of timeouts and 5xx (default 3)"},
	{"retry-delay", "retry_delay_ms", "wait `DURATION` before a retry, e.g. 5s or 500ms (default 5s)"},
	{"delay", "politeness_delay_ms", "minimum `DURATION` between requests to one host, e.g. 1.5s or 0 (default 1s)"},
	{"user-agent", "user_agent", "User-Agent `STRING` (robots.txt token: weaver)"},
	{"max-body-bytes", "max_body_bytes", "read at most `N` bytes of a page (default 1048576)"},
	{"max-pages", "max_pages", "stop after `N` page fetches; 0 = no limit"},
	{"warc", "warc_dir", "write every HTTP exchange (robots.txt, pages, redirects) as WARC/1.1 files in `DIR`; the store remembers it as an absolute path, and a resume keeps writing there"},
	{"warc-max-size", "warc_max_size", "close a WARC file before it passes `BYTES` (e.g. 500MB; default 1 GB)"},
	{"min-free-space", "min_free_space", "pause the crawl while a file system it writes to (store, WARC files, metrics.log) has fewer than `BYTES` free, and go on by itself when there is room (e.g. 2GB; default 512MB; 0 = off: only a write that fails for want of room pauses it)"},
	{"render", "render", "`MODE` of running pages' scripts in a browser: never, auto (pages that look like a JavaScript shell) or always (default never)"},
	{"browser", "browser", "the chromium or Chrome `PATH` for --render (default $WEAVER_BROWSER, else chromium or google-chrome on PATH)"},
	{"pages-per-host", "pages_per_host", "pages `N` fetched per crawl of a host: the home page, then N−1 more of the same host, breadth-first (default 1)"},
	{"anchors", "anchors_per_edge", "keep up to `N` example links per host→host edge (page URL, target URL, anchor text, rel) for weaver show; 0 = none (default 0)"},
	{"metrics", "metrics_path", "write the run's metrics JSON to `FILE` (default metrics.log)"},
	{"listen", "listen", "serve the status API on `ADDR` while crawling (e.g. 127.0.0.1:8088)"},
	{"token-file", "token_file", "demand the bearer token in `FILE` on every --listen endpoint (or set WEAVER_TOKEN); needed off loopback"},
	{"ca-file", "ca_file", "trust the CA certificates in the PEM `FILE` besides the system's roots (a TLS proxy, an intranet CA)"},
	{"dns-server", "dns_server", "resolve names with the DNS server at `ADDR` (IP or IP:PORT) instead of the system's resolver"},
	{"cluster", "cluster", "crawl as one shard of a cluster through the NATS JetStream server at `URL` (nats://host:4222)"},
	{"shard", "shard", "with --cluster: this process is shard `K/N` (K from 0)"},
	{"crawl-name", "crawl_name", "with --cluster: the cluster crawl's `NAME` (default: a digest of the seed URLs)"},
	{"cluster-replicas", "cluster_replicas", "with --cluster: replicas `N` of the stream and KV bucket a shard creates (default 1)"},
}

var crawlBoolFlags = []struct{ flag, key, usage string }{
	{"ignore-robots", "ignore_robots", "do not fetch or obey robots.txt"},
	{"allow-private-networks", "allow_private_networks", "allow connections to loopback and private addresses"},
	{"quiet", "quiet", "no per-page log lines"},
	{"json-logs", "json_logs", "log lines as JSON objects"},
	{"metrics-public", "metrics_public", "let /metrics answer without the token"},
}

func runCrawl(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "crawl", "weaver crawl [flags] [SEED_URL ...]", `  weaver crawl https://example.com
  weaver crawl --workers 8 --max-depth 3 --delay 2s https://example.com https://example.org
  weaver crawl --config crawl.json          # seeds and limits from a file
  weaver crawl --db weaver.bolt             # resume a stopped crawl, by the settings it started with
  weaver crawl --connect-to ::127.0.0.1:8080 http://www.example.com/   # every host to one local server`)
	configPath := fs.String("config", "", "JSON config `FILE` with any of the config keys (the README lists them)")
	type setting struct{ key, value, source string }
	var sets []setting
	for _, f := range crawlFlags {
		f := f
		fs.Func(f.flag, f.usage, func(v string) error {
			if strings.HasSuffix(f.key, "_ms") {
				if err := needUnit(v); err != nil {
					return err // --delay 1: neither 1 ms nor 1 s, but a mistake
				}
			}
			sets = append(sets, setting{f.key, v, "flag --" + f.flag})
			return nil
		})
	}
	for _, f := range crawlBoolFlags {
		f := f
		fs.BoolFunc(f.flag, f.usage, func(v string) error {
			sets = append(sets, setting{f.key, v, "flag --" + f.flag})
			return nil
		})
	}
	var connectTo []string
	fs.Func("connect-to", "`HOST1:PORT1:HOST2:PORT2` as curl's --connect-to; repeatable", func(v string) error {
		connectTo = append(connectTo, v)
		return nil
	})
	var retryFailed retryFlag
	fs.Var(&retryFailed, "retry-failed", "put the hosts that failed back in the queue at their depth, fetched as new; `=CAUSES` only those of dns, connect, tls, http, other (comma-separated); for this run only")
	noWarc := false
	fs.BoolFunc("no-warc", "stop writing WARC files: a resume of a crawl started with --warc archives no more, nor do the resumes after it", func(v string) error {
		if on, err := strconv.ParseBool(v); err != nil || !on {
			return err
		}
		noWarc = true
		sets = append(sets, setting{"warc_dir", "", "flag --no-warc"})
		return nil
	})
	var scopes []string
	fs.Func("scope", "`REGEXP` on the normalised host: only hosts matching one are fetched (links to others are edges to out_of_scope nodes); repeatable", func(v string) error {
		scopes = append(scopes, v)
		return nil
	})
	var excludes []string
	fs.Func("exclude-host", "`REGEXP` of hosts to leave out, added to exclude_hosts; repeatable", func(v string) error {
		excludes = append(excludes, v)
		return nil
	})
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if noWarc && slices.ContainsFunc(sets, func(s setting) bool { return s.key == "warc_dir" && s.value != "" }) {
		return usageHelpf("--warc and --no-warc: give one")
	}

	// build makes the configuration from its sources, weakest first:
	// defaults, the settings stored in the store (a resume), the config
	// file, the environment, the flags. Run first without stored settings,
	// it says where the store is.
	build := func(stored crawl.Settings, storePath string) (crawl.Config, error) {
		cfg := crawl.Defaults()
		if stored != nil {
			if err := cfg.Apply(stored, "settings stored in "+storePath); err != nil {
				return cfg, usageError{err: err}
			}
		}
		if *configPath != "" {
			data, err := os.ReadFile(*configPath)
			if err != nil {
				return cfg, usagef("config: %v", err)
			}
			if err := cfg.LoadJSON(data, "config file "+*configPath); err != nil {
				return cfg, usageError{err: err}
			}
		}
		for _, key := range crawl.Keys() {
			name := "WEAVER_" + strings.ToUpper(key)
			if v := e.Getenv(name); v != "" {
				if err := cfg.Set(key, v, "environment "+name); err != nil {
					return cfg, usageError{err: err}
				}
			}
		}
		for _, s := range sets {
			if err := cfg.Set(s.key, s.value, s.source); err != nil {
				return cfg, usageError{err: err}
			}
		}
		if len(connectTo) > 0 {
			cfg.ConnectTo = connectTo
			cfg.From("connect_to", "flag --connect-to")
		}
		if len(scopes) > 0 {
			cfg.Scope = scopes
			cfg.From("scope", "flag --scope")
		}
		if len(excludes) > 0 {
			// Added once: the same --exclude-host on every resume must not
			// grow the stored list.
			for _, x := range excludes {
				if !slices.Contains(cfg.ExcludeHosts, x) {
					cfg.ExcludeHosts = append(cfg.ExcludeHosts, x)
				}
			}
			cfg.From("exclude_hosts", "flag --exclude-host")
		}
		// The paths are stored absolute, so that a resume from another
		// working directory finds them.
		if cfg.WarcDir != "" {
			abs, err := filepath.Abs(cfg.WarcDir)
			if err != nil {
				return cfg, usagef("warc_dir %s: %v", cfg.WarcDir, err)
			}
			cfg.WarcDir = abs
		}
		if strings.ContainsRune(cfg.Browser, filepath.Separator) {
			if abs, err := filepath.Abs(cfg.Browser); err == nil {
				cfg.Browser = abs
			}
		}
		cfg.UncapRevisits(stored != nil && string(stored["revisit_after_ms"]) != "" && string(stored["revisit_after_ms"]) != "0")
		return cfg, nil
	}
	cfg, err := build(nil, "")
	if err != nil {
		return err
	}
	stored := storedSettings(cfg.DBPath)
	if stored != nil {
		if cfg, err = build(stored, cfg.DBPath); err != nil {
			return err
		}
	}
	if err := checkStoredWarcDir(&cfg); err != nil {
		return err
	}
	if cfg.Render != crawl.RenderNever && cfg.Render != "" {
		// Said before anything is written.
		if _, err := render.FindBrowser(cfg.Browser, e.Getenv); err != nil {
			if src := cfg.Source("browser"); src != "" {
				return usagef("--render %s: %v (the browser is from the %s)", cfg.Render, err, src)
			}
			return usagef("--render %s: %v", cfg.Render, err)
		}
	}
	seeds := fs.Args()
	for _, s := range seeds {
		if _, err := crawl.ParseFailCauses(s); err == nil && retryFailed.set && !strings.Contains(s, ":") {
			return usagef("%q is not a seed URL: write --retry-failed=%s", s, s)
		}
		if err := crawl.CheckSeed(s); err != nil {
			return usageError{err: err}
		}
	}
	if len(seeds) == 0 {
		seeds = cfg.Seeds()
	}
	if err := cfg.Validate(); err != nil {
		return usageError{err: err}
	}
	if cfg.MetricsPath != "" {
		// Refused now rather than after the crawl, when it is written.
		if _, err := outfile.Resolve(cfg.MetricsPath); err != nil {
			return usageError{err: fmt.Errorf("metrics_path: %w", err)}
		}
	}
	// A seeds file is checked whole, streaming, before anything is
	// written; Prepare reads it again to queue its seeds.
	var file *seedsFile
	if cfg.SeedsFile != "" {
		if file, err = openSeedsFile(e, cfg.SeedsFile); err != nil {
			return err
		}
		defer file.Close()
		if file.n, err = crawl.CheckSeeds(cfg, file.Seeds()); err != nil {
			return usageError{err: err}
		}
		if file.n == 0 {
			return usagef("seeds file %s holds no seed URL (one a line; # starts a comment)", file.name)
		}
		if cfg.Cluster != "" {
			// A cluster names its crawl by the set of its seeds, and
			// stores them: they are read into the list.
			if err := file.Seeds()(func(s string) error { seeds = append(seeds, s); return nil }); err != nil {
				return usageError{err: err}
			}
			file = nil
		}
	}
	if len(seeds) == 0 && file == nil {
		if _, err := os.Stat(cfg.DBPath); err != nil {
			return usageHelpf("nothing to crawl: give a seed URL, or --db an existing store to resume (%s does not exist)", cfg.DBPath)
		}
	}
	// Everything that can refuse the start is checked before the store,
	// the WARC directory or metrics.log is created: a refused start leaves
	// nothing behind for the next bare 'weaver crawl' to resume.
	if _, err := crawl.CheckSeeds(cfg, crawl.SeedList(seeds)); err != nil {
		return usageError{err: err}
	}
	if cfg.WarcDir != "" {
		if err := warc.CheckDir(cfg.WarcDir); err != nil {
			return usagef("warc_dir: %v", err)
		}
	}

	// --listen is bound before the store is opened, so a bad or busy
	// address, or one exposed without a token, fails before anything is
	// written.
	auth, err := apiAuth(e, cfg.TokenFile, cfg.MetricsPublic)
	if err != nil {
		return err
	}
	if err := checkExposure(cfg.Listen, auth); err != nil {
		return err
	}
	ln, err := listenIfSet(cfg.Listen)
	if err != nil {
		return err
	}
	if ln != nil {
		defer ln.Close()
	}

	logger := newLogger(e.Stdout, cfg.JSONLogs)
	logf, crawlLog := logger.log, logger.log
	var live *liveLine
	if !cfg.Quiet && !cfg.JSONLogs && isTerminal(e.Stdout) {
		live = newLiveLine(e.Stdout, logger.log)
		logf, crawlLog = live.Log, live.CrawlerLog
	}
	var store *kv.Store
	var node *cluster.Node
	started := false // the crawl ran: its store is kept, whatever it returns
	if cfg.Cluster != "" {
		// The NATS server is reached, and the crawl's configuration
		// checked, before the store is created.
		if node, store, err = joinCluster(ctx, e, &cfg, seeds, logf); err != nil {
			return err
		}
		defer store.Close()
		defer node.Close()
		logf("INFO", fmt.Sprintf("Cluster: shard %s of crawl %s on %s", cfg.Shard, node.Name(), cluster.Redact(cfg.Cluster)))
	} else {
		_, statErr := os.Lstat(cfg.DBPath)
		fresh := errors.Is(statErr, os.ErrNotExist)
		if store, err = kv.Open(cfg.DBPath, kv.Options{}); errors.Is(err, kv.ErrInUse) {
			return inUseError(err, cfg.DBPath, func(base string) string {
				return fmt.Sprintf("watch it with 'weaver status --db %s', add seeds with curl -d '{\"url\": \"…\"}' %s/seeds, or crawl into another --db", cfg.DBPath, base)
			})
		} else if err != nil {
			return storeError(err)
		}
		defer store.Close()
		if fresh {
			// A store this run created is removed when the start is
			// refused after all (a seed Prepare rejects, a WARC directory
			// that fails to open): the checks above should have said so.
			defer func() {
				if !started {
					store.Close()
					os.Remove(cfg.DBPath)
				}
			}()
		}
		if err := checkNotShard(store); err != nil {
			return err
		}
	}
	// This process holds the store's lock: an address beside it, or in its
	// meta, was left by a crawl that did not exit cleanly.
	os.Remove(archive.ListenPath(cfg.DBPath))
	// The settings are recorded before anything is queued, so that every
	// run on the store, this one's first, resumes by them.
	var old crawl.Settings
	crawled := false // the store held nodes: a crawl ran on it before
	if err := store.Update(func(tx *kv.Tx) error {
		old, _ = crawl.ReadSettings(tx) // a damaged record is replaced by this run's
		crawled = graph.GetCounts(tx).Nodes > 0
		if err := crawl.PutSettings(tx, cfg.Settings()); err != nil {
			return err
		}
		if tx.MetaString(metaListenAddr) == "" {
			return nil
		}
		return tx.SetMetaString(metaListenAddr, "")
	}); err != nil {
		return err
	}
	logSettings(logf, cfg, old, crawled)

	var proxy func(*url.URL) (*url.URL, error)
	pc := &httpproxy.Config{
		HTTPProxy:  firstNonEmpty(e.Getenv("HTTP_PROXY"), e.Getenv("http_proxy")),
		HTTPSProxy: firstNonEmpty(e.Getenv("HTTPS_PROXY"), e.Getenv("https_proxy")),
		NoProxy:    firstNonEmpty(e.Getenv("NO_PROXY"), e.Getenv("no_proxy")),
	}
	if pc.HTTPProxy != "" || pc.HTTPSProxy != "" {
		proxy = pc.ProxyFunc()
	}
	opts := crawl.Options{Proxy: proxy, Log: crawlLog, RetryFailed: retryFailed.causes}
	var c *crawl.Crawler
	if cfg.WarcDir != "" {
		w, err := openWarc(&cfg, store, logf)
		if err != nil {
			return err
		}
		defer func() {
			st := w.Stats()
			if err := w.Close(); err != nil {
				logf("ERROR", "WARC: "+err.Error())
			}
			logf("INFO", fmt.Sprintf("WARC: %s, %s, %d bytes in %s", count(st.Files, "file", ""), count(st.Records, "record", ""), st.Bytes, cfg.WarcDir))
		}()
		opts.Archive = w
		if abs, err := filepath.Abs(cfg.WarcDir); err == nil {
			if err := store.Update(func(tx *kv.Tx) error {
				if err := tx.SetMetaString(crawlwarc.MetaPrefix, crawlwarc.Prefix(&cfg)); err != nil {
					return err
				}
				return tx.SetMetaString(crawlwarc.MetaDir, abs)
			}); err != nil {
				return err
			}
		}
	}
	if cfg.Render != crawl.RenderNever {
		pool, err := newRenderPool(e, cfg.Browser, &cfg, proxy, func(r *http.Request) error { return c.RenderPolicy(r) }, logf)
		if err != nil {
			return err
		}
		defer pool.Close()
		opts.Renderer = render.ForCrawl{Pool: pool}
	}
	if node != nil {
		opts.Peer = node
	}
	c, err = crawl.New(cfg, store, opts)
	if err != nil {
		return usageError{err: err}
	}
	src := crawl.SeedList(seeds)
	if file != nil {
		src = concatSeeds(src, file.Seeds())
	}
	prepared, err := c.PrepareSeeds(src)
	if err != nil {
		var ce *crawl.ConfigError
		if errors.As(err, &ce) || errors.Is(err, crawl.ErrSeed) {
			return usageError{err: err}
		}
		return err
	}
	switch {
	case file != nil && len(seeds) > 0:
		logf("INFO", fmt.Sprintf("Starting crawl from %s and %s in %s", strings.Join(seeds, ", "), count(file.n, "seed", ""), file.name))
	case file != nil:
		logf("INFO", fmt.Sprintf("Starting crawl from %s in %s", count(file.n, "seed", ""), file.name))
	case len(seeds) > 0:
		logf("INFO", "Starting crawl from "+strings.Join(seeds, ", "))
	default:
		logf("INFO", "Resuming crawl in "+cfg.DBPath)
	}
	if n := prepared.Recovered; n > 0 {
		logf("INFO", fmt.Sprintf("Recovered %s left by a stopped crawl", count(n, "in-flight entry", "in-flight entries")))
	}
	if n := prepared.Queued; n > 0 {
		logf("INFO", fmt.Sprintf("Queued %s at depth 0", count(n, "entry", "entries")))
	}
	if n := prepared.Requeued; n > 0 {
		logf("INFO", fmt.Sprintf("A known seed and an empty frontier: re-queued %s at their depth, for another round", count(n, "host", "")))
	}

	if node != nil {
		if err := node.Start(c); err != nil {
			return err
		}
	}

	runCtx, cancelCause := context.WithCancelCause(ctx)
	cancel := func() { cancelCause(nil) }
	defer cancel()
	if ln != nil {
		// POST /stop cancels runCtx: the same graceful stop as SIGTERM,
		// recorded as termination reason api_stop.
		defer startStatusServer(ln, c, store, func() { cancelCause(crawl.ErrStopRequested) }, auth, logf)()
	}
	go func() {
		select {
		case <-e.Signals:
		case <-runCtx.Done():
			return
		}
		cancel()
		select {
		case <-e.Signals:
			logf("WARN", "Second signal: exiting now (the store holds only whole pages)")
			os.Exit(130)
		case <-runCtx.Done():
		}
	}()
	if live != nil {
		live.Start(c.Status)
	}
	started = true
	res, err := c.Run(runCtx)
	if live != nil {
		live.Stop()
	}
	logf("INFO", fmt.Sprintf("Crawl ended (%s): %s fetched, %d failed, %d skipped, %s, %s, %.1f pages/s",
		res.TerminationReason, count(res.PagesFetched, "page", ""), res.PagesFailed, res.PagesSkipped,
		count(res.TotalNodes, "node", ""), count(res.TotalEdges, "edge", ""), res.PagesPerSecond))
	if err != nil {
		return err
	}
	return reachedNothing(res)
}

// retryFlag is --retry-failed: alone, every cause; =dns,connect those.
type retryFlag struct {
	causes crawl.FailCause
	set    bool
}

func (f *retryFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	return f.causes.String()
}

func (f *retryFlag) Set(v string) error {
	c, err := crawl.ParseFailCauses(v)
	if err != nil {
		return err
	}
	f.causes, f.set = c, true
	return nil
}

func (f *retryFlag) IsBoolFlag() bool { return true }

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

// storedSettings returns the settings stored in the store at path, or nil
// when there is none, it holds none, or it cannot be read now: the open
// that follows reports what is wrong with it.
func storedSettings(path string) crawl.Settings {
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	// Unverified: the open that follows walks the file's pages, once.
	s, err := kv.Open(path, kv.Options{ReadOnly: true, Timeout: 100 * time.Millisecond, Unverified: true})
	if err != nil {
		return nil
	}
	defer s.Close()
	var set crawl.Settings
	err = s.View(func(tx *kv.Tx) error {
		set, _ = crawl.ReadSettings(tx) // a damaged record is replaced by this run's
		if _, ok := set["warc_dir"]; set != nil && !ok {
			// Settings of a weaver that did not store warc_dir: the
			// directory its --warc wrote to, if it did, is in the meta.
			if dir := tx.MetaString(crawlwarc.MetaDir); dir != "" {
				set["warc_dir"], _ = json.Marshal(dir)
			}
		}
		return nil
	})
	if err != nil {
		return nil // the open that follows reports what is wrong
	}
	return set
}

// checkStoredWarcDir refuses a resume that would archive into a stored
// warc_dir that is gone (deleted, or a disk not mounted): creating it
// afresh would split the crawl's WARC files without a word. A directory
// named by a flag, the environment or a config file is created.
func checkStoredWarcDir(cfg *crawl.Config) error {
	src := cfg.Source("warc_dir")
	if cfg.WarcDir == "" || !strings.HasPrefix(src, "settings stored in ") {
		return nil
	}
	fi, err := os.Stat(cfg.WarcDir)
	if err == nil && fi.IsDir() {
		return nil
	}
	why := "does not exist"
	if err == nil {
		why = "is not a directory"
	} else if !errors.Is(err, os.ErrNotExist) {
		why = err.Error()
	}
	return usagef("warc_dir %s (%s, where this crawl writes its WARC files) %s: restore it, give --warc DIR to write them elsewhere, or --no-warc to stop writing them",
		cfg.WarcDir, strings.TrimPrefix(src, "settings "), why)
}

// logSettings says how this run's settings differ from those the store
// held (old, read in the transaction that replaced them): one line per
// changed key, naming what changed it. crawled says the store held nodes:
// without settings, it was written by an older weaver.
func logSettings(logf func(level, msg string), cfg crawl.Config, old crawl.Settings, crawled bool) {
	if old == nil {
		if crawled {
			logf("INFO", "No settings stored (a store of an older weaver): this run's are stored for the next")
		}
		return
	}
	now := cfg.Settings()
	for _, key := range old.Diff(now, crawl.SettingKeys) {
		if _, ok := old[key]; !ok {
			continue // a key this weaver remembers and the store's did not
		}
		why := ""
		if src := cfg.Source(key); src != "" && !strings.HasPrefix(src, "settings stored in ") {
			why = ", by " + src
		}
		change := old.Text(key) + " → " + now.Text(key)
		a, aok := old.List(key)
		b, bok := now.List(key)
		if aok && bok {
			// A list (exclude_hosts, connect_to) says what was added and
			// removed: its values are long.
			var parts []string
			if add := missingFrom(b, a); len(add) > 0 {
				parts = append(parts, "added "+strings.Join(add, " "))
			}
			if del := missingFrom(a, b); len(del) > 0 {
				parts = append(parts, "removed "+strings.Join(del, " "))
			}
			if len(parts) > 0 {
				change = strings.Join(parts, ", ")
			}
		}
		logf("INFO", fmt.Sprintf("Setting %s: %s%s", key, change, why))
	}
}

// missingFrom returns the values of a that b lacks, in a's order.
func missingFrom(a, b []string) []string {
	var out []string
	for _, v := range a {
		if !slices.Contains(b, v) {
			out = append(out, v)
		}
	}
	return out
}

// logger writes log lines as "[LEVEL] msg" or JSON objects.
type logger struct {
	mu   sync.Mutex // serialises writes to w
	w    io.Writer
	json bool
}

func newLogger(w io.Writer, asJSON bool) *logger { return &logger{w: w, json: asJSON} }

func (l *logger) log(level, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.json {
		b, _ := json.Marshal(struct {
			Time  string `json:"time"`
			Level string `json:"level"`
			Msg   string `json:"msg"`
		}{time.Now().UTC().Format(time.RFC3339Nano), strings.ToLower(level), msg})
		l.w.Write(append(b, '\n'))
		return
	}
	fmt.Fprintf(l.w, "[%s] %s\n", level, msg)
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
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
