package serve

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
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
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/crawlwarc"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/suggest"
	"github.com/weaver-crawler/weaver/warc"
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

// forbiddenKeys are the crawl config keys a client may not set, each with
// the reason its 400 gives: where the job's files go, what the operator
// decides (the network, the log, the API), and what a job cannot do.
// Every other key works in a job; a path among them (warc_dir) must lead
// inside the server's --dir (see jobPath).
var forbiddenKeys = map[string]string{
	"db_path":                "a job's store is <id>.bolt in the server's --dir",
	"metrics_path":           "a job's metrics are <id>.metrics.json in the server's --dir",
	"listen":                 "the API is weaver serve's",
	"token_file":             "the API's token is weaver serve's --token-file",
	"metrics_public":         "the API's token is weaver serve's --token-file",
	"connect_to":             "the operator decides it (weaver serve --connect-to)",
	"allow_private_networks": "the operator decides it (weaver serve --allow-private-networks)",
	"json_logs":              "the operator decides the log's format (weaver serve --json-logs)",
	"render":                 "weaver serve runs no browser: jobs crawl without rendering",
	"browser":                "weaver serve runs no browser: jobs crawl without rendering",
	"cluster":                "a job is not a shard of a cluster crawl",
	"shard":                  "a job is not a shard of a cluster crawl",
	"cluster_replicas":       "a job is not a shard of a cluster crawl",
	"crawl_name":             "a job is not a shard of a cluster crawl",
	"seeds_file":             "a file of the server's: a job gives its seeds in the request",
	"ca_file":                "the operator decides which roots to trust",
	"dns_server":             "the operator decides the network",
	"min_free_space":         "the operator decides it (weaver serve --min-free-space)",
}

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

// config applies a job's keys to the base configuration.
func (m *JobManager) config(keys json.RawMessage, id string) (crawl.Config, error) {
	cfg := m.opt.Base
	cfg.SeedURLs = slices.Clone(cfg.SeedURLs)
	cfg.ExcludeHosts = slices.Clone(cfg.ExcludeHosts)
	cfg.ConnectTo = slices.Clone(cfg.ConnectTo)
	if err := cfg.LoadJSON(keys, "request"); err != nil {
		return crawl.Config{}, err
	}
	if cfg.WarcDir != "" {
		dir, err := m.jobPath(cfg.WarcDir)
		if err != nil {
			return crawl.Config{}, fmt.Errorf("warc_dir %q: %w", cfg.WarcDir, err)
		}
		cfg.WarcDir = dir
	}
	cfg.DBPath = filepath.Join(m.opt.Dir, id+".bolt")
	cfg.MetricsPath = filepath.Join(m.opt.Dir, id+".metrics.json")
	cfg.Listen = ""
	if err := cfg.Validate(); err != nil {
		return crawl.Config{}, err
	}
	if len(cfg.Seeds()) == 0 {
		return crawl.Config{}, errors.New(`no seed: "url" is required`)
	}
	return cfg, nil
}

// jobPath returns the absolute path of rel, a directory a client names,
// inside the server's --dir; or an error saying why it is not inside: an
// absolute path, a "..", a symbolic link that leads out (or nowhere), or
// not a directory. What does not exist yet is created by the job, below
// the part that does.
func (m *JobManager) jobPath(rel string) (string, error) {
	if filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || filepath.VolumeName(rel) != "" {
		return "", errors.New(`an absolute path: give a directory relative to the server's job directory, such as "warc/"`)
	}
	for _, part := range strings.FieldsFunc(rel, func(r rune) bool { return r == '/' || r == filepath.Separator }) {
		if part == ".." {
			return "", errors.New(`".." leads out of the server's job directory: give a directory inside it, such as "warc/"`)
		}
	}
	root, err := filepath.EvalSymlinks(m.root)
	if err != nil {
		return "", err
	}
	path := filepath.Join(m.root, rel)
	// The deepest part that exists, with its symbolic links resolved,
	// must be inside the root: what is below it is created as named.
	existing := path
	for existing != m.root {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		existing = filepath.Dir(existing)
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", errors.New("a symbolic link in it leads nowhere")
	}
	if r, err := filepath.Rel(root, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", errors.New("a symbolic link in it leads out of the server's job directory")
	}
	if fi, err := os.Stat(existing); err == nil && !fi.IsDir() {
		return "", errors.New("not a directory")
	}
	return path, nil
}

// parseRequest turns POST /crawl's body into the crawl config keys to
// store: "url" becomes seed_url; every other key must be a crawl config
// key a client may set. seedKey is the key that gave the seed, "url" or
// "seed_url", for errors to name it as the client wrote it. Errors wrap
// ErrBadJob and name the key; an unknown key is told the known one it is
// closest to.
func parseRequest(body []byte) (keys json.RawMessage, seedKey string, err error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrBadJob, fmt.Sprintf(format, a...))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil {
		return nil, "", bad("not JSON: %v", err)
	} else if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, "", bad(`want a JSON object such as {"url": "https://example.com/", "max_pages": 100}`)
	}
	var out bytes.Buffer
	out.WriteByte('{')
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, "", bad("not JSON: %v", err)
		}
		key := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, "", bad("key %q: not JSON: %v", key, err)
		}
		if seen[key] {
			return nil, "", bad("key %q given twice", key)
		}
		seen[key] = true
		if key == "url" || key == "seed_url" {
			if seedKey != "" {
				return nil, "", bad(`give "url" or "seed_url", not both`)
			}
			seedKey, key = key, "seed_url"
		}
		if why, ok := forbiddenKeys[key]; ok {
			return nil, "", bad("key %q cannot be set through the API: %s", key, why)
		}
		if !slices.Contains(crawl.Keys(), key) {
			if near, ok := suggest.Closest(key, apiKeys()); ok {
				return nil, "", bad("unknown key %q: did you mean %q? (known: %s)", key, near, strings.Join(apiKeys(), ", "))
			}
			return nil, "", bad("unknown key %q (known: %s)", key, strings.Join(apiKeys(), ", "))
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		out.Write(k)
		out.WriteByte(':')
		out.Write(raw)
	}
	if _, err := dec.Token(); err != nil {
		return nil, "", bad("not JSON: %v", err)
	}
	if dec.More() {
		return nil, "", bad("trailing data after the JSON object")
	}
	if seedKey == "" {
		return nil, "", bad(`"url" is required`)
	}
	out.WriteByte('}')
	return out.Bytes(), seedKey, nil
}

// apiKeys are the keys POST /crawl accepts: "url" and the crawl config
// keys a client may set.
func apiKeys() []string {
	keys := []string{"url"}
	for _, k := range crawl.Keys() {
		if _, ok := forbiddenKeys[k]; !ok {
			keys = append(keys, k)
		}
	}
	return keys
}

// newID returns a job id: "crawl_" and 12 random hex digits.
func newID() string {
	var b [6]byte
	rand.Read(b[:])
	return "crawl_" + hex.EncodeToString(b[:])
}

// Create checks a POST /crawl body, creates the job's store with the job
// recorded in it, and starts the job. It returns an error wrapping
// ErrBadJob (naming the bad key) for a bad request, ErrClosing during
// shutdown, or the store's error.
func (m *JobManager) Create(body []byte) (Job, error) {
	keys, seedKey, err := parseRequest(body)
	if err != nil {
		return Job{}, err
	}
	var id, path string
	for {
		id = newID()
		path = filepath.Join(m.opt.Dir, id+".bolt")
		_, err := os.Stat(path)
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if err != nil {
			// Not a name taken (that draws another) but a directory that
			// cannot be read: asking again would loop for ever.
			return Job{}, fmt.Errorf("serve: create job: %w", err)
		}
	}
	cfg, err := m.config(keys, id)
	var ce *crawl.ConfigError
	if errors.As(err, &ce) && ce.Key == "seed_url" {
		ce.Key = seedKey // blamed on the key the client wrote: "url", stored as seed_url
	}
	if err != nil {
		return Job{}, fmt.Errorf("%w: %v", ErrBadJob, err)
	}
	m.mu.Lock()
	closing := m.closing
	m.mu.Unlock()
	if closing {
		return Job{}, ErrClosing
	}
	j := &job{
		id: id, path: path, cfg: cfg, done: make(chan struct{}),
		conf:  jobConfig{ID: id, Config: keys, CreatedAt: m.opt.Now().UTC()},
		state: jobState{Status: JobQueued, Runs: []crawl.Result{}},
	}
	close(j.done)
	s, err := kv.Open(path, kv.Options{})
	if err != nil {
		return Job{}, fmt.Errorf("serve: create job: %w", err)
	}
	err = s.Update(func(tx *kv.Tx) error {
		conf, err := json.Marshal(j.conf)
		if err != nil {
			return err
		}
		if err := tx.SetMetaString(metaJobConfig, string(conf)); err != nil {
			return err
		}
		return putState(tx, &j.state)
	})
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return Job{}, fmt.Errorf("serve: create job: %w", err)
	}
	m.mu.Lock()
	if m.closing {
		m.mu.Unlock()
		os.Remove(path)
		return Job{}, ErrClosing
	}
	m.jobs[id] = j
	m.startLocked(j) // under mu, so that Close either sees it started or refuses it
	m.mu.Unlock()
	m.logf("INFO", "Job %s created (%s)", id, cfg.SeedURL)
	return m.view(j, false), nil
}

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

	j.use.Lock()
	s, err := kv.Open(j.path, kv.Options{})
	if err != nil {
		j.use.Unlock()
		m.end(j, nil, JobFailed, err.Error())
		return
	}
	log := func(level, msg string) { m.logf(level, "[%s] %s", j.id, msg) }
	opts := crawl.Options{Proxy: m.opt.Proxy, Log: log, Now: m.opt.Now, Grace: m.opt.Grace}
	var archive *crawlwarc.Archive
	if cfg.WarcDir != "" {
		var recovered []warc.Recovered
		archive, recovered, err = crawlwarc.Open(&cfg, m.opt.Software, s)
		for _, r := range recovered {
			log("WARN", "WARC: "+r.String())
		}
		if err != nil {
			s.Close()
			j.use.Unlock()
			m.end(j, nil, JobFailed, "warc_dir: "+err.Error())
			return
		}
		defer func() {
			// Closed before the job records its end (endOpen), so that
			// its files are whole when the job is seen final.
			if archive != nil {
				archive.Close()
			}
		}()
		opts.Archive = archive
	}
	c, err := crawl.New(cfg, s, opts)
	if err != nil {
		s.Close()
		j.use.Unlock()
		m.end(j, nil, JobFailed, err.Error())
		return
	}
	now := m.opt.Now().UTC()
	m.mu.Lock()
	j.store, j.crawler = s, c
	j.state.Status = JobRunning
	if j.state.StartedAt == nil {
		j.state.StartedAt = &now
	}
	st := j.state
	m.mu.Unlock()
	j.use.Unlock()

	// The job's settings are stored as a crawl's are, for weaver status,
	// weaver merge and a `weaver crawl` that resumes the job's store.
	err = s.Update(func(tx *kv.Tx) error {
		if err := crawl.PutSettings(tx, cfg.Settings()); err != nil {
			return err
		}
		if cfg.WarcDir != "" {
			if err := tx.SetMetaString(crawlwarc.MetaDir, cfg.WarcDir); err != nil {
				return err
			}
			if err := tx.SetMetaString(crawlwarc.MetaPrefix, crawlwarc.Prefix(&cfg)); err != nil {
				return err
			}
		}
		return putState(tx, &st)
	})
	var res crawl.Result
	if err == nil {
		var fresh bool
		err = s.View(func(tx *kv.Tx) error { fresh = graph.GetCounts(tx).Nodes == 0; return nil })
		var seeds []string // a resumed job continues where it was: no seeds, no re-queueing
		if fresh {
			seeds = cfg.Seeds()
		}
		if err == nil {
			_, _, err = c.Prepare(seeds)
		}
		if err == nil {
			res, err = c.Run(ctx)
		}
	}
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
	if archive != nil {
		st := archive.Stats()
		if err := archive.Close(); err != nil {
			log("ERROR", "WARC: "+err.Error())
			if status != JobFailed {
				status, msg = JobFailed, "warc_dir: "+err.Error()
			}
		}
		archive = nil
		log("INFO", fmt.Sprintf("WARC: %s, %s, %d bytes in %s", plural(st.Files, "file"), plural(st.Records, "record"), st.Bytes, cfg.WarcDir))
	}
	m.endOpen(j, s, ran, status, msg)
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
		out.Pauses += r.Pauses
		out.PausedSeconds += r.PausedSeconds
		out.PagesPardoned += r.PagesPardoned
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
