package crawl

import (
	"encoding/json"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weaver-crawler/weaver/outfile"
)

// stats counts this run's work. Counters change only once a page's commit
// is durable, so they agree with the store.
type stats struct {
	pagesFetched     atomic.Int64 // HTTP answers received for home pages
	pagesFailed      atomic.Int64 // fetches that ended in an error or a 4xx/5xx
	nodesCrawled     atomic.Int64 // hosts answered in this run (a host crawled twice counts once)
	nodesCreated     atomic.Int64
	edgesCreated     atomic.Int64
	linksRecorded    atomic.Int64 // edge weight added
	robotsFetched    atomic.Int64
	robotsDisallowed atomic.Int64
	retries          atomic.Int64
	fetchNanos       atomic.Int64 // in requests for pages (not robots.txt, not waits)
	waitNanos        atomic.Int64 // hosts parked between their requests
	claimed          atomic.Int64
	dropped          atomic.Int64 // entries dropped at claim without an attempt
	answered         atomic.Int64 // HTTP answers for pages, whatever their status
	pagesRendered    atomic.Int64 // pages rendered by the browser (--render)
	renderFailures   atomic.Int64 // renders that failed (the raw HTML was used)
	revisits         atomic.Int64 // answered crawls of hosts crawled before
	notModified      atomic.Int64 // of them, answered 304
	changed          atomic.Int64 // of them, that found the page or its out-links changed (sameReading)
	bytesSaved       atomic.Int64 // body bytes a 304 did not send (the last crawl's size)

	mu     sync.Mutex // guards errors
	errors map[ErrorKind]int64
}

func (s *stats) addError(k ErrorKind) {
	s.mu.Lock()
	if s.errors == nil {
		s.errors = map[ErrorKind]int64{}
	}
	s.errors[k]++
	s.mu.Unlock()
}

func (s *stats) errorCounts() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int64, len(s.errors))
	for k, v := range s.errors {
		out[string(k)] = v
	}
	return out
}

// Result is how a Run ended; it is also metrics.log's content: seed 000
// §8's keys first, then weaver's own.
type Result struct {
	StartTime       time.Time `json:"start_time"`
	EndTime         time.Time `json:"end_time"`
	NodesDiscovered int64     `json:"nodes_discovered"`
	NodesCrawled    int64     `json:"nodes_crawled"`
	EdgesRecorded   int64     `json:"edges_recorded"`
	PagesFetched    int64     `json:"pages_fetched"`
	PagesFailed     int64     `json:"pages_failed"`
	AvgFetchTimeMS  int64     `json:"avg_fetch_time_ms"` // requests for the page only
	// AvgWaitTimeMS is, per page, the time its host spent parked between
	// its requests: the politeness delay after robots.txt, retries,
	// Retry-After, Crawl-delay. No worker waits meanwhile.
	AvgWaitTimeMS int64 `json:"avg_wait_time_ms"`
	// FetchP50MS, FetchP90MS and FetchP99MS are quantiles of the run's
	// page fetch times (as avg_fetch_time_ms counts them), each within
	// 0.5 % of the true one; 0 when no page was fetched.
	FetchP50MS        float64 `json:"fetch_p50_ms"`
	FetchP90MS        float64 `json:"fetch_p90_ms"`
	FetchP99MS        float64 `json:"fetch_p99_ms"`
	TerminationReason string  `json:"termination_reason"`
	PagesPerSecond    float64 `json:"pages_per_second"`
	LinksRecorded     int64   `json:"links_recorded"`
	RobotsFetched     int64   `json:"robots_fetched"`
	RobotsDisallowed  int64   `json:"robots_disallowed"`
	// PagesSkipped counts pages not asked for: robots.txt disallows them
	// (robots_disallowed), or their host's robots.txt, still cached,
	// disallowed them before, or the host failed for good earlier in the
	// run (a name that does not exist, a private address, a redirect loop).
	PagesSkipped int64 `json:"pages_skipped"`
	// PagesAnswered counts pages the web answered, whatever the status:
	// zero with failures means the crawl could reach nothing at all.
	PagesAnswered int64 `json:"pages_answered"`
	// PagesRendered counts pages that went through the browser (--render);
	// RenderFailures, renders that failed (their HTML was used as fetched).
	PagesRendered  int64            `json:"pages_rendered"`
	RenderFailures int64            `json:"render_failures"`
	Retries        int64            `json:"retries"`
	ErrorsByType   map[string]int64 `json:"errors_by_type"`
	TotalNodes     uint64           `json:"total_nodes"`
	TotalEdges     uint64           `json:"total_edges"`
	TotalWeight    uint64           `json:"total_weight"`
	FrontierSize   uint64           `json:"frontier_size"`
	// Pauses counts the times the crawl paused because its own network
	// was away (an outage: see docs/outage.md), PausedSeconds the time it
	// spent paused, and PagesPardoned the pages whose failure was the
	// outage's: given back to the frontier, not charged to their hosts.
	Pauses        int64   `json:"pauses"`
	PausedSeconds float64 `json:"paused_seconds"`
	PagesPardoned int64   `json:"pages_pardoned"`
	// DiskPauses counts the times the crawl paused because a file system
	// it writes to was full or below min_free_space, DiskPausedSeconds the
	// time it spent so.
	DiskPauses        int64   `json:"disk_pauses"`
	DiskPausedSeconds float64 `json:"disk_paused_seconds"`
	Error             string  `json:"error,omitempty"`
	// Revisits (issue 27): answered crawls of hosts crawled before, of
	// them answered 304 (not_modified), changed and unchanged; the body
	// bytes the 304s did not send; and when the next host is due
	// (omitted without a revisit policy).
	Revisits    int64      `json:"revisits"`
	NotModified int64      `json:"not_modified"`
	Changed     int64      `json:"changed"`
	Unchanged   int64      `json:"unchanged"`
	BytesSaved  int64      `json:"bytes_saved"`
	NextDue     *time.Time `json:"next_due,omitempty"`
	// Store is the absolute path of the store the crawl ran on: a metrics
	// file says whose it is, and a run never replaces another store's
	// (see Crawler.metricsPath).
	Store string `json:"store,omitempty"`
}

// Termination reasons.
const (
	ReasonQueueEmpty = "queue_empty"
	ReasonSignal     = "signal"
	// ReasonAPIStop: the status API's POST /stop asked for the stop (Run's
	// ctx was cancelled with ErrStopRequested as its cause); the stop is
	// the same graceful one as a signal's.
	ReasonAPIStop  = "api_stop"
	ReasonMaxPages = "max_pages"
	// ReasonMaxDuration: max_duration_ms passed (--max-duration).
	ReasonMaxDuration = "max_duration"
	ReasonError       = "error"
)

func (s *stats) result(start, end time.Time, reason string) Result {
	r := Result{
		StartTime: start.UTC(), EndTime: end.UTC(),
		NodesDiscovered: s.nodesCreated.Load(), NodesCrawled: s.nodesCrawled.Load(),
		EdgesRecorded: s.edgesCreated.Load(), PagesFetched: s.pagesFetched.Load(),
		PagesFailed: s.pagesFailed.Load(), TerminationReason: reason,
		LinksRecorded: s.linksRecorded.Load(), RobotsFetched: s.robotsFetched.Load(),
		RobotsDisallowed: s.robotsDisallowed.Load(), Retries: s.retries.Load(),
		PagesSkipped:  s.robotsDisallowed.Load() + s.dropped.Load(),
		PagesAnswered: s.answered.Load(),
		PagesRendered: s.pagesRendered.Load(), RenderFailures: s.renderFailures.Load(),
		ErrorsByType: s.errorCounts(),
		Revisits:     s.revisits.Load(), NotModified: s.notModified.Load(),
		Changed: s.changed.Load(), Unchanged: s.revisits.Load() - s.changed.Load(),
		BytesSaved: s.bytesSaved.Load(),
	}
	if n := r.PagesFetched + r.PagesFailed; n > 0 {
		r.AvgFetchTimeMS = s.fetchNanos.Load() / n / int64(time.Millisecond)
		r.AvgWaitTimeMS = s.waitNanos.Load() / n / int64(time.Millisecond)
	}
	if d := end.Sub(start).Seconds(); d > 0 {
		r.PagesPerSecond = float64(r.PagesFetched) / d
	}
	return r
}

// WriteMetrics writes r as indented JSON to path. A file is replaced
// atomically (a temporary file renamed into place), so a reader never sees
// half of it; a device or pipe (/dev/null, /dev/stdout) is written in
// place, never replaced. It returns outfile's errors for a directory and
// file system errors.
func WriteMetrics(path string, r Result) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return outfile.Write(path, 0o644, func(w io.Writer) error {
		_, err := w.Write(append(data, '\n'))
		return err
	})
}
