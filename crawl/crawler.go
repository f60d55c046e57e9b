package crawl

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weaver-crawler/weaver/crawl/extract"
	"github.com/weaver-crawler/weaver/crawl/robots"
	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
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
}

// Crawler runs a crawl on one store.
type Crawler struct {
	cfg     Config
	store   *kv.Store
	client  *http.Client
	exclude *excluder
	gate    *gate
	log     func(level, msg string)
	now     func() time.Time
	grace   time.Duration
	peer    Peer

	stats     stats
	fetchHist histogram
	rate      rate
	workers   []workerSlot
	started   atomic.Int64 // Run's start, unix nanoseconds
	running   atomic.Bool
	reason    atomic.Pointer[string]
	wake      chan struct{} // AddSeeds queued work: the dispatcher should claim
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
	c := &Crawler{cfg: cfg, store: store, log: opt.Log, now: opt.Now, grace: opt.Grace, peer: opt.Peer, wake: make(chan struct{}, 1)}
	if c.now == nil {
		c.now = time.Now
	}
	c.gate = newGate(cfg.delay(), c.now)
	client, err := newClient(&cfg, opt.Proxy, func(req *http.Request, prev *http.Request) error {
		if h, err := graph.HostOf(prev.URL); err == nil {
			c.gate.done(h)
		}
		host, err := graph.HostOf(req.URL)
		if err != nil {
			return err
		}
		return c.gate.wait(req.Context(), host)
	})
	if err != nil {
		return nil, &ConfigError{Source: "config", Key: "connect_to", Msg: err.Error()}
	}
	x, err := newExcluder(cfg.ExcludeHosts)
	if err != nil {
		return nil, &ConfigError{Source: "config", Key: "exclude_hosts", Msg: err.Error()}
	}
	c.client, c.exclude = client, x
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

// seedEntry normalises a seed URL into its node's host and the URL to fetch.
func seedEntry(raw string) (host, scheme, fetch string, err error) {
	if err := CheckSeed(raw); err != nil {
		return "", "", "", fmt.Errorf("%w: %w", ErrSeed, err)
	}
	u, _ := url.Parse(strings.TrimSpace(raw))
	host, err = graph.HostOf(u)
	if err != nil {
		return "", "", "", fmt.Errorf("%w: seed %q: %w", ErrSeed, raw, err)
	}
	u.Fragment, u.RawFragment = "", ""
	if u.Path == "" {
		u.Path = "/"
	}
	return host, u.Scheme, u.String(), nil
}

// prepareBatch bounds what one Prepare transaction writes (seeds queued,
// or nodes re-queued): bbolt keeps a transaction's dirty pages in memory
// until it commits, about 3 KB a seed, so 100,000 seeds in one transaction
// peaked near 300 MiB.
const prepareBatch = 5000

// metaRequeueNext, while Prepare's re-queue pass is under way, holds the
// next node id it will consider, so a pass stopped between transactions
// is finished by the next Prepare whatever the frontier holds by then.
const metaRequeueNext = "prepare.requeue_next"

// Prepare readies the store for Run: leases left by a stopped process go
// back to the frontier; new seeds are queued at depth 0; and when the
// frontier is empty and a seed is already known, every node with
// crawl_count < max_crawls_per_node is re-queued at depth 0 (seed 000 §7).
// It reports how many leases were recovered and entries queued.
//
// Every seed is checked before anything is written, so a bad one changes
// nothing. Seeds are then queued prepareBatch to a transaction, in order:
// a process stopped part-way has queued a prefix of them, and running it
// again with the same seeds queues the rest.
func (c *Crawler) Prepare(seeds []string) (recovered, queued int, err error) {
	checked := make([]seed, 0, len(seeds))
	for _, s := range seeds {
		host, scheme, fetch, err := seedEntry(s)
		if err != nil {
			return 0, 0, err
		}
		if c.exclude.excluded(host) {
			return 0, 0, fmt.Errorf("%w: seed %q: host %s is excluded by exclude_hosts", ErrSeed, s, host)
		}
		checked = append(checked, seed{host, scheme, fetch})
	}
	err = c.store.Update(func(tx *kv.Tx) error {
		var err error
		recovered, err = frontier.Recover(tx)
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	queued, known, err := c.queueSeeds(checked)
	if err != nil {
		return recovered, queued, err
	}
	requeued, err := c.requeuePass(checked, known)
	return recovered, queued + requeued, err
}

// seed is a checked seed URL: its node's host and the URL to fetch.
type seed struct{ host, scheme, fetch string }

// queueSeeds queues the seeds not yet in the store at depth 0, in order,
// prepareBatch to a transaction. known reports whether any was in the
// store already.
func (c *Crawler) queueSeeds(seeds []seed) (queued int, known bool, err error) {
	now := c.now()
	for len(seeds) > 0 {
		batch := seeds[:min(prepareBatch, len(seeds))]
		seeds = seeds[len(batch):]
		n, k := 0, false
		err = c.store.Update(func(tx *kv.Tx) error {
			n, k = 0, false
			for _, s := range batch {
				if !c.owns(s.host) {
					continue // its owner queues it: every shard is given the same seeds
				}
				node, created, err := graph.Ensure(tx, s.host, s.scheme, now)
				if err != nil {
					return err
				}
				if _, err := graph.AdmitSubdomain(tx, s.host, 0); err != nil {
					return err
				}
				if !created {
					k = true
					continue
				}
				ok, err := frontier.Push(tx, frontier.Entry{NodeID: node.ID, Host: s.host, URL: s.fetch, Depth: 0})
				if err != nil {
					return err
				}
				if ok {
					n++
				}
			}
			return nil
		})
		if err != nil {
			return queued, known, err
		}
		queued, known = queued+n, known || k
	}
	return queued, known, nil
}

// requeuePass re-queues at depth 0 every node crawled fewer than
// max_crawls_per_node times (seed 000 §7), prepareBatch nodes to a
// transaction, when a seed was known and the frontier is empty, or when
// metaRequeueNext says a pass was stopped part-way. A seed's own URL is
// fetched for its host, the home page for the others.
func (c *Crawler) requeuePass(seeds []seed, known bool) (queued int, err error) {
	next, pass := uint64(0), false
	err = c.store.View(func(tx *kv.Tx) error {
		if v := tx.MetaString(metaRequeueNext); v != "" {
			next, _ = strconv.ParseUint(v, 10, 64) // damaged: the pass starts again, harmlessly
			pass = true
		} else {
			pass = known && frontier.Len(tx) == 0
		}
		return nil
	})
	if err != nil || !pass {
		return 0, err
	}
	seedURL := make(map[string]string, len(seeds))
	for _, s := range seeds {
		seedURL[s.host] = s.fetch
	}
	for pass {
		n := 0
		err = c.store.Update(func(tx *kv.Tx) error {
			n, pass = 0, false
			seen := 0
			err := graph.ForEachNodeFrom(tx, next, func(node *graph.Node) error {
				if seen == prepareBatch {
					next, pass = node.ID, true
					return graph.ErrStop
				}
				seen++
				if node.CrawlCount >= c.cfg.MaxCrawlsPerNode || c.exclude.excluded(node.Host) || !c.owns(node.Host) {
					return nil
				}
				fetch := seedURL[node.Host]
				if fetch == "" {
					fetch = homeURL(node.Scheme, node.Host)
				}
				ok, err := frontier.Requeue(tx, frontier.Entry{NodeID: node.ID, Host: node.Host, URL: fetch, Depth: 0})
				if ok {
					n++
				}
				return err
			})
			switch {
			case err != nil:
				return err
			case pass:
				return tx.SetMetaString(metaRequeueNext, strconv.FormatUint(next, 10))
			default:
				return tx.Delete(kv.BucketMeta, []byte(metaRequeueNext))
			}
		})
		if err != nil {
			return queued, err
		}
		queued += n
	}
	return queued, nil
}

// AddSeeds queues seed URLs at depth 0 in a running or idle crawl (a host
// already queued at depth 0, or crawled max_crawls_per_node times, is not
// queued again). It reports how many were queued.
func (c *Crawler) AddSeeds(seeds []string) (int, error) {
	queued, forwarded := 0, false
	err := <-c.store.Commit(func(tx *kv.Tx) error {
		queued, forwarded = 0, false
		for _, s := range seeds {
			host, scheme, fetch, err := seedEntry(s)
			if err != nil {
				return err
			}
			if c.exclude.excluded(host) {
				return fmt.Errorf("%w: seed %q: host %s is excluded by exclude_hosts", ErrSeed, s, host)
			}
			n, _, err := graph.Ensure(tx, host, scheme, c.now())
			if err != nil {
				return err
			}
			if !c.owns(host) {
				if err := c.peer.Forward(tx, host, scheme, 0); err != nil {
					return err
				}
				forwarded = true
				queued++
				continue
			}
			if n.CrawlCount >= c.cfg.MaxCrawlsPerNode {
				continue
			}
			if _, err := graph.AdmitSubdomain(tx, host, 0); err != nil {
				return err
			}
			ok, err := frontier.Requeue(tx, frontier.Entry{NodeID: n.ID, Host: host, URL: fetch, Depth: 0})
			if err != nil {
				return err
			}
			if ok {
				queued++
			}
		}
		return nil
	})
	if err == nil && forwarded {
		c.peer.Forwarded()
	}
	if err == nil && queued > 0 {
		c.Wake()
	}
	return queued, err
}

func homeURL(scheme, host string) string {
	if scheme == "" {
		scheme = "http"
	}
	return scheme + "://" + host + "/"
}

// page is one lease's outcome, carried from the worker to the commit.
type page struct {
	lease    frontier.Lease
	worker   int
	returned bool // stopped before finishing: the lease goes back to the queue

	kind     ErrorKind // "" for a page answered with 2xx/3xx
	err      string
	fetched  bool // an HTTP answer was received for the page
	disallow bool // robots.txt forbids the page
	status   int
	ctype    string
	server   string
	bytes    int64
	took     time.Duration
	hash     string
	title    string
	desc     string
	targets  []target
	robots   *robotsRecord // fetched robots.txt, to cache

	forwarded bool // the commit forwarded links to other shards

	// filled by the commit, read once it is durable
	nodesCreated, edgesCreated, linksAdded int64
}

// robotsRecord is a cached robots.txt outcome in the robots bucket.
type robotsRecord struct {
	Fetched time.Time `msgpack:"t"`
	Rules   kv.Bytes  `msgpack:"r"` // robots.Rules.MarshalBinary
}

// worker state reused from page to page.
type workerState struct {
	id  int
	ex  extract.Extractor
	sel selector
	h   hash.Hash
}

// process fetches and parses one lease. A nil page means nothing to do.
func (c *Crawler) process(ctx context.Context, w *workerState, l frontier.Lease) *page {
	p := &page{lease: l, worker: w.id}
	u, err := url.Parse(l.URL)
	if err != nil {
		p.kind, p.err = KindOther, "bad URL: "+err.Error()
		return p
	}
	if !c.cfg.AllowPrivateNetworks && forbiddenHost(u.Hostname()) {
		p.kind, p.err = KindRefused, ErrRefusedAddress.Error()
		return p
	}
	if !c.cfg.IgnoreRobots {
		c.setWorker(w.id, WorkerRobots, l.Host)
		rules, kind, err := c.robotsFor(ctx, u, p)
		if ctx.Err() != nil {
			p.returned = true
			return p
		}
		if err != nil {
			p.kind, p.err = kind, string(kind)+": "+err.Error()
			return p
		}
		if !rules.Allowed(c.cfg.UserAgent, l.URL) {
			p.disallow = true
			return p
		}
		if d := rules.CrawlDelay(c.cfg.UserAgent); d > 0 {
			c.gate.setDelay(l.Host, d)
		}
	}
	c.setWorker(w.id, WorkerFetching, l.Host)
	start := time.Now()
	resp, kind, err := c.fetchWithRetries(ctx, l.Host, l.URL, func(body io.Reader, r *response) error {
		return c.readPage(w, p, body, r)
	})
	p.took = time.Since(start)
	c.fetchHist.observe(p.took)
	if ctx.Err() != nil {
		p.returned = true
		return p
	}
	if err != nil {
		p.kind, p.err = kind, string(kind)+": "+err.Error()
		return p
	}
	p.fetched = true
	p.status, p.ctype, p.server = resp.status, resp.contentType, resp.server
	if kind == KindHTTP || resp.status >= 400 {
		p.kind = KindHTTP
		p.err = fmt.Sprintf("HTTP %d", resp.status)
	}
	return p
}

// readPage hashes the (capped) body, and for an HTML answer from the
// page's own host extracts title, description and the selected targets.
// A redirect to another host is recorded as one link to that host.
func (c *Crawler) readPage(w *workerState, p *page, body io.Reader, r *response) error {
	w.h.Reset()
	p.targets, p.title, p.desc = nil, "", ""
	w.sel.reset(p.lease.Host, c.cfg.MaxOutboundLinks, c.exclude)
	counted := &countingReader{r: io.TeeReader(body, w.h)}
	finalHost, _ := graph.HostOf(r.finalURL)
	switch {
	case r.status >= 300:
	case finalHost != "" && finalHost != p.lease.Host:
		w.sel.add(r.finalURL)
	case isHTML(r.contentType):
		info, err := w.ex.Page(counted, r.finalURL, w.sel.add)
		if err != nil {
			return err
		}
		p.title = info.Title
		p.desc = info.Description
		if p.desc == "" {
			p.desc = p.title
		}
	}
	if _, err := io.Copy(io.Discard, counted); err != nil {
		return err
	}
	p.targets = append([]target(nil), w.sel.picked...)
	p.bytes = counted.n
	p.hash = hex.EncodeToString(w.h.Sum(nil))
	return nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

// isHTML reports whether a Content-Type is (or may be) HTML: a missing one
// is parsed too, as browsers sniff.
func isHTML(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.Contains(strings.ToLower(ct), "html")
	}
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// robotsFor returns host's robots.txt rules: from the store's cache when
// younger than the TTL, else fetched (through the host's politeness gate).
// A transport failure reaching the host is returned as the host's failure
// and not cached; HTTP answers are cached, the 5xx ones as disallow-all
// (RFC 9309 §2.3.1).
func (c *Crawler) robotsFor(ctx context.Context, page *url.URL, p *page) (*robots.Rules, ErrorKind, error) {
	host := p.lease.Host
	var rec robotsRecord
	var found bool
	err := c.store.View(func(tx *kv.Tx) error {
		var err error
		found, err = tx.Get(kv.BucketRobots, []byte(host), &rec)
		return err
	})
	if err == nil && found && c.now().Sub(rec.Fetched) < c.cfg.robotsTTL() {
		var r robots.Rules
		if err := r.UnmarshalBinary(rec.Rules); err == nil {
			return &r, "", nil
		}
	}
	robotsURL := &url.URL{Scheme: page.Scheme, Host: page.Host, Path: "/robots.txt"}
	var body []byte
	resp, kind, err := c.fetchWithRetries(ctx, host, robotsURL.String(), func(r io.Reader, resp *response) error {
		var err error
		body, err = io.ReadAll(io.LimitReader(r, robots.MaxBodyBytes))
		return err
	})
	if err != nil {
		return nil, kind, err
	}
	c.stats.robotsFetched.Add(1)
	rules := robots.FromResponse(resp.status, body)
	if data, err := rules.MarshalBinary(); err == nil {
		p.robots = &robotsRecord{Fetched: c.now(), Rules: data}
	}
	return rules, "", nil
}

// commitPage writes one page's whole result in the caller's transaction.
func (c *Crawler) commitPage(tx *kv.Tx, p *page) error {
	id := p.lease.NodeID
	if p.returned {
		_, err := frontier.Return(tx, id)
		return err
	}
	p.nodesCreated, p.edgesCreated, p.linksAdded = 0, 0, 0
	now := c.now()
	if tx.GetRaw(kv.BucketLeases, kv.U64(id)) == nil {
		return fmt.Errorf("%w: node %d (%s)", errLeaseLost, id, p.lease.Host)
	}
	n, ok, err := graph.Get(tx, id)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("crawl: leased node %d (%s) does not exist", id, p.lease.Host)
	}
	n.LastSeen = now
	n.Depth = min(n.Depth, p.lease.Depth)
	switch {
	case p.disallow:
		n.Status = graph.StatusRobotsDisallow
		n.Error = "robots.txt disallows " + p.lease.URL
	case !p.fetched:
		n.FailCount++
		n.Status = p.kind.status()
		n.Error = p.err
	default:
		n.CrawlCount++
		n.LastCrawl = now
		n.HTTPStatus, n.ContentType, n.Server = p.status, p.ctype, p.server
		n.Bytes, n.FetchMS, n.ContentHash = p.bytes, p.took.Milliseconds(), p.hash
		n.Title, n.Description, n.Error = p.title, p.desc, p.err
		n.Status = graph.StatusCrawled
		if p.kind == KindHTTP {
			n.Status = graph.StatusHTTPError
		}
	}
	if err := graph.Put(tx, &n); err != nil {
		return err
	}
	before := graph.GetCounts(tx)
	depth := p.lease.Depth + 1
	p.forwarded = false
	for _, t := range p.targets {
		dst, created, err := graph.EnsureAt(tx, t.host, t.scheme, depth, now)
		if err != nil {
			return err
		}
		if err := graph.AddEdge(tx, id, dst.ID, 1, now); err != nil {
			return err
		}
		if !c.owns(dst.Host) {
			// The edge is this shard's (it owns the source); the target's
			// node here is a stub, and its owner decides about queueing.
			fw, err := c.forward(tx, &dst, depth)
			if err != nil {
				return err
			}
			p.forwarded = p.forwarded || fw
			continue
		}
		if _, err := c.target(tx, &dst, created, depth, now); err != nil {
			return err
		}
	}
	after := graph.GetCounts(tx)
	p.nodesCreated = int64(after.Nodes - before.Nodes)
	p.edgesCreated = int64(after.Edges - before.Edges)
	p.linksAdded = int64(after.Weight - before.Weight)
	if p.robots != nil {
		if err := tx.Put(kv.BucketRobots, []byte(p.lease.Host), p.robots); err != nil {
			return err
		}
	}
	held, err := frontier.Release(tx, id)
	if err == nil && !held {
		// The claim that leased it never committed (its group failed after
		// the leases were handed out): nothing of this page may be written.
		err = fmt.Errorf("%w: node %d (%s)", errLeaseLost, id, p.lease.Host)
	}
	return err
}

// errLeaseLost fails a page commit whose lease is not in the store.
var errLeaseLost = errors.New("crawl: lease not held")

// account adds a durably committed page to the run's counters.
func (c *Crawler) account(p *page) {
	if p.returned {
		return
	}
	c.stats.nodesCreated.Add(p.nodesCreated)
	c.stats.edgesCreated.Add(p.edgesCreated)
	c.stats.linksRecorded.Add(p.linksAdded)
	c.stats.fetchNanos.Add(int64(p.took))
	switch {
	case p.disallow:
		c.stats.robotsDisallowed.Add(1)
	case p.kind != "":
		c.stats.pagesFailed.Add(1)
		c.stats.addError(p.kind)
		if p.fetched {
			c.stats.nodesCrawled.Add(1)
		}
	default:
		c.stats.pagesFetched.Add(1)
		c.stats.nodesCrawled.Add(1)
	}
}

// pending is a page whose commit was queued and not yet acknowledged.
type pending struct {
	p    *page
	done <-chan error
}

// ErrStoreFailed wraps a commit failure that stopped the crawl.
var ErrStoreFailed = errors.New("crawl: store write failed")

// Run crawls until the frontier is empty and every worker idle
// ("queue_empty"), max_pages leases were handed out ("max_pages"), ctx is
// cancelled ("signal": in-flight pages get the grace period, the rest go
// back to the frontier), or a commit fails ("error"). It writes
// metrics.log and returns the Result; the error is the commit failure.
func (c *Crawler) Run(ctx context.Context) (Result, error) {
	start := c.now()
	c.started.Store(start.UnixNano())
	c.running.Store(true)
	defer c.running.Store(false)
	hard, hardCancel := context.WithCancel(context.Background())
	defer hardCancel()
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

	workers := c.cfg.ConcurrentWorkers
	jobs := make(chan frontier.Lease)
	// Room for every page in flight, so that no worker waits to hand over a
	// finished page while the acker waits for an fsync.
	pend := make(chan pending, c.maxInflight())
	acked := make(chan struct{}, c.maxInflight())
	fatal := make(chan error, 1)

	var wg sync.WaitGroup
	for i := 1; i <= workers; i++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			w := &workerState{id: id, h: sha256.New()}
			c.setWorker(id, WorkerIdle, "")
			defer c.setWorker(id, WorkerStopped, "")
			for l := range jobs {
				p := c.process(hard, w, l)
				c.setWorker(id, WorkerIdle, "")
				if !p.returned && c.log != nil && !c.cfg.Quiet {
					c.logPage(p)
				}
				pend <- pending{p: p, done: c.store.Commit(func(tx *kv.Tx) error { return c.commitPage(tx, p) })}
			}
		}(i)
	}
	ackerDone := make(chan struct{})
	go func() {
		defer close(ackerDone)
		for pc := range pend {
			if err := <-pc.done; err != nil {
				select {
				case fatal <- fmt.Errorf("%w: page of %s: %w", ErrStoreFailed, pc.p.lease.Host, err):
				default:
				}
			} else {
				c.account(pc.p)
				if pc.p.forwarded {
					c.peer.Forwarded()
				}
			}
			acked <- struct{}{}
		}
	}()
	progressDone := make(chan struct{})
	stopProgress := make(chan struct{})
	go func() {
		defer close(progressDone)
		c.progress(stopProgress)
	}()

	reason, runErr := c.dispatch(ctx, jobs, acked, fatal)
	// Nobody reads acked any more: drain it so the acker never blocks
	// whatever is still in flight.
	go func() {
		for {
			select {
			case <-acked:
			case <-ackerDone:
				return
			}
		}
	}()
	close(jobs)
	wg.Wait()
	close(pend)
	<-ackerDone
	close(stopProgress)
	<-progressDone
	if runErr == nil {
		select {
		case runErr = <-fatal:
			reason = ReasonError
		default:
		}
	}

	c.reason.Store(&reason)
	res := c.stats.result(start, c.now(), reason)
	_ = c.store.View(func(tx *kv.Tx) error {
		g := graph.GetCounts(tx)
		res.TotalNodes, res.TotalEdges, res.TotalWeight = g.Nodes, g.Edges, g.Weight
		res.FrontierSize = frontier.Len(tx)
		return nil
	})
	if runErr != nil {
		res.Error = runErr.Error()
	}
	if c.cfg.MetricsPath != "" {
		if err := WriteMetrics(c.cfg.MetricsPath, res); err != nil {
			c.logf("ERROR", "writing %s: %v", c.cfg.MetricsPath, err)
			if runErr == nil {
				runErr = fmt.Errorf("crawl: write metrics: %w", err)
			}
		} else {
			c.logf("INFO", "Metrics written to %s", c.cfg.MetricsPath)
		}
	}
	return res, runErr
}

func (c *Crawler) logPage(p *page) {
	switch {
	case p.disallow:
		c.logf("INFO", "Worker %d skipped %s (depth=%d, disallowed by robots.txt)", p.worker, p.lease.Host, p.lease.Depth)
	case p.kind != "" && !p.fetched:
		c.logf("WARN", "Worker %d failed to fetch %s (%s: %s)", p.worker, p.lease.Host, p.kind, p.err)
	case p.kind != "":
		c.logf("WARN", "Worker %d fetched %s (depth=%d, HTTP %d)", p.worker, p.lease.Host, p.lease.Depth, p.status)
	default:
		c.logf("INFO", "Worker %d fetched %s (depth=%d, %d outbound links)", p.worker, p.lease.Host, p.lease.Depth, len(p.targets))
	}
}

// progress logs "Queue: N | Nodes: N | Edges: N" every progress interval,
// and every 2 s lets go of the store pages the crawl has read, so that a
// crawl's resident memory does not grow towards the store's size.
func (c *Crawler) progress(stop <-chan struct{}) {
	release := time.NewTicker(2 * time.Second)
	defer release.Stop()
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
			_ = c.store.View(func(tx *kv.Tx) error { tx.ReleasePages(); return nil })
		case <-logC:
			_ = c.store.View(func(tx *kv.Tx) error {
				g := graph.GetCounts(tx)
				c.logf("INFO", "Queue: %d | Nodes: %d | Edges: %d", frontier.Len(tx), g.Nodes, g.Edges)
				return nil
			})
		}
	}
}

// claimResult is what one claim transaction found.
type claimResult struct {
	leases []frontier.Lease
	queued uint64 // entries still queued after the claim
	err    error
}

// claim leases up to n ready entries in a group transaction, and hands
// them out as soon as that transaction is applied, without waiting for its
// fsync: a page commits only while its lease is in the store (commitPage
// checks), so if the claim's group then fails to commit, no page of its
// leases is ever written. A failed commit is also sent to fatal.
func (c *Crawler) claim(n int, fatal chan<- error) <-chan claimResult {
	out := make(chan claimResult, 1)
	var res claimResult
	applied, done := c.store.CommitApplied(func(tx *kv.Tx) error {
		res = claimResult{}
		now := c.now()
		var err error
		res.leases, err = frontier.Claim(tx, n, 4*n+256, now, func(e *frontier.Entry) frontier.Verdict {
			node, ok, err := graph.Get(tx, e.NodeID)
			if err != nil || !ok || node.CrawlCount >= c.cfg.MaxCrawlsPerNode {
				return frontier.Drop
			}
			if !c.gate.ready(e.Host, now) {
				return frontier.Skip
			}
			return frontier.Take
		})
		res.queued = frontier.Len(tx)
		return err
	})
	go func() {
		select {
		case <-applied:
			out <- res
		case err := <-done: // fn failed: applied is never closed
			out <- claimResult{err: err}
			return
		}
		if err := <-done; err != nil {
			select {
			case fatal <- fmt.Errorf("%w: claim: %w", ErrStoreFailed, err):
			default:
			}
		}
	}()
	return out
}

// claimAhead is the most leases claimed and not yet handed to a worker:
// enough to cover a claim's round trip through the group writer (the
// group before it, and its own run) at full speed, so that workers never
// wait for a lease. A claim is made when fewer than half are left.
func (c *Crawler) claimAhead() int { return max(16*c.cfg.ConcurrentWorkers, 128) }

// maxInflight bounds the pages handed to workers whose commit is not yet
// durable: what a slow disk may hold in memory before the dispatcher stops
// handing out work.
func (c *Crawler) maxInflight() int { return max(32*c.cfg.ConcurrentWorkers, 512) }

// dispatch keeps leases claimed ahead, hands them to workers while the
// pages in flight are fewer than maxInflight, and decides when the crawl
// ends.
func (c *Crawler) dispatch(ctx context.Context, jobs chan<- frontier.Lease, acked <-chan struct{}, fatal chan error) (string, error) {
	capacity := c.claimAhead()
	var buf []frontier.Lease
	inflight := 0 // handed to workers, commit not yet acknowledged
	var claiming <-chan claimResult
	queued := uint64(1) // unknown until the first claim: assume work
	claimedAll := false // max_pages reached
	// needClaim is false after a claim that found nothing, until something
	// changes what a claim could find: a committed page (it may have
	// queued hosts) or the politeness wait passing.
	needClaim := true
	// ackedWhileClaiming: a page committed while a claim was outstanding.
	// The claim may have run before that page's writes (in the same group
	// or an earlier one), so an empty claim proves nothing then.
	ackedWhileClaiming := false
	idle := time.NewTimer(0)
	<-idle.C
	// done is the cluster's end; nil outside a cluster.
	var done <-chan struct{}
	clusterDone := false
	if c.peer != nil {
		done = c.peer.Done()
	}

	giveBack := func(reason string, err error) (string, error) {
		if claiming != nil {
			if r := <-claiming; r.err == nil {
				buf = append(buf, r.leases...)
			}
		}
		if len(buf) > 0 {
			rerr := c.store.Update(func(tx *kv.Tx) error {
				for _, l := range buf {
					if _, err := frontier.Return(tx, l.NodeID); err != nil {
						return err
					}
				}
				return nil
			})
			if rerr != nil && err == nil {
				err = fmt.Errorf("%w: returning leases: %w", ErrStoreFailed, rerr)
			}
		}
		return reason, err
	}
	for {
		if claiming == nil && !claimedAll && len(buf) < capacity/2 {
			want := capacity - len(buf)
			if c.cfg.MaxPages > 0 {
				left := int64(c.cfg.MaxPages) - c.stats.claimed.Load()
				if left <= 0 {
					claimedAll = true
				}
				want = int(min(int64(want), left))
			}
			if want > 0 && needClaim {
				claiming = c.claim(want, fatal)
				ackedWhileClaiming = false
			}
		}
		if claiming == nil && len(buf) == 0 && inflight == 0 && (claimedAll || !needClaim) {
			if claimedAll {
				return giveBack(ReasonMaxPages, nil)
			}
			if queued == 0 && (c.peer == nil || clusterDone) {
				return giveBack(ReasonQueueEmpty, nil)
			}
		}
		var out chan<- frontier.Lease
		var next frontier.Lease
		if len(buf) > 0 && inflight < c.maxInflight() {
			out, next = jobs, buf[0]
		}
		select {
		case out <- next:
			buf = buf[1:]
			inflight++
		case <-acked:
			inflight--
			needClaim = true
			if claiming != nil {
				ackedWhileClaiming = true
			}
		case r := <-claiming:
			claiming = nil
			if r.err != nil {
				return giveBack(ReasonError, fmt.Errorf("%w: claim: %w", ErrStoreFailed, r.err))
			}
			buf = append(buf, r.leases...)
			c.stats.claimed.Add(int64(len(r.leases)))
			queued = r.queued
			if len(r.leases) == 0 && !ackedWhileClaiming {
				needClaim = false
				if queued > 0 {
					// Entries are queued but none is ready (politeness):
					// look again shortly instead of spinning.
					idle.Reset(min(max(c.cfg.delay()/10, 5*time.Millisecond), 100*time.Millisecond))
				}
			}
		case <-idle.C:
			needClaim = true
		case <-c.wake:
			needClaim = true
		case <-done:
			// The whole cluster is quiescent, so this shard's store holds
			// no entry or lease: the loop ends once its own claim agrees.
			clusterDone, done = true, nil
		case err := <-fatal:
			return giveBack(ReasonError, err)
		case <-ctx.Done():
			c.logf("INFO", "Shutdown signal received")
			return giveBack(ReasonSignal, nil)
		}
	}
}
