package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// fetchBatch is the most messages applied in one transaction.
const fetchBatch = 512

// consumeLoop pulls this shard's links and applies them until ctx ends.
func (n *Node) consumeLoop(ctx context.Context, cons jetstream.Consumer) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		batch, err := cons.Fetch(fetchBatch, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			n.sleep(ctx, &backoff)
			continue
		}
		var msgs []jetstream.Msg
		for m := range batch.Messages() {
			msgs = append(msgs, m)
		}
		if len(msgs) == 0 {
			if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
				n.sleep(ctx, &backoff)
			}
			continue
		}
		backoff = 100 * time.Millisecond
		if err := n.apply(msgs); err != nil {
			// Not acknowledged: the stream delivers them again.
			n.logf("ERROR", "Cluster: applying %d links from other shards: %v", len(msgs), err)
			n.sleep(ctx, &backoff)
			continue
		}
		for _, m := range msgs {
			_ = m.Ack() // a lost ack means a redelivery, which the inbox recognises
		}
		n.crawler.Wake()
		n.pokeState()
	}
}

func (n *Node) sleep(ctx context.Context, backoff *time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(*backoff):
	}
	*backoff = min(2**backoff, 5*time.Second)
}

// apply queues msgs' links in one durable transaction, each as a link
// found by this shard's own page would be (crawl.Crawler.Admit: the
// frontier's dedup, the depth and subdomain limits), skipping those the
// inbox says were applied before, and counts the new ones as received.
// A message this weaver did not write (no id of this crawl, a malformed
// link, a host that is not one) is logged and dropped.
func (n *Node) apply(msgs []jetstream.Msg) error {
	type link struct {
		key          []byte
		host, scheme string
		depth        int
	}
	links := make([]link, 0, len(msgs))
	for _, m := range msgs {
		id := m.Headers().Get(jetstream.MsgIDHeader)
		key, ok := parseMsgID(n.name, id)
		if !ok {
			n.logf("WARN", "Cluster: dropped a message on %s without a weaver id (%q)", m.Subject(), id)
			continue
		}
		l := link{key: key}
		host, scheme, depth, err := decodeLink(m.Data())
		if err == nil {
			host, err = graph.NormalizeHost(host, scheme)
		}
		if err != nil {
			// Counted as received all the same: its sender counted it sent.
			n.logf("WARN", "Cluster: message %s: %v", id, err)
		} else {
			l.host, l.scheme, l.depth = host, scheme, depth
		}
		links = append(links, l)
	}
	var received int64
	err := <-n.store.Commit(func(tx *kv.Tx) error {
		received = 0
		for _, l := range links {
			if tx.GetRaw(kv.BucketInbox, l.key) != nil {
				continue
			}
			if l.host != "" {
				if _, err := n.crawler.Admit(tx, l.host, l.scheme, l.depth); err != nil {
					return err
				}
			}
			if err := tx.PutRaw(kv.BucketInbox, l.key, []byte{}); err != nil {
				return err
			}
			received++
		}
		_, err := tx.AddCounter(metaReceived, received)
		return err
	})
	if err == nil {
		n.consumed.Add(uint64(received))
	}
	return err
}
