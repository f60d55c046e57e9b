package serve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/layout"
	"github.com/weaver-crawler/weaver/ui"
)

// The map page (package ui) is served at GET / of a crawl and at GET
// /crawl/{id}/map of a job; it polls map/data beside it.
//
// GET map/data?since=CURSOR answers the graph as the page needs it:
//
//	{"cursor": "...", "full": true|false, "live": true|false,
//	 "total": {"nodes": N, "edges": M},
//	 "nodes": [{"id", "host", "domain", "title", "status", "http_status", "crawl_count", "depth",
//	            "community", "x", "y"}, ...],
//	 "edges": [[from, to, weight], ...],
//	 "ranks": [[id, pagerank, harmonic], ...],  (with ranks=true, see maprank.go)
//	 "next_ms": 1500}
//
// Without since (or with since=0) it is the whole graph ("full": true).
// With the cursor of a previous answer it holds only the nodes and edges
// written since: a page commit stamps every node and edge it changes with
// its time (LastSeen), inside its transaction, and commits apply in the
// order of those times, so the greatest time in the store at a read is a
// cursor that nothing committed later can fall behind. The cursor is that
// time in Unix nanoseconds, as a string (JavaScript numbers stop at 2^53).
// Items stamped exactly at the cursor come again in the next answer, which
// the page merges harmlessly. "total" lets the page notice anything it
// missed all the same (a wall clock stepped back): its counts then differ
// and it asks for the whole graph again. "live" is false once the crawl or
// job has ended: the page stops polling. "next_ms" is when to ask again:
// 1.5 s, or ten times what this answer cost to build, so polling a big
// store costs it at most a tenth of a core.
//
// Every answer scans the store's nodes and edges in one read transaction
// and is built before it is sent: in memory up to mapMemoryBytes, else
// (built again) in a spool file beside the store (spool.go), so neither a
// slow client nor a huge graph holds the transaction or the process's
// memory.
//
// A node carries its community and position (community, x, y) when the
// store holds a layout (weaver layout) with a record for it, fresh or
// not: the page then draws the hosts there from its first frame, without
// laying them out itself, and places the hosts found since beside their
// neighbours.

// mapMemoryBytes is the largest map/data answer built in memory; a larger
// one goes to a spool file.
const mapMemoryBytes = 4 << 20

// mapPoll is the page's polling interval while a scan is cheap.
const mapPoll = 1500 * time.Millisecond

// mapNode is a node as the map page needs it: the JSON export's names.
type mapNode struct {
	ID         uint64 `json:"id"`
	Host       string `json:"host"`
	Domain     string `json:"domain"`
	Title      string `json:"title,omitempty"`
	Status     string `json:"status"`
	HTTPStatus int    `json:"http_status,omitempty"`
	CrawlCount int    `json:"crawl_count"`
	Depth      int    `json:"depth"`
	// The deeper host graph's fields, as the JSON export names them.
	Canonical    string `json:"canonical,omitempty"`
	Robots       string `json:"robots,omitempty"`
	MirrorOf     uint64 `json:"mirror_of,omitempty"`
	PagesFetched int    `json:"pages_fetched,omitempty"`
	RenderMS     int64  `json:"render_ms,omitempty"`
	// Changes counts the crawls that found the host changed (issue 27),
	// LastChange is the last of them (RFC 3339): a map marks the hosts
	// changed recently.
	Changes    int    `json:"changes,omitempty"`
	LastChange string `json:"last_change,omitempty"`
	// The store's layout, when it has a record of the host: its
	// community and position, as the exports name them.
	Community *uint32  `json:"community,omitempty"`
	X         *float64 `json:"x,omitempty"`
	Y         *float64 `json:"y,omitempty"`
}

// pageCSP lets the page run only its own script (by hash) and the layout
// worker it starts from a blob, and fetch only from this server.
var pageCSP = func() string {
	sum := sha256.Sum256([]byte(ui.Script()))
	return "default-src 'none'; script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; " +
		"worker-src blob:; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; " +
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}()

// servePage answers the map page, polling data (relative to the page).
// The page offers the graph beside it (GET graph, relative to / of a crawl
// and to /crawl/{id}/map of a job alike) as GraphML when the browser
// cannot draw the map.
func servePage(w http.ResponseWriter, title, data string) {
	var buf bytes.Buffer
	if err := ui.WritePage(&buf, title, ui.Config{Live: true, Data: data, Graph: "graph"}, nil); err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.Write(buf.Bytes())
}

// mapQuery reads map/data's query: since, a cursor of an earlier answer
// (0 when absent: the whole graph), and ranks (true: add the ranks).
func mapQuery(r *http.Request) (since int64, ranks bool, err error) {
	q := r.URL.Query()
	for key := range q {
		if key != "since" && key != "ranks" {
			return 0, false, fmt.Errorf("unknown query parameter %q (known: since, ranks)", key)
		}
	}
	if v := q.Get("ranks"); v != "" {
		if ranks, err = strconv.ParseBool(v); err != nil {
			return 0, false, fmt.Errorf("ranks %q: want true or false", v)
		}
	}
	v := q.Get("since")
	if v == "" {
		return 0, ranks, nil
	}
	since, err = strconv.ParseInt(v, 10, 64)
	if err != nil || since < 0 {
		return 0, false, fmt.Errorf("since %q: want the cursor of an earlier answer (a whole number)", v)
	}
	return since, ranks, nil
}

// mapAnswer is a map/data answer built and ready to send: in memory, or
// in a spool file.
type mapAnswer struct {
	mem  []byte
	file *spoolFile
	size int64
}

// send writes the answer to w, then lets go of its spool file.
func (a *mapAnswer) send(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if a.file != nil {
		defer a.file.Close()
		sendSpool(w, a.file, a.size)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(a.mem)))
	if _, err := newStreamWriter(w).Write(a.mem); err != nil {
		panic(http.ErrAbortHandler) // the client sees a cut answer, not a complete-looking one
	}
}

// answerError answers a map/data request that could not be built: 400
// for a bad query, 507 when the disk has no room for it, else 500.
func answerError(w http.ResponseWriter, err error) {
	var bad badQuery
	if errors.As(err, &bad) {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	spoolError(w, err)
}

// badQuery is a map/data query that makes no sense.
type badQuery struct{ error }

// buildMapData builds r's map/data answer from s; live says whether the
// crawl goes on; ranks keeps s's ranks (see maprank.go). It returns a
// badQuery, ErrNoSpace, or the store's error.
func buildMapData(r *http.Request, s *kv.Store, live bool, ranks *mapRanks) (*mapAnswer, error) {
	since, withRanks, err := mapQuery(r)
	if err != nil {
		return nil, badQuery{err}
	}
	var ranked []byte
	var rankErr error
	if withRanks {
		ranked, rankErr = ranks.get(r.Context(), s)
	}
	build := func(out io.Writer) error {
		bw := bufio.NewWriterSize(out, 64<<10)
		start := time.Now()
		err := s.View(func(tx *kv.Tx) error { return writeMapData(r.Context(), bw, tx, since, live) })
		next := max(mapPoll, 10*time.Since(start))
		switch {
		case err != nil:
		case rankErr != nil:
			msg, _ := json.Marshal(rankErr.Error())
			_, err = fmt.Fprintf(bw, ",\n\"ranks_error\":%s", msg)
		case ranked != nil:
			bw.WriteString(",\n\"ranks\":")
			_, err = bw.Write(ranked)
		}
		if err == nil {
			_, err = fmt.Fprintf(bw, ",\n\"next_ms\":%d}\n", min(next, time.Minute).Milliseconds())
		}
		if err == nil {
			err = bw.Flush()
		}
		return err
	}
	// In memory when it is small, the usual case of an update; else again
	// into a spool file, with the spool's care for the crawl's disk.
	mem := &cappedBuffer{limit: mapMemoryBytes}
	err = build(mem)
	if errors.Is(err, errTooBig) {
		f, size, err := spool(s.Path(), 0, build)
		if err != nil {
			return nil, err
		}
		return &mapAnswer{file: f, size: size}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the graph: %w", err)
	}
	return &mapAnswer{mem: mem.Bytes()}, nil
}

// errTooBig says an answer outgrew its cappedBuffer.
var errTooBig = errors.New("answer too big for memory")

// cappedBuffer is a bytes.Buffer that refuses to grow past limit bytes.
type cappedBuffer struct {
	bytes.Buffer
	limit int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if c.Len()+len(p) > c.limit {
		return 0, errTooBig
	}
	return c.Buffer.Write(p)
}

// writeMapData writes map/data's answer, all but its closing next_ms.
func writeMapData(ctx context.Context, w *bufio.Writer, tx *kv.Tx, since int64, live bool) error {
	full := since == 0
	counts := graph.GetCounts(tx)
	// The cursor is the greatest time stamped in the store, which only the
	// scan below finds: it goes at the end, the head says the rest.
	fmt.Fprintf(w, `{"full":%t,"live":%t,"total":{"nodes":%d,"edges":%d},`+"\n"+`"nodes":[`,
		full, live, counts.Nodes, counts.Edges)
	var cursor int64
	stamp := func(t time.Time) int64 {
		if t.IsZero() {
			return 0
		}
		n := t.UnixNano()
		cursor = max(cursor, n)
		return n
	}
	sep := "\n"
	rows := 0
	lay := layout.NewWalker(tx)
	err := graph.ForEachNode(tx, func(n *graph.Node) error {
		if rows++; rows%10_000 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		seen := max(stamp(n.FirstSeen), stamp(n.LastSeen), stamp(n.LastCrawl))
		if !full && seen < since {
			return nil
		}
		m := mapNode{ID: n.ID, Host: n.Host, Domain: n.Domain, Title: n.Title,
			Status: string(n.Status), HTTPStatus: n.HTTPStatus, CrawlCount: n.CrawlCount, Depth: n.Depth,
			Canonical: n.Canonical, Robots: n.RobotsDirectives, MirrorOf: n.MirrorOf, PagesFetched: n.PagesFetched, RenderMS: n.RenderMS,
			Changes: n.Changes, LastChange: rfc3339(n.LastChange)}
		if c, x, y, ok := lay.At(n.ID); ok {
			m.Community, m.X, m.Y = &c, &x, &y
		}
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		w.WriteString(sep)
		sep = ",\n"
		_, err = w.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	w.WriteString("\n],\n\"edges\":[")
	sep = "\n"
	var num []byte
	err = graph.ForEachEdge(tx, func(e *graph.Edge) error {
		if rows++; rows%10_000 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if seen := stamp(e.LastSeen); !full && seen < since {
			return nil
		}
		num = append(num[:0], sep...)
		num = append(num, '[')
		num = strconv.AppendUint(num, e.From, 10)
		num = append(num, ',')
		num = strconv.AppendUint(num, e.To, 10)
		num = append(num, ',')
		num = strconv.AppendUint(num, e.Weight, 10)
		num = append(num, ']')
		sep = ","
		_, err := w.Write(num)
		return err
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "\n],\n\"cursor\":\"%d\"", max(cursor, since))
	return err
}

// The crawl's map: GET / and GET /map/data.

func (h *crawlHandler) mapPage(w http.ResponseWriter, r *http.Request) {
	servePage(w, "weaver map: "+filepath.Base(h.dbPath), "map/data")
}

func (h *crawlHandler) mapData(w http.ResponseWriter, r *http.Request) {
	st := h.c.Status()
	a, err := buildMapData(r, h.s, st.Running || st.TerminationReason == "", &h.ranks)
	if err != nil {
		answerError(w, err)
		return
	}
	a.send(w)
}

// The jobs' maps: GET / lists the jobs, GET /crawl/{id}/map and
// /crawl/{id}/map/data.

func (h *jobHandler) mapPage(w http.ResponseWriter, r *http.Request) {
	j, ok := h.lookup(w, r)
	if !ok {
		return
	}
	servePage(w, "weaver map: "+j.id+" ("+j.cfg.SeedURL+")", "map/data")
}

func (h *jobHandler) mapData(w http.ResponseWriter, r *http.Request) {
	j, ok := h.lookup(w, r)
	if !ok {
		return
	}
	live := !h.m.view(j, false).Status.final()
	// The job's store is held only while the answer is built, as for its
	// graph: a slow client must not keep a finishing job from closing it.
	var a *mapAnswer
	var buildErr error
	err := h.m.withStore(j, func(s *kv.Store) error {
		a, buildErr = buildMapData(r, s, live, h.ranks.of(j.id))
		return nil
	})
	switch {
	case err != nil:
		writeError(w, http.StatusInternalServerError, "opening the job's store: %v", err)
	case buildErr != nil:
		answerError(w, buildErr)
	default:
		a.send(w)
	}
}

// jobsPage is GET /'s page: every job with a link to its map.
var jobsPage = template.Must(template.New("jobs").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>weaver jobs</title>
<style>
 body { font: 14px/1.5 system-ui, sans-serif; margin: 24px; color: #1d2330; }
 table { border-collapse: collapse; } td, th { padding: 4px 12px 4px 0; text-align: left; }
 th { color: #6b7380; font-weight: normal; } a { color: #1d4fa8; }
</style></head><body>
<h1>weaver jobs</h1>
{{if .}}<table id="jobs">
<tr><th>job</th><th>status</th><th>seed</th><th>created</th><th>map</th><th>API</th></tr>
{{range .}}<tr data-job="{{.ID}}"><td>{{.ID}}</td><td>{{.Status}}</td><td>{{.SeedURL}}</td><td>{{.CreatedAt.Format "2006-01-02 15:04:05"}}</td>
<td><a href="crawl/{{.ID}}/map">map</a></td><td><a href="crawl/{{.ID}}?graph=false">status</a></td></tr>
{{end}}</table>{{else}}<p>No jobs yet: <code>POST /crawl {"url": "https://example.com/"}</code> starts one.</p>{{end}}
</body></html>
`))

func (h *jobHandler) index(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	if err := jobsPage.Execute(&buf, h.m.List()); err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-store")
	w.Write(buf.Bytes())
}

// rfc3339 formats t, or "" for the zero time.
func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
