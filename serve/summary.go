package serve

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/crawlwarc"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/rank"
)

// TopHosts is how many hosts Summary ranks by in-weight.
const TopHosts = 10

// Summary is what a store holds, read in one transaction: the part of a
// status report that needs no running crawl.
type Summary struct {
	Nodes         uint64            `json:"nodes"`
	CrawledNodes  uint64            `json:"crawled_nodes"` // nodes fetched at least once (crawl_count > 0)
	NodesByStatus map[string]uint64 `json:"nodes_by_status"`
	// NodesByError counts the nodes whose last fetch failed by the kind
	// of failure their last_error names (crawl.ErrorKind: dns, timeout,
	// tls_expired, tls_unknown_ca, ...).
	NodesByError map[string]uint64 `json:"nodes_by_error"`
	// NodesByTLSProblem counts the hosts crawled with --insecure whose
	// TLS a verifying client refuses, by problem (Node.TLSProblem:
	// tls_expired, tls_self_signed, tls_legacy, ...).
	NodesByTLSProblem map[string]uint64 `json:"nodes_by_tls_problem"`
	// Redirected counts the hosts whose home page, at their last crawl,
	// redirected to another host (Node.RedirectTo): crawled, and that
	// host crawled on its own.
	Redirected      uint64       `json:"redirected"`
	Edges           uint64       `json:"edges"`
	TotalWeight     uint64       `json:"total_weight"`
	FrontierSize    uint64       `json:"frontier_size"`
	FrontierByDepth []DepthCount `json:"frontier_by_depth"` // by depth, ascending
	// HostsByDepth counts the hosts at each depth, their distance in links
	// recorded from the nearest seed, and of them the hosts crawled.
	HostsByDepth   []DepthHosts  `json:"hosts_by_depth"` // by depth, ascending
	Leases         uint64        `json:"leases"`
	RobotsCached   int           `json:"robots_cached"` // robots.txt outcomes in the cache
	TopHosts       []HostWeight  `json:"top_hosts"`     // by in-weight, at most TopHosts
	TopPageRank    []HostRank    `json:"top_pagerank"`  // by PageRank, at most TopHosts
	MirrorGroups   []MirrorGroup `json:"mirror_groups"` // the largest, at most TopMirrorGroups
	LastCrawl      *time.Time    `json:"last_crawl"`    // latest node fetch; null when none
	Created        time.Time     `json:"created_at"`    // when the store was created (ReadSummary only)
	ComputedAt     time.Time     `json:"computed_at"`   // when this summary was read
	ComputeSeconds float64       `json:"compute_seconds"`
	// Settings are the config values the store's crawl runs by
	// (crawl.SettingKeys; 0 of max_depth, max_subdomains_per_root or
	// max_outbound_links means no limit); null for a store no crawl of
	// this weaver has started on yet.
	Settings crawl.Settings `json:"settings"`
	// Warc is the WARC files of the store's crawl (--warc); null when it
	// writes none.
	Warc *WarcFiles `json:"warc"`
	// Revisits is the store's life as a living graph (issue 27): null
	// for a store no host of which was crawled twice or scheduled.
	Revisits *RevisitSummary `json:"revisits"`
}

// RevisitSummary counts the crawls of hosts crawled before: revisits, of
// them answered 304 and that found a change, the hosts scheduled for a
// revisit, and the next due time (null when none is scheduled).
type RevisitSummary struct {
	Revisits    uint64     `json:"revisits"`
	NotModified uint64     `json:"not_modified"`
	Changed     uint64     `json:"changed"`
	Scheduled   uint64     `json:"scheduled"`
	NextDue     *time.Time `json:"next_due"`
}

// WarcFiles are the WARC files in the directory a crawl writes them to.
type WarcFiles struct {
	Dir   string `json:"dir"`
	Files int    `json:"files"` // .warc.gz files, the one being written included
	Bytes int64  `json:"bytes"`
}

// readWarcFiles counts the WARC files in dir whose names start with
// prefix and a dash (every WARC file for an empty prefix: a store of a
// weaver that did not record it).
func readWarcFiles(dir, prefix string) *WarcFiles {
	w := &WarcFiles{Dir: dir}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !(strings.HasSuffix(name, ".warc.gz") || strings.HasSuffix(name, ".warc.gz.open")) {
			continue
		}
		if prefix != "" && !strings.HasPrefix(name, prefix+"-") {
			continue
		}
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
			w.Files++
			w.Bytes += fi.Size()
		}
	}
	return w
}

// TopMirrorGroups is how many mirror groups Summary lists, and
// MirrorHosts how many hosts of each.
const (
	TopMirrorGroups = 5
	MirrorHosts     = 5
)

// MirrorGroup is a set of hosts whose home pages are the same bytes
// (graph.MirrorGroups): the first host seen and the copies.
type MirrorGroup struct {
	First       string   `json:"first"`
	Size        int      `json:"size"`         // hosts, the first included
	Hosts       []string `json:"hosts"`        // the first MirrorHosts hosts, the first one first
	ContentHash string   `json:"content_hash"` // hex sha256 of the home page
}

// DepthCount is how many frontier entries wait at one depth.
type DepthCount struct {
	Depth   int    `json:"depth"`
	Entries uint64 `json:"entries"`
}

// DepthHosts is how many hosts are at one depth, and how many of them
// were crawled (crawl_count > 0).
type DepthHosts struct {
	Depth   int    `json:"depth"`
	Hosts   uint64 `json:"hosts"`
	Crawled uint64 `json:"crawled"`
}

// HostWeight is a host ranked by the links pointing at it.
type HostWeight struct {
	Host     string `json:"host"`
	InWeight uint64 `json:"in_weight"` // sum of the weights of its in-edges
	InHosts  uint64 `json:"in_hosts"`  // hosts linking to it (its in-edges)
	Status   string `json:"status"`
}

// HostRank is a host ranked by its PageRank (weighted by link weight,
// networkx.pagerank(G, weight="weight"); see package rank).
type HostRank struct {
	Host     string  `json:"host"`
	PageRank float64 `json:"pagerank"`
	InWeight uint64  `json:"in_weight"`
	Status   string  `json:"status"`
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
// map, and the graph in rank's compact form for PageRank, so memory grows
// with the graph: ~60 bytes per node and 12 per edge) and one over the
// frontier keys. PageRank adds ~15 % to the passes' time (1M hosts, 10M
// edges: ~1 s). It returns a decoding error for a damaged record, or
// rank's error for an edge whose node is missing.
func Summarize(tx *kv.Tx, now time.Time) (Summary, error) {
	start := time.Now()
	c := graph.GetCounts(tx)
	s := &summarizer{
		sum: Summary{
			Nodes: c.Nodes, Edges: c.Edges, TotalWeight: c.Weight,
			NodesByStatus:     map[string]uint64{},
			NodesByError:      map[string]uint64{},
			FrontierSize:      frontier.Len(tx),
			NodesByTLSProblem: map[string]uint64{},
			Leases:            frontier.Leases(tx),
			RobotsCached:      tx.Len(kv.BucketRobots),
			ComputedAt:        now.UTC(),
		},
		inw:     map[uint64]inWeight{},
		ranks:   rank.NewBuilder(int(min(c.Nodes, 1<<32)), int(min(c.Edges, 1<<32))),
		byDepth: map[int]DepthHosts{},
	}
	s.store(tx)
	if err := graph.ForEachEdge(tx, s.edge); err != nil {
		return Summary{}, err
	}
	if err := graph.ForEachNode(tx, s.node); err != nil {
		return Summary{}, err
	}
	sum := s.summary()
	var err error
	if sum.TopPageRank, err = topPageRank(tx, s.ranks, func(id uint64) uint64 { return s.inw[id].weight }); err != nil {
		return Summary{}, err
	}
	if sum.MirrorGroups, err = mirrorGroups(tx); err != nil {
		return Summary{}, err
	}
	sum.ComputeSeconds = time.Since(start).Seconds()
	return sum, nil
}

// summarizer is Summarize's passes over the store: what they have added
// up so far.
type summarizer struct {
	sum     Summary
	inw     map[uint64]inWeight // by node id
	ranks   *rank.Builder       // the graph, for PageRank
	top     []HostWeight        // the best TopHosts so far, best first
	last    time.Time           // the latest crawl
	rv      RevisitSummary
	byDepth map[int]DepthHosts
}

// inWeight is the links into a host: their summed weight, and the hosts
// they come from.
type inWeight struct{ weight, hosts uint64 }

// store reads the stored settings, the WARC files and the frontier.
func (s *summarizer) store(tx *kv.Tx) {
	s.sum.Settings, _ = crawl.ReadSettings(tx) // a damaged record shows as none; the next crawl rewrites it
	if dir := tx.MetaString(crawlwarc.MetaDir); dir != "" {
		s.sum.Warc = readWarcFiles(dir, tx.MetaString(crawlwarc.MetaPrefix))
	}
	for d, n := range frontier.ByDepth(tx) {
		s.sum.FrontierByDepth = append(s.sum.FrontierByDepth, DepthCount{Depth: d, Entries: n})
	}
	slices.SortFunc(s.sum.FrontierByDepth, func(a, b DepthCount) int { return cmp.Compare(a.Depth, b.Depth) })
}

// edge adds an edge to its target's in-weight and to the graph.
func (s *summarizer) edge(e *graph.Edge) error {
	v := s.inw[e.To]
	v.weight += e.Weight
	v.hosts++
	s.inw[e.To] = v
	return s.ranks.AddEdge(e.From, e.To, e.Weight)
}

// node counts a node by status, error, depth and crawls, adds it to the
// graph, and to the top hosts if it is among them.
func (s *summarizer) node(n *graph.Node) error {
	s.sum.NodesByStatus[string(n.Status)]++
	if n.RedirectTo != "" {
		s.sum.Redirected++
	}
	if n.TLSProblem != "" {
		s.sum.NodesByTLSProblem[n.TLSProblem]++
	}
	d := s.byDepth[n.Depth]
	d.Hosts++
	if n.CrawlCount > 0 {
		d.Crawled++
	}
	s.byDepth[n.Depth] = d
	if kind, _, ok := strings.Cut(n.Error, ": "); ok && kind != "" && !strings.ContainsAny(kind, " /") {
		s.sum.NodesByError[kind]++
	}
	if n.CrawlCount > 1 {
		s.rv.Revisits += uint64(n.CrawlCount - 1)
	}
	s.rv.NotModified += uint64(n.NotModified)
	s.rv.Changed += uint64(n.Changes)
	if !n.NextDue.IsZero() {
		s.rv.Scheduled++
		if s.rv.NextDue == nil || n.NextDue.Before(*s.rv.NextDue) {
			due := n.NextDue.UTC()
			s.rv.NextDue = &due
		}
	}
	if n.CrawlCount > 0 {
		s.sum.CrawledNodes++
	}
	if n.LastCrawl.After(s.last) {
		s.last = n.LastCrawl
	}
	if err := s.ranks.AddNode(n.ID); err != nil {
		return err
	}
	if v, ok := s.inw[n.ID]; ok {
		s.rankTop(HostWeight{Host: n.Host, InWeight: v.weight, InHosts: v.hosts, Status: string(n.Status)})
	}
	return nil
}

// rankTop puts h among the top hosts by in-weight if it is one of them;
// ties go to the smaller host name so the ranking is stable.
func (s *summarizer) rankTop(h HostWeight) {
	better := func(a, b HostWeight) int {
		if a.InWeight != b.InWeight {
			return cmp.Compare(b.InWeight, a.InWeight)
		}
		return cmp.Compare(a.Host, b.Host)
	}
	if len(s.top) == TopHosts && better(h, s.top[len(s.top)-1]) >= 0 {
		return
	}
	i, _ := slices.BinarySearchFunc(s.top, h, better)
	s.top = slices.Insert(s.top, i, h)
	if len(s.top) > TopHosts {
		s.top = s.top[:TopHosts]
	}
}

// summary is the Summary of the passes: the top hosts, the hosts by
// depth, the revisits and the last crawl (empty lists, not null).
func (s *summarizer) summary() Summary {
	sum := s.sum
	sum.TopHosts = s.top
	sum.HostsByDepth = make([]DepthHosts, 0, len(s.byDepth))
	for depth, d := range s.byDepth {
		d.Depth = depth
		sum.HostsByDepth = append(sum.HostsByDepth, d)
	}
	slices.SortFunc(sum.HostsByDepth, func(a, b DepthHosts) int { return cmp.Compare(a.Depth, b.Depth) })
	if s.rv.Revisits > 0 || s.rv.Scheduled > 0 {
		rv := s.rv
		sum.Revisits = &rv
	}
	if sum.TopHosts == nil {
		sum.TopHosts = []HostWeight{}
	}
	if sum.FrontierByDepth == nil {
		sum.FrontierByDepth = []DepthCount{}
	}
	if !s.last.IsZero() {
		last := s.last.UTC()
		sum.LastCrawl = &last
	}
	return sum
}

// mirrorGroups returns the TopMirrorGroups largest mirror groups with
// their hosts' names, read from the mirror index.
func mirrorGroups(tx *kv.Tx) ([]MirrorGroup, error) {
	groups, err := graph.MirrorGroups(tx, TopMirrorGroups)
	if err != nil {
		return nil, err
	}
	out := make([]MirrorGroup, 0, len(groups))
	for _, g := range groups {
		mg := MirrorGroup{Size: g.Size, ContentHash: g.Hash}
		for _, id := range g.Members[:min(len(g.Members), MirrorHosts)] {
			n, ok, err := graph.Get(tx, id)
			if err != nil {
				return nil, err
			}
			if ok {
				mg.Hosts = append(mg.Hosts, n.Host)
			}
		}
		if len(mg.Hosts) > 0 {
			mg.First = mg.Hosts[0]
		}
		out = append(out, mg)
	}
	return out, nil
}

// topPageRank returns the TopHosts nodes of the graph in b with the highest
// PageRank.
func topPageRank(tx *kv.Tx, b *rank.Builder, inWeight func(id uint64) uint64) ([]HostRank, error) {
	g, err := b.Graph()
	if err != nil {
		return nil, err
	}
	pr, _, err := rank.PageRank(context.Background(), g, rank.PageRankOptions{})
	if err != nil {
		return nil, err
	}
	top := []HostRank{}
	for _, i := range rank.Top(pr, TopHosts) {
		n, ok, err := graph.Get(tx, g.ID(i))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("serve: summary: node %d vanished", g.ID(i))
		}
		top = append(top, HostRank{Host: n.Host, PageRank: pr[i], InWeight: inWeight(n.ID), Status: string(n.Status)})
	}
	return top, nil
}
