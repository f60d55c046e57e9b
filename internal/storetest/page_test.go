package storetest_test

import (
	"fmt"
	"time"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// claimOne leases the next entry of a host not yet crawled.
func claimOne(tx *kv.Tx, now time.Time) ([]frontier.Lease, error) {
	return frontier.Claim(tx, 1, 1000, now, func(e *frontier.Entry) frontier.Verdict {
		n, ok, err := graph.Get(tx, e.NodeID)
		if err != nil || !ok || n.CrawlCount >= 1 {
			return frontier.Drop
		}
		return frontier.Take
	})
}

// commitPage records a crawled page the way the crawler does, in one
// transaction: the node, 10 edges, 10 frontier pushes, the lease release.
func commitPage(tx *kv.Tx, l frontier.Lease, now time.Time) error {
	src, _, err := graph.Get(tx, l.NodeID)
	if err != nil {
		return err
	}
	for j := 0; j < 10; j++ {
		host := fmt.Sprintf("n%d-%d.test", l.NodeID, j)
		dst, _, err := graph.Ensure(tx, host, "http", now)
		if err != nil {
			return err
		}
		if err := graph.AddEdge(tx, src.ID, dst.ID, 1, now); err != nil {
			return err
		}
		if _, err := frontier.Push(tx, frontier.Entry{NodeID: dst.ID, Host: host, URL: "http://" + host + "/", Depth: l.Depth + 1}); err != nil {
			return err
		}
	}
	src.CrawlCount++
	src.Status = graph.StatusCrawled
	src.LastCrawl = now
	if err := graph.Put(tx, &src); err != nil {
		return err
	}
	_, err = frontier.Release(tx, l.NodeID)
	return err
}

// seedStore queues one seed host.
func seedStore(s *kv.Store, now time.Time) error {
	return s.Update(func(tx *kv.Tx) error {
		n, _, err := graph.Ensure(tx, "seed.test", "http", now)
		if err != nil {
			return err
		}
		_, err = frontier.Push(tx, frontier.Entry{NodeID: n.ID, Host: n.Host, URL: "http://seed.test/", Depth: 0})
		return err
	})
}
