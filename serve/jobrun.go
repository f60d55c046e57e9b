package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/crawlwarc"
	"github.com/weaver-crawler/weaver/kv"
)

// putState records st as the state of the job whose store tx writes.
func putState(tx *kv.Tx, st *jobState) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return tx.SetMetaString(metaJobStatus, string(data))
}

// startLocked runs j in a goroutine of its own. m.mu must be held.
func (m *JobManager) startLocked(j *job) {
	ctx, cancel := context.WithCancel(context.Background())
	j.cancel, j.stopBy = cancel, ""
	j.state.Status = JobQueued
	j.done = make(chan struct{})
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer close(j.done)
		defer cancel()
		m.run(ctx, j)
	}()
}

// run waits for a slot, crawls, and records the outcome in the job's
// store.
func (m *JobManager) run(ctx context.Context, j *job) {
	select {
	case m.slots <- struct{}{}:
		defer func() { <-m.slots }()
	case <-ctx.Done():
		m.end(j, nil, m.stoppedStatus(j), "")
		return
	}
	if ctx.Err() != nil {
		m.end(j, nil, m.stoppedStatus(j), "")
		return
	}
	cfg := j.cfg
	if cfg.MaxPages > 0 {
		left := cfg.MaxPages - pagesUsed(j.state.Runs)
		if left <= 0 {
			m.end(j, nil, JobCompleted, "")
			return
		}
		cfg.MaxPages = left
	}
	r, err := m.open(j, cfg)
	if err != nil {
		m.end(j, nil, JobFailed, err.Error())
		return
	}
	res, err := r.crawl(ctx)
	status, msg := JobCompleted, ""
	switch {
	case err != nil:
		status, msg = JobFailed, err.Error()
	case res.TerminationReason == crawl.ReasonSignal, res.TerminationReason == crawl.ReasonAPIStop:
		status = m.stoppedStatus(j)
	}
	var ran *crawl.Result
	if res.TerminationReason != "" {
		ran = &res
	}
	if err := r.closeArchive(); err != nil && status != JobFailed {
		status, msg = JobFailed, "warc_dir: "+err.Error()
	}
	m.endOpen(j, r.store, ran, status, msg)
}

// jobRun is one run of a job: its store, crawler and WARC writer, open.
type jobRun struct {
	cfg     crawl.Config // the job's, with what is left of max_pages
	state   jobState     // the job's, as the run started
	store   *kv.Store
	crawler *crawl.Crawler
	archive *crawlwarc.Archive // nil: no WARC files
	log     func(level, msg string)
}

// open opens j's store, WARC writer and crawler for a run by cfg, and
// marks the job running. Its error is the job's.
func (m *JobManager) open(j *job, cfg crawl.Config) (*jobRun, error) {
	j.use.Lock()
	defer j.use.Unlock()
	s, err := kv.Open(j.path, kv.Options{})
	if err != nil {
		return nil, err
	}
	r := &jobRun{cfg: cfg, store: s, log: func(level, msg string) { m.logf(level, "[%s] %s", j.id, msg) }}
	opts := crawl.Options{Proxy: m.opt.Proxy, Log: r.log, Now: m.opt.Now, Grace: m.opt.Grace}
	if cfg.WarcDir != "" {
		archive, recovered, err := crawlwarc.Open(&r.cfg, m.opt.Software, s)
		for _, rec := range recovered {
			r.log("WARN", "WARC: "+rec.String())
		}
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("warc_dir: %w", err)
		}
		r.archive, opts.Archive = archive, archive
	}
	if r.crawler, err = crawl.New(cfg, s, opts); err != nil {
		s.Close()
		if r.archive != nil {
			r.archive.Close()
		}
		return nil, err
	}
	now := m.opt.Now().UTC()
	m.mu.Lock()
	j.store, j.crawler = s, r.crawler
	j.state.Status = JobRunning
	if j.state.StartedAt == nil {
		j.state.StartedAt = &now
	}
	r.state = j.state
	m.mu.Unlock()
	return r, nil
}

// crawl stores the job's settings as a crawl's are, for weaver status,
// weaver merge and a `weaver crawl` that resumes the job's store, with the
// job's state, and crawls: a new job from its seed, a resumed one where
// it was (no seeds, no re-queueing).
func (r *jobRun) crawl(ctx context.Context) (crawl.Result, error) {
	err := r.store.Update(func(tx *kv.Tx) error {
		if err := crawl.PutSettings(tx, r.cfg.Settings()); err != nil {
			return err
		}
		if r.cfg.WarcDir != "" {
			if err := crawlwarc.RecordDir(tx, &r.cfg); err != nil {
				return err
			}
		}
		return putState(tx, &r.state)
	})
	if err != nil {
		return crawl.Result{}, err
	}
	var fresh bool
	if err := r.store.View(func(tx *kv.Tx) error { fresh = graph.GetCounts(tx).Nodes == 0; return nil }); err != nil {
		return crawl.Result{}, err
	}
	var seeds []string
	if fresh {
		seeds = r.cfg.Seeds()
	}
	if _, _, err := r.crawler.Prepare(seeds); err != nil {
		return crawl.Result{}, err
	}
	return r.crawler.Run(ctx)
}

// closeArchive closes the WARC writer before the job records its end, so
// that its files are whole when the job is seen final, and says what it
// wrote. It returns Close's error.
func (r *jobRun) closeArchive() error {
	if r.archive == nil {
		return nil
	}
	st := r.archive.Stats()
	err := r.archive.Close()
	if err != nil {
		r.log("ERROR", "WARC: "+err.Error())
	}
	r.log("INFO", fmt.Sprintf("WARC: %s, %s, %d bytes in %s", plural(st.Files, "file"), plural(st.Records, "record"), st.Bytes, r.cfg.WarcDir))
	return err
}

// pagesUsed is how many pages earlier runs took from max_pages.
func pagesUsed(runs []crawl.Result) int {
	n := int64(0)
	for _, r := range runs {
		n += r.PagesFetched + r.PagesFailed + r.RobotsDisallowed
	}
	return int(n)
}

// stoppedStatus is the status of a job whose run was cancelled: stopped
// for a client's DELETE, queued (to resume) for a shutdown.
func (m *JobManager) stoppedStatus(j *job) JobStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	if j.stopBy == "client" {
		return JobStopped
	}
	return JobQueued
}

// end records a job's outcome when its store is not open.
func (m *JobManager) end(j *job, res *crawl.Result, status JobStatus, msg string) {
	j.use.Lock()
	s, err := kv.Open(j.path, kv.Options{})
	j.use.Unlock()
	if err != nil {
		m.mu.Lock()
		j.state.Status, j.state.Error = JobFailed, err.Error()
		m.mu.Unlock()
		m.logf("ERROR", "Job %s: recording its end: %v", j.id, err)
		return
	}
	m.endOpen(j, s, res, status, msg)
}

// endOpen records a job's outcome in its open store s, then closes it.
func (m *JobManager) endOpen(j *job, s *kv.Store, res *crawl.Result, status JobStatus, msg string) {
	now := m.opt.Now().UTC()
	m.mu.Lock()
	if res != nil {
		j.state.Runs = append(j.state.Runs, *res)
	}
	j.state.Status, j.state.Error = status, msg
	if status.final() {
		j.state.EndedAt = &now
	}
	st := j.state
	st.Runs = slices.Clone(st.Runs)
	m.mu.Unlock()
	err := s.Update(func(tx *kv.Tx) error { return putState(tx, &st) })
	j.use.Lock()
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	m.mu.Lock()
	j.store, j.crawler = nil, nil
	m.mu.Unlock()
	j.use.Unlock()
	if err != nil {
		m.logf("ERROR", "Job %s: recording its end: %v", j.id, err)
	}
	switch {
	case status == JobQueued:
		m.logf("INFO", "Job %s interrupted; it resumes when weaver serve restarts", j.id)
	case res != nil:
		m.logf("INFO", "Job %s %s (%s): %s fetched, %s, %s", j.id, status, res.TerminationReason,
			plural(res.PagesFetched, "page"), plural(res.TotalNodes, "node"), plural(res.TotalEdges, "edge"))
	default:
		m.logf("INFO", "Job %s %s %s", j.id, status, msg)
	}
}

// MergeResults sums the runs of one job into one Result: counters added,
// the first start and the last end, the store totals and the termination
// reason of the last run (and its next due time), pages per second over
// the time spent running, the fetch-time average weighted by pages, and
// the fetch-time percentiles of the run that fetched most (percentiles
// of several runs cannot be added).
func MergeResults(runs []crawl.Result) crawl.Result {
	if len(runs) == 0 {
		return crawl.Result{}
	}
	last := runs[len(runs)-1]
	out := crawl.Result{
		StartTime: runs[0].StartTime, EndTime: last.EndTime, TerminationReason: last.TerminationReason,
		TotalNodes: last.TotalNodes, TotalEdges: last.TotalEdges, TotalWeight: last.TotalWeight,
		FrontierSize: last.FrontierSize, Error: last.Error, ErrorsByType: map[string]int64{},
		NextDue: last.NextDue,
	}
	var seconds, fetchMS, waitMS float64
	most := int64(-1) // the pages of the run whose percentiles are kept
	for _, r := range runs {
		// Percentiles do not add up: those of the run that fetched most.
		if n := r.PagesFetched + r.PagesFailed; n > most {
			most = n
			out.FetchP50MS, out.FetchP90MS, out.FetchP99MS = r.FetchP50MS, r.FetchP90MS, r.FetchP99MS
		}
		out.Revisits += r.Revisits
		out.NotModified += r.NotModified
		out.Changed += r.Changed
		out.Unchanged += r.Unchanged
		out.BytesSaved += r.BytesSaved
		out.NodesDiscovered += r.NodesDiscovered
		out.NodesCrawled += r.NodesCrawled
		out.EdgesRecorded += r.EdgesRecorded
		out.PagesFetched += r.PagesFetched
		out.PagesFailed += r.PagesFailed
		out.LinksRecorded += r.LinksRecorded
		out.RobotsFetched += r.RobotsFetched
		out.RobotsDisallowed += r.RobotsDisallowed
		out.PagesSkipped += r.PagesSkipped
		out.PagesAnswered += r.PagesAnswered
		out.PagesRendered += r.PagesRendered
		out.RenderFailures += r.RenderFailures
		out.Retries += r.Retries
		out.Pauses += r.Pauses
		out.PausedSeconds += r.PausedSeconds
		out.PagesPardoned += r.PagesPardoned
		out.DiskPauses += r.DiskPauses
		out.DiskPausedSeconds += r.DiskPausedSeconds
		for k, v := range r.ErrorsByType {
			out.ErrorsByType[k] += v
		}
		seconds += r.EndTime.Sub(r.StartTime).Seconds()
		fetchMS += float64(r.AvgFetchTimeMS) * float64(r.PagesFetched+r.PagesFailed)
		waitMS += float64(r.AvgWaitTimeMS) * float64(r.PagesFetched+r.PagesFailed)
	}
	if n := out.PagesFetched + out.PagesFailed; n > 0 {
		out.AvgFetchTimeMS = int64(fetchMS / float64(n))
		out.AvgWaitTimeMS = int64(waitMS / float64(n))
	}
	if seconds > 0 {
		out.PagesPerSecond = float64(out.PagesFetched) / seconds
	}
	return out
}

// plural writes n and noun, with an s unless n is 1.
func plural[T ~int | ~int64 | ~uint64](n T, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
