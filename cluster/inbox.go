package cluster

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// fetchBatch is the most messages applied in one transaction.
const fetchBatch = 512

// consumeLoop applies this shard's links as they arrive, until ctx ends:
// whatever has arrived (up to fetchBatch) goes in one transaction, so a
// link waits for no batch to fill and a burst costs few transactions.
// The client keeps a pull request open on the consumer and renews it
// across reconnections.
func (n *Node) consumeLoop(ctx context.Context, cons jetstream.Consumer) {
	in := make(chan jetstream.Msg, 2*fetchBatch)
	var cc jetstream.ConsumeContext
	backoff := 100 * time.Millisecond
	for cc == nil {
		var err error
		cc, err = cons.Consume(func(m jetstream.Msg) {
			select {
			case in <- m:
			case <-ctx.Done():
			}
		}, jetstream.PullMaxMessages(fetchBatch), jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) { n.logf("WARN", "Cluster: consumer: %v", err) }))
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			n.sleep(ctx, &backoff)
		}
	}
	defer cc.Stop()
	backoff = 100 * time.Millisecond
	for {
		var msgs []jetstream.Msg
		select {
		case <-ctx.Done():
			return
		case m := <-in:
			msgs = append(msgs, m)
		}
	more:
		for len(msgs) < fetchBatch {
			select {
			case m := <-in:
				msgs = append(msgs, m)
			default:
				break more
			}
		}
		for {
			err := n.apply(msgs)
			if err == nil {
				break
			}
			n.logf("ERROR", "Cluster: applying %d links from other shards: %v (retrying)", len(msgs), err)
			n.sleep(ctx, &backoff)
			if ctx.Err() != nil {
				return // not acknowledged: the stream delivers them again
			}
		}
		backoff = 100 * time.Millisecond
		for _, m := range msgs {
			_ = m.Ack() // a lost ack means a redelivery, which the inbox recognises
		}
		n.crawler.Wake()
		// A link that brought a crawled host closer may have forwarded
		// links to the hosts it links to (crawl.Crawler.Admit).
		n.wakePublisher()
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
		key []byte
		l   crawl.Link // Host "" for a message dropped
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
		dl, err := decodeLink(m.Data())
		if err == nil {
			dl.Host, err = graph.NormalizeHost(dl.Host, dl.Scheme)
		}
		if err != nil {
			// Counted as received all the same: its sender counted it sent.
			n.logf("WARN", "Cluster: message %s: %v", id, err)
		} else {
			l.l = dl
		}
		links = append(links, l)
	}
	return <-n.store.Commit(func(tx *kv.Tx) error {
		received := int64(0)
		for _, l := range links {
			if tx.GetRaw(kv.BucketInbox, l.key) != nil {
				continue
			}
			if l.l.Host != "" {
				if _, err := n.crawler.Admit(tx, l.l); err != nil {
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
}
