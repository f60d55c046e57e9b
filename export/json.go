package export

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"math"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// jsonNode is a node of the JSON export. Times are RFC 3339 in UTC; empty
// strings and zero times are left out.
type jsonNode struct {
	ID          uint64 `json:"id"`
	Host        string `json:"host"`
	Domain      string `json:"domain"`
	Scheme      string `json:"scheme,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Status      string `json:"status"`
	CrawlCount  int    `json:"crawl_count"`
	FailCount   int    `json:"fail_count"`
	HTTPStatus  int    `json:"http_status,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	Server      string `json:"server,omitempty"`
	Bytes       int64  `json:"bytes"`
	FetchMS     int64  `json:"fetch_ms"`
	ContentHash string `json:"content_hash,omitempty"`
	Error       string `json:"error,omitempty"`
	Depth       int    `json:"depth"`
	FirstSeen   string `json:"first_seen,omitempty"`
	LastSeen    string `json:"last_seen,omitempty"`
	LastCrawl   string `json:"last_crawl,omitempty"`
	// Canonical is the home page's <link rel="canonical">, Robots the
	// robots directives seen, MirrorOf the id of the mirror group's first
	// host when this host is a copy, PagesFetched the pages its last crawl
	// fetched.
	Canonical    string `json:"canonical,omitempty"`
	Robots       string `json:"robots,omitempty"`
	MirrorOf     uint64 `json:"mirror_of,omitempty"`
	PagesFetched int    `json:"pages_fetched"`
	// RenderMS is the browser's time on the home page (--render), 0 when
	// it was not rendered.
	RenderMS int64 `json:"render_ms,omitempty"`
	// RedirectTo is where the home page sent the crawl to another host;
	// Home where the redirects within the host led (the URL the next
	// crawl asks first), when it is not the home page.
	RedirectTo string `json:"redirect_to,omitempty"`
	Home       string `json:"home,omitempty"`
	// TLSProblem is the certificate or handshake problem a crawl with
	// --insecure accepted (graph.Node.TLSProblem).
	TLSProblem string `json:"tls_problem,omitempty"`
	// PageRank and Harmonic are the node's ranks (see package rank); left
	// out with Options.NoRanks.
	PageRank *float64 `json:"pagerank,omitempty"`
	Harmonic *float64 `json:"harmonic,omitempty"`
	// Community, X and Y are the node's community (0 the largest) and
	// ForceAtlas2 position (see package layout); left out with
	// Options.NoLayout.
	Community *uint32  `json:"community,omitempty"`
	X         *float64 `json:"x,omitempty"`
	Y         *float64 `json:"y,omitempty"`
	// AsOf says, with Options.At, how far the attributes are those at
	// that time (see AsOfAt).
	AsOf string `json:"as_of,omitempty"`
	// Changes counts the crawls that found the host's page (title, description, canonical, robots, status) or
	// out-links changed (issue 27), LastChange is the last of them: the
	// map page rings the hosts changed recently. Left out when none did.
	Changes    int    `json:"changes,omitempty"`
	LastChange string `json:"last_change,omitempty"`
}

// jsonEdge is an edge of the JSON export.
type jsonEdge struct {
	Source    uint64 `json:"source"`
	Target    uint64 `json:"target"`
	Weight    uint64 `json:"weight"`
	FirstSeen string `json:"first_seen,omitempty"`
	LastSeen  string `json:"last_seen,omitempty"`
	// Nofollow counts the pages that linked only with rel nofollow, ugc
	// or sponsored; Redirect the redirects; Frame the pages that showed
	// the target in a frame (<frame src>, <iframe src>), all out of Weight.
	Nofollow uint64 `json:"nofollow"`
	Redirect uint64 `json:"redirect"`
	Frame    uint64 `json:"frame"`
	// Gone is true for an edge its source's latest crawl no longer
	// linked (issue 27); last_seen is then the last crawl that did.
	Gone bool `json:"gone,omitempty"`
}

// jsonGraph is the "graph" member: the export's metadata.
type jsonGraph struct {
	Name          string `json:"name"`
	WeaverVersion string `json:"weaver_version"`
	ExportedAt    string `json:"exported_at"`
	MinWeight     uint64 `json:"min_weight"`
	CrawledOnly   bool   `json:"crawled_only"`
	Domains       bool   `json:"domains"`
	NoMirrors     bool   `json:"no_mirrors"`
	// Top and TopBy are Options.Top and its measure, left out without it.
	Top   int    `json:"top,omitempty"`
	TopBy string `json:"top_by,omitempty"`
	// HarmonicMethod is "exact", or "hyperball, ..." when the harmonic
	// centralities are estimates; left out with Options.NoRanks.
	HarmonicMethod string `json:"harmonic_method,omitempty"`
	// At is Options.At and NodeAttributes what the nodes' attributes
	// are then (atNote), left out without it.
	At             string `json:"at,omitempty"`
	NodeAttributes string `json:"node_attributes,omitempty"`
}

// JSON writes s to w as one JSON object in networkx's node-link form:
// {"directed": true, "multigraph": false, "graph": {...}, "nodes": [...],
// "edges": [...]}, each node and edge on a line of its own, nodes keyed by
// their store id ("id") with their "pagerank" and "harmonic" (unless
// Options.NoRanks), edges by "source" and "target". Python loads it
// with networkx.node_link_graph(data, edges="edges") from networkx 3.4
// on, and node_link_graph(data, link="edges") before (Debian 12's 2.8):
// the README gives the lines that try one then the other, which
// TestJSON_NetworkX runs in both. Invalid UTF-8 in a
// string becomes U+FFFD. It returns what was written, or the writer's, the
// store's or the context's error.
func JSON(ctx context.Context, w io.Writer, s *kv.Store, opt Options) (Stats, error) {
	opt = opt.withDefaults()
	bw := bufio.NewWriterSize(w, 64<<10)
	st, err := walk(ctx, s, opt, func(v *view) error {
		head, err := json.Marshal(jsonGraph{
			Name: "weaver", WeaverVersion: opt.Version, ExportedAt: isoTime(opt.Now()),
			MinWeight: opt.MinWeight, CrawledOnly: opt.CrawledOnly, Domains: opt.Domains, NoMirrors: opt.NoMirrors,
			HarmonicMethod: v.harmonicMethod(), Top: opt.Top, TopBy: opt.topByName(),
			At: atText(opt.At), NodeAttributes: atNoteIf(opt.At),
		})
		if err != nil {
			return err
		}
		b := append([]byte(`{"directed":true,"multigraph":false,"graph":`), head...)
		b = append(b, ",\n\"nodes\":["...)
		if _, err := bw.Write(b); err != nil {
			return err
		}
		sep := "\n"
		err = v.nodes(func(n *graph.Node) error {
			var community *uint32
			var x, y *float64
			if c, px, py, ok := v.layoutOf(n.ID); ok {
				px, py = math.Round(px*1000)/1000, math.Round(py*1000)/1000
				community, x, y = &c, &px, &py
			}
			var pagerank, harmonic *float64
			if pr, h, ok := v.rankOf(n.ID); ok {
				pagerank, harmonic = &pr, &h
			}
			line, err := json.Marshal(jsonNode{
				ID: n.ID, Host: n.Host, Domain: n.Domain, Scheme: n.Scheme,
				Title: n.Title, Description: n.Description, Status: string(n.Status),
				CrawlCount: n.CrawlCount, FailCount: n.FailCount, HTTPStatus: n.HTTPStatus,
				ContentType: n.ContentType, Server: n.Server, Bytes: n.Bytes, FetchMS: n.FetchMS,
				ContentHash: n.ContentHash, Error: n.Error, Depth: n.Depth,
				FirstSeen: isoTime(n.FirstSeen), LastSeen: isoTime(n.LastSeen), LastCrawl: isoTime(n.LastCrawl),
				Canonical: n.Canonical, Robots: n.RobotsDirectives, MirrorOf: n.MirrorOf, PagesFetched: n.PagesFetched, RenderMS: n.RenderMS,
				RedirectTo: n.RedirectTo, Home: n.Home, TLSProblem: n.TLSProblem, PageRank: pagerank, Harmonic: harmonic, AsOf: v.asOf,
				Changes: n.Changes, LastChange: isoTime(n.LastChange),
				Community: community, X: x, Y: y,
			})
			if err != nil {
				return err
			}
			return writeItem(bw, &sep, line)
		})
		if err != nil {
			return err
		}
		if _, err := bw.WriteString("\n],\n\"edges\":["); err != nil {
			return err
		}
		sep = "\n"
		err = v.edges(func(e *graph.Edge) error {
			line, err := json.Marshal(jsonEdge{
				Source: e.From, Target: e.To, Weight: e.Weight,
				FirstSeen: isoTime(e.FirstSeen), LastSeen: isoTime(e.LastSeen),
				Nofollow: e.Nofollow, Redirect: e.Redirect, Frame: e.Frame, Gone: v.gone(e),
			})
			if err != nil {
				return err
			}
			return writeItem(bw, &sep, line)
		})
		if err != nil {
			return err
		}
		if _, err := bw.WriteString("\n]}\n"); err != nil {
			return err
		}
		return bw.Flush()
	})
	return st, wrap(FormatJSON, "", err)
}

// writeItem writes one array element, preceded by *sep, which becomes a
// comma after the first.
func writeItem(w *bufio.Writer, sep *string, item []byte) error {
	if _, err := w.WriteString(*sep); err != nil {
		return err
	}
	*sep = ",\n"
	_, err := w.Write(item)
	return err
}

// atText is t in RFC 3339 with its fractions, "" when zero.
func atText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// atNoteIf is atNote with At, "" without.
func atNoteIf(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return atNote
}
