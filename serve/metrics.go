package serve

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/weaver-crawler/weaver/crawl"
)

// The error kinds and worker states always exported, so that a kind that
// has not happened yet reads 0 instead of being absent (rate() and alerts
// then see it start).
var (
	errorKinds = []crawl.ErrorKind{
		crawl.KindDNS, crawl.KindDNSTimeout, crawl.KindDNSServFail, crawl.KindTimeout, crawl.KindRefused, crawl.KindConnect, crawl.KindReset,
		crawl.KindTLS, crawl.KindTLSExpired, crawl.KindTLSWrongName, crawl.KindTLSSelfSigned,
		crawl.KindTLSUnknownCA, crawl.KindTLSCertificate, crawl.KindTLSTimeout,
		crawl.KindRedirects, crawl.KindHTTP, crawl.KindEncoding, crawl.KindHeadersTooLarge, crawl.KindOther,
	}
	workerStates = []string{crawl.WorkerIdle, crawl.WorkerRobots, crawl.WorkerFetching, crawl.WorkerStopped}
)

// crawlCollector exports one crawl.Status per scrape: every metric of a
// scrape comes from the same snapshot (one read transaction for the store
// figures), which separate CounterFuncs calling Status each could not give.
type crawlCollector struct {
	status func() crawl.Status

	pagesFetched, pagesFailed, errors, robotsFetched, robotsDisallowed, retries *prometheus.Desc
	nodesCrawled, nodesDiscovered, edgesRecorded                                *prometheus.Desc
	pagesSkipped, hostsOpen, hostsWaiting, pagesRendered, renderFailures        *prometheus.Desc
	frontier, leases, nodes, edges, weight, workers, fetch, running, rate       *prometheus.Desc
	// The pauses: an outage (docs/outage.md), a full disk (docs/crawling.md).
	paused, pauses, pausedSeconds, pagesPardoned *prometheus.Desc
	// Revisits (docs/living-graph.md).
	revisits, notModified, changed, bytesSaved *prometheus.Desc
	// A cluster shard's figures (only when the crawl is one).
	outbox, published, consumed, shards, connected *prometheus.Desc
}

func newCrawlCollector(status func() crawl.Status) *crawlCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &crawlCollector{
		status:           status,
		pagesFetched:     d("weaver_pages_fetched_total", "Home pages fetched with an HTTP answer by this process."),
		pagesFailed:      d("weaver_pages_failed_total", "Fetches that ended in an error or a 4xx/5xx answer."),
		errors:           d("weaver_errors_total", "Failed fetches by error type.", "type"),
		robotsFetched:    d("weaver_robots_fetched_total", "robots.txt files fetched."),
		robotsDisallowed: d("weaver_robots_disallowed_total", "Pages not fetched because robots.txt disallows them (metrics.log's robots_disallowed)."),
		pagesSkipped:     d("weaver_pages_skipped_total", "Pages not asked for: robots_disallowed, and hosts not tried again (cached robots.txt, failed for good)."),
		hostsOpen:        d("weaver_hosts_open", "Hosts started and not finished."),
		pagesRendered:    d("weaver_pages_rendered_total", "Pages rendered by the browser (--render; metrics.log's pages_rendered)."),
		renderFailures:   d("weaver_render_failures_total", "Renders that failed; the page's HTML was used as fetched (render_failures)."),
		hostsWaiting:     d("weaver_hosts_waiting", "Open hosts parked for their politeness delay, a retry or a Retry-After."),
		retries:          d("weaver_retries_total", "Requests retried after a timeout, reset, 429 or 5xx."),
		nodesCrawled:     d("weaver_nodes_crawled_total", "Hosts whose page was answered in this run, each counted once (metrics.log's nodes_crawled)."),
		nodesDiscovered:  d("weaver_nodes_discovered_total", "Nodes created by this process."),
		edgesRecorded:    d("weaver_edges_recorded_total", "Edges created by this process."),
		frontier:         d("weaver_frontier_size", "Frontier entries waiting to be fetched."),
		leases:           d("weaver_leases", "Frontier entries being fetched."),
		nodes:            d("weaver_nodes", "Nodes (hosts) in the store."),
		edges:            d("weaver_edges", "Edges (host pairs) in the store."),
		weight:           d("weaver_edge_weight_total", "Sum of the store's edge weights: links recorded."),
		workers:          d("weaver_workers", "Workers by state.", "state"),
		fetch:            d("weaver_fetch_seconds", "Time a page's requests took (redirects and retries included, waits between them not)."),
		running:          d("weaver_crawl_running", "1 while the crawl runs."),
		rate:             d("weaver_pages_per_second", "Pages fetched per second over the last 10 seconds."),
		paused:           d("weaver_paused", "1 while the crawl is paused for this reason: network_unreachable (its own network, docs/outage.md) or disk_full (a file system it writes to is full or below min_free_space).", "reason"),
		pauses:           d("weaver_pauses_total", "Pauses in this run by reason (metrics.log's pauses and disk_pauses).", "reason"),
		pausedSeconds:    d("weaver_paused_seconds_total", "Time spent paused in this run by reason, the current pause included (paused_seconds, disk_paused_seconds).", "reason"),
		pagesPardoned:    d("weaver_pages_pardoned_total", "Pages whose network failure was the outage's, given back to the queue uncharged (pages_pardoned)."),
		revisits:         d("weaver_revisits_total", "Answered crawls of hosts crawled before (metrics.log's revisits)."),
		notModified:      d("weaver_not_modified_total", "Revisits answered 304 Not Modified: the host's links were kept as its last crawl read them (not_modified)."),
		changed:          d("weaver_changed_total", "Revisits that found the host's page changed (changed)."),
		bytesSaved:       d("weaver_bytes_saved_total", "Body bytes the 304s did not send, by the size of the host's last page (bytes_saved)."),
		outbox:           d("weaver_cluster_outbox", "Links for other shards committed here and not yet acknowledged by the stream."),
		published:        d("weaver_cluster_published_total", "Links this shard handed to the stream (each once, retries aside)."),
		consumed:         d("weaver_cluster_consumed_total", "Links from other shards applied to this shard's frontier."),
		shards:           d("weaver_cluster_shards", "The cluster's shards by published state.", "state"),
		connected:        d("weaver_cluster_connected", "1 while connected to the NATS server."),
	}
}

func (c *crawlCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		c.pagesFetched, c.pagesFailed, c.errors, c.robotsFetched, c.robotsDisallowed, c.retries,
		c.nodesCrawled, c.nodesDiscovered, c.edgesRecorded, c.pagesSkipped, c.hostsOpen, c.hostsWaiting, c.pagesRendered, c.renderFailures,
		c.frontier, c.leases, c.nodes, c.edges, c.weight, c.workers, c.fetch, c.running, c.rate,
		c.paused, c.pauses, c.pausedSeconds, c.pagesPardoned,
		c.revisits, c.notModified, c.changed, c.bytesSaved,
		c.outbox, c.published, c.consumed, c.shards, c.connected,
	} {
		ch <- d
	}
}

func (c *crawlCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.status()
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter(c.pagesFetched, float64(st.PagesFetched))
	counter(c.pagesFailed, float64(st.PagesFailed))
	counter(c.robotsFetched, float64(st.RobotsFetched))
	counter(c.robotsDisallowed, float64(st.RobotsDisallowed))
	counter(c.retries, float64(st.Retries))
	counter(c.nodesCrawled, float64(st.NodesCrawled))
	counter(c.nodesDiscovered, float64(st.NodesDiscovered))
	counter(c.edgesRecorded, float64(st.EdgesRecorded))
	counter(c.pagesSkipped, float64(st.PagesSkipped))
	counter(c.pagesRendered, float64(st.PagesRendered))
	counter(c.renderFailures, float64(st.RenderFailures))
	counter(c.revisits, float64(st.Revisits))
	counter(c.notModified, float64(st.NotModified))
	counter(c.changed, float64(st.Changed))
	counter(c.bytesSaved, float64(st.BytesSaved))
	gauge(c.hostsOpen, float64(st.HostsOpen))
	gauge(c.hostsWaiting, float64(st.HostsWaiting))
	kinds := map[string]bool{}
	for _, k := range errorKinds {
		kinds[string(k)] = true
	}
	for k := range st.ErrorsByType {
		kinds[k] = true
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		counter(c.errors, float64(st.ErrorsByType[k]), k)
	}

	gauge(c.frontier, float64(st.FrontierSize))
	gauge(c.leases, float64(st.Leases))
	gauge(c.nodes, float64(st.Nodes))
	gauge(c.edges, float64(st.Edges))
	counter(c.weight, float64(st.TotalWeight))
	byState := map[string]int{}
	for _, w := range st.Workers {
		byState[w.State]++
	}
	for _, s := range workerStates {
		gauge(c.workers, float64(byState[s]), s)
	}
	running := 0.0
	if st.Running {
		running = 1
	}
	gauge(c.running, running)
	gauge(c.rate, st.PagesPerSecond)
	for _, r := range []struct {
		reason  string
		pauses  int64
		seconds float64
	}{
		{crawl.PauseNetwork, st.Pauses, st.PausedSeconds},
		{crawl.PauseDisk, st.DiskPauses, st.DiskPausedSeconds},
	} {
		paused := 0.0
		if st.Paused != nil && st.Paused.Reason == r.reason {
			paused = 1
		}
		gauge(c.paused, paused, r.reason)
		counter(c.pauses, float64(r.pauses), r.reason)
		counter(c.pausedSeconds, r.seconds, r.reason)
	}
	counter(c.pagesPardoned, float64(st.PagesPardoned))

	buckets := make(map[float64]uint64, len(crawl.FetchBuckets))
	for i, b := range crawl.FetchBuckets {
		if i < len(st.Fetch.Cumulative) {
			buckets[b] = st.Fetch.Cumulative[i]
		}
	}
	ch <- prometheus.MustNewConstHistogram(c.fetch, st.Fetch.Count, st.Fetch.Sum, buckets)
	if cs := st.Cluster; cs != nil {
		gauge(c.outbox, float64(cs.Outbox))
		counter(c.published, float64(cs.Published))
		counter(c.consumed, float64(cs.Consumed))
		gauge(c.shards, float64(cs.ShardsIdle), "idle")
		gauge(c.shards, float64(cs.ShardsBusy), "busy")
		gauge(c.shards, float64(cs.Shards-cs.ShardsIdle-cs.ShardsBusy), "unknown")
		connected := 0.0
		if cs.Connected {
			connected = 1
		}
		gauge(c.connected, connected)
	}
}

// newRegistry is a registry of one handler's own (not the global one, so
// two handlers in one process, as in tests, do not collide): the crawl's
// metrics plus the Go runtime's and the process's.
func newRegistry(status func() crawl.Status) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		newCrawlCollector(status),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return reg
}
