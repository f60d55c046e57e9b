package serve_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/serve"
)

// TestSummary_Store builds a store by hand: 14 hosts, where h<i> is
// linked from i hosts with weight 2 each (so in-weight 2i), two of them
// crawled, three frontier entries at depths 0 and 2, and one robots record.
func TestSummary_Store(t *testing.T) {
	s := storetest.MustOpen(t)
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	err := s.Update(func(tx *kv.Tx) error {
		ids := map[string]uint64{}
		for i := 0; i < 14; i++ {
			host := fmt.Sprintf("h%02d.test", i)
			n, _, err := graph.Ensure(tx, host, "http", t0)
			if err != nil {
				return err
			}
			ids[host] = n.ID
		}
		for i := 1; i < 14; i++ {
			for j := 0; j < i; j++ {
				from, to := ids[fmt.Sprintf("h%02d.test", j)], ids[fmt.Sprintf("h%02d.test", i)]
				if err := graph.AddEdge(tx, from, to, 2, t0); err != nil {
					return err
				}
			}
		}
		for i, at := range []time.Time{t0.Add(time.Hour), t0.Add(2 * time.Hour)} {
			n, _, err := graph.GetByHost(tx, fmt.Sprintf("h%02d.test", i))
			if err != nil {
				return err
			}
			n.CrawlCount, n.LastCrawl, n.Status = 1, at, graph.StatusCrawled
			if err := graph.Put(tx, &n); err != nil {
				return err
			}
		}
		for i, d := range []int{0, 2, 2} {
			host := fmt.Sprintf("h%02d.test", 10+i)
			if _, err := frontier.Push(tx, frontier.Entry{NodeID: ids[host], Host: host, URL: "http://" + host + "/", Depth: d}); err != nil {
				return err
			}
		}
		return tx.Put(kv.BucketRobots, []byte("h00.test"), map[string]string{"r": "x"})
	})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := serve.ReadSummary(s, t0)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Nodes != 14 || sum.CrawledNodes != 2 || sum.Edges != 91 || sum.TotalWeight != 182 {
		t.Errorf("counts: %+v", sum)
	}
	if sum.FrontierSize != 3 || sum.Leases != 0 || sum.RobotsCached != 1 {
		t.Errorf("frontier %d, leases %d, robots %d", sum.FrontierSize, sum.Leases, sum.RobotsCached)
	}
	if want := []serve.DepthCount{{0, 1}, {2, 2}}; fmt.Sprint(sum.FrontierByDepth) != fmt.Sprint(want) {
		t.Errorf("by depth: got %v, want %v", sum.FrontierByDepth, want)
	}
	if sum.NodesByStatus["crawled"] != 2 || sum.NodesByStatus["discovered"] != 12 {
		t.Errorf("by status: %v", sum.NodesByStatus)
	}
	if sum.LastCrawl == nil || !sum.LastCrawl.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("last crawl %v", sum.LastCrawl)
	}
	if len(sum.TopHosts) != serve.TopHosts {
		t.Fatalf("%d top hosts, want %d", len(sum.TopHosts), serve.TopHosts)
	}
	for k, h := range sum.TopHosts {
		i := 13 - k
		want := serve.HostWeight{Host: fmt.Sprintf("h%02d.test", i), InWeight: uint64(2 * i), InHosts: uint64(i), Status: "discovered"}
		if h != want {
			t.Errorf("top %d: got %+v, want %+v", k+1, h, want)
		}
	}
	if !sum.ComputedAt.Equal(t0) || sum.Created.IsZero() {
		t.Errorf("computed at %v, created %v", sum.ComputedAt, sum.Created)
	}
}

// TestSummary_Ties: equal in-weights rank by host name; an empty store
// gives empty lists, not nulls.
func TestSummary_Ties(t *testing.T) {
	s := storetest.MustOpen(t)
	sum, err := serve.ReadSummary(s, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if sum.TopHosts == nil || sum.FrontierByDepth == nil || sum.LastCrawl != nil || sum.Nodes != 0 {
		t.Errorf("empty store: %+v", sum)
	}
	err = s.Update(func(tx *kv.Tx) error {
		src, _, _ := graph.Ensure(tx, "src.test", "http", time.Now())
		for _, h := range []string{"z.test", "m.test", "a.test"} {
			n, _, err := graph.Ensure(tx, h, "http", time.Now())
			if err != nil {
				return err
			}
			if err := graph.AddEdge(tx, src.ID, n.ID, 1, time.Now()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sum, _ = serve.ReadSummary(s, time.Now())
	var got []string
	for _, h := range sum.TopHosts {
		got = append(got, h.Host)
	}
	if fmt.Sprint(got) != "[a.test m.test z.test]" {
		t.Errorf("ties ranked %v", got)
	}
}

func TestListenAddr(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{"8088", "127.0.0.1:8088", ""},
		{":8088", "127.0.0.1:8088", ""},
		{"127.0.0.1:0", "127.0.0.1:0", ""},
		{"0.0.0.0:8088", "0.0.0.0:8088", ""},
		{"[::1]:8088", "[::1]:8088", ""},
		{"localhost:9000", "localhost:9000", ""},
		{"127.0.0.1", "", "want HOST:PORT"},
		{"host:port", "", "not a number"},
		{"99999", "", "want HOST:PORT"},
	} {
		got, err := serve.ListenAddr(c.in)
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ListenAddr(%q) = %q, %v; want %q, %q", c.in, got, err, c.want, c.err)
		}
	}
	for addr, want := range map[string]bool{
		"127.0.0.1:8088": true, "[::1]:1": true, "localhost:80": true,
		"0.0.0.0:8088": false, "[::]:8088": false, "192.168.1.2:80": false, "bad": false,
	} {
		if got := serve.IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v", addr, got)
		}
	}
}
