package crawl

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/DataDog/sketches-go/ddsketch"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// FetchBuckets are the upper bounds, in seconds, of the fetch-time
// histogram (Prometheus-style cumulative buckets; +Inf is implied).
var FetchBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// histogram counts fetch durations into FetchBuckets, for /metrics, and
// into a quantile sketch, for the percentiles Status reports: bucket
// bounds are too far apart for a quantile read off them (a web answering
// in 200 ms had a p50 of 175 ms, interpolated inside the 100–250 ms
// bucket).
type histogram struct {
	mu     sync.Mutex // guards counts, sum, total, sketch
	counts []uint64   // per bucket, not cumulative; last is +Inf
	sum    float64
	total  uint64
	sketch *ddsketch.DDSketch // fetch times in ms, within sketchAccuracy
	// minMS and maxMS are the fastest and slowest fetch: a quantile is
	// kept between them, so that none reads faster than every fetch.
	minMS, maxMS float64
}

// sketchAccuracy is the sketch's relative accuracy: a quantile it reports
// is within 0.5 % of the fetch time at that rank.
const sketchAccuracy = 0.005

func (h *histogram) observe(d time.Duration) {
	s := d.Seconds()
	i := sort.SearchFloat64s(FetchBuckets, s)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.counts == nil {
		h.counts = make([]uint64, len(FetchBuckets)+1)
		// The accuracy is a constant in range: no error to meet.
		h.sketch, _ = ddsketch.NewDefaultDDSketch(sketchAccuracy)
	}
	h.counts[i]++
	h.sum += s
	h.total++
	ms := 1000 * s
	if h.total == 1 || ms < h.minMS {
		h.minMS = ms
	}
	h.maxMS = max(h.maxMS, ms)
	_ = h.sketch.Add(ms) // only a negative or NaN value is refused
}

// quantiles returns the fetch times at qs in milliseconds, to four
// significant digits (each within sketchAccuracy of the true one), or
// zeros before any fetch.
func (h *histogram) quantiles(qs ...float64) []float64 {
	out := make([]float64, len(qs))
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sketch == nil {
		return out
	}
	for i, q := range qs {
		if v, err := h.sketch.GetValueAtQuantile(q); err == nil {
			out[i] = significant(min(max(v, h.minMS), h.maxMS), 4)
		}
	}
	return out
}

// significant rounds v > 0 to n significant digits: the sketch's 0.5 %
// makes more noise, and a fetch of 40 µs is not 0 ms.
func significant(v float64, n int) float64 {
	if v <= 0 {
		return v
	}
	scale := math.Pow(10, float64(n-1)-math.Floor(math.Log10(v)))
	return math.Round(v*scale) / scale
}

// Histogram is a snapshot: cumulative counts per FetchBuckets bound.
type Histogram struct {
	Cumulative []uint64 `json:"cumulative"` // len(FetchBuckets); counts ≤ each bound
	Count      uint64   `json:"count"`
	Sum        float64  `json:"sum_seconds"`
}

func (h *histogram) snapshot() Histogram {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := Histogram{Cumulative: make([]uint64, len(FetchBuckets)), Count: h.total, Sum: h.sum}
	var c uint64
	for i := range FetchBuckets {
		if h.counts != nil {
			c += h.counts[i]
		}
		out.Cumulative[i] = c
	}
	return out
}

// Worker states.
const (
	WorkerIdle      = "idle"
	WorkerRobots    = "robots"
	WorkerFetching  = "fetching"
	WorkerRendering = "rendering"
	WorkerStopped   = "stopped"
)

// WorkerStatus is what one worker is doing.
type WorkerStatus struct {
	ID    int       `json:"id"`
	State string    `json:"state"`
	Host  string    `json:"host,omitempty"`
	Since time.Time `json:"since"`
}

type workerSlot struct {
	v atomic.Pointer[WorkerStatus]
}

func (c *Crawler) setWorker(id int, state, host string) {
	if id <= 0 || id > len(c.workers) {
		return
	}
	c.workers[id-1].v.Store(&WorkerStatus{ID: id, State: state, Host: host, Since: c.now()})
}

// Status is a live view of a crawl, safe to take while it runs.
type Status struct {
	Running          bool      `json:"running"`
	StartTime        time.Time `json:"start_time"`
	UptimeSeconds    float64   `json:"uptime_seconds"`
	PagesFetched     int64     `json:"pages_fetched"`
	PagesFailed      int64     `json:"pages_failed"`
	NodesCrawled     int64     `json:"nodes_crawled"`
	NodesDiscovered  int64     `json:"nodes_discovered"`
	EdgesRecorded    int64     `json:"edges_recorded"`
	RobotsFetched    int64     `json:"robots_fetched"`
	RobotsDisallowed int64     `json:"robots_disallowed"`
	PagesSkipped     int64     `json:"pages_skipped"` // as metrics.log's
	PagesRendered    int64     `json:"pages_rendered"`
	RenderFailures   int64     `json:"render_failures"`
	Retries          int64     `json:"retries"`
	// Revisits counts answered crawls of hosts crawled before; of them,
	// NotModified were answered 304 (their links kept as the last crawl
	// read them) and Changed found the page changed; BytesSaved is the
	// body bytes the 304s did not send. metrics.log's figures.
	Revisits    int64 `json:"revisits"`
	NotModified int64 `json:"not_modified"`
	Changed     int64 `json:"changed"`
	BytesSaved  int64 `json:"bytes_saved"`
	// MaxPages is the run's page budget (0: no limit); PagesDone counts
	// what it is spent on: pages fetched, failed or disallowed.
	MaxPages  int   `json:"max_pages"`
	PagesDone int64 `json:"pages_done"`
	// ETASeconds is the time the rest of max_pages takes at the current
	// rate; 0 without max_pages or a rate.
	ETASeconds float64 `json:"eta_seconds,omitempty"`
	// HostsOpen are hosts started and not finished; HostsWaiting, of
	// them, are parked for their delay, a retry or a Retry-After.
	HostsOpen      int64            `json:"hosts_open"`
	HostsWaiting   int64            `json:"hosts_waiting"`
	PagesPerSecond float64          `json:"pages_per_second"` // over the last 10 s
	ErrorsByType   map[string]int64 `json:"errors_by_type"`
	Workers        []WorkerStatus   `json:"workers"`
	// FetchP50MS, FetchP90MS and FetchP99MS are quantiles of the run's
	// page fetch times, each within 0.5 % of the true one (a DDSketch).
	FetchP50MS        float64   `json:"fetch_p50_ms"`
	FetchP90MS        float64   `json:"fetch_p90_ms"`
	FetchP99MS        float64   `json:"fetch_p99_ms"`
	Fetch             Histogram `json:"fetch_seconds"`
	FrontierSize      uint64    `json:"frontier_size"`
	Leases            uint64    `json:"leases"`
	Nodes             uint64    `json:"nodes"`
	Edges             uint64    `json:"edges"`
	TotalWeight       uint64    `json:"total_weight"`
	TerminationReason string    `json:"termination_reason,omitempty"`
	// StoreError is why the store's figures (nodes, edges, frontier) could
	// not be read, when they could not: they are zero then.
	StoreError string `json:"store_error,omitempty"`
	// Paused says why no page is fetched now; null while the crawl
	// fetches. Pauses, PausedSeconds and PagesPardoned are metrics.log's
	// (the network's pauses), and DiskPauses and DiskPausedSeconds.
	Paused            *Pause  `json:"paused"`
	Pauses            int64   `json:"pauses"`
	PausedSeconds     float64 `json:"paused_seconds"`
	PagesPardoned     int64   `json:"pages_pardoned"`
	DiskPauses        int64   `json:"disk_pauses"`
	DiskPausedSeconds float64 `json:"disk_paused_seconds"`
	// Cluster is set when the crawl is one shard of a cluster.
	Cluster *ClusterStatus `json:"cluster,omitempty"`
}

// rate keeps (time, pages) samples to compute a rolling pages/s.
type rate struct {
	mu      sync.Mutex // guards samples
	samples []rateSample
}

type rateSample struct {
	at    time.Time
	pages int64
}

// reset starts the samples at a run's start: the first Status after it
// has a rate over the time since, not 0 for want of a second sample.
func (r *rate) reset(at time.Time, pages int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.samples = append(r.samples[:0], rateSample{at, pages})
}

func (r *rate) add(at time.Time, pages int64) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.samples = append(r.samples, rateSample{at, pages})
	for len(r.samples) > 2 && at.Sub(r.samples[0].at) > 10*time.Second {
		r.samples = r.samples[1:]
	}
	first := r.samples[0]
	if d := at.Sub(first.at).Seconds(); d > 0 {
		return float64(pages-first.pages) / d
	}
	return 0
}

// Status returns the crawl's live status; the store figures come from one
// read transaction.
func (c *Crawler) Status() Status {
	now := c.now()
	st := Status{
		Running:          c.running.Load(),
		PagesFetched:     c.stats.pagesFetched.Load(),
		PagesFailed:      c.stats.pagesFailed.Load(),
		NodesCrawled:     c.stats.nodesCrawled.Load(),
		NodesDiscovered:  c.stats.nodesCreated.Load(),
		EdgesRecorded:    c.stats.edgesCreated.Load(),
		RobotsFetched:    c.stats.robotsFetched.Load(),
		RobotsDisallowed: c.stats.robotsDisallowed.Load(),
		PagesSkipped:     c.stats.robotsDisallowed.Load() + c.stats.dropped.Load(),
		Retries:          c.stats.retries.Load(),
		Revisits:         c.stats.revisits.Load(),
		NotModified:      c.stats.notModified.Load(),
		Changed:          c.stats.changed.Load(),
		BytesSaved:       c.stats.bytesSaved.Load(),
		MaxPages:         c.cfg.MaxPages,
		PagesRendered:    c.stats.pagesRendered.Load(),
		RenderFailures:   c.stats.renderFailures.Load(),
		HostsOpen:        c.open.Load(),
		HostsWaiting:     c.parkedN.Load(),
		ErrorsByType:     c.stats.errorCounts(),
		Fetch:            c.fetchHist.snapshot(),
	}
	st.Paused = c.pause()
	var paused time.Duration
	st.Pauses, paused, st.PagesPardoned = c.net.figures()
	st.PausedSeconds = paused.Seconds()
	st.DiskPauses, paused = c.disk.figures()
	st.DiskPausedSeconds = paused.Seconds()
	if r := c.reason.Load(); r != nil {
		st.TerminationReason = *r
	}
	if ns := c.started.Load(); ns != 0 {
		st.StartTime = time.Unix(0, ns).UTC()
		st.UptimeSeconds = now.Sub(st.StartTime).Seconds()
	}
	st.PagesPerSecond = c.rate.add(now, st.PagesFetched)
	st.PagesDone = st.PagesFetched + st.PagesFailed + st.RobotsDisallowed
	if left := int64(st.MaxPages) - st.PagesDone; st.MaxPages > 0 && left > 0 && st.PagesPerSecond > 0 {
		st.ETASeconds = float64(left) / st.PagesPerSecond
	}
	if c.peer != nil {
		cs := c.peer.Status()
		st.Cluster = &cs
	}
	q := c.fetchHist.quantiles(0.5, 0.9, 0.99)
	st.FetchP50MS, st.FetchP90MS, st.FetchP99MS = q[0], q[1], q[2]
	for i := range c.workers {
		if w := c.workers[i].v.Load(); w != nil {
			st.Workers = append(st.Workers, *w)
		}
	}
	err := c.store.View(func(tx *kv.Tx) error {
		g := graph.GetCounts(tx)
		st.Nodes, st.Edges, st.TotalWeight = g.Nodes, g.Edges, g.Weight
		st.FrontierSize, st.Leases = frontier.Len(tx), frontier.Leases(tx)
		return nil
	})
	if err != nil {
		st.StoreError = err.Error()
	}
	return st
}

// Progress is the progress line: seed 000's "Queue: N | Nodes: N | Edges:
// N", then the pages done (of max_pages), the errors, the rate, with
// max_pages the time left at that rate, and the time the run has taken
// (elapsed h:mm:ss). The log's line and the terminal's live line are both
// this text.
func (st Status) Progress() string {
	errs := int64(0)
	for _, n := range st.ErrorsByType {
		errs += n
	}
	pages := fmt.Sprint(st.PagesDone)
	if st.MaxPages > 0 {
		pages += fmt.Sprintf("/%d", st.MaxPages)
	}
	s := fmt.Sprintf("Queue: %d | Nodes: %d | Edges: %d | Pages: %s | Errors: %d | %.1f pages/s",
		st.FrontierSize, st.Nodes, st.Edges, pages, errs, st.PagesPerSecond)
	if st.MaxPages > 0 {
		eta := "?"
		if st.ETASeconds > 0 {
			eta = clock(time.Duration(st.ETASeconds * float64(time.Second)))
		} else if st.PagesDone >= int64(st.MaxPages) {
			eta = clock(0)
		}
		s += " | ETA " + eta
	}
	s += " | elapsed " + clock(time.Duration(st.UptimeSeconds*float64(time.Second)))
	if st.Paused != nil {
		s += " | paused: " + st.Paused.Text(time.Now())
	}
	return s
}

// Pause reasons.
const (
	PauseNetwork = "network_unreachable" // the crawl's own network is away (docs/outage.md)
	PauseDisk    = "disk_full"           // a file system it writes to is full, or below min_free_space
)

// Pause says why a crawl fetches nothing now.
type Pause struct {
	Reason string    `json:"reason"` // PauseNetwork or PauseDisk
	Since  time.Time `json:"since"`
	// Detail is the pause in words: the probe that failed, the write that
	// failed ("write /data/w.bolt: no space left on device"), or the free
	// space short of min_free_space.
	Detail string `json:"detail"`
	// Path is, for a disk, the file whose write failed or the directory
	// short of free space.
	Path string `json:"path,omitempty"`
	// NextCheck is when the network is probed next, or the free space
	// looked at.
	NextCheck time.Time `json:"next_check,omitzero"`
}

// Text is the pause on one line: "network unreachable since …, next probe
// in 4s" or "disk full since …: write /data/w.bolt: no space left on
// device; next check in 2s".
func (p *Pause) Text(now time.Time) string {
	next := ""
	if !p.NextCheck.IsZero() {
		next = max(p.NextCheck.Sub(now), 0).Round(time.Second).String()
	}
	switch p.Reason {
	case PauseNetwork:
		s := "network unreachable since " + p.Since.UTC().Format(time.RFC3339)
		if next != "" {
			s += ", next probe in " + next
		}
		return s
	default:
		s := "disk full since " + p.Since.UTC().Format(time.RFC3339) + ": " + p.Detail
		if next != "" {
			s += "; next check in " + next
		}
		return s
	}
}

// pause is the crawl's pause, or nil: a full disk first (it needs someone
// to act), then the network.
func (c *Crawler) pause() *Pause {
	if p := c.disk.pause(); p != nil {
		return p
	}
	since, next, detail := c.net.pauseInfo()
	if since.IsZero() {
		return nil
	}
	return &Pause{Reason: PauseNetwork, Since: since.UTC(), Detail: detail, NextCheck: next.UTC()}
}

// clock writes d as h:mm:ss.
func clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
}
