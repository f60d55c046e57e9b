package export

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/layout"
)

// ErrUnknownHost means the host asked about is not in the store. Host
// wraps it with the host and, when one is close, a suggestion.
var ErrUnknownHost = errors.New("not in the store")

// HostReport is what weaver show says about one host: its record, its
// ranks, its mirror group, its crawl history and its links in and out.
type HostReport struct {
	ID          uint64     `json:"id"`
	Host        string     `json:"host"`
	Domain      string     `json:"domain,omitempty"`
	Scheme      string     `json:"scheme,omitempty"`
	Status      string     `json:"status"`
	HTTPStatus  int        `json:"http_status,omitempty"`
	Title       string     `json:"title,omitempty"`
	Description string     `json:"description,omitempty"`
	ContentType string     `json:"content_type,omitempty"`
	Server      string     `json:"server,omitempty"`
	Bytes       int64      `json:"bytes,omitempty"`
	FetchMS     int64      `json:"fetch_ms,omitempty"`
	Error       string     `json:"error,omitempty"`
	Depth       int        `json:"depth"`
	FirstSeen   time.Time  `json:"first_seen"`
	LastSeen    time.Time  `json:"last_seen"`
	LastCrawl   *time.Time `json:"last_crawl,omitempty"`
	CrawlCount  int        `json:"crawl_count"`
	FailCount   int        `json:"fail_count,omitempty"`
	// PagesFetched is how many pages of the host its last crawl fetched.
	PagesFetched     int    `json:"pages_fetched,omitempty"`
	Canonical        string `json:"canonical,omitempty"`
	RobotsDirectives string `json:"robots_directives,omitempty"`
	Rendered         bool   `json:"rendered,omitempty"`
	Warc             string `json:"warc,omitempty"`
	// RedirectTo is where the home page of the last crawl sent the crawl
	// to another host.
	RedirectTo string `json:"redirect_to,omitempty"`
	// TLSProblem: what --insecure accepted of the host's TLS.
	TLSProblem string `json:"tls_problem,omitempty"`
	// Home is where the redirects within the host led its last crawl:
	// the URL the next one asks first.
	Home string `json:"home,omitempty"`
	// MirrorOf is the first host of the host's mirror group when the host
	// is a copy; Mirrors are the group's other hosts (hosts whose home
	// page is the same bytes), first seen first.
	MirrorOf string   `json:"mirror_of,omitempty"`
	Mirrors  []string `json:"mirrors,omitempty"`
	// The revisit schedule (issue 27): when the host is due again, the
	// interval that gave it, and the crawls that found a change.
	NextDue     *time.Time `json:"next_due,omitempty"`
	IntervalMS  int64      `json:"interval_ms,omitempty"`
	Changes     int        `json:"changes,omitempty"`
	LastChange  *time.Time `json:"last_change,omitempty"`
	NotModified int        `json:"not_modified,omitempty"`
	// Ranks are the host's PageRank and harmonic centrality in the whole
	// host graph, nil when not computed (HostOptions.NoRanks).
	Ranks *HostRanks `json:"ranks,omitempty"`
	// Layout is the host's community (0 the largest) and position from the
	// store's layout (weaver layout), nil when the store has none that is
	// current: show reads it, never computes it.
	Layout *HostLayout `json:"layout,omitempty"`
	// History is the host's crawl history (graph/history.go), the latest
	// crawl first, at most HostOptions.Limit of them; Crawls counts them all.
	Crawls  int         `json:"crawls"`
	History []HostCrawl `json:"history,omitempty"`
	// In and Out are the links to and from the host.
	In  LinkList `json:"in"`
	Out LinkList `json:"out"`
	// Anchors says whether the store keeps example links (--anchors): when
	// false, no link can list any.
	Anchors bool `json:"anchors_kept"`
}

// HostRanks are a host's ranks in the host graph.
type HostRanks struct {
	PageRank       float64 `json:"pagerank"`
	Harmonic       float64 `json:"harmonic"`
	Position       int     `json:"position"` // 1 for the highest PageRank
	Of             int     `json:"of"`       // hosts ranked
	HarmonicMethod string  `json:"harmonic_method"`
}

// HostCrawl is one crawl of a host's history.
type HostCrawl struct {
	At          time.Time `json:"at"`
	Changed     bool      `json:"changed"`
	NotModified bool      `json:"not_modified,omitempty"`
	Links       int       `json:"links"` // hosts it linked to
}

// LinkList is one direction of a host's links, heaviest first.
type LinkList struct {
	Total  int        `json:"total"`  // links in that direction
	Weight uint64     `json:"weight"` // their summed weight
	Left   int        `json:"left_out"`
	Links  []HostLink `json:"links"`
}

// HostLink is one link of a host: the host at its other end, and the
// edge's weight, link facts, times and example links.
type HostLink struct {
	Host      string         `json:"host"`
	ID        uint64         `json:"id"`
	Status    string         `json:"status"`
	Weight    uint64         `json:"weight"`
	Nofollow  uint64         `json:"nofollow,omitempty"`
	Redirect  uint64         `json:"redirect,omitempty"`
	Frame     uint64         `json:"frame,omitempty"`
	FirstSeen time.Time      `json:"first_seen"`
	LastSeen  time.Time      `json:"last_seen"`
	Anchors   []graph.Anchor `json:"anchors,omitempty"`
	edge      graph.Edge     // for sorting
}

// HostOptions control Host.
type HostOptions struct {
	// Limit caps the links listed in each direction and the crawls of the
	// history; 0 lists them all.
	Limit int
	// NoRanks leaves the ranks out: computing them reads the whole graph.
	NoRanks bool
	// Version is passed to the rank computation's export options.
	Version string
}

// HostKey normalises what a user names a host by: a host name with an
// optional port ("Example.COM:8080"), or a URL whose host is taken
// ("https://www.example.com/page"), as the crawler normalises hosts.
func HostKey(arg string) (string, error) {
	arg = strings.TrimSpace(arg)
	if strings.Contains(arg, "://") {
		u, err := url.Parse(arg)
		if err != nil {
			return "", fmt.Errorf("%q is not a URL: %v", arg, err)
		}
		return graph.HostOf(u)
	}
	host, _, _ := strings.Cut(arg, "/")
	return graph.NormalizeHost(host, "http")
}

// Host returns the report on host (normalised by HostKey) of the store s.
// It reads the node, its links and history in one read transaction, and
// the ranks in another (unless opt.NoRanks). It returns an error wrapping
// ErrUnknownHost, naming the host and suggesting a close one, when the
// store has no such host, HostKey's error for a host that is no host
// name, and the store's, rank's or the context's errors.
// HostLayout is a host's community and position (package layout).
type HostLayout struct {
	Community uint32  `json:"community"`
	X         float64 `json:"x"`
	Y         float64 `json:"y"`
}

func Host(ctx context.Context, s *kv.Store, host string, opt HostOptions) (HostReport, error) {
	key, err := HostKey(host)
	if err != nil {
		return HostReport{}, err
	}
	var rep HostReport
	err = s.View(func(tx *kv.Tx) error {
		n, ok, err := graph.GetByHost(tx, key)
		if err != nil {
			return err
		}
		if !ok {
			return unknownHost(tx, key)
		}
		rep = nodeReport(tx, &n)
		if st, fresh, err := layout.Load(tx); err == nil && fresh {
			if c, x, y, ok := st.Lookup(n.ID); ok {
				rep.Layout = &HostLayout{Community: c, X: x, Y: y}
			}
		}
		if err := history(tx, &rep, opt.Limit); err != nil {
			return err
		}
		return links(ctx, tx, &rep, opt.Limit)
	})
	if err != nil {
		return HostReport{}, err
	}
	if !opt.NoRanks {
		list, err := Top(ctx, s, Options{Version: opt.Version}, 0)
		if err != nil {
			return HostReport{}, err
		}
		for i, r := range list.Top {
			if r.ID == rep.ID {
				rep.Ranks = &HostRanks{PageRank: r.PageRank, Harmonic: r.Harmonic, Position: i + 1, Of: len(list.Top), HarmonicMethod: list.HarmonicMethod}
				break
			}
		}
	}
	return rep, nil
}

// unknownHost is Host's error for a host the store lacks.
func unknownHost(tx *kv.Tx, host string) error {
	if near := nearHost(tx, host); near != "" {
		return fmt.Errorf("host %s: %w (did you mean %s?)", host, ErrUnknownHost, near)
	}
	return fmt.Errorf("host %s: %w", host, ErrUnknownHost)
}

// nearHostScan bounds the hosts nearHost compares by edit distance: past
// it only the cheap guesses (with or without "www.") are tried.
const nearHostScan = 200_000

// nearHost returns a host of the store close to host, or "": the host
// with or without "www.", else the one nearest by edit distance (at most
// two edits, or three for a long name) among the first nearHostScan.
func nearHost(tx *kv.Tx, host string) string {
	for _, h := range []string{"www." + host, strings.TrimPrefix(host, "www.")} {
		if _, ok := graph.Lookup(tx, h); ok && h != host {
			return h
		}
	}
	limit := 2
	if len(host) > 12 {
		limit = 3
	}
	best, bestD, scanned := "", limit+1, 0
	c := tx.Cursor(kv.BucketHosts)
	for k, _ := c.First(); k != nil && scanned < nearHostScan; k, _ = c.Next() {
		scanned++
		if d := len(k) - len(host); d > limit || -d > limit {
			continue
		}
		if d := boundedDistance(host, string(k), bestD-1); d < bestD {
			best, bestD = string(k), d
		}
	}
	return best
}

// boundedDistance is the Levenshtein distance of a and b when it is at
// most max, else max+1.
func boundedDistance(a, b string, max int) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		low := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			low = min(low, cur[j])
		}
		if low > max {
			return max + 1
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], max+1)
}

// nodeReport fills a report's record fields from n.
func nodeReport(tx *kv.Tx, n *graph.Node) HostReport {
	opt := func(t time.Time) *time.Time {
		if t.IsZero() {
			return nil
		}
		return &t
	}
	rep := HostReport{
		ID: n.ID, Host: n.Host, Domain: n.Domain, Scheme: n.Scheme, Status: string(n.Status),
		HTTPStatus: n.HTTPStatus, Title: n.Title, Description: n.Description,
		ContentType: n.ContentType, Server: n.Server, Bytes: n.Bytes, FetchMS: n.FetchMS, Error: n.Error,
		Depth: n.Depth, FirstSeen: n.FirstSeen, LastSeen: n.LastSeen, LastCrawl: opt(n.LastCrawl),
		CrawlCount: n.CrawlCount, FailCount: n.FailCount, PagesFetched: n.PagesFetched,
		Canonical: n.Canonical, RobotsDirectives: n.RobotsDirectives, Rendered: n.Rendered(), Warc: n.Warc,
		RedirectTo: n.RedirectTo, Home: n.Home, TLSProblem: n.TLSProblem, NextDue: opt(n.NextDue), IntervalMS: n.IntervalMS, Changes: n.Changes, LastChange: opt(n.LastChange),
		NotModified: n.NotModified, Anchors: graph.HasAnchors(tx),
	}
	rep.Status = cmp.Or(rep.Status, string(graph.StatusDiscovered))
	if n.MirrorOf != 0 {
		if m, ok, _ := graph.Get(tx, n.MirrorOf); ok {
			rep.MirrorOf = m.Host
		}
	}
	for _, id := range graph.MirrorMembers(tx, n) {
		if id == n.ID {
			continue
		}
		if m, ok, _ := graph.Get(tx, id); ok {
			rep.Mirrors = append(rep.Mirrors, m.Host)
		}
	}
	return rep
}

// history fills the report's crawl history, the latest crawl first: one
// walk of the host's records (a CrawlAt per crawl walked them again for
// each).
func history(tx *kv.Tx, rep *HostReport, limit int) error {
	var all []HostCrawl
	err := graph.ForEachCrawl(tx, rep.ID, func(c *graph.Crawl) error {
		all = append(all, HostCrawl{At: c.At, Changed: c.Changed, NotModified: c.NotModified, Links: len(c.Links)})
		return nil
	})
	if err != nil {
		return err
	}
	rep.Crawls = len(all)
	slices.Reverse(all)
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	rep.History = append(rep.History, all...)
	return nil
}

// links fills the report's links in and out: the out-links from the
// host's edges, the in-links from a scan of every edge (the store keeps
// no index by target).
func links(ctx context.Context, tx *kv.Tx, rep *HostReport, limit int) error {
	id := rep.ID
	var out, in []HostLink
	err := graph.ForEachEdgeFrom(tx, id, func(e *graph.Edge) error {
		out = append(out, HostLink{ID: e.To, edge: *e})
		return nil
	})
	if err != nil {
		return err
	}
	n := 0
	err = graph.ForEachEdge(tx, func(e *graph.Edge) error {
		if n++; n%65536 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if e.To == id {
			in = append(in, HostLink{ID: e.From, edge: *e})
		}
		return nil
	})
	if err != nil {
		return err
	}
	var errs error
	rep.Out, err = linkList(tx, out, limit, func(l *HostLink) (uint64, uint64) { return id, l.ID })
	errs = errors.Join(errs, err)
	rep.In, err = linkList(tx, in, limit, func(l *HostLink) (uint64, uint64) { return l.ID, id })
	return errors.Join(errs, err)
}

// linkList sorts links by weight, heaviest first (ties by id), keeps the
// first limit, and fills in their hosts and anchors; ends gives a link's
// edge as (from, to).
func linkList(tx *kv.Tx, all []HostLink, limit int, ends func(*HostLink) (uint64, uint64)) (LinkList, error) {
	list := LinkList{Total: len(all), Links: []HostLink{}}
	for i := range all {
		list.Weight += all[i].edge.Weight
	}
	slices.SortFunc(all, func(a, b HostLink) int {
		return cmp.Or(cmp.Compare(b.edge.Weight, a.edge.Weight), cmp.Compare(a.ID, b.ID))
	})
	if limit > 0 && len(all) > limit {
		list.Left = len(all) - limit
		all = all[:limit]
	}
	for i := range all {
		l := &all[i]
		e := l.edge
		l.Weight, l.Nofollow, l.Redirect, l.Frame, l.FirstSeen, l.LastSeen = e.Weight, e.Nofollow, e.Redirect, e.Frame, e.FirstSeen, e.LastSeen
		n, ok, err := graph.Get(tx, l.ID)
		if err != nil {
			return list, err
		}
		if ok {
			l.Host, l.Status = n.Host, cmp.Or(string(n.Status), string(graph.StatusDiscovered))
		}
		from, to := ends(l)
		if l.Anchors, err = graph.GetAnchors(tx, from, to); err != nil {
			return list, err
		}
	}
	if len(all) > 0 {
		list.Links = all // none stays [], not null
	}
	return list, nil
}
