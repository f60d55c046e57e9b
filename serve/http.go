package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/export"
)

// MaxBodyBytes caps a request body; a larger one is answered 413.
const MaxBodyBytes = 1 << 20

// writeTimeout bounds each write of a streamed response (graph, snapshot):
// a client that stops reading lets go of the read transaction after it
// rather than holding it, and the pages it pins, for ever.
const writeTimeout = 30 * time.Second

// errorBody is every error answer.
type errorBody struct {
	Error string `json:"error"`
}

// writeJSON answers v as indented JSON with code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		code, data = http.StatusInternalServerError, []byte(`{"error": "encoding the answer failed"}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)+1))
	w.WriteHeader(code)
	w.Write(append(data, '\n'))
}

func writeError(w http.ResponseWriter, code int, format string, a ...any) {
	writeJSON(w, code, errorBody{Error: fmt.Sprintf(format, a...)})
}

// route is one path's handlers by method.
type route map[string]http.HandlerFunc

// mux dispatches on the path (Go 1.22 patterns without a method) and then
// on the method, so that every error, 404 and 405 included, is JSON.
type mux struct {
	m *http.ServeMux
}

func newMux() *mux {
	mx := &mux{m: http.NewServeMux()}
	mx.m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint: %s", r.URL.Path)
	})
	return mx
}

func (mx *mux) handle(pattern string, rt route) {
	allow := make([]string, 0, len(rt))
	for m := range rt {
		allow = append(allow, m)
	}
	sort.Strings(allow)
	allowed := strings.Join(allow, ", ")
	mx.m.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		h, ok := rt[r.Method]
		if !ok {
			w.Header().Set("Allow", allowed)
			writeError(w, http.StatusMethodNotAllowed, "method %s not allowed on %s (allowed: %s)", r.Method, r.URL.Path, allowed)
			return
		}
		h(w, r)
	})
}

func (mx *mux) ServeHTTP(w http.ResponseWriter, r *http.Request) { mx.m.ServeHTTP(w, r) }

// readBody reads a request body of at most MaxBodyBytes. On failure it has
// answered the request (413 or 400) and returns false.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			writeError(w, http.StatusRequestEntityTooLarge, "request body over %d bytes", MaxBodyBytes)
			return nil, false
		}
		writeError(w, http.StatusBadRequest, "reading the request body: %v", err)
		return nil, false
	}
	return body, true
}

// decodeStrict decodes one JSON object into v: unknown fields, a wrong
// type or trailing data are errors that say what was wrong.
func decodeStrict(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return errors.New("empty body, want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("field %q: want %s, got JSON %s", te.Field, te.Type, te.Value)
		}
		return fmt.Errorf("not a valid JSON object: %v", err)
	}
	if dec.More() {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

// graphOptions reads /graph's query: format (json, graphml or dot; json
// when absent), min_weight, crawled_only, domains.
func graphOptions(r *http.Request, version string) (export.Format, export.Options, error) {
	q := r.URL.Query()
	// A running crawl's graph changes under every request: laying it out
	// each time would cost more than the request (see `weaver layout`).
	opt := export.Options{Version: version, NoLayout: true}
	f := export.Format(strings.ToLower(q.Get("format")))
	switch f {
	case "":
		f = export.FormatJSON
	case export.FormatJSON, export.FormatGraphML, export.FormatDOT, export.FormatGEXF, export.FormatHTML, export.FormatSQLite:
	default:
		return "", opt, fmt.Errorf("format %q: want json, graphml, dot, gexf, html or sqlite", q.Get("format"))
	}
	for key := range q {
		switch key {
		case "format", "min_weight", "crawled_only", "domains":
		default:
			return "", opt, fmt.Errorf("unknown query parameter %q (known: format, min_weight, crawled_only, domains)", key)
		}
	}
	if v := q.Get("min_weight"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return "", opt, fmt.Errorf("min_weight %q: want a whole number", v)
		}
		opt.MinWeight = n
	}
	for _, b := range []struct {
		key string
		dst *bool
	}{{"crawled_only", &opt.CrawledOnly}, {"domains", &opt.Domains}} {
		if v := q.Get(b.key); v != "" {
			x, err := strconv.ParseBool(v)
			if err != nil {
				return "", opt, fmt.Errorf("%s %q: want true or false", b.key, v)
			}
			*b.dst = x
		}
	}
	return f, opt, nil
}

// contentType is each graph format's media type.
var contentType = map[export.Format]string{
	export.FormatJSON:    "application/json; charset=utf-8",
	export.FormatGraphML: "application/graphml+xml; charset=utf-8",
	export.FormatDOT:     "text/vnd.graphviz; charset=utf-8",
	export.FormatGEXF:    "application/gexf+xml; charset=utf-8",
	export.FormatHTML:    "text/html; charset=utf-8",
	export.FormatSQLite:  "application/vnd.sqlite3",
}

// streamWriter passes writes to a response, pushing the write deadline
// forward before each one, and remembers whether anything was written.
type streamWriter struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	wrote bool
}

func newStreamWriter(w http.ResponseWriter) *streamWriter {
	return &streamWriter{w: w, rc: http.NewResponseController(w)}
}

func (s *streamWriter) Write(p []byte) (int, error) {
	_ = s.rc.SetWriteDeadline(time.Now().Add(writeTimeout)) // unsupported by httptest's recorder: fine
	s.wrote = true
	return s.w.Write(p)
}

// failStream ends a streamed answer that failed: before the first byte it
// is a 500; after, the connection is cut so the client sees a truncated
// answer instead of a complete-looking one.
func failStream(w http.ResponseWriter, sw *streamWriter, err error) {
	if !sw.wrote {
		w.Header().Del("Content-Disposition")
		w.Header().Del("Content-Length")
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	panic(http.ErrAbortHandler)
}

// ListenAddr is the address to bind for a --listen value: a bare port
// ("8088") or a port without a host (":8088") binds to loopback
// (127.0.0.1); any other interface must be named (0.0.0.0:8088). It
// returns an error for a value that is not host:port or a port.
func ListenAddr(s string) (string, error) {
	s = strings.TrimSpace(s)
	if _, err := strconv.ParseUint(s, 10, 16); err == nil {
		return net.JoinHostPort("127.0.0.1", s), nil
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("listen address %q: want HOST:PORT or PORT: %v", s, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("listen address %q: port %q is not a number", s, port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// IsLoopback reports whether a listen address binds to loopback only.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
