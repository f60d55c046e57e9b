package serve

import (
	"cmp"
	"slices"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// TopHosts is how many hosts Summary ranks by in-weight.
const TopHosts = 10

// Summary is what a store holds, read in one transaction: the part of a
// status report that needs no running crawl.
type Summary struct {
	Nodes           uint64            `json:"nodes"`
	CrawledNodes    uint64            `json:"crawled_nodes"` // nodes fetched at least once (crawl_count > 0)
	NodesByStatus   map[string]uint64 `json:"nodes_by_status"`
	Edges           uint64            `json:"edges"`
	TotalWeight     uint64            `json:"total_weight"`
	FrontierSize    uint64            `json:"frontier_size"`
	FrontierByDepth []DepthCount      `json:"frontier_by_depth"` // by depth, ascending
	Leases          uint64            `json:"leases"`
	RobotsCached    int               `json:"robots_cached"` // robots.txt outcomes in the cache
	TopHosts        []HostWeight      `json:"top_hosts"`     // by in-weight, at most TopHosts
	LastCrawl       *time.Time        `json:"last_crawl"`    // latest node fetch; null when none
	Created         time.Time         `json:"created_at"`    // when the store was created (ReadSummary only)
	ComputedAt      time.Time         `json:"computed_at"`   // when this summary was read
	ComputeSeconds  float64           `json:"compute_seconds"`
}

// DepthCount is how many frontier entries wait at one depth.
type DepthCount struct {
	Depth   int    `json:"depth"`
	Entries uint64 `json:"entries"`
}

// HostWeight is a host ranked by the links pointing at it.
type HostWeight struct {
	Host     string `json:"host"`
	InWeight uint64 `json:"in_weight"` // sum of the weights of its in-edges
	InHosts  uint64 `json:"in_hosts"`  // hosts linking to it (its in-edges)
	Status   string `json:"status"`
}

// Status is the report of GET /status and of `weaver status --json`: the
// store's Summary and, when a crawl is running, its live status.
type Status struct {
	Version string        `json:"version"`
	DBPath  string        `json:"db_path"` // absolute
	Listen  string        `json:"listen,omitempty"`
	Store   Summary       `json:"store"`
	Crawl   *crawl.Status `json:"crawl,omitempty"`
}

// ReadSummary reads s's Summary in one read transaction. It returns a
// decoding error for a damaged record.
func ReadSummary(s *kv.Store, now time.Time) (Summary, error) {
	var sum Summary
	err := s.View(func(tx *kv.Tx) error {
		var err error
		sum, err = Summarize(tx, now)
		return err
	})
	// The creation time never changes, so reading it in a transaction
	// of its own does not break the summary's consistency.
	sum.Created = s.Created()
	return sum, err
}

// Summarize reads a Summary in the caller's transaction: the counters, one
// pass over the nodes, one over the edges (in-weight per node id kept in a
// map, so memory grows with the number of nodes) and one over the frontier
// keys. It returns a decoding error for a damaged record.
func Summarize(tx *kv.Tx, now time.Time) (Summary, error) {
	start := time.Now()
	c := graph.GetCounts(tx)
	sum := Summary{
		Nodes: c.Nodes, Edges: c.Edges, TotalWeight: c.Weight,
		NodesByStatus: map[string]uint64{},
		FrontierSize:  frontier.Len(tx),
		Leases:        frontier.Leases(tx),
		RobotsCached:  tx.Len(kv.BucketRobots),
		ComputedAt:    now.UTC(),
	}
	for d, n := range frontier.ByDepth(tx) {
		sum.FrontierByDepth = append(sum.FrontierByDepth, DepthCount{Depth: d, Entries: n})
	}
	slices.SortFunc(sum.FrontierByDepth, func(a, b DepthCount) int { return cmp.Compare(a.Depth, b.Depth) })

	type in struct{ weight, hosts uint64 }
	inw := map[uint64]in{}
	err := graph.ForEachEdge(tx, func(e *graph.Edge) error {
		v := inw[e.To]
		v.weight += e.Weight
		v.hosts++
		inw[e.To] = v
		return nil
	})
	if err != nil {
		return Summary{}, err
	}
	// top holds the best TopHosts so far, best first; ties go to the
	// smaller host name so the ranking is stable.
	var top []HostWeight
	better := func(a, b HostWeight) int {
		if a.InWeight != b.InWeight {
			return cmp.Compare(b.InWeight, a.InWeight)
		}
		return cmp.Compare(a.Host, b.Host)
	}
	var last time.Time
	err = graph.ForEachNode(tx, func(n *graph.Node) error {
		sum.NodesByStatus[string(n.Status)]++
		if n.CrawlCount > 0 {
			sum.CrawledNodes++
		}
		if n.LastCrawl.After(last) {
			last = n.LastCrawl
		}
		v, ok := inw[n.ID]
		if !ok {
			return nil
		}
		h := HostWeight{Host: n.Host, InWeight: v.weight, InHosts: v.hosts, Status: string(n.Status)}
		if len(top) == TopHosts && better(h, top[len(top)-1]) >= 0 {
			return nil
		}
		i, _ := slices.BinarySearchFunc(top, h, better)
		top = slices.Insert(top, i, h)
		if len(top) > TopHosts {
			top = top[:TopHosts]
		}
		return nil
	})
	if err != nil {
		return Summary{}, err
	}
	sum.TopHosts = top
	if sum.TopHosts == nil {
		sum.TopHosts = []HostWeight{}
	}
	if sum.FrontierByDepth == nil {
		sum.FrontierByDepth = []DepthCount{}
	}
	if !last.IsZero() {
		last = last.UTC()
		sum.LastCrawl = &last
	}
	sum.ComputeSeconds = time.Since(start).Seconds()
	return sum, nil
}
