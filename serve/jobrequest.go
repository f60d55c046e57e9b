package serve

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/suggest"
)

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
		set, ok := crawl.Lookup(key)
		if !ok {
			if near, ok := suggest.Closest(key, apiKeys()); ok {
				return nil, "", bad("unknown key %q: did you mean %q? (known: %s)", key, near, strings.Join(apiKeys(), ", "))
			}
			return nil, "", bad("unknown key %q (known: %s)", key, strings.Join(apiKeys(), ", "))
		}
		if set.Refused != "" {
			return nil, "", bad("key %q cannot be set through the API: %s", key, set.Refused)
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
		if set, _ := crawl.Lookup(k); set.Refused == "" {
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
