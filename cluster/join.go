package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/shard"
)

const configKey = "config"

// clusterConfig is the crawl's record in its KV bucket, written by the
// first shard to start: every later shard must agree with it.
type clusterConfig struct {
	Crawl    string            `json:"crawl"`
	Shards   int               `json:"shards"`
	Seeds    []string          `json:"seeds,omitempty"`
	Settings map[string]string `json:"settings,omitempty"`
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
	n := newNode(opt)
	if err := n.nameCrawl(open); err != nil {
		return nil, err
	}
	nc, err := n.dial(ctx)
	if err != nil {
		return nil, err
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
	if err := n.enterPatiently(ctx, open); err != nil {
		return nil, err
	}
	ok = true
	return n, nil
}

func newNode(opt Options) *Node {
	n := &Node{opt: opt, spec: opt.Shard, kick: make(chan struct{}, 1), poke: make(chan struct{}, 1), done: make(chan struct{})}
	n.logf = func(level, format string, a ...any) {
		if opt.Log != nil {
			opt.Log(level, fmt.Sprintf(format, a...))
		}
	}
	return n
}

// nameCrawl sets n.name: Options.Name, else the name of the seeds, else
// (a resume) the one recorded in the store, which it then opens.
func (n *Node) nameCrawl(open func() (*kv.Store, error)) error {
	opt := n.opt
	if opt.Name != "" {
		if !validName(opt.Name) {
			return badInput("crawl name %q: use 1 to 64 letters, digits, - and _", opt.Name)
		}
		n.name = opt.Name
	}
	if len(opt.Seeds) > 0 {
		if n.name == "" {
			name, err := CrawlName(opt.Seeds)
			if err != nil {
				return badInput("%v", err)
			}
			n.name = name
		}
		return nil
	}
	// A resume: the store names the crawl.
	store, err := open()
	if err != nil {
		return err
	}
	n.store = store
	return n.checkStore()
}

// connectTimeout bounds a connection, and twice it an attempt to enter.
func (n *Node) connectTimeout() time.Duration {
	if n.opt.ConnectTimeout <= 0 {
		return 5 * time.Second
	}
	return n.opt.ConnectTimeout
}

// dial connects to the NATS server. A shard restarted on its store (not a
// new one) may find its server restarting too: it tries again for a
// minute. A first join fails at once, so that a wrong URL is said at once.
func (n *Node) dial(ctx context.Context) (*nats.Conn, error) {
	opt := n.opt
	nc, err := n.connect()
	for patience := time.Now().Add(time.Minute); err != nil && !opt.NewStore && ctx.Err() == nil && time.Now().Before(patience); {
		n.logf("WARN", "Cluster: cannot reach the NATS server at %s (%v): trying again", Redact(opt.URL), err)
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
		nc, err = n.connect()
	}
	if err != nil {
		return nil, badInput("cannot reach the NATS server at %s: %v", Redact(opt.URL), err)
	}
	return nc, nil
}

// connect makes one connection to the NATS server, which reconnects
// for ever once made: while it is lost the crawl goes on and links wait
// in the outbox.
func (n *Node) connect() (*nats.Conn, error) {
	opt := n.opt
	return nats.Connect(opt.URL,
		nats.Name(fmt.Sprintf("weaver shard %s of %s (pid %d)", opt.Shard, n.name, os.Getpid())),
		nats.Timeout(n.connectTimeout()),
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

// enterPatiently runs enter until it succeeds. The server may be
// restarting (a shard restarted in the same minute as its NATS server,
// say): what fails for want of the server is tried again for a minute; a
// refusal or a store error is final.
func (n *Node) enterPatiently(ctx context.Context, open func() (*kv.Store, error)) error {
	patience := time.Now().Add(time.Minute)
	for {
		actx, cancel := context.WithTimeout(ctx, 2*n.connectTimeout())
		err := n.enter(actx, open)
		cancel()
		if err == nil {
			return nil
		}
		var perm permanent
		if errors.Is(err, ErrBadInput) || errors.As(err, &perm) || ctx.Err() != nil || time.Now().After(patience) {
			if errors.As(err, &perm) {
				err = perm.error
			}
			return err
		}
		n.logf("WARN", "Cluster: joining crawl %s: %v (trying again)", n.name, err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// enter is Join's part on the server: check the crawl's configuration and
// this shard's store against it, then record the membership. It may run
// again after a failure for want of the server: each step finds what an
// earlier attempt did and goes on.
func (n *Node) enter(ctx context.Context, open func() (*kv.Store, error)) error {
	if err := n.checkJetStream(ctx); err != nil {
		return err
	}
	want := clusterConfig{Crawl: n.name, Shards: n.opt.Shard.N, Seeds: sortedSeeds(n.opt.Seeds), Settings: n.opt.Settings}
	kvb, err := n.bucket(ctx)
	if err != nil {
		return err
	}
	if err := n.checkCrawl(ctx, kvb, want, open); err != nil {
		return err
	}
	// Every check passed: from here on, this shard joins.
	replicas := max(n.opt.Replicas, 1)
	if kvb == nil {
		if kvb, err = n.createBucket(ctx, want, replicas); err != nil {
			return err
		}
	}
	n.kv = kvb
	if n.stream, err = ensureStream(ctx, n.js, n.name, replicas); err != nil {
		return err
	}
	if err := n.recordMembership(); err != nil {
		return permanent{err}
	}
	// Busy before the crawl queues anything: a shard that restarts with
	// work must not be counted idle on its state from before (quiesce.go).
	st := n.readState()
	st.Idle = false
	if _, err := n.putState(ctx, st); err != nil {
		return fmt.Errorf("cluster: publish this shard's state: %w", err)
	}
	return nil
}

// checkJetStream refuses a server without JetStream.
func (n *Node) checkJetStream(ctx context.Context) error {
	if _, err := n.js.AccountInfo(ctx); err != nil {
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
			return badInput("the NATS server at %s has no JetStream (start it with -js): %v", Redact(n.opt.URL), err)
		}
		return fmt.Errorf("cluster: JetStream: %w", err)
	}
	return nil
}

// bucket returns the crawl's KV bucket, nil when the crawl has none yet.
func (n *Node) bucket(ctx context.Context) (jetstream.KeyValue, error) {
	kvb, err := n.js.KeyValue(ctx, bucketName(n.name))
	switch {
	case errors.Is(err, jetstream.ErrBucketNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("cluster: KV bucket %s: %w", bucketName(n.name), err)
	}
	return kvb, nil
}

// checkCrawl checks this shard against the crawl's bucket kvb (nil when
// the crawl is new): the configuration, then the store, which it opens
// when Join has not, then that the store is the one this shard ran with.
func (n *Node) checkCrawl(ctx context.Context, kvb jetstream.KeyValue, want clusterConfig, open func() (*kv.Store, error)) error {
	if kvb != nil {
		if err := checkConfig(ctx, kvb, want, n.opt.Shard); err != nil {
			return err
		}
	} else if len(n.opt.Seeds) == 0 {
		return badInput("crawl %s (recorded in %s) is not on the NATS server at %s: give the seed URLs to start it again", n.name, n.store.Path(), Redact(n.opt.URL))
	}
	if n.store == nil && n.opt.NewStore && kvb != nil {
		if err := n.checkPredecessor(ctx, kvb); err != nil {
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
		return n.checkPredecessor(ctx, kvb)
	}
	return nil
}

// createBucket creates the crawl's KV bucket and records want in it as
// the crawl's configuration, unless another shard did either first: then
// want must agree with what it recorded.
func (n *Node) createBucket(ctx context.Context, want clusterConfig, replicas int) (jetstream.KeyValue, error) {
	kvb, err := n.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: bucketName(n.name), Description: "weaver cluster crawl " + n.name + ": its configuration and every shard's state",
		History: 1, Storage: jetstream.FileStorage, Replicas: replicas,
	})
	if err != nil && !errors.Is(err, jetstream.ErrBucketExists) {
		return nil, fmt.Errorf("cluster: create KV bucket %s: %w", bucketName(n.name), err)
	}
	if err != nil {
		if kvb, err = n.js.KeyValue(ctx, bucketName(n.name)); err != nil {
			return nil, fmt.Errorf("cluster: KV bucket %s: %w", bucketName(n.name), err)
		}
	}
	data, _ := json.Marshal(want)
	if _, err := kvb.Create(ctx, configKey, data); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return nil, fmt.Errorf("cluster: record the crawl's configuration: %w", err)
	}
	// Another shard may have written it first: it must agree.
	if err := checkConfig(ctx, kvb, want, n.opt.Shard); err != nil {
		return nil, err
	}
	return kvb, nil
}

// recordMembership records in the store, once, the crawl and the shard
// it belongs to, and the store's id.
func (n *Node) recordMembership() error {
	return n.store.Update(func(tx *kv.Tx) error {
		if tx.MetaString(MetaShard) == "" {
			if err := tx.SetMetaString(MetaCrawl, n.name); err != nil {
				return err
			}
			if err := tx.SetMetaString(metaStoreID, n.storeID); err != nil {
				return err
			}
			return tx.SetMetaString(MetaShard, n.opt.Shard.String())
		}
		return nil
	})
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
