package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// Termination is a distributed-quiescence problem: a shard whose own
// queue is empty may yet be given work by a link another shard is about
// to send. Each shard publishes, to the crawl's KV bucket, its state read
// in ONE store transaction: idle (no frontier entry, no lease, nothing in
// the outbox) or busy, with its cumulative counts of links sent (outbox
// entries the stream acknowledged, counted in the transaction that
// deletes them) and received (messages applied, counted in the
// transaction that applies them). A shard publishes busy on joining,
// before it queues anything.
//
// A shard decides that the cluster is done when it reads every shard's
// state twice in a row (two waves), finds each present and idle in both,
// each key at the same revision in both, and the sums of sent and
// received equal.
//
// Why it cannot end early. Equal revisions mean every shard's state was
// unchanged over an interval; take an instant T in it. Suppose some
// shard had work at T. Its published state is idle, read at Q ≤ T, so the
// work arrived after Q, and work arrives only in a message (a start
// publishes busy first, which would change the revision). Take the
// earliest such arrival, message m to shard B from shard A. m's outbox
// entry was written by a page A committed while holding a lease; if that
// was after A's own read Q_A, A had work after Q_A before m arrived,
// which is earlier than the earliest: so it was before Q_A, and since A
// was idle at Q_A (empty outbox) the entry had been deleted, i.e. m was
// counted in A's published sent. m was applied after Q_B, so it is not in
// B's published received. Every message counted in a published received
// is in a published sent (its sender's outbox held it until then, and a
// sender with an entry in its outbox is not idle). So Σsent > Σreceived:
// a contradiction. Hence at T no shard had work and no message was in
// flight, and nothing can give any shard work again.

// State is a shard's published state: the value of "shard.K".
type State struct {
	Shard    int       `json:"shard"`
	Shards   int       `json:"shards"`
	Idle     bool      `json:"idle"`
	Sent     uint64    `json:"sent"`
	Received uint64    `json:"received"`
	Outbox   uint64    `json:"outbox"`
	Queue    uint64    `json:"queue"`
	Leases   uint64    `json:"leases"`
	Nodes    uint64    `json:"nodes"`
	Edges    uint64    `json:"edges"`
	StoreID  string    `json:"store"` // the shard's store (cluster.store_id)
	Host     string    `json:"host,omitempty"`
	PID      int       `json:"pid,omitempty"`
	Updated  time.Time `json:"updated"`
}

// same reports whether two states say the same (Updated aside).
func (s State) same(o State) bool {
	s.Updated, o.Updated = time.Time{}, time.Time{}
	return s == o
}

// hostname names this machine in the shards' states.
var hostname, _ = os.Hostname()

// readState reads this shard's state from its store in one transaction.
func (n *Node) readState() State {
	st := State{Shard: n.spec.K, Shards: n.spec.N, PID: os.Getpid(), StoreID: n.storeID, Host: hostname}
	err := n.store.View(func(tx *kv.Tx) error {
		st.Queue, st.Leases = frontier.Len(tx), frontier.Leases(tx)
		st.Outbox = tx.Counter(metaOutbox)
		if k, _ := tx.Cursor(kv.BucketOutbox).First(); k != nil {
			st.Outbox = max(st.Outbox, 1) // the entries, not the counter, decide
		}
		st.Sent, st.Received = tx.Counter(metaSent), tx.Counter(metaReceived)
		g := graph.GetCounts(tx)
		st.Nodes, st.Edges = g.Nodes, g.Edges
		return nil
	})
	// Fails closed: a shard that cannot read its store is not idle, or the
	// cluster could end with its work undone.
	st.Idle = err == nil && st.Queue == 0 && st.Leases == 0 && st.Outbox == 0
	if err != nil {
		n.logf("WARN", "Cluster: reading this shard's state: %v", err)
		return st
	}
	n.published.Store(st.Sent)
	n.consumed.Store(st.Received)
	n.outbox.Store(st.Outbox)
	return st
}

func (n *Node) putState(ctx context.Context, st State) (uint64, error) {
	st.Updated = time.Now().UTC()
	data, _ := json.Marshal(st)
	return n.kv.Put(ctx, stateKey(n.spec.K), data)
}

// stateLoop publishes this shard's state and, while the shard is idle,
// looks for the cluster's quiescence. It reads the state every 50 ms: a
// change between idle and busy, or any change while idle, is published
// at once (the end of a crawl waits on it); progress while busy at most
// every 500 ms.
func (n *Node) stateLoop(ctx context.Context) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last State
	var lastPut time.Time
	published := false
	census := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-n.poke:
		}
		st := n.readState()
		changed := !st.same(last)
		if !published || st.Idle != last.Idle || (changed && (st.Idle || time.Since(lastPut) >= 500*time.Millisecond)) {
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := n.putState(pctx, st)
			cancel()
			if err != nil {
				published = false
				continue
			}
			last, published, lastPut = st, true, time.Now()
		}
		if n.isDone.Load() {
			continue
		}
		if !st.Idle {
			// Only for /status: how many shards are idle and busy.
			if time.Since(census) > 2*time.Second {
				census = time.Now()
				cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				_, _, _ = n.wave(cctx)
				cancel()
			}
			continue
		}
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		done, err := n.quiescent(dctx)
		cancel()
		if err != nil || !done {
			continue
		}
		if err := n.store.Update(func(tx *kv.Tx) error { return tx.SetMetaString(metaRoundOver, "1") }); err != nil {
			n.logf("ERROR", "Cluster: recording the end of the crawl: %v", err)
			continue
		}
		n.logf("INFO", "Cluster: every shard of crawl %s is idle and every link delivered: the crawl is complete", n.name)
		n.isDone.Store(true)
		close(n.done)
	}
}

// quiescent reads every shard's state in two waves (see the top of this
// file) and reports whether the cluster is done.
func (n *Node) quiescent(ctx context.Context) (bool, error) {
	first, ok, err := n.wave(ctx)
	if err != nil || !ok {
		return false, err
	}
	second, ok, err := n.wave(ctx)
	if err != nil || !ok {
		return false, err
	}
	for i := range first {
		if first[i] != second[i] {
			return false, nil
		}
	}
	return true, nil
}

// wave reads every shard's state: their revisions, and whether all are
// present and idle with as many links received as sent.
func (n *Node) wave(ctx context.Context) (revs []uint64, ok bool, err error) {
	var sent, received uint64
	idle, busy := 0, 0
	ok = true
	for k := range n.spec.N {
		e, err := n.kv.Get(ctx, stateKey(k))
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			ok = false
			continue
		}
		if err != nil {
			return nil, false, err
		}
		var st State
		if json.Unmarshal(e.Value(), &st) != nil || !st.Idle {
			ok = false
			busy++
			continue
		}
		idle++
		sent += st.Sent
		received += st.Received
		revs = append(revs, e.Revision())
	}
	n.mu.Lock()
	n.idle, n.busy = idle, busy
	n.mu.Unlock()
	return revs, ok && sent == received, nil
}
