package crawl

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/outfile"
)

// Options are the parts of a crawl that are not configuration values.
type Options struct {
	// Proxy chooses the proxy for a request URL (nil: none). cmd/weaver
	// passes the standard HTTP_PROXY/HTTPS_PROXY/NO_PROXY rules.
	Proxy func(*url.URL) (*url.URL, error)
	// Log receives log lines; level is INFO, WARN or ERROR. Nil: silent.
	Log func(level, msg string)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Grace is how long in-flight pages may finish after a stop; zero: 5 s.
	Grace time.Duration
	// Peer, when set, makes this crawl one shard of a cluster: it crawls
	// only the hosts the peer says it owns and forwards links to the others.
	Peer Peer
	// Renderer renders pages with --render auto or always (required then).
	Renderer Renderer
	// Archive, when set, records every HTTP exchange before the page's
	// commit (--warc).
	Archive Archive
	// RetryFailed makes Prepare put the hosts that failed of these causes
	// back in the queue at their depth (--retry-failed); 0: none. It
	// belongs to one run: it is not a setting the store remembers.
	RetryFailed FailCause
	// ForceMetrics lets the run replace a metrics file of another store,
	// or of none (weaver crawl --force); without it, such a file is kept
	// and the run's metrics go beside the store (see metricsPath).
	ForceMetrics bool
}

// Crawler runs a crawl on one store.
type Crawler struct {
	cfg          Config
	store        *kv.Store
	client       *http.Client
	roots        *x509.CertPool // what the client trusts (nil: the system's roots), for --insecure's check
	probeClient  *http.Client   // client's way without its idle connections (probe)
	exclude      *excluder
	scope        *regexp.Regexp // hosts that may be fetched; nil: all
	gate         *gate
	log          func(level, msg string)
	now          func() time.Time
	grace        time.Duration
	peer         Peer
	retryFailed  FailCause // Options.RetryFailed
	forceMetrics bool      // Options.ForceMetrics

	stats     stats
	fetchHist histogram
	rate      rate
	workers   []workerSlot
	started   atomic.Int64 // Run's start, unix nanoseconds
	nextDue   atomic.Int64 // with a revisit policy: the next host's due time, unix nanoseconds (0: none)
	running   atomic.Bool
	reason    atomic.Pointer[string]
	wake      chan struct{} // AddSeeds queued work: the dispatcher should claim
	open      atomic.Int64  // hosts started and not finished, for Status
	parkedN   atomic.Int64  // of which parked, waiting for their time

	renderer    Renderer
	archive     Archive
	fatal       chan error // a failure that stops the crawl (Run's)
	renderRules sync.Map   // host → *robots.Rules of a page being rendered

	failedMu sync.Mutex      // guards failed
	failed   map[uint64]bool // nodes whose host failed for good in this run

	net    *netwatch       // tells an outage of the crawler's network from failing hosts
	disk   *diskwatch      // pauses the crawl while a file system it writes to is full
	parseQ chan<- *task    // Run's parse stage, for pages held by net and let go
	sends  sync.WaitGroup  // goroutines sending let-go pages to parseQ
	tried  map[uint64]bool // nodes whose host failed or was disallowed in this run (guarded by failedMu)
	// givenUp counts the writes that waited for room when the crawl
	// stopped (storeFailed).
	givenUp atomic.Int64

	hostIDs hostIDs // node ids of hosts linked to, from durable commits

	// lim is the subdomain limiter (graph.Limiter), read from the store
	// by the first write transaction that admits a host (limits). Write
	// transactions run one at a time, so it needs no lock.
	lim *graph.Limiter
}

// ErrSeed wraps every rejection of a seed URL (not http(s), no host,
// excluded): the caller's input is at fault, not the store.
var ErrSeed = errors.New("bad seed")

// New checks cfg and prepares a crawler on store. It returns a
// *ConfigError for a bad value.
func New(cfg Config, store *kv.Store, opt Options) (*Crawler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Crawler{cfg: cfg, store: store, log: opt.Log, now: opt.Now, grace: opt.Grace, peer: opt.Peer, retryFailed: opt.RetryFailed, forceMetrics: opt.ForceMetrics, wake: make(chan struct{}, 1), failed: map[uint64]bool{}, tried: map[uint64]bool{}}
	c.cfg.UncapRevisits(true)
	if c.now == nil {
		c.now = time.Now
	}
	c.gate = newGate(cfg.delay(), c.now)
	c.net = newNetwatch(c.now)
	c.disk = newDiskwatch(c.now, cfg.MinFreeSpace, crawlDirs(&cfg), c.logf)
	client, err := newClient(&cfg, opt.Proxy)
	if err != nil {
		return nil, &ConfigError{Source: "config", Key: "connect_to", Msg: err.Error()}
	}
	x, err := newExcluder(cfg.ExcludeHosts)
	if err != nil {
		return nil, &ConfigError{Source: "config", Key: "exclude_hosts", Msg: err.Error()}
	}
	c.client, c.exclude, c.archive = client, x, opt.Archive
	if tr, ok := client.Transport.(*http.Transport); ok && tr.TLSClientConfig != nil {
		c.roots = tr.TLSClientConfig.RootCAs
	}
	c.probeClient = probeClient(client)
	c.fatal = make(chan error, 1)
	if cfg.Render != RenderNever && cfg.Render != "" {
		if opt.Renderer == nil {
			return nil, &ConfigError{Source: "config", Key: "render", Msg: "needs a browser (--browser)"}
		}
		c.renderer = opt.Renderer
	}
	if c.scope, err = compileScope(cfg.Scope); err != nil {
		return nil, err
	}
	if c.grace <= 0 {
		c.grace = 5 * time.Second
	}
	c.workers = make([]workerSlot, cfg.ConcurrentWorkers)
	return c, nil
}

func (c *Crawler) logf(level, format string, a ...any) {
	if c.log != nil {
		c.log(level, fmt.Sprintf(format, a...))
	}
}

// pending is a page whose commit was queued and not yet acknowledged.
type pending struct {
	p    *page
	done <-chan error
}

// ErrStopRequested is the cause to cancel Run's context with
// (context.WithCancelCause) when the stop is a request, POST /stop, not a
// signal: the crawl ends the same way, with termination reason
// "api_stop".
var ErrStopRequested = errors.New("crawl: stop requested")

// ErrStoreFailed wraps a commit failure that stopped the crawl.
var ErrStoreFailed = errors.New("crawl: store write failed")

// Run crawls until the frontier is empty and every worker idle
// ("queue_empty"), max_pages leases were handed out ("max_pages"), ctx is
// cancelled ("signal": in-flight pages get the grace period, the rest go
// back to the frontier; "api_stop" when its cause is ErrStopRequested), or a commit fails ("error"). It writes
// metrics.log and returns the Result; the error is the commit failure.
func (c *Crawler) Run(ctx context.Context) (Result, error) {
	start := c.now()
	c.started.Store(start.UnixNano())
	c.rate.reset(start, c.stats.pagesFetched.Load())
	c.running.Store(true)
	defer c.running.Store(false)
	hard, hardCancel := c.afterGrace(ctx)
	defer hardCancel()

	// A write that fails for want of room waits for it (diskwatch), as
	// does a crawl whose disks are below min_free_space.
	c.disk.start()
	c.store.SetWaiter(c.disk)
	defer c.store.SetWaiter(nil)
	c.disk.check()
	go c.disk.watch()
	defer c.disk.stop()

	s := c.startStages(hard)
	reason, runErr := c.dispatch(ctx, s.steps, s.back, s.again, s.acked, c.fatal)
	if err := c.stopStages(s); err != nil && runErr == nil {
		runErr, reason = err, ReasonError
	}
	if runErr == nil {
		select {
		case runErr = <-c.fatal:
			reason = ReasonError
		default:
		}
	}
	c.reason.Store(&reason)
	if n := c.givenUp.Load(); n > 0 {
		c.logf("WARN", "%d writes waited for room when the crawl stopped: what they held stays leased in the store, and the next run fetches it again", n)
	}
	// A flag of a clean end: a full disk leaves it, and the next run only
	// waits the politeness delay before each host.
	if err := c.store.Update(func(tx *kv.Tx) error { return tx.SetMetaString(metaRunning, "") }); err != nil && runErr == nil && !kv.IsFull(err) {
		runErr = fmt.Errorf("%w: %w", ErrStoreFailed, err)
	}
	res := c.result(start, reason)
	if runErr != nil {
		res.Error = runErr.Error()
	}
	if c.cfg.MetricsPath != "" {
		if err := c.writeMetrics(ctx, res); err != nil && runErr == nil {
			runErr = err
		}
	}
	return res, runErr
}

// afterGrace returns a context cancelled the grace period after ctx is
// (or by its cancel): the steps in flight at a stop have that long to
// finish.
func (c *Crawler) afterGrace(ctx context.Context) (context.Context, context.CancelFunc) {
	hard, hardCancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-ctx.Done():
			t := time.NewTimer(c.grace)
			defer t.Stop()
			select {
			case <-t.C:
				hardCancel()
			case <-hard.Done():
			}
		case <-hard.Done():
		}
	}()
	return hard, hardCancel
}

// stages are Run's goroutines besides the dispatcher, and the channels
// between them: workers fetch (steps in, back out); parsers hash and
// extract what they fetched and queue the page's commit (pend), or hand
// a host's next page back to the dispatcher (again); the acker waits for
// each commit and tells the dispatcher (acked).
type stages struct {
	steps chan *task
	back  chan stepped
	// again holds every page that can be in the parse and commit stages,
	// so that no parser ever waits on it at a stop.
	again chan *task
	// parse holds one page per worker, so bodies in memory are bounded by
	// twice the workers plus parsers.
	parse chan *task
	// pend has room for every page in flight, so that no worker waits to
	// hand over a finished page while the acker waits for an fsync.
	pend  chan pending
	acked chan struct{}

	workers, parsers sync.WaitGroup
	ackerDone        chan struct{}
	stopProgress     chan struct{}
	progressDone     chan struct{}
}

// startStages starts the workers (whose requests hard cancels), the
// parsers, the acker and the progress line.
func (c *Crawler) startStages(hard context.Context) *stages {
	workers := c.cfg.ConcurrentWorkers
	s := &stages{
		steps: make(chan *task),
		back:  make(chan stepped, workers),
		again: make(chan *task, c.maxInflight()+2*workers),
		parse: make(chan *task, workers),
		pend:  make(chan pending, c.maxInflight()),
		acked: make(chan struct{}, c.maxInflight()),

		ackerDone:    make(chan struct{}),
		stopProgress: make(chan struct{}),
		progressDone: make(chan struct{}),
	}
	c.parseQ = s.parse
	for i := 1; i <= workers; i++ {
		s.workers.Add(1)
		go func(id int) {
			defer s.workers.Done()
			c.work(hard, id, s)
		}(i)
	}
	for range min(workers, runtime.GOMAXPROCS(0)) {
		s.parsers.Add(1)
		go func() {
			defer s.parsers.Done()
			c.parsePages(s)
		}()
	}
	go func() {
		defer close(s.ackerDone)
		c.ack(s)
	}()
	go func() {
		defer close(s.progressDone)
		c.progress(s.stopProgress)
	}()
	return s
}

// work is worker id: it takes steps until steps is closed, and hands each
// finished page to the parsers, unless the network watch holds it.
func (c *Crawler) work(hard context.Context, id int, s *stages) {
	c.setWorker(id, WorkerIdle, "")
	defer c.setWorker(id, WorkerStopped, "")
	for t := range s.steps {
		c.step(hard, id, t)
		c.setWorker(id, WorkerIdle, "")
		// The dispatcher parks it, or counts it handed to parse (which
		// owns it from then on: done is read here).
		done := t.done
		s.back <- stepped{t, done}
		if !done {
			continue
		}
		if t.netFault && !t.p.returned {
			// Charged once the web is seen answering, or given back
			// uncharged if the crawl pauses (netwatch).
			held, pardon := c.net.hold(t)
			if held {
				continue
			}
			if pardon {
				c.unclaim(t)
			}
		}
		s.parse <- t
	}
}

// parsePages parses pages until parse is closed, and queues each one's
// commit, or hands a host with a next page due back to the dispatcher.
func (c *Crawler) parsePages(s *stages) {
	w := &parser{h: sha256.New()}
	for t := range s.parse {
		c.parse(w, t)
		if c.follow(t) || c.nextPage(t) {
			s.again <- t
			continue
		}
		p := t.p
		// A 304's links are its last crawl's, which the commit reads: it
		// is logged once committed.
		if !p.returned && !p.notModified && c.log != nil && !c.cfg.Quiet {
			c.logPage(p)
		}
		s.pend <- pending{p: p, done: c.store.Commit(func(tx *kv.Tx) error { return c.commitPage(tx, p) })}
	}
}

// ack waits for each page's commit until pend is closed: a failed one
// stops the crawl, a durable one is counted.
func (c *Crawler) ack(s *stages) {
	for pc := range s.pend {
		if err := <-pc.done; err != nil {
			c.storeFailed(c.fatal, fmt.Errorf("%w: page of %s: %w", ErrStoreFailed, pc.p.lease.Host, err))
		} else {
			c.account(pc.p)
			if pc.p.notModified && !pc.p.returned && c.log != nil && !c.cfg.Quiet {
				c.logPage(pc.p)
			}
			if pc.p.forwarded {
				c.peer.Forwarded()
			}
		}
		s.acked <- struct{}{}
	}
}

// stopStages stops the stages once the dispatcher has: the steps in
// flight finish, the pages held by the network watch go back to the
// queue uncharged, and the hosts whose next page was due after the
// dispatcher stopped go back whole (a host is committed complete or not
// at all). It returns giveBack's error.
func (c *Crawler) stopStages(s *stages) error {
	// The writes still waiting for room are given up: the crawl stops.
	c.disk.stop()
	// Nobody reads acked any more: drain it so the acker never blocks
	// whatever is still in flight.
	go func() {
		for {
			select {
			case <-s.acked:
			case <-s.ackerDone:
				return
			}
		}
	}()
	close(s.steps)
	s.workers.Wait()
	// Pages still held were never judged: they go back to the queue.
	for _, t := range c.net.drain() {
		c.unclaim(t)
		s.parse <- t
	}
	c.sends.Wait()
	close(s.parse)
	s.parsers.Wait()
	var late []*task
	for len(s.again) > 0 {
		late = append(late, <-s.again)
	}
	err := c.giveBack(nil, late)
	close(s.pend)
	<-s.ackerDone
	close(s.stopProgress)
	<-s.progressDone
	return err
}

// result is the run's Result: its counters, the fetch times'
// percentiles, the pauses, and the store's totals as it ends.
func (c *Crawler) result(start time.Time, reason string) Result {
	res := c.stats.result(start, c.now(), reason)
	q := c.fetchHist.quantiles(0.5, 0.9, 0.99)
	res.FetchP50MS, res.FetchP90MS, res.FetchP99MS = q[0], q[1], q[2]
	pauses, paused, pardoned := c.net.figures()
	res.Pauses, res.PausedSeconds, res.PagesPardoned = pauses, paused.Seconds(), pardoned
	pauses, paused = c.disk.figures()
	res.DiskPauses, res.DiskPausedSeconds = pauses, paused.Seconds()
	err := c.store.View(func(tx *kv.Tx) error {
		g := graph.GetCounts(tx)
		res.TotalNodes, res.TotalEdges, res.TotalWeight = g.Nodes, g.Edges, g.Weight
		res.FrontierSize = frontier.Len(tx)
		if due := frontier.NextDue(tx); !due.IsZero() {
			due = due.UTC()
			res.NextDue = &due
		}
		return nil
	})
	if err != nil {
		// The pages are committed; only the totals could not be read.
		c.logf("WARN", "Reading the store's totals for metrics.log: %v", err)
	}
	if reason == ReasonQueueEmpty && res.PagesFetched+res.PagesFailed == 0 && res.TotalNodes > 0 {
		c.nothingDue(res.NextDue)
	}
	return res
}

// nothingDue says why a run of a finished store fetched nothing: every
// host was asked for already, and when some of them failed, how many and
// how to ask them again.
func (c *Crawler) nothingDue(next *time.Time) {
	if next != nil {
		c.logf("INFO", "Nothing is due: the next host is due at %s", next.Format(time.RFC3339))
		return
	}
	var failed Requeued
	err := c.store.View(func(tx *kv.Tx) error {
		var err error
		failed, err = c.failedHosts(tx)
		return err
	})
	switch n := failed.Total(); {
	case err != nil || n == 0 || c.retryFailed != 0:
		c.logf("INFO", "Nothing is due: every host was crawled (crawl with --revisit DURATION to crawl them again)")
	default:
		c.logf("INFO", "Nothing is due: every host was asked for, and %s failed (%s): weaver crawl --retry-failed asks them again (--retry-failed=%s for some causes only)",
			hostCount(n), failed, failed.causes())
	}
}

// writeMetrics writes metrics.log. A file system without room pauses the
// end of the crawl until there is (diskwatch); a stop meanwhile (or a
// stop before) leaves it unwritten, with a line that says so: the store
// holds the crawl.
func (c *Crawler) writeMetrics(ctx context.Context, res Result) error {
	res.Store = c.storePath()
	path := c.metricsPath(res.Store)
	for {
		err := WriteMetrics(path, res)
		switch {
		case err == nil:
			c.logf("INFO", "Metrics written to %s", path)
			return nil
		case kv.IsFull(err) && ctx.Err() == nil && c.disk.waitRoom(err, ctx.Done()):
			continue
		case kv.IsFull(err):
			c.logf("WARN", "%s not written, for want of room (%v): the store holds the crawl", path, err)
			return nil
		}
		c.logf("ERROR", "writing %s: %v", path, err)
		return fmt.Errorf("crawl: write metrics: %w", err)
	}
}

// storePath is the store's absolute path ("" when it cannot be told).
func (c *Crawler) storePath() string {
	p := c.store.Path()
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// metricsPath is where the run's metrics go: metrics_path, unless it is a
// file of another store's metrics, or of anything else than a store's
// (a file an older weaver wrote says no store), which the run keeps
// (ForceMetrics replaces it): then beside the store, STORE.metrics.log,
// said in one line. A device or pipe (/dev/null) is written as it is.
func (c *Crawler) metricsPath(store string) string {
	path := c.cfg.MetricsPath
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 || c.forceMetrics {
		return path
	}
	var m struct {
		Store string `json:"store"`
	}
	data, err := os.ReadFile(path)
	if err == nil && json.Unmarshal(data, &m) == nil && m.Store != "" && outfile.SameFile(m.Store, store) {
		return path
	}
	whose := "is not the metrics of a weaver store"
	if m.Store != "" {
		whose = "holds the metrics of another store, " + m.Store
	}
	instead := store + ".metrics.log"
	c.logf("WARN", "%s %s: kept (--force replaces it); this run's metrics go to %s", path, whose, instead)
	return instead
}

// toParse hands pages let go by net to the parse stage, from a goroutine
// of their own: the caller may be the dispatcher, which must not wait on
// the stages it feeds.
func (c *Crawler) toParse(ts []*task) {
	if len(ts) == 0 {
		return
	}
	c.sends.Add(1)
	go func() {
		defer c.sends.Done()
		for _, t := range ts {
			c.parseQ <- t
		}
	}()
}

// unclaim gives a page back uncharged: its lease returns to the queue at
// its place, and what it took of max_pages is given back too.
func (c *Crawler) unclaim(t *task) {
	t.p.returned = true
	c.stats.claimed.Add(-int64(1 + t.pageNo))
}

func (c *Crawler) logPage(p *page) {
	switch {
	case p.disallow:
		c.logf("INFO", "Worker %d skipped %s (depth=%d, disallowed by robots.txt)", p.worker, p.lease.Host, p.lease.Depth)
	case p.kind != "" && !p.fetched:
		// p.err starts with its kind ("timeout: ..."), as the node's
		// error does: the kind is not said twice.
		msg := p.err
		if !strings.HasPrefix(msg, string(p.kind)+": ") {
			msg = string(p.kind) + ": " + msg
		}
		c.logf("WARN", "Worker %d failed to fetch %s (%s)", p.worker, p.lease.Host, msg)
	case p.kind != "":
		c.logf("WARN", "Worker %d fetched %s (depth=%d, HTTP %d)", p.worker, p.lease.Host, p.lease.Depth, p.status)
	case p.notModified:
		// 304: no body read, the links its last crawl read kept.
		c.logf("INFO", "Worker %d fetched %s (depth=%d): not modified (%d links kept)", p.worker, p.lease.Host, p.lease.Depth, len(p.targets))
	default:
		c.logf("INFO", "Worker %d fetched %s (depth=%d, %d outbound links)", p.worker, p.lease.Host, p.lease.Depth, len(p.targets))
	}
}

// progress logs the progress line (Status.Progress) every progress interval,
// and every 2 s lets go of the store pages the crawl has read, so that a
// crawl's resident memory does not grow towards the store's size.
func (c *Crawler) progress(stop <-chan struct{}) {
	release := time.NewTicker(2 * time.Second)
	defer release.Stop()
	releaseFailed := false
	var logC <-chan time.Time
	if c.cfg.ProgressIntervalMS > 0 && c.log != nil {
		t := time.NewTicker(time.Duration(c.cfg.ProgressIntervalMS) * time.Millisecond)
		defer t.Stop()
		logC = t.C
	}
	for {
		select {
		case <-stop:
			return
		case <-release.C:
			if err := c.store.View(func(tx *kv.Tx) error { tx.ReleasePages(); return nil }); err != nil && !releaseFailed {
				// Only memory is at stake: said once, tried again.
				releaseFailed = true
				c.logf("WARN", "Letting go of the store's pages read: %v", err)
			}
		case <-logC:
			c.logf("INFO", "%s", c.Status().Progress())
		}
	}
}

// hostCount is "1 host" or "N hosts".
func hostCount(n int) string {
	if n == 1 {
		return "1 host"
	}
	return fmt.Sprintf("%d hosts", n)
}
