package cluster_test

import (
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/shard"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestQuiescence_NotBeforeTheWorkIsDone: two shards on a real NATS
// server. The cluster is not done while a shard that joined has not
// published its links (it is busy from the moment it joins), nor while
// the links it sent wait in the other shard's queue; it is done, for
// both, once that queue is worked off.
func TestQuiescence_NotBeforeTheWorkIsDone(t *testing.T) {
	url := startServer(t)
	seeds := []string{"http://seed.example/"}
	from := join(t, url, shard.Spec{K: 0, N: 2}, seeds)
	to := join(t, url, shard.Spec{K: 1, N: 2}, seeds)
	const links = 200
	forward(t, from, "www.q", shard.Spec{K: 1, N: 2}, links, links)

	// Shard 1 runs, idle; shard 0 has joined (busy) but publishes nothing.
	if err := to.node.Start(to.c); err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond)
	if closed(to.node.Done()) {
		t.Fatal("done while shard 0 had joined and not published its links")
	}

	// Shard 0 publishes; shard 1 queues the links, which nobody crawls.
	if err := from.node.Start(from.c); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for to.node.Status().Consumed < links {
		if time.Now().After(deadline) {
			t.Fatalf("shard 1 applied %d of %d links", to.node.Status().Consumed, links)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(600 * time.Millisecond)
	if closed(to.node.Done()) || closed(from.node.Done()) {
		t.Fatal("done while shard 1's queue held the links shard 0 sent")
	}
	if st := from.node.Status(); st.Published != links || st.Outbox != 0 {
		t.Fatalf("shard 0: %+v", st)
	}

	// The queue is worked off (each entry dropped, as a crawl drops a host
	// it needs no more): both shards see the end.
	err := to.store.Update(func(tx *kv.Tx) error {
		_, err := frontier.Claim(tx, links, 4*links, time.Now(), func(*frontier.Entry) frontier.Verdict { return frontier.Drop })
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*member{from, to} {
		select {
		case <-m.node.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("no end 10 s after the last work: %+v", m.node.Status())
		}
	}
}

// TestQuiescence_NotWhileLinksWaitInTheStream: shard 1 ran, was idle and
// stopped (its last state: idle, nothing received); shard 0 then sends it
// links and is idle too. Every published state says idle, but the links
// sent outnumber those received: shard 0 must not see the end.
func TestQuiescence_NotWhileLinksWaitInTheStream(t *testing.T) {
	url := startServer(t)
	seeds := []string{"http://seed.example/"}
	from := join(t, url, shard.Spec{K: 0, N: 2}, seeds)
	to := join(t, url, shard.Spec{K: 1, N: 2}, seeds)
	if err := to.node.Start(to.c); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	to.node.Close()

	forward(t, from, "www.s", shard.Spec{K: 1, N: 2}, 50, 50)
	if err := from.node.Start(from.c); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for from.node.Status().Published < 50 {
		if time.Now().After(deadline) {
			t.Fatalf("shard 0 published %d of 50 links", from.node.Status().Published)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Second)
	if closed(from.node.Done()) {
		t.Fatal("done while 50 links waited in the stream for a stopped shard")
	}
}
