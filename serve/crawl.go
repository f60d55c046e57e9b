package serve

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// summaryCache shares one Summary between the /status requests of a
// short while: ten times as long as it took to compute, so a small store
// is summed up afresh for every request while one whose edge scan takes
// seconds is not rescanned on every poll (Summary.ComputedAt says when).
type summaryCache struct {
	mu   sync.Mutex // guards the fields below; held while computing, so concurrent requests wait for one scan
	sum  Summary
	at   time.Time
	cost time.Duration
	ok   bool
}

func (sc *summaryCache) get(s *kv.Store) (Summary, error) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	now := time.Now()
	if sc.ok && now.Sub(sc.at) < 10*sc.cost {
		return sc.sum, nil
	}
	sum, err := ReadSummary(s, now)
	if err != nil {
		return Summary{}, err
	}
	sc.sum, sc.at, sc.cost, sc.ok = sum, now, time.Since(now), true
	return sum, nil
}

// crawlHandler serves one running crawl.
type crawlHandler struct {
	c       *crawl.Crawler
	s       *kv.Store
	stop    func()
	version string
	dbPath  string // absolute
	sums    summaryCache
	ranks   mapRanks // for the map (maprank.go)
}

// NewCrawlHandler returns the status API of crawler c running on store s:
// GET /status, /metrics, /graph, /host and /snapshot, POST /seeds and /stop, and
// the map page: GET / and /map/data. stop
// is called by POST /stop and must stop the crawl gracefully (cancel Run's
// context); version is recorded in /status and graph exports.
func NewCrawlHandler(c *crawl.Crawler, s *kv.Store, stop func(), version string) http.Handler {
	abs, err := filepath.Abs(s.Path())
	if err != nil {
		abs = s.Path()
	}
	h := &crawlHandler{c: c, s: s, stop: stop, version: version, dbPath: abs}
	reg := newRegistry(c.Status)
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	mx := newMux()
	mx.handle("/status", route{http.MethodGet: h.status})
	mx.handle("/metrics", route{http.MethodGet: metrics.ServeHTTP})
	mx.handle("/graph", route{http.MethodGet: h.graph})
	mx.handle("/host", route{http.MethodGet: h.host})
	mx.handle("/snapshot", route{http.MethodGet: h.snapshot})
	mx.handle("/seeds", route{http.MethodPost: h.seeds})
	mx.handle("/stop", route{http.MethodPost: h.stopCrawl})
	mx.handle("/{$}", route{http.MethodGet: h.mapPage}) // map.go
	mx.handle("/map/data", route{http.MethodGet: h.mapData})
	return mx
}

// localAddr is the address a request came in on, when the server says.
func localAddr(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return a.String()
	}
	return ""
}

func (h *crawlHandler) status(w http.ResponseWriter, r *http.Request) {
	sum, err := h.sums.get(h.s)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "reading the store: %v", err)
		return
	}
	live := h.c.Status()
	writeJSON(w, http.StatusOK, Status{Version: h.version, DBPath: h.dbPath, Listen: localAddr(r), Store: sum, Crawl: &live})
}

// DefaultHostLimit is how many links in each direction GET /host lists
// when the request does not say.
const DefaultHostLimit = 50

// host answers GET /host?h=HOST[&limit=N][&ranks=false]: weaver show's
// report (export.HostReport) on one host of the store.
func (h *crawlHandler) host(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for key := range q {
		switch key {
		case "h", "limit", "ranks":
		default:
			writeError(w, http.StatusBadRequest, "unknown query parameter %q (known: h, limit, ranks)", key)
			return
		}
	}
	host := q.Get("h")
	if host == "" {
		writeError(w, http.StatusBadRequest, "no host: want /host?h=HOST")
		return
	}
	if _, err := export.HostKey(host); err != nil {
		writeError(w, http.StatusBadRequest, "h %q: %v", host, err)
		return
	}
	opt := export.HostOptions{Limit: DefaultHostLimit, Version: h.version}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "limit %q: want a whole number, 0 for all", v)
			return
		}
		opt.Limit = n
	}
	if v := q.Get("ranks"); v != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			writeError(w, http.StatusBadRequest, "ranks %q: want true or false", v)
			return
		}
		opt.NoRanks = !on
	}
	rep, err := export.Host(r.Context(), h.s, host, opt)
	switch {
	case errors.Is(err, export.ErrUnknownHost):
		writeError(w, http.StatusNotFound, "%v", err)
	case err != nil:
		writeError(w, http.StatusInternalServerError, "reading the store: %v", err)
	default:
		writeJSON(w, http.StatusOK, rep)
	}
}

func (h *crawlHandler) graph(w http.ResponseWriter, r *http.Request) {
	f, opt, err := graphOptions(r, h.version)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	serveGraph(w, r, h.s, f, opt)
}

// serveGraph answers s's graph in f.
func serveGraph(w http.ResponseWriter, r *http.Request, s *kv.Store, f export.Format, opt export.Options) {
	file, size, err := spoolGraph(r, s, f, opt)
	if err != nil {
		spoolError(w, err)
		return
	}
	defer file.Close()
	w.Header().Set("Content-Type", contentType[f])
	sendSpool(w, file, size)
}

// spoolGraph exports s's graph in f from one read transaction into a
// spool file (spool.go): the transaction ends before the client reads,
// however slowly it does.
func spoolGraph(r *http.Request, s *kv.Store, f export.Format, opt export.Options) (*spoolFile, int64, error) {
	return spool(s.Path(), 0, func(out io.Writer) error {
		if f == export.FormatSQLite {
			return spoolSQLite(r, s, out, opt)
		}
		_, err := export.Write(r.Context(), out, s, f, opt)
		return err
	})
}

// spoolSQLite writes s's graph as a SQLite database to out. SQLite builds
// a file, not a stream: it is built beside the store under a name of its
// own, copied to out and removed.
func spoolSQLite(r *http.Request, s *kv.Store, out io.Writer, opt export.Options) error {
	tmp, err := os.CreateTemp(filepath.Dir(s.Path()), ".weaver-graph-*.db")
	if err != nil {
		return err
	}
	path := tmp.Name()
	tmp.Close()
	os.Remove(path) // the export creates it
	defer os.Remove(path)
	defer os.Remove(path + "-journal")
	if _, err := export.SQLite(r.Context(), s, path, opt); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(out, f)
	return err
}

func (h *crawlHandler) snapshot(w http.ResponseWriter, r *http.Request) {
	var expect int64
	if fi, err := os.Stat(h.dbPath); err == nil {
		expect = fi.Size() // the copy is at most the file's size
	}
	file, size, err := spool(h.dbPath, expect, func(out io.Writer) error {
		return h.s.View(func(tx *kv.Tx) error {
			_, err := tx.WriteTo(out)
			return err
		})
	})
	if err != nil {
		spoolError(w, err)
		return
	}
	defer file.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+filepath.Base(h.dbPath)+`"`)
	sendSpool(w, file, size)
}

// seedsRequest is POST /seeds's body.
type seedsRequest struct {
	URLs []string `json:"urls"`
	URL  string   `json:"url"`
}

// SeedsAnswer is POST /seeds's answer.
type SeedsAnswer struct {
	// Queued counts the seeds queued; a seed whose host is already queued
	// at depth 0 or was crawled max_crawls_per_node times is not.
	Queued int `json:"queued"`
	// Seeds says, per seed in the order given, whether it was queued and
	// if not, why.
	Seeds []crawl.SeedResult `json:"seeds"`
}

func (h *crawlHandler) seeds(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var req seedsRequest
	if err := decodeStrict(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	urls := req.URLs
	if req.URL != "" {
		urls = append([]string{req.URL}, urls...)
	}
	if len(urls) == 0 {
		writeError(w, http.StatusBadRequest, `no seed: want {"urls": ["https://..."]} or {"url": "https://..."}`)
		return
	}
	for _, u := range urls {
		if err := crawl.CheckSeed(u); err != nil {
			writeError(w, http.StatusBadRequest, "%v", err)
			return
		}
		if err := checkSeedHost(u); err != nil {
			writeError(w, http.StatusBadRequest, "%v", err)
			return
		}
	}
	res, err := h.c.AddSeeds(urls)
	if err != nil {
		writeError(w, seedErrorCode(err), "%v", err)
		return
	}
	ans := SeedsAnswer{Seeds: res}
	for _, r := range res {
		if r.Queued {
			ans.Queued++
		}
	}
	writeJSON(w, http.StatusOK, ans)
}

// checkSeedHost refuses a seed whose host weaver cannot normalise, before
// the crawler is asked.
func checkSeedHost(raw string) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return fmt.Errorf("seed %q is not a URL: %v", raw, err)
	}
	if _, err := graph.HostOf(u); err != nil {
		return fmt.Errorf("seed %q: %v", raw, err)
	}
	return nil
}

// seedErrorCode tells the client's fault from the store's in an AddSeeds
// error: crawl wraps every seed rejection in crawl.ErrSeed.
func seedErrorCode(err error) int {
	switch {
	case errors.Is(err, kv.ErrClosed):
		return http.StatusServiceUnavailable
	case errors.Is(err, crawl.ErrSeed):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// StopAnswer is POST /stop's answer.
type StopAnswer struct {
	Stopping bool `json:"stopping"`
}

func (h *crawlHandler) stopCrawl(w http.ResponseWriter, r *http.Request) {
	h.stop()
	writeJSON(w, http.StatusAccepted, StopAnswer{Stopping: true})
}
