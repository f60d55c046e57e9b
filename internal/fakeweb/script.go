package fakeweb

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
)

// Script is a host whose answers are written out by hand (Config.Scripts),
// for what the real web does that a generated page does not: redirects of
// every kind and to every kind of place, refreshes, cookie walls, bodies
// cut short. Its requests are recorded like any other host's.
type Script struct {
	// Robots answers /robots.txt; nil: 404.
	Robots *Answer
	// Pages answers by path, or by path and "?query" when the query is
	// part of the key; "*" answers any path not listed. A path with no
	// answer gets 404.
	Pages map[string]Answer
}

// nonces numbers the answers with a Nonce.
var nonces atomic.Uint64

// NoType as an Answer's Type sends no Content-Type header at all.
const NoType = "none"

// Answer is one scripted response.
type Answer struct {
	Status   int    // 0: 200
	Location string // the Location header, sent when not ""
	Type     string // Content-Type; "": text/html; charset=utf-8; NoType: none sent
	Body     string
	// Header holds more headers (a Refresh, a Content-Encoding, ...).
	Header map[string]string
	// SetCookie, when not "", is sent as a Set-Cookie header.
	SetCookie string
	// Cookie, when not "", is a name=value the request must carry (in its
	// Cookie header) to get this answer; a request without it gets Else
	// (nil: 403).
	Cookie string
	Else   *Answer
	// CutAt, when positive, promises len(Body) bytes (Content-Length) but
	// sends only the first CutAt of them, then closes the connection.
	CutAt int
	// Nonce makes every "{nonce}" of Body a value new to each request, as
	// a page's CSRF token, timestamp or ad slot is.
	Nonce bool
}

// answer picks the answer to r for path (with its query) from s.
func (s *Script) answer(r *http.Request, path, target string) *Answer {
	if path == "/robots.txt" {
		if s.Robots == nil {
			return nil
		}
		return s.Robots.forCookie(r)
	}
	for _, k := range []string{target, path, "*"} {
		if a, ok := s.Pages[k]; ok {
			return a.forCookie(r)
		}
	}
	return nil
}

// forCookie is a, or its Else when r lacks the cookie a wants.
func (a *Answer) forCookie(r *http.Request) *Answer {
	if a.Cookie == "" {
		return a
	}
	name, value, _ := strings.Cut(a.Cookie, "=")
	if c, err := r.Cookie(name); err == nil && c.Value == value {
		return a
	}
	if a.Else != nil {
		return a.Else.forCookie(r)
	}
	return &Answer{Status: http.StatusForbidden, Type: "text/plain; charset=utf-8", Body: "fakeweb: no cookie\n"}
}

// scriptReply answers a request to a scripted host.
func scriptReply(s *Script, r *http.Request, path, target string) reply {
	a := s.answer(r, path, target)
	if a == nil {
		return notFound()
	}
	status := a.Status
	if status == 0 {
		status = http.StatusOK
	}
	return reply{status, func(rw http.ResponseWriter, r *http.Request) { a.write(rw, r, status) }}
}

// write sends a as the response to r.
func (a *Answer) write(rw http.ResponseWriter, r *http.Request, status int) {
	h := rw.Header()
	ct := a.Type
	if ct == "" {
		ct = "text/html; charset=utf-8"
	}
	h.Set("Content-Type", ct)
	if ct == NoType {
		h["Content-Type"] = nil // net/http then sends none (it sniffs only a missing key)
	}
	h.Set("Server", "fakeweb")
	if a.Location != "" {
		// Set as given: a Location that is empty after trimming, relative,
		// non-ASCII or of another scheme is what the case is about.
		h["Location"] = []string{a.Location}
	}
	if a.SetCookie != "" {
		h.Add("Set-Cookie", a.SetCookie)
	}
	keys := make([]string, 0, len(a.Header))
	for k := range a.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		h[http.CanonicalHeaderKey(k)] = []string{a.Header[k]}
	}
	body := a.Body
	if a.Nonce {
		body = strings.ReplaceAll(body, "{nonce}", strconv.FormatUint(nonces.Add(1)*0x9e3779b97f4a7c15, 36))
	}
	if a.CutAt > 0 && a.CutAt < len(body) {
		cutBody(rw, r, status, body, a.CutAt)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	rw.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = rw.Write([]byte(body))
	}
}

// cutBody promises body whole and sends its first n bytes, then closes the
// connection (an orderly close: the client sees the body end early).
func cutBody(rw http.ResponseWriter, r *http.Request, status int, body string, n int) {
	rw.Header().Set("Content-Length", strconv.Itoa(len(body)))
	rw.Header().Set("Connection", "close")
	rw.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = rw.Write([]byte(body[:n]))
	}
	if f, ok := rw.(http.Flusher); ok {
		f.Flush()
	}
	// net/http ends a response whose handler wrote less than its
	// Content-Length by closing the connection, which is the case.
}
