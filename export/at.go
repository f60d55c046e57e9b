package export

import (
	"time"

	"github.com/weaver-crawler/weaver/graph"
)

// What a node's attributes are in an export at a time (Options.At): the
// value of its as_of attribute. The crawl history (graph/history.go)
// keeps each crawl's time, whether it changed the page or its links, and
// its links; it does not keep the page's fields (title, HTTP status...),
// nor failed fetches. So a node's attributes at At are exact only when
// nothing was written about the host since At; otherwise the counts and
// times come from the history and the page's fields are given only when
// no later crawl changed the page.
const (
	// AsOfAt: nothing was written about the host after At (its last seen
	// and last crawl are at or before At): its record is as it was then.
	AsOfAt = "at"
	// AsOfPage: crawl_count, last_crawl and last_seen are the history's at
	// At; the page's fields are those of its last crawl at or before At,
	// since no later crawl changed the page or its links (a later
	// unchanged crawl read the same title, description, canonical, robots
	// and status; bytes, content_hash, the validators, fetch_ms, server
	// and render_ms are those of its latest fetch of that page).
	AsOfPage = "page"
	// AsOfCrawls: crawl_count, last_crawl and last_seen are the
	// history's at At; the page changed after At (or the host was not
	// answered by then), and its fields then are not recorded: they are
	// left empty, and status is "" unless the host was certainly only
	// discovered by then (no answer and no failure before At).
	AsOfCrawls = "crawls"
	// AsOfLatest: the host has no crawl history (an older weaver crawled
	// it, or no answer was ever recorded) and its record changed after
	// At: its attributes are the latest known.
	AsOfLatest = "latest"
)

// asOfRank orders the as_of values from the most exact: a domain of
// hosts carries its least exact host's.
var asOfRank = map[string]int{AsOfAt: 0, AsOfPage: 1, AsOfCrawls: 2, AsOfLatest: 3}

// atNote is the metadata line an export at a time carries about its
// nodes' attributes.
const atNote = "node attributes as of --at where the crawl history records them: see each node's as_of (at: exact; page: counts from the history, page fields of its last crawl by then; crawls: counts from the history, page fields not recorded, left empty; latest: no history, latest attributes)"

// nodeAt turns n, the node as the store holds it now, into the node as
// the export at v.opt.At shows it, and returns its as_of. Without At it
// does nothing and returns "".
func (v *view) nodeAt(n *graph.Node) (string, error) {
	t := v.opt.At
	if t.IsZero() {
		return "", nil
	}
	if !n.LastSeen.After(t) && !n.LastCrawl.After(t) {
		return AsOfAt, nil
	}
	h, err := graph.NodeHistoryAt(v.tx, n.ID, t)
	if err != nil {
		return "", err
	}
	if h.Records == 0 {
		return AsOfLatest, nil
	}
	// Crawls before the history began (an older weaver's) were before
	// every record, so before At too.
	n.CrawlCount = max(n.CrawlCount-h.Records, 0) + h.Crawls
	n.LastCrawl = h.Last
	n.LastSeen = n.FirstSeen
	if h.Last.After(n.LastSeen) {
		n.LastSeen = h.Last
	}
	n.Changes, n.LastChange, n.NotModified = h.Changes, h.LastChange, h.NotModified
	n.NextDue, n.IntervalMS = time.Time{}, 0
	if h.Crawls > 0 && !h.ChangedAfter {
		// The page is the one the last crawl by At read; a failure after
		// At changed only the status and the error.
		if n.Status != graph.StatusCrawled && n.Status != graph.StatusHTTPError {
			n.Error = ""
		}
		n.Status = graph.StatusCrawled
		if n.HTTPStatus >= 400 {
			n.Status = graph.StatusHTTPError
		}
		return AsOfPage, nil
	}
	clearPage(n)
	n.Status = ""
	if h.Crawls == 0 && n.CrawlCount == 0 && n.FailCount == 0 {
		n.Status = graph.StatusDiscovered
	}
	return AsOfCrawls, nil
}

// clearPage empties the fields a fetch of the page gives.
func clearPage(n *graph.Node) {
	n.Title, n.Description, n.HTTPStatus, n.ContentType, n.Server = "", "", 0, "", ""
	n.Bytes, n.FetchMS, n.ContentHash, n.Error = 0, 0, "", ""
	n.Canonical, n.RobotsDirectives, n.PagesFetched, n.RenderMS = "", "", 0, 0
	n.MirrorOf, n.Warc, n.ETag, n.LastModified, n.RedirectTo, n.Home, n.TLSProblem = 0, "", "", "", "", "", ""
}

// intervals returns the times edge e was present (see
// graph.EdgeIntervals), read from its source's history once per source:
// nil for a domain edge or an edge whose source has no history. The first
// interval starts at the edge's first seen when that is earlier (a crawl
// before the history began); an edge the history never linked was
// present from its first seen to the source's first recorded crawl. With
// At, intervals that start after it are dropped and one that ends after
// it is open.
func (v *view) intervals(e *graph.Edge) ([]graph.Interval, error) {
	if v.domains != nil {
		return nil, nil
	}
	if v.ivOf != e.From || !v.ivRead {
		iv, first, err := graph.EdgeIntervals(v.tx, e.From)
		if err != nil {
			return nil, err
		}
		v.ivOf, v.ivRead, v.iv, v.ivFirst = e.From, true, iv, first
	}
	if v.ivFirst.IsZero() {
		return nil, nil
	}
	out := v.iv[e.To]
	if len(out) == 0 {
		if e.FirstSeen.IsZero() || !e.FirstSeen.Before(v.ivFirst) {
			return nil, nil
		}
		out = []graph.Interval{{Start: e.FirstSeen, End: v.ivFirst}}
	} else if !e.FirstSeen.IsZero() && e.FirstSeen.Before(out[0].Start) {
		out = append([]graph.Interval{{Start: e.FirstSeen, End: out[0].End}}, out[1:]...)
	}
	if t := v.opt.At; !t.IsZero() {
		var clipped []graph.Interval
		for _, iv := range out {
			if iv.Start.After(t) {
				break
			}
			if iv.End.After(t) {
				iv.End = time.Time{}
			}
			clipped = append(clipped, iv)
		}
		out = clipped
	}
	return out, nil
}
