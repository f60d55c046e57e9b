package serve

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// CreatedAnswer is POST /crawl's answer.
type CreatedAnswer struct {
	JobID  string    `json:"job_id"`
	Status JobStatus `json:"status"`
}

// JobAnswer is GET and DELETE /crawl/{id}'s answer (GET adds nodes and
// edges to the job once it is final, streamed).
type JobAnswer struct {
	Job Job `json:"job"`
}

// JobsAnswer is GET /crawl's answer.
type JobsAnswer struct {
	Jobs []Job `json:"jobs"`
}

// JobNode is a node of a final job's graph.
type JobNode struct {
	ID         uint64 `json:"id"`
	Host       string `json:"host"`
	Title      string `json:"title,omitempty"`
	Status     string `json:"status"`
	CrawlCount int    `json:"crawl_count"`
	HTTPStatus int    `json:"http_status,omitempty"`
	Depth      int    `json:"depth"`
}

// JobEdge is an edge of a final job's graph, by host.
type JobEdge struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Weight uint64 `json:"weight"`
}

type jobHandler struct {
	m       *JobManager
	version string
	ranks   jobRanks // for the maps (maprank.go)
}

// NewJobHandler returns seed 004's job API on m: POST /crawl, GET /crawl,
// GET and DELETE /crawl/{id}, and GET /crawl/{id}/graph; and the maps: GET
// / lists the jobs, GET /crawl/{id}/map and /crawl/{id}/map/data. version
// is recorded in graph exports.
func NewJobHandler(m *JobManager, version string) http.Handler {
	h := &jobHandler{m: m, version: version}
	mx := newMux()
	mx.handle("/crawl", route{http.MethodPost: h.create, http.MethodGet: h.list})
	mx.handle("/crawl/{id}", route{http.MethodGet: h.get, http.MethodDelete: h.stop})
	mx.handle("/crawl/{id}/graph", route{http.MethodGet: h.graph})
	mx.handle("/{$}", route{http.MethodGet: h.index}) // map.go
	mx.handle("/crawl/{id}/map", route{http.MethodGet: h.mapPage})
	mx.handle("/crawl/{id}/map/data", route{http.MethodGet: h.mapData})
	return mx
}

func (h *jobHandler) create(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	j, err := h.m.Create(body)
	switch {
	case errors.Is(err, ErrBadJob):
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	case errors.Is(err, ErrClosing):
		writeError(w, http.StatusServiceUnavailable, "%v", err)
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	w.Header().Set("Location", "/crawl/"+j.ID)
	writeJSON(w, http.StatusCreated, CreatedAnswer{JobID: j.ID, Status: j.Status})
}

func (h *jobHandler) list(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, JobsAnswer{Jobs: h.m.List()})
}

// lookup finds the job of the request's {id}, or answers 404.
func (h *jobHandler) lookup(w http.ResponseWriter, r *http.Request) (*job, bool) {
	j, err := h.m.job(r.PathValue("id"))
	if err != nil {
		writeError(w, http.StatusNotFound, "%v", err)
		return nil, false
	}
	return j, true
}

func (h *jobHandler) get(w http.ResponseWriter, r *http.Request) {
	j, ok := h.lookup(w, r)
	if !ok {
		return
	}
	withGraph := true
	if v := r.URL.Query().Get("graph"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeError(w, http.StatusBadRequest, "graph %q: want true or false", v)
			return
		}
		withGraph = b
	}
	view := h.m.view(j, true)
	if !withGraph || !view.Status.final() {
		writeJSON(w, http.StatusOK, JobAnswer{Job: view})
		return
	}
	// {"job": {...the job..., "nodes": [...], "edges": [...]}}, streamed
	// from one read transaction.
	head, err := json.Marshal(view)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	sw := newStreamWriter(w)
	err = h.m.withStore(j, func(s *kv.Store) error {
		return s.View(func(tx *kv.Tx) error {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			bw := bufio.NewWriterSize(sw, 64<<10)
			bw.WriteString(`{"job":`)
			bw.Write(head[:len(head)-1])
			bw.WriteString(`,"nodes":[`)
			hosts := map[uint64]string{}
			sep := ""
			err := graph.ForEachNode(tx, func(n *graph.Node) error {
				hosts[n.ID] = n.Host
				b, err := json.Marshal(JobNode{ID: n.ID, Host: n.Host, Title: n.Title, Status: string(n.Status),
					CrawlCount: n.CrawlCount, HTTPStatus: n.HTTPStatus, Depth: n.Depth})
				if err != nil {
					return err
				}
				bw.WriteString(sep)
				sep = ","
				_, err = bw.Write(b)
				return err
			})
			if err != nil {
				return err
			}
			bw.WriteString(`],"edges":[`)
			sep = ""
			err = graph.ForEachEdge(tx, func(e *graph.Edge) error {
				b, err := json.Marshal(JobEdge{From: hosts[e.From], To: hosts[e.To], Weight: e.Weight})
				if err != nil {
					return err
				}
				bw.WriteString(sep)
				sep = ","
				_, err = bw.Write(b)
				return err
			})
			if err != nil {
				return err
			}
			bw.WriteString("]}}\n")
			return bw.Flush()
		})
	})
	if err != nil {
		failStream(w, sw, err)
	}
}

func (h *jobHandler) stop(w http.ResponseWriter, r *http.Request) {
	j, ok := h.lookup(w, r)
	if !ok {
		return
	}
	view, err := h.m.Stop(r.Context(), j.id)
	if errors.Is(err, ErrJobEnded) {
		writeError(w, http.StatusConflict, "%v", err)
		return
	}
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "stopping job %s: %v", j.id, err)
		return
	}
	writeJSON(w, http.StatusOK, JobAnswer{Job: view})
}

func (h *jobHandler) graph(w http.ResponseWriter, r *http.Request) {
	j, ok := h.lookup(w, r)
	if !ok {
		return
	}
	f, opt, err := graphOptions(r, h.version)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	// The job's store is held (its use lock) only while the export is
	// spooled: a slow client must not keep a finishing job from closing
	// its store, nor the requests behind that from reading it.
	var file *spoolFile
	var size int64
	var spoolErr error
	err = h.m.withStore(j, func(s *kv.Store) error {
		file, size, spoolErr = spoolGraph(r, s, f, opt)
		return nil
	})
	switch {
	case err != nil:
		writeError(w, http.StatusInternalServerError, "opening the job's store: %v", err)
		return
	case spoolErr != nil:
		spoolError(w, spoolErr)
		return
	}
	defer file.Close()
	w.Header().Set("Content-Type", contentType[f])
	sendSpool(w, file, size)
}
