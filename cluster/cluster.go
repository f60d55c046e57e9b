// Package cluster makes a crawl one shard of several, over NATS JetStream.
//
// Every host belongs to one shard (package shard: rendezvous hashing of
// its registrable domain). A shard's bbolt store holds its own hosts'
// frontier, nodes and robots.txt cache, and every edge whose source it
// owns. A link to another shard's host is written, in the page's own
// transaction, to the store's outbox; a publisher hands outbox entries to
// the owner's subject of a work-queue stream with a deterministic
// Nats-Msg-Id and deletes them once the stream has acknowledged them. Each
// shard pulls its subject with a durable consumer, applies each link to
// its frontier in one transaction (recording the message as applied, in
// the inbox), then acknowledges it. Nothing is lost: an outbox entry lives
// until the stream holds it, a message until the shard's store holds it;
// a repeat of either is recognised (JetStream's duplicate window, the
// inbox).
//
// The crawl ends when the whole cluster is quiescent (quiesce.go).
package cluster

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/shard"
)

// Store meta records of a shard's store.
const (
	MetaCrawl     = "cluster.crawl"      // the cluster crawl's name
	MetaShard     = shard.MetaSpec       // "K/N"
	metaRoundOver = "cluster.round_over" // "1" once the cluster was quiescent
	metaStoreID   = "cluster.store_id"   // random, chosen when the store joins a crawl
	metaOutbox    = shard.MetaOutbox
	metaOutboxSeq = shard.MetaOutboxSeq
	metaSent      = "cluster.sent"     // outbox entries the stream acknowledged (counter)
	metaReceived  = "cluster.received" // messages applied to this store (counter)
)

// Options configure Join.
type Options struct {
	// URL is the NATS server (or a comma-separated list of a cluster's).
	URL string
	// Shard is this process's shard.
	Shard shard.Spec
	// Seeds are the crawl's seed URLs; their set names the cluster crawl.
	// Empty: the name recorded in the store (a resume).
	Seeds []string
	// Name names the cluster crawl; empty: CrawlName(Seeds). Two crawls
	// from the same seeds on one NATS server need names of their own.
	Name string
	// NewStore says the store open would create does not exist yet:
	// Join then refuses to make a shard that ran before start afresh
	// without creating the file.
	NewStore bool
	// Settings are the configuration values every shard must share
	// (max_depth, ...): a shard started with others is refused.
	Settings map[string]string
	// Replicas is the stream's and KV bucket's replication when Join
	// creates them (0: 1). An existing stream is used as it is.
	Replicas int
	// Log receives log lines (INFO, WARN, ERROR).
	Log func(level, msg string)
	// Hook, for tests, is called by the publisher at "read" (outbox
	// entries read, not yet published) and "acked" (the stream holds
	// them, the outbox still does), so that a test can kill the process in
	// either window. Nil in production.
	Hook func(stage string)
	// ConnectTimeout bounds the first connection (0: 5 s).
	ConnectTimeout time.Duration
}

// Redact returns urls (a comma-separated list) without their passwords,
// for logs and errors.
func Redact(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil && u.User != nil {
			parts[i] = u.Redacted()
		}
	}
	return strings.Join(parts, ",")
}

// ErrBadInput wraps every refusal that is the user's to fix: an
// unreachable server, another N, another crawl's store.
var ErrBadInput = errors.New("cluster")

func badInput(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrBadInput, fmt.Sprintf(format, a...))
}

// CrawlName names a cluster crawl by its seed set: the first 16 hex digits
// of the SHA-256 of its seeds, normalised (scheme and host as the crawler
// reads them), sorted and deduplicated. Every shard given the same seeds
// computes the same name, whatever their order.
func CrawlName(seeds []string) (string, error) {
	var norm []string
	for _, s := range seeds {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil {
			return "", fmt.Errorf("seed %q: %w", s, err)
		}
		h, err := graph.HostOf(u)
		if err != nil {
			return "", fmt.Errorf("seed %q: %w", s, err)
		}
		p := u.EscapedPath()
		if p == "" {
			p = "/"
		}
		if u.RawQuery != "" {
			p += "?" + u.RawQuery
		}
		norm = append(norm, strings.ToLower(u.Scheme)+"://"+h+p)
	}
	slices.Sort(norm)
	norm = slices.Compact(norm)
	sum := sha256.Sum256([]byte(strings.Join(norm, "\n")))
	return hex.EncodeToString(sum[:8]), nil
}

// Names of the JetStream objects of a crawl.
func streamName(crawlName string) string { return "WEAVER_" + crawlName }
func bucketName(crawlName string) string { return "weaver_" + crawlName }
func subject(crawlName string, k int) string {
	return "weaver." + crawlName + ".links." + strconv.Itoa(k)
}
func stateKey(k int) string { return "shard." + strconv.Itoa(k) }

const configKey = "config"

// clusterConfig is the crawl's record in its KV bucket, written by the
// first shard to start: every later shard must agree with it.
type clusterConfig struct {
	Crawl    string            `json:"crawl"`
	Shards   int               `json:"shards"`
	Seeds    []string          `json:"seeds,omitempty"`
	Settings map[string]string `json:"settings,omitempty"`
}

// Node is one shard's membership of a cluster: crawl.Peer.
type Node struct {
	opt     Options
	spec    shard.Spec
	name    string
	storeID string // the store's cluster.store_id
	store   *kv.Store
	nc      *nats.Conn
	js      jetstream.JetStream
	kv      jetstream.KeyValue
	stream  jetstream.Stream
	logf    func(level, format string, a ...any)

	crawler *crawl.Crawler
	kick    chan struct{} // the outbox has entries: publish
	poke    chan struct{} // the store changed: publish the state
	done    chan struct{} // closed when the cluster is quiescent
	isDone  atomic.Bool

	mu         sync.Mutex // guards idle and busy
	idle, busy int

	// The store's counts as readState last read them (every 50 ms, and
	// after each publish or apply): Status's figures.
	published, consumed atomic.Uint64
	outbox              atomic.Uint64

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Join connects to the NATS server, checks that this shard belongs to the
// crawl its seeds (or its store) name, and records its membership: in
// the store (MetaCrawl, MetaShard) and by publishing its state as busy,
// before the crawl queues anything. open opens (or creates) the shard's
// store; with seeds, Join calls it only once the server has been reached
// and the crawl's configuration agrees, so that a refusal creates no
// file. Join writes nothing, to the server or the store, when it refuses:
// an unreachable server, a K or N other than the crawl's, a store of
// another crawl or shard, different settings. Those errors wrap
// ErrBadInput. The caller closes the store.
func Join(ctx context.Context, opt Options, open func() (*kv.Store, error)) (*Node, error) {
	if opt.Shard.N < 1 || opt.Shard.K < 0 || opt.Shard.K >= opt.Shard.N {
		return nil, badInput("shard %d/%d out of range", opt.Shard.K, opt.Shard.N)
	}
	n := &Node{opt: opt, spec: opt.Shard, kick: make(chan struct{}, 1), poke: make(chan struct{}, 1), done: make(chan struct{})}
	n.logf = func(level, format string, a ...any) {
		if opt.Log != nil {
			opt.Log(level, fmt.Sprintf(format, a...))
		}
	}
	if opt.Name != "" {
		if !validName(opt.Name) {
			return nil, badInput("crawl name %q: use 1 to 64 letters, digits, - and _", opt.Name)
		}
		n.name = opt.Name
	}
	if len(opt.Seeds) > 0 {
		if n.name == "" {
			name, err := CrawlName(opt.Seeds)
			if err != nil {
				return nil, badInput("%v", err)
			}
			n.name = name
		}
	} else {
		// A resume: the store names the crawl.
		store, err := open()
		if err != nil {
			return nil, err
		}
		n.store = store
		if err := n.checkStore(); err != nil {
			return nil, err
		}
	}

	timeout := opt.ConnectTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	connect := func() (*nats.Conn, error) {
		return nats.Connect(opt.URL,
			nats.Name(fmt.Sprintf("weaver shard %s of %s (pid %d)", opt.Shard, n.name, os.Getpid())),
			nats.Timeout(timeout),
			nats.MaxReconnects(-1),
			nats.ReconnectWait(500*time.Millisecond),
			nats.ReconnectBufSize(-1), // publishes fail fast while disconnected; the outbox waits
			nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
				if err != nil {
					n.logf("WARN", "Cluster: lost the NATS server (%v): crawling on, links wait in the outbox", err)
				}
			}),
			nats.ReconnectHandler(func(c *nats.Conn) {
				n.logf("INFO", "Cluster: reconnected to %s", c.ConnectedUrlRedacted())
				n.wakePublisher()
			}),
		)
	}
	// A shard restarted on its store (not a new one) may find its server
	// restarting too: it tries again for a minute. A first join fails at
	// once, so that a wrong URL is said at once.
	nc, err := connect()
	for patience := time.Now().Add(time.Minute); err != nil && !opt.NewStore && ctx.Err() == nil && time.Now().Before(patience); {
		n.logf("WARN", "Cluster: cannot reach the NATS server at %s (%v): trying again", Redact(opt.URL), err)
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
		nc, err = connect()
	}
	if err != nil {
		return nil, badInput("cannot reach the NATS server at %s: %v", Redact(opt.URL), err)
	}
	n.nc = nc
	ok := false
	defer func() {
		if !ok {
			nc.Close()
		}
	}()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	n.js = js
	// The server may be restarting (a shard restarted in the same minute
	// as its NATS server, say): what fails for want of the server is tried
	// again for a minute; a refusal or a store error is final.
	patience := time.Now().Add(time.Minute)
	for {
		actx, cancel := context.WithTimeout(ctx, 2*timeout)
		err := n.enter(actx, open)
		cancel()
		if err == nil {
			break
		}
		var perm permanent
		if errors.Is(err, ErrBadInput) || errors.As(err, &perm) || ctx.Err() != nil || time.Now().After(patience) {
			if errors.As(err, &perm) {
				err = perm.error
			}
			return nil, err
		}
		n.logf("WARN", "Cluster: joining crawl %s: %v (trying again)", n.name, err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	ok = true
	return n, nil
}

// permanent marks an error of Join's that trying again cannot mend (the
// store's).
type permanent struct{ error }

// enter is Join's part on the server: check the crawl's configuration and
// this shard's store against it, then record the membership. It may run
// again after a failure for want of the server: each step finds what an
// earlier attempt did and goes on.
func (n *Node) enter(cctx context.Context, open func() (*kv.Store, error)) error {
	opt, js := n.opt, n.js
	var err error
	if _, err := js.AccountInfo(cctx); err != nil {
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
			return badInput("the NATS server at %s has no JetStream (start it with -js): %v", Redact(opt.URL), err)
		}
		return fmt.Errorf("cluster: JetStream: %w", err)
	}
	want := clusterConfig{Crawl: n.name, Shards: opt.Shard.N, Seeds: sortedSeeds(opt.Seeds), Settings: opt.Settings}
	kvb, err := js.KeyValue(cctx, bucketName(n.name))
	switch {
	case errors.Is(err, jetstream.ErrBucketNotFound):
		kvb = nil
	case err != nil:
		return fmt.Errorf("cluster: KV bucket %s: %w", bucketName(n.name), err)
	}
	if kvb != nil {
		if err := checkConfig(cctx, kvb, want, opt.Shard); err != nil {
			return err
		}
	} else if len(opt.Seeds) == 0 {
		return badInput("crawl %s (recorded in %s) is not on the NATS server at %s: give the seed URLs to start it again", n.name, n.store.Path(), Redact(opt.URL))
	}

	if n.store == nil && opt.NewStore && kvb != nil {
		if err := n.checkPredecessor(cctx, kvb); err != nil {
			return err
		}
	}
	if n.store == nil {
		store, err := open()
		if err != nil {
			return permanent{err}
		}
		n.store = store
		if err := n.checkStore(); err != nil {
			return err
		}
	}
	if kvb != nil {
		if err := n.checkPredecessor(cctx, kvb); err != nil {
			return err
		}
	}

	// Every check passed: from here on, this shard joins.
	replicas := max(opt.Replicas, 1)
	if kvb == nil {
		kvb, err = js.CreateKeyValue(cctx, jetstream.KeyValueConfig{
			Bucket: bucketName(n.name), Description: "weaver cluster crawl " + n.name + ": its configuration and every shard's state",
			History: 1, Storage: jetstream.FileStorage, Replicas: replicas,
		})
		if err != nil && !errors.Is(err, jetstream.ErrBucketExists) {
			return fmt.Errorf("cluster: create KV bucket %s: %w", bucketName(n.name), err)
		}
		if err != nil {
			if kvb, err = js.KeyValue(cctx, bucketName(n.name)); err != nil {
				return fmt.Errorf("cluster: KV bucket %s: %w", bucketName(n.name), err)
			}
		}
		data, _ := json.Marshal(want)
		if _, err := kvb.Create(cctx, configKey, data); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("cluster: record the crawl's configuration: %w", err)
		}
		// Another shard may have written it first: it must agree.
		if err := checkConfig(cctx, kvb, want, opt.Shard); err != nil {
			return err
		}
	}
	n.kv = kvb
	if n.stream, err = ensureStream(cctx, js, n.name, replicas); err != nil {
		return err
	}
	if err := n.store.Update(func(tx *kv.Tx) error {
		if tx.MetaString(MetaShard) == "" {
			if err := tx.SetMetaString(MetaCrawl, n.name); err != nil {
				return err
			}
			if err := tx.SetMetaString(metaStoreID, n.storeID); err != nil {
				return err
			}
			return tx.SetMetaString(MetaShard, opt.Shard.String())
		}
		return nil
	}); err != nil {
		return permanent{err}
	}
	// Busy before the crawl queues anything: a shard that restarts with
	// work must not be counted idle on its state from before (quiesce.go).
	st := n.readState()
	st.Idle = false
	if _, err := n.putState(cctx, st); err != nil {
		return fmt.Errorf("cluster: publish this shard's state: %w", err)
	}
	return nil
}

// checkPredecessor refuses a store that is not the one this shard of the
// crawl ran with: a shard's counts of links sent and received, and its
// outbox's message ids, are its store's, so a new store in a crawl under
// way would lose links (their ids taken for repeats) and could end the
// crawl early.
func (n *Node) checkPredecessor(ctx context.Context, kvb jetstream.KeyValue) error {
	e, err := kvb.Get(ctx, stateKey(n.spec.K))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cluster: read shard %s's state: %w", n.spec, err)
	}
	var st State
	if json.Unmarshal(e.Value(), &st) != nil || st.StoreID == n.storeID {
		return nil
	}
	return badInput("shard %s of crawl %s ran with another store (on %s, pid %d): resume it with that store, or name a new crawl with --crawl-name", n.spec, n.name, st.Host, st.PID)
}

// checkStore refuses a store of another crawl or shard, or one written
// outside a cluster; n.name is set from the store when it has none yet.
func (n *Node) checkStore() error {
	var storeCrawl, storeShard string
	var nodes uint64
	err := n.store.View(func(tx *kv.Tx) error {
		storeCrawl, storeShard = tx.MetaString(MetaCrawl), tx.MetaString(MetaShard)
		n.storeID = tx.MetaString(metaStoreID)
		nodes = graph.GetCounts(tx).Nodes
		return nil
	})
	if err != nil {
		return fmt.Errorf("cluster: reading %s: %w", n.store.Path(), err)
	}
	path := n.store.Path()
	switch {
	case storeShard != "" && storeShard != n.spec.String():
		return badInput("%s is the store of shard %s of crawl %s, not of shard %s: give each shard its own store", path, storeShard, storeCrawl, n.spec)
	case storeShard == "" && nodes > 0:
		return badInput("%s holds a crawl made outside a cluster: give the shard a new store", path)
	case n.name == "" && storeCrawl == "":
		return badInput("no seed URLs, and %s records no cluster crawl: give the seed URLs", path)
	case n.name == "":
		n.name = storeCrawl
	case storeCrawl != "" && storeCrawl != n.name:
		return badInput("%s belongs to cluster crawl %s, not to crawl %s (named by the seeds or --crawl-name)", path, storeCrawl, n.name)
	}
	if n.storeID == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		n.storeID = hex.EncodeToString(b[:]) // a new store: it is written when the shard joins
	}
	return nil
}

// validName reports whether s can name a crawl: it becomes part of
// stream, bucket and subject names.
func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func sortedSeeds(seeds []string) []string {
	out := slices.Clone(seeds)
	slices.Sort(out)
	return slices.Compact(out)
}

// checkConfig compares the crawl's recorded configuration with this
// shard's: N, and the settings that shape the graph.
func checkConfig(ctx context.Context, kvb jetstream.KeyValue, want clusterConfig, spec shard.Spec) error {
	e, err := kvb.Get(ctx, configKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cluster: read the crawl's configuration: %w", err)
	}
	var got clusterConfig
	if err := json.Unmarshal(e.Value(), &got); err != nil {
		return fmt.Errorf("cluster: the crawl's configuration in %s is damaged: %w", kvb.Bucket(), err)
	}
	if got.Shards != want.Shards {
		return badInput("crawl %s has %d shards; this one was started as shard %s", want.Crawl, got.Shards, spec)
	}
	for _, k := range slices.Sorted(keys(got.Settings, want.Settings)) {
		if got.Settings[k] != want.Settings[k] {
			return badInput("crawl %s runs with %s=%s; this shard was given %s (every shard needs the same settings)", want.Crawl, k, settingText(k, got.Settings[k]), settingText(k, want.Settings[k]))
		}
	}
	return nil
}

// settingText quotes a setting's value for a message; a limit of 0 reads
// as what it means.
func settingText(key, v string) string {
	if v == "0" && strings.HasPrefix(key, "max_") {
		return `"0" (no limit)`
	}
	return strconv.Quote(v)
}

func keys(ms ...map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range ms {
			for k := range m {
				if !seen[k] {
					seen[k] = true
					if !yield(k) {
						return
					}
				}
			}
		}
	}
}

// ensureStream returns the crawl's stream, creating it when absent: a
// work queue (a message is gone once its shard acknowledged it), on disk,
// with a duplicate window long enough for a shard to restart and publish
// again what it had published just before a crash.
func ensureStream(ctx context.Context, js jetstream.JetStream, name string, replicas int) (jetstream.Stream, error) {
	s, err := js.Stream(ctx, streamName(name))
	if err == nil {
		return s, nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("cluster: stream %s: %w", streamName(name), err)
	}
	s, err = js.CreateStream(ctx, jetstream.StreamConfig{
		Name:        streamName(name),
		Description: "weaver cluster crawl " + name + ": links for each shard",
		Subjects:    []string{"weaver." + name + ".links.*"},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
		Duplicates:  DuplicateWindow,
	})
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return js.Stream(ctx, streamName(name))
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: create stream %s: %w", streamName(name), err)
	}
	return s, nil
}

// DuplicateWindow is how long the stream remembers a message id. A repeat
// after it is still harmless (the receiver's inbox knows the id); the
// window only saves the stream the space.
const DuplicateWindow = 10 * time.Minute

// Name is the cluster crawl's name.
func (n *Node) Name() string { return n.name }

// Start runs the publisher, the consumer and the state publisher for c
// until Close. Call it after c.Prepare.
func (n *Node) Start(c *crawl.Crawler) error {
	n.crawler = c
	if err := n.store.Update(func(tx *kv.Tx) error {
		if tx.MetaString(metaRoundOver) == "" {
			return nil
		}
		return tx.SetMetaString(metaRoundOver, "")
	}); err != nil {
		return err
	}
	cons, err := n.consumer(context.Background())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	n.wg.Add(3)
	go func() { defer n.wg.Done(); n.publishLoop(ctx) }()
	go func() { defer n.wg.Done(); n.consumeLoop(ctx, cons) }()
	go func() { defer n.wg.Done(); n.stateLoop(ctx) }()
	n.wakePublisher()
	return nil
}

// consumer is this shard's durable pull consumer of its subject. A server
// that is restarting (JetStream recovering its streams) is tried again for
// a minute, as joining does.
func (n *Node) consumer(ctx context.Context) (jetstream.Consumer, error) {
	patience := time.Now().Add(time.Minute)
	for {
		c, err := n.makeConsumer(ctx)
		if err == nil || ctx.Err() != nil || time.Now().After(patience) {
			return c, err
		}
		n.logf("WARN", "%v (trying again)", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (n *Node) makeConsumer(ctx context.Context) (jetstream.Consumer, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	c, err := n.stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       "shard-" + strconv.Itoa(n.spec.K),
		Description:   "weaver shard " + n.spec.String() + " of crawl " + n.name,
		FilterSubject: subject(n.name, n.spec.K),
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       5 * time.Second, // a killed shard's unacknowledged links return to the stream this soon
		MaxAckPending: 4 * fetchBatch,
		MaxDeliver:    -1,
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: consumer of shard %s: %w", n.spec, err)
	}
	return c, nil
}

// Close stops the shard's goroutines: a last try to drain the outbox and
// publish the state, then the connection closes. Whatever is left waits
// in the store for the next start.
func (n *Node) Close() {
	if n.cancel != nil {
		n.cancel()
		n.wg.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if n.nc.IsConnected() {
			for {
				k, err := n.publishBatch(ctx)
				if err != nil || k == 0 {
					break
				}
			}
			st := n.readState()
			_, _ = n.putState(ctx, st)
		}
		cancel()
	}
	n.nc.Close()
}

// Owns implements crawl.Peer.
func (n *Node) Owns(host string) bool { return n.spec.Owns(host) }

// Done implements crawl.Peer.
func (n *Node) Done() <-chan struct{} { return n.done }

// RoundOver implements crawl.Peer.
func (n *Node) RoundOver(tx *kv.Tx) bool { return tx.MetaString(metaRoundOver) == "1" }

// Forwarded implements crawl.Peer.
func (n *Node) Forwarded() { n.wakePublisher() }

func (n *Node) wakePublisher() {
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

func (n *Node) pokeState() {
	select {
	case n.poke <- struct{}{}:
	default:
	}
}

// Status implements crawl.Peer.
func (n *Node) Status() crawl.ClusterStatus {
	n.mu.Lock()
	idle, busy := n.idle, n.busy
	n.mu.Unlock()
	return crawl.ClusterStatus{
		Crawl: n.name, Shard: n.spec.K, Shards: n.spec.N, Connected: n.nc.IsConnected(),
		Outbox: n.outbox.Load(), Published: n.published.Load(), Consumed: n.consumed.Load(),
		ShardsIdle: idle, ShardsBusy: busy, Done: n.isDone.Load(),
	}
}

var _ crawl.Peer = (*Node)(nil)
