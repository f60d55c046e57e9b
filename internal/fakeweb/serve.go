package fakeweb

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// reply is how a request will be answered: a status decided cheaply while the
// request is recorded, and a function that writes the response.
type reply struct {
	status int
	serve  func(rw http.ResponseWriter, r *http.Request)
}

// ServeHTTP answers a request for any host of the web, chosen by the Host
// header (or the host of an absolute-form request URI, as sent to a proxy).
// It records the request, waits Config.Latency, then answers.
func (w *Web) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	host := normalizeHost(r.Host)
	path := r.URL.Path
	if path == "" {
		path = "/"
	}
	target := path
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	at := time.Now()
	robots := path == "/robots.txt" || path == "/robots-real.txt"

	w.mu.Lock()
	n := w.record(host, robots)
	rep := w.route(r, host, path, target, n)
	w.reqs = append(w.reqs, Request{Host: host, Path: target, At: at, Status: rep.status, Proto: r.Proto, TLS: r.TLS != nil})
	delay := w.delay(host, len(w.reqs))
	w.mu.Unlock()

	if !wait(r.Context(), delay) {
		return
	}
	rep.serve(rw, r)
}

// delay is how long the k-th request, to host, waits before its answer:
// the web's latency, its jitter (drawn from the seed, host and k), and a
// second more for a SlowAnswer host. It runs under w.mu.
func (w *Web) delay(host string, k int) time.Duration {
	d := w.cfg.Latency
	if w.cfg.Jitter > 0 {
		r := newRNG(w.seed, streamJitter, k)
		d += time.Duration(r.float() * float64(w.cfg.Jitter))
	}
	if i, ok := w.index[host]; ok && w.sites[i].fault&SlowAnswer != 0 {
		d += SlowAnswerDelay
	}
	return d
}

// wait waits d or until ctx is done, and reports whether d elapsed.
func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// route decides the reply. It runs under w.mu, so it must not render: the
// expensive work happens in the returned serve function. n is the number of
// earlier non-robots requests to host.
func (w *Web) route(r *http.Request, host, path, target string, n int) reply {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return reply{http.StatusMethodNotAllowed, func(rw http.ResponseWriter, _ *http.Request) {
			rw.Header().Set("Allow", "GET, HEAD")
			writeBody(rw, http.StatusMethodNotAllowed, "text/plain; charset=utf-8", []byte("fakeweb: method not allowed\n"))
		}}
	}
	i, ok := w.index[host]
	if !ok {
		if next, trap, ok := w.trapHost(host); ok {
			if path == "/robots.txt" {
				return textReply(http.StatusOK, robotsPlainText)
			}
			return htmlReply(http.StatusOK, trapHostPage(next, trap))
		}
		return textReply(http.StatusNotFound, "fakeweb: no such host: "+host+"\n")
	}
	s := &w.sites[i]
	switch s.kind {
	case kindSite:
		return w.siteReply(i, path)
	case kindScript:
		return scriptReply(s.script, r, path, target)
	case kindTwin:
		return redirectReply(http.StatusMovedPermanently, "http://"+w.sites[s.twin].name+target)
	}
	switch path {
	case "/robots.txt":
		return w.robotsReply(i)
	case "/robots-real.txt":
		if s.fault&RobotsRedirect != 0 {
			return textReply(http.StatusOK, "User-agent: *\nDisallow: /\n")
		}
		return notFound()
	}
	if k := w.cfg.FaultRepeat; s.fault&TooMany429 != 0 {
		if n < k {
			return reply{http.StatusTooManyRequests, func(rw http.ResponseWriter, _ *http.Request) {
				rw.Header().Set("Retry-After", "1")
				writeBody(rw, http.StatusTooManyRequests, "text/plain; charset=utf-8", []byte("fakeweb: slow down\n"))
			}}
		}
		n -= k
	}
	if k := w.cfg.FaultRepeat; s.fault&Unavailable != 0 && n < k {
		return reply{http.StatusServiceUnavailable, func(rw http.ResponseWriter, _ *http.Request) {
			rw.Header().Set("Retry-After", "1")
			writeBody(rw, http.StatusServiceUnavailable, "text/plain; charset=utf-8", []byte("fakeweb: unavailable\n"))
		}}
	}
	if k := w.cfg.FaultRepeat; s.fault&Burst5xx != 0 && n < k {
		if n%2 == 0 {
			return textReply(http.StatusInternalServerError, "fakeweb: internal error\n")
		}
		return reply{http.StatusServiceUnavailable, func(rw http.ResponseWriter, _ *http.Request) {
			rw.Header().Set("Retry-After", "1")
			writeBody(rw, http.StatusServiceUnavailable, "text/plain; charset=utf-8", []byte("fakeweb: unavailable\n"))
		}}
	}
	if w.shellOf(i) != NoShell {
		if rep, ok := w.shellReply(i, path); ok {
			return rep
		}
	}
	switch {
	case path == "/":
		return w.homeReply(i)
	case s.fault&RedirectLoop != 0 && path == "/a":
		return redirectReply(http.StatusFound, "/")
	case s.fault&RedirectChain20 != 0 && strings.HasPrefix(path, "/hop/"):
		hop, err := strconv.Atoi(strings.TrimPrefix(path, "/hop/"))
		switch {
		case err != nil || hop < 1 || hop > 20:
			return notFound()
		case hop < 20:
			return redirectReply(http.StatusFound, "/hop/"+strconv.Itoa(hop+1))
		}
		return w.smallReply(i, path)
	case s.fault&CalendarTrap != 0 && path == "/calendar":
		return htmlReply(http.StatusOK, calendarPage(r.URL.Query().Get("date")))
	case s.fault&CalendarTrap != 0 && isDeepPath(path):
		return htmlReply(http.StatusOK, deepPage(path))
	case knownPath(path):
		return w.smallReply(i, path)
	}
	return notFound()
}

// homeReply answers / for host i.
func (w *Web) homeReply(i int) reply {
	f := w.sites[i].fault
	switch {
	case f&SlowDrip != 0:
		return reply{http.StatusOK, slowDrip}
	case f&EndlessBody != 0:
		return reply{http.StatusOK, endless}
	case f&Huge != 0:
		return reply{http.StatusOK, huge}
	case f&GzipBomb != 0:
		return reply{http.StatusOK, serveGzipBomb}
	case f&RedirectLoop != 0:
		return redirectReply(http.StatusFound, "/a")
	case f&RedirectChain20 != 0:
		return redirectReply(http.StatusFound, "/hop/1")
	case f&ResetMidBody != 0:
		return reply{http.StatusOK, resetMidBody}
	case f&BinaryHTML != 0:
		return reply{http.StatusOK, func(rw http.ResponseWriter, _ *http.Request) {
			writeBody(rw, http.StatusOK, "text/html; charset=utf-8", w.randomBytes(i, 30_000))
		}}
	}
	return reply{http.StatusOK, func(rw http.ResponseWriter, _ *http.Request) {
		body, _ := w.home(i, true)
		writeBody(rw, http.StatusOK, "text/html; charset=utf-8", body)
	}}
}

// writeBody writes a complete response with a Content-Length.
func writeBody(rw http.ResponseWriter, status int, contentType string, body []byte) {
	h := rw.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Server", "fakeweb")
	rw.WriteHeader(status)
	// A write error means the client went away; there is no one to tell.
	_, _ = rw.Write(body)
}

func textReply(status int, body string) reply {
	return reply{status, func(rw http.ResponseWriter, _ *http.Request) {
		writeBody(rw, status, "text/plain; charset=utf-8", []byte(body))
	}}
}

func htmlReply(status int, body string) reply {
	return reply{status, func(rw http.ResponseWriter, _ *http.Request) {
		writeBody(rw, status, "text/html; charset=utf-8", []byte(body))
	}}
}

func redirectReply(status int, location string) reply {
	return reply{status, func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, location, status)
	}}
}

func notFound() reply {
	return htmlReply(http.StatusNotFound, "<!DOCTYPE html>\n<html>\n<head>\n<title>404 Not Found</title>\n</head>\n<body>\n<h1>Not Found</h1>\n</body>\n</html>\n")
}

// knownPaths are the same-host paths home pages link to; they get a small page.
var knownPaths = []string{
	"/about", "/contact", "/blog/", "/post/", "/tag/", "/archive/", "/private/",
	"/feed.xml", "/search", "/index.html", "/map.html", "/img/",
}

func knownPath(path string) bool {
	for _, k := range knownPaths {
		if path == k || strings.HasSuffix(k, "/") && strings.HasPrefix(path, k) {
			return true
		}
	}
	return false
}

// smallReply answers a same-host path with a short page linking home.
func (w *Web) smallReply(i int, path string) reply {
	name := displayName(w.sites[i].name)
	body := "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>" + html.EscapeString(path) + " — " +
		html.EscapeString(name) + "</title>\n</head>\n<body>\n<h1>" + html.EscapeString(path) +
		"</h1>\n<p>Nothing much here. <a href=\"/\">Home</a></p>\n</body>\n</html>\n"
	return htmlReply(http.StatusOK, body)
}

// Robots bodies by kind.
const (
	robotsPlainText     = "User-agent: *\nDisallow: /private/\n"
	robotsDelayText     = "User-agent: *\nCrawl-delay: 1\nDisallow: /private/\n"
	robotsDisallowText  = "User-agent: weaver\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\n"
	robotsCommentedText = "# robots.txt for %s\nUser-agent: *\nAllow: /\nDisallow: /private/\nDisallow: /search # no queries\n\nSitemap: http://%s/sitemap.xml\n"
)

// robotsReply answers /robots.txt for host i.
func (w *Web) robotsReply(i int) reply {
	s := &w.sites[i]
	switch {
	case s.fault&HugeRobots != 0:
		return reply{http.StatusOK, func(rw http.ResponseWriter, _ *http.Request) {
			writeBody(rw, http.StatusOK, "text/plain; charset=utf-8", hugeRobots())
		}}
	case s.fault&BinaryRobots != 0:
		return reply{http.StatusOK, func(rw http.ResponseWriter, _ *http.Request) {
			writeBody(rw, http.StatusOK, "text/plain", w.randomBytes(i, 64<<10))
		}}
	case s.fault&RobotsRedirect != 0:
		return redirectReply(http.StatusMovedPermanently, "/robots-real.txt")
	}
	if w.shellOf(i) == ShellScriptDisallowed {
		return textReply(http.StatusOK, "User-agent: *\nDisallow: /app.js\n")
	}
	switch s.robots {
	case robotsMissing:
		return notFound()
	case robotsDelay:
		return textReply(http.StatusOK, robotsDelayText)
	case robotsDisallowed:
		return textReply(http.StatusOK, robotsDisallowText)
	case robotsCommented:
		return textReply(http.StatusOK, strings.ReplaceAll(robotsCommentedText, "%s", s.name))
	}
	return textReply(http.StatusOK, robotsPlainText)
}

// allowsHome reports whether host i's robots.txt lets the agent "weaver"
// fetch /, as a crawler that follows RFC 9309 (including its redirects and
// its size cap of at least 500 KiB) reads it.
func (w *Web) allowsHome(i int) bool {
	s := &w.sites[i]
	switch {
	case s.kind == kindTwin:
		return w.allowsHome(int(s.twin)) // its robots.txt redirects to the host's
	case s.fault&RobotsRedirect != 0:
		return false
	case s.fault&(HugeRobots|BinaryRobots) != 0:
		return true
	}
	return s.robots != robotsDisallowed
}

// randomBytes returns n deterministic random bytes for host i.
func (w *Web) randomBytes(i, n int) []byte {
	r := newRNG(w.seed, streamBinary, i)
	b := make([]byte, n)
	for k := 0; k < n; k += 8 {
		v := r.next()
		for j := 0; j < 8 && k+j < n; j++ {
			b[k+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// Start serves the web on addr (such as "127.0.0.1:0") until Close. It
// returns an error if it cannot listen.
func (w *Web) Start(addr string) (*Server, error) { return startHandler(w, addr) }

// startHandler serves h on addr until the Server's Close.
func startHandler(h http.Handler, addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fakeweb: start: %w", err)
	}
	s := &Server{ln: ln, srv: httpServer(h), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.serveErr = err
		}
	}()
	return s, nil
}

// httpServer is the server of Start and StartTLS, answering with h.
func httpServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		// Streaming faults lift this deadline for their own response.
		WriteTimeout:   60 * time.Second,
		IdleTimeout:    90 * time.Second,
		MaxHeaderBytes: 64 << 10,
		// Handshakes refused and reset connections are what the faults
		// are for, not news.
		ErrorLog: log.New(io.Discard, "", 0),
	}
}

// Server is a running fake web.
type Server struct {
	srv      *http.Server
	plain    *http.Server  // StartTLS's redirects of plain HTTP (nil for Start)
	ca       []byte        // StartTLS's CA certificate, PEM (nil for Start)
	stop     chan struct{} // StartTLS: closed by Close, ends stalled handshakes
	ln       net.Listener
	done     chan struct{} // closed when Serve returns
	serveErr error         // what Serve failed with, other than ErrServerClosed; set before done closes
	once     sync.Once
	closeErr error
}

// Addr returns the listening address, such as "127.0.0.1:39111".
func (s *Server) Addr() string {
	return s.ln.Addr().String()
}

// URL returns http://<Addr>.
func (s *Server) URL() string {
	return "http://" + s.Addr()
}

// ConnectTo returns the curl-style --connect-to value that sends every host
// to this server: "::<Addr>".
func (s *Server) ConnectTo() string {
	return "::" + s.Addr()
}

// DialContext dials the server whatever address it is asked for, as a
// --connect-to rule does. It returns the dial error.
func (s *Server) DialContext(ctx context.Context, network, _ string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, s.Addr())
	if err != nil {
		return nil, fmt.Errorf("fakeweb: dial: %w", err)
	}
	return conn, nil
}

// Client returns an HTTP client that reaches every host through the server
// (trusting its CA, for StartTLS's). It follows at most 10 redirects, like http.DefaultClient.
func (s *Server) Client() *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext:         s.DialContext,
		TLSClientConfig:     s.tlsClientConfig(),
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     30 * time.Second,
	}}
}

// Close stops the server, closing every connection, and waits for it. It
// returns the error that stopped the server early, if any; later calls return
// the same.
func (s *Server) Close() error {
	s.once.Do(func() {
		if s.stop != nil {
			close(s.stop)
		}
		err := s.srv.Close()
		if s.plain != nil {
			err = errors.Join(err, s.plain.Close())
			if e := s.ln.Close(); e != nil && !errors.Is(e, net.ErrClosed) {
				err = errors.Join(err, e)
			}
		}
		<-s.done
		if s.serveErr != nil {
			err = errors.Join(err, s.serveErr)
		}
		if err != nil {
			s.closeErr = fmt.Errorf("fakeweb: close: %w", err)
		}
	})
	return s.closeErr
}
