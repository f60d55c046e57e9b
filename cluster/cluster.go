package cluster

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weaver-crawler/weaver/crawl"
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
