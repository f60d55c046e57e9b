package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/kv"
)

// JobStatus is where a job is in its life.
type JobStatus string

// The statuses of a job. Queued and running jobs are resumed when weaver
// serve restarts; the other three are final.
const (
	JobQueued    JobStatus = "queued"    // waiting for a free slot, or for a restart after a shutdown
	JobRunning   JobStatus = "running"   // crawling
	JobCompleted JobStatus = "completed" // the frontier ran dry or max_pages was reached
	JobStopped   JobStatus = "stopped"   // stopped by DELETE /crawl/{id}
	JobFailed    JobStatus = "failed"    // the store or the configuration failed
)

func (s JobStatus) final() bool { return s == JobCompleted || s == JobStopped || s == JobFailed }

// Meta keys of a job's store.
const (
	metaJobConfig = "job_config" // jobConfig as JSON, written once at creation
	metaJobStatus = "job_status" // jobState as JSON, rewritten at each start and end
)

// JobOptions configure a JobManager.
type JobOptions struct {
	// Dir holds one store per job, Dir/<id>.bolt, and its metrics file,
	// Dir/<id>.metrics.json. It is created if missing.
	Dir string
	// Base is every job's configuration before the client's keys apply:
	// typically crawl.Defaults() with the operator's connect_to and
	// allow_private_networks. DBPath, MetricsPath and Listen are replaced.
	Base crawl.Config
	// MaxRunning is how many jobs crawl at once; the others wait, queued.
	// Zero means 4.
	MaxRunning int
	// Software names weaver in the warcinfo record of a job's WARC files
	// ("weaver/1.2.3"; empty: "weaver").
	Software string
	// Proxy, Now and Grace are passed to every crawler (crawl.Options).
	Proxy func(*url.URL) (*url.URL, error)
	Now   func() time.Time
	Grace time.Duration
	// Log receives the manager's lines and the jobs' (prefixed with the
	// job id). Nil: silent.
	Log func(level, msg string)
}

// Job is a job as the API shows it.
type Job struct {
	ID        string          `json:"id"`
	Status    JobStatus       `json:"status"`
	SeedURL   string          `json:"seed_url"`
	MaxPages  int             `json:"max_pages"` // 0: no limit
	Config    json.RawMessage `json:"config"`    // the crawl config keys the client gave
	CreatedAt time.Time       `json:"created_at"`
	StartedAt *time.Time      `json:"started_at"` // first start; null until then
	EndedAt   *time.Time      `json:"ended_at"`   // null until final
	Runs      int             `json:"runs"`       // crawl runs so far: 1, plus one per resume
	Error     string          `json:"error,omitempty"`
	// Progress is the running crawl's live status.
	Progress *crawl.Status `json:"progress,omitempty"`
	// Metrics are the job's counters once it is final: every run's summed
	// (see MergeResults).
	Metrics *crawl.Result `json:"metrics,omitempty"`
	// Summary says in words what the final metrics count, and why fewer
	// pages than max_pages were fetched.
	Summary string `json:"summary,omitempty"`
}

// jobConfig is what the client asked for, stored once.
type jobConfig struct {
	ID        string          `json:"id"`
	Config    json.RawMessage `json:"config"` // crawl config keys; the seed is in seed_url
	CreatedAt time.Time       `json:"created_at"`
}

// jobState is what happened to the job so far.
type jobState struct {
	Status    JobStatus      `json:"status"`
	StartedAt *time.Time     `json:"started_at"`
	EndedAt   *time.Time     `json:"ended_at"`
	Error     string         `json:"error,omitempty"`
	Runs      []crawl.Result `json:"runs"`
}

// job is one job in memory.
type job struct {
	id   string
	conf jobConfig
	cfg  crawl.Config // conf applied to the base, as of load or creation
	path string
	done chan struct{} // closed when its goroutine has returned

	// use is held for reading while a request reads the job's store, and
	// for writing while the job opens or closes it: a reader either sees
	// the job's open store or opens the file itself without racing the
	// job's exclusive open.
	use sync.RWMutex

	// guarded by JobManager.mu
	state   jobState
	store   *kv.Store      // while running
	crawler *crawl.Crawler // while running
	cancel  context.CancelFunc
	stopBy  string // "", "client" or "shutdown"
}

// JobManager runs crawl jobs, each in its own store, and resumes the
// unfinished ones of a previous process.
type JobManager struct {
	opt   JobOptions
	root  string        // opt.Dir, absolute: a job's paths are inside it
	slots chan struct{} // one token per running job
	wg    sync.WaitGroup

	mu      sync.Mutex // guards jobs, closing and every job's guarded fields
	jobs    map[string]*job
	closing bool
}

// NewJobManager loads the jobs found in opt.Dir and resumes those that
// were queued or running. It returns an error when the directory cannot
// be created or read; a store it cannot read is logged and left out.
func NewJobManager(opt JobOptions) (*JobManager, error) {
	if opt.MaxRunning <= 0 {
		opt.MaxRunning = 4
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("serve: jobs: %w", err)
	}
	root, err := filepath.Abs(opt.Dir)
	if err != nil {
		return nil, fmt.Errorf("serve: jobs: %w", err)
	}
	m := &JobManager{opt: opt, root: root, slots: make(chan struct{}, opt.MaxRunning), jobs: map[string]*job{}}
	paths, err := filepath.Glob(filepath.Join(opt.Dir, "*.bolt"))
	if err != nil {
		return nil, fmt.Errorf("serve: jobs: %w", err)
	}
	var resume []*job
	for _, p := range paths {
		j, err := m.load(p)
		if err != nil {
			m.logf("WARN", "Skipping %s: %v", p, err)
			continue
		}
		m.jobs[j.id] = j
		if !j.state.Status.final() {
			resume = append(resume, j)
		}
	}
	slices.SortFunc(resume, func(a, b *job) int { return a.conf.CreatedAt.Compare(b.conf.CreatedAt) })
	for _, j := range resume {
		m.logf("INFO", "Resuming job %s (%s)", j.id, j.cfg.SeedURL)
		m.mu.Lock()
		m.startLocked(j)
		m.mu.Unlock()
	}
	return m, nil
}

func (m *JobManager) logf(level, format string, a ...any) {
	if m.opt.Log != nil {
		m.opt.Log(level, fmt.Sprintf(format, a...))
	}
}

// load reads a job from its store.
func (m *JobManager) load(path string) (*job, error) {
	s, err := kv.Open(path, kv.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var confJSON, stateJSON string
	err = s.View(func(tx *kv.Tx) error {
		confJSON, stateJSON = tx.MetaString(metaJobConfig), tx.MetaString(metaJobStatus)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if confJSON == "" {
		return nil, errors.New("not a job's store (no job_config in its meta)")
	}
	j := &job{path: path, done: make(chan struct{})}
	close(j.done) // nothing runs until start
	if err := json.Unmarshal([]byte(confJSON), &j.conf); err != nil {
		return nil, fmt.Errorf("job_config: %w", err)
	}
	if err := json.Unmarshal([]byte(stateJSON), &j.state); err != nil {
		return nil, fmt.Errorf("job_status: %w", err)
	}
	if want := strings.TrimSuffix(filepath.Base(path), ".bolt"); j.conf.ID != want {
		return nil, fmt.Errorf("job id %q does not match the file name", j.conf.ID)
	}
	j.id = j.conf.ID
	if j.cfg, err = m.config(j.conf.Config, j.id); err != nil {
		// The operator's settings may have changed since: the job stays
		// listed, and failed.
		j.cfg = m.opt.Base
		j.state.Status, j.state.Error = JobFailed, err.Error()
	}
	return j, nil
}

// view is the API's picture of j. live adds the running crawl's status.
func (m *JobManager) view(j *job, live bool) Job {
	if live {
		// Held while the crawler's status reads its store, which the job
		// then cannot close under it.
		j.use.RLock()
		defer j.use.RUnlock()
	}
	m.mu.Lock()
	st := j.state
	c := j.crawler
	m.mu.Unlock()
	out := Job{
		ID: j.id, Status: st.Status, SeedURL: j.cfg.SeedURL, MaxPages: j.cfg.MaxPages,
		Config: j.conf.Config, CreatedAt: j.conf.CreatedAt, StartedAt: st.StartedAt, EndedAt: st.EndedAt,
		Runs: len(st.Runs), Error: st.Error,
	}
	if st.Status == JobRunning {
		out.Runs++
		if live && c != nil {
			p := c.Status()
			out.Progress = &p
		}
	}
	if st.Status.final() && len(st.Runs) > 0 {
		r := MergeResults(st.Runs)
		out.Metrics = &r
		out.Summary = summary(r, j.cfg.MaxPages)
	}
	return out
}

// summary is a final job's counts in words: "29 pages fetched, 0 failed,
// 1 skipped (robots.txt disallows 1) of max_pages 30".
func summary(r crawl.Result, maxPages int) string {
	s := fmt.Sprintf("%d pages fetched, %d failed, %d skipped", r.PagesFetched, r.PagesFailed, r.PagesSkipped)
	var why []string
	if r.RobotsDisallowed > 0 {
		why = append(why, fmt.Sprintf("robots.txt disallows %d", r.RobotsDisallowed))
	}
	if n := r.PagesSkipped - r.RobotsDisallowed; n > 0 {
		why = append(why, fmt.Sprintf("%d not asked again after robots.txt or a failure for good", n))
	}
	if len(why) > 0 {
		s += " (" + strings.Join(why, "; ") + ")"
	}
	if maxPages > 0 {
		s += fmt.Sprintf(" of max_pages %d", maxPages)
	}
	return s
}

// withStore runs fn on j's store: the job's own while it runs, else the
// file opened read-only for the call. It returns fn's error or Open's.
func (m *JobManager) withStore(j *job, fn func(s *kv.Store) error) error {
	j.use.RLock()
	defer j.use.RUnlock()
	m.mu.Lock()
	s := j.store
	m.mu.Unlock()
	if s == nil {
		var err error
		if s, err = kv.Open(j.path, kv.Options{ReadOnly: true}); err != nil {
			return err
		}
		defer s.Close()
	}
	return fn(s)
}

// Get returns the job with id, or an error wrapping ErrNoJob.
func (m *JobManager) Get(id string) (Job, error) {
	j, err := m.job(id)
	if err != nil {
		return Job{}, err
	}
	return m.view(j, true), nil
}

func (m *JobManager) job(id string) (*job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.jobs[id]
	if !ok {
		return nil, fmt.Errorf("job %q: %w", id, ErrNoJob)
	}
	return j, nil
}

// List returns every job, oldest first.
func (m *JobManager) List() []Job {
	m.mu.Lock()
	js := make([]*job, 0, len(m.jobs))
	for _, j := range m.jobs {
		js = append(js, j)
	}
	m.mu.Unlock()
	slices.SortFunc(js, func(a, b *job) int {
		if c := a.conf.CreatedAt.Compare(b.conf.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	out := make([]Job, 0, len(js))
	for _, j := range js {
		out = append(out, m.view(j, true))
	}
	return out
}

// Stop stops the job with id and waits, until ctx ends, for it to record
// its stop. A job already final is left as it is: Stop returns it with an
// error wrapping ErrJobEnded. It returns an error wrapping ErrNoJob, or
// ctx's error.
func (m *JobManager) Stop(ctx context.Context, id string) (Job, error) {
	j, err := m.job(id)
	if err != nil {
		return Job{}, err
	}
	m.mu.Lock()
	cancel, done := j.cancel, j.done
	status := j.state.Status
	if !status.final() && cancel != nil {
		j.stopBy = "client"
	} else {
		cancel = nil
	}
	m.mu.Unlock()
	if status.final() {
		return m.view(j, false), fmt.Errorf("%w: %s is %s; its store %s stays (delete the file to remove it)",
			ErrJobEnded, id, status, filepath.Join(m.opt.Dir, id+".bolt"))
	}
	if cancel != nil {
		m.logf("INFO", "Stopping job %s", id)
		cancel()
		select {
		case <-done:
		case <-ctx.Done():
			return Job{}, ctx.Err()
		}
	}
	return m.view(j, false), nil
}

// Close stops taking jobs, stops every running job so that it resumes
// with the next JobManager on the directory, and waits for them until ctx
// ends. It returns ctx's error if they did not all finish.
func (m *JobManager) Close(ctx context.Context) error {
	m.mu.Lock()
	m.closing = true
	for _, j := range m.jobs {
		if j.cancel != nil && !j.state.Status.final() {
			if j.stopBy == "" {
				j.stopBy = "shutdown"
			}
			j.cancel()
		}
	}
	m.mu.Unlock()
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("serve: jobs still stopping: %w", ctx.Err())
	}
}
