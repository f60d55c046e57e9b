package cluster_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weaver-crawler/weaver/cluster"
	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/shard"
)

// startServer runs a real NATS server with JetStream on a temp dir.
func startServer(tb testing.TB) string {
	tb.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: tb.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		tb.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(20 * time.Second) {
		tb.Fatal("nats-server did not start")
	}
	tb.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s.ClientURL()
}

// member is one shard: its store, crawler (not running) and node.
type member struct {
	store *kv.Store
	c     *crawl.Crawler
	node  *cluster.Node
}

func join(tb testing.TB, url string, spec shard.Spec, seeds []string) *member {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), fmt.Sprintf("s%d.bolt", spec.K))
	m := &member{}
	node, err := cluster.Join(context.Background(), cluster.Options{URL: url, Shard: spec, Seeds: seeds}, func() (*kv.Store, error) {
		m.store = storetest.MustOpenPath(tb, path, kv.Options{})
		return m.store, nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	cfg := crawl.Defaults()
	cfg.DBPath, cfg.MetricsPath = path, ""
	cfg.MaxDepth, cfg.MaxSubdomainsPerRoot = 0, 0
	if m.c, err = crawl.New(cfg, m.store, crawl.Options{Peer: node}); err != nil {
		tb.Fatal(err)
	}
	m.node = node
	tb.Cleanup(node.Close)
	return m
}

// forward writes to m's outbox links to n distinct hosts that shard
// owns (prefix-i.example, each its own registrable domain), perTx to a
// transaction.
func forward(tb testing.TB, m *member, prefix string, owner shard.Spec, n, perTx int) {
	tb.Helper()
	var hosts []string
	for i := 0; len(hosts) < n; i++ {
		if h := fmt.Sprintf("%s-%d.example", prefix, i); owner.Owns(h) {
			hosts = append(hosts, h)
		}
	}
	for i := 0; i < n; i += perTx {
		err := m.store.Update(func(tx *kv.Tx) error {
			for _, h := range hosts[i:min(i+perTx, n)] {
				if err := m.node.Forward(tx, crawl.Link{Host: h, Scheme: "http", Depth: 1}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkLinks measures what the cluster's links cost on this machine,
// through a real NATS server: how many a shard publishes per second (its
// outbox drained to the stream, each acknowledged, then deleted), how many
// a shard consumes per second (each applied to its frontier: a node, a
// queue entry, an inbox mark, in transactions of up to 512), and the
// stream's bytes per link.
//
//	go test ./cluster -run '^$' -bench Links -benchtime 1x
func BenchmarkLinks(b *testing.B) {
	const links = 50_000
	for range b.N {
		url := startServer(b)
		seeds := []string{"http://seed.example/"}
		from := join(b, url, shard.Spec{K: 0, N: 2}, seeds)
		to := join(b, url, shard.Spec{K: 1, N: 2}, seeds)
		// links distinct hosts owned by shard 1, written to shard 0's
		// outbox the way pages write them: in their transactions.
		forward(b, from, "www.host", shard.Spec{K: 1, N: 2}, links, 100)
		start := time.Now()
		if err := from.node.Start(from.c); err != nil {
			b.Fatal(err)
		}
		for from.node.Status().Outbox > 0 || from.node.Status().Published < links {
			time.Sleep(2 * time.Millisecond)
		}
		pub := time.Since(start)

		nc, err := nats.Connect(url)
		if err != nil {
			b.Fatal(err)
		}
		js, _ := jetstream.New(nc)
		s, err := js.Stream(context.Background(), "WEAVER_"+from.node.Name())
		if err != nil {
			b.Fatal(err)
		}
		info, err := s.Info(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		nc.Close()
		if info.State.Msgs != links {
			b.Fatalf("%d messages in the stream, want %d", info.State.Msgs, links)
		}

		start = time.Now()
		if err := to.node.Start(to.c); err != nil {
			b.Fatal(err)
		}
		for to.node.Status().Consumed < links {
			time.Sleep(2 * time.Millisecond)
		}
		con := time.Since(start)
		var queued uint64
		_ = to.store.View(func(tx *kv.Tx) error { queued = tx.Counter("frontier.size"); return nil })
		if queued != links {
			b.Fatalf("shard 1 queued %d hosts, want %d", queued, links)
		}
		b.ReportMetric(links/pub.Seconds(), "links/s-published")
		b.ReportMetric(links/con.Seconds(), "links/s-consumed")
		b.ReportMetric(float64(info.State.Bytes)/float64(info.State.Msgs), "B/link-in-stream")
		b.ReportMetric(float64(len("www.host-10000.example")), "B/host-name")
	}
}
