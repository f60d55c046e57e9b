package crawl

import (
	"encoding/json"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weaver-crawler/weaver/internal/outfile"
)

// stats counts this run's work. Counters change only once a page's commit
// is durable, so they agree with the store.
type stats struct {
	pagesFetched     atomic.Int64 // HTTP answers received for home pages
	pagesFailed      atomic.Int64 // fetches that ended in an error or a 4xx/5xx
	nodesCrawled     atomic.Int64
	nodesCreated     atomic.Int64
	edgesCreated     atomic.Int64
	linksRecorded    atomic.Int64 // edge weight added
	robotsFetched    atomic.Int64
	robotsDisallowed atomic.Int64
	retries          atomic.Int64
	fetchNanos       atomic.Int64
	claimed          atomic.Int64

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
	StartTime         time.Time        `json:"start_time"`
	EndTime           time.Time        `json:"end_time"`
	NodesDiscovered   int64            `json:"nodes_discovered"`
	NodesCrawled      int64            `json:"nodes_crawled"`
	EdgesRecorded     int64            `json:"edges_recorded"`
	PagesFetched      int64            `json:"pages_fetched"`
	PagesFailed       int64            `json:"pages_failed"`
	AvgFetchTimeMS    int64            `json:"avg_fetch_time_ms"`
	TerminationReason string           `json:"termination_reason"`
	PagesPerSecond    float64          `json:"pages_per_second"`
	LinksRecorded     int64            `json:"links_recorded"`
	RobotsFetched     int64            `json:"robots_fetched"`
	RobotsDisallowed  int64            `json:"robots_disallowed"`
	Retries           int64            `json:"retries"`
	ErrorsByType      map[string]int64 `json:"errors_by_type"`
	TotalNodes        uint64           `json:"total_nodes"`
	TotalEdges        uint64           `json:"total_edges"`
	TotalWeight       uint64           `json:"total_weight"`
	FrontierSize      uint64           `json:"frontier_size"`
	Error             string           `json:"error,omitempty"`
}

// Termination reasons.
const (
	ReasonQueueEmpty = "queue_empty"
	ReasonSignal     = "signal"
	ReasonMaxPages   = "max_pages"
	ReasonError      = "error"
)

func (s *stats) result(start, end time.Time, reason string) Result {
	r := Result{
		StartTime: start.UTC(), EndTime: end.UTC(),
		NodesDiscovered: s.nodesCreated.Load(), NodesCrawled: s.nodesCrawled.Load(),
		EdgesRecorded: s.edgesCreated.Load(), PagesFetched: s.pagesFetched.Load(),
		PagesFailed: s.pagesFailed.Load(), TerminationReason: reason,
		LinksRecorded: s.linksRecorded.Load(), RobotsFetched: s.robotsFetched.Load(),
		RobotsDisallowed: s.robotsDisallowed.Load(), Retries: s.retries.Load(),
		ErrorsByType: s.errorCounts(),
	}
	if n := r.PagesFetched + r.PagesFailed; n > 0 {
		r.AvgFetchTimeMS = s.fetchNanos.Load() / n / int64(time.Millisecond)
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
