package crawl

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/publicsuffix"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// ErrorKind classifies a failed fetch; it becomes the node's status and a
// label of the error counters.
type ErrorKind string

// The kinds of failure weaver tells apart.
const (
	KindDNS ErrorKind = "dns" // the name does not exist (NXDOMAIN), or no address to dial
	// KindDNSTimeout and KindDNSServFail are the resolver's failures, not
	// the name's: retried like other transient failures (issue 53, which
	// overrides seed 000's "skip DNS failures immediately" for them).
	KindDNSTimeout  ErrorKind = "dns_timeout"
	KindDNSServFail ErrorKind = "dns_servfail"
	KindTimeout     ErrorKind = "timeout"
	KindRefused     ErrorKind = "refused" // private address
	KindConnect     ErrorKind = "connect" // connection refused or unreachable
	KindReset       ErrorKind = "reset"   // connection reset, closed before an answer, or body cut short
	KindRedirects   ErrorKind = "redirects"
	KindHTTP        ErrorKind = "http"     // 4xx/5xx answer
	KindEncoding    ErrorKind = "encoding" // a body whose Content-Encoding does not decode
	// KindHeadersTooLarge: the answer's headers passed maxHeaderBytes.
	KindHeadersTooLarge ErrorKind = "headers_too_large"
	KindOther           ErrorKind = "other"
)

// status maps a failure kind to the node status users filter on.
func (k ErrorKind) status() graph.Status {
	switch k {
	case KindDNS, KindDNSTimeout, KindDNSServFail:
		return graph.StatusDNSError
	case KindTimeout, KindTLSTimeout:
		return graph.StatusTimeout
	case KindRefused:
		return graph.StatusRefused
	case KindHTTP:
		return graph.StatusHTTPError
	}
	return graph.StatusFetchError
}

// retryable reports whether another attempt may succeed: timeouts
// (a TLS handshake's too), resets and server errors may pass; DNS
// failures, refusals, certificates refused and 4xx will not.
func (k ErrorKind) retryable() bool {
	switch k {
	case KindTimeout, KindTLSTimeout, KindReset, KindDNSTimeout, KindDNSServFail:
		return true
	}
	return false
}

// classify names the kind of a transport error.
func classify(err error) ErrorKind {
	var dnsErr *net.DNSError
	var netErr net.Error
	var addrErr *net.AddrError
	switch {
	case errors.Is(err, ErrRefusedAddress):
		return KindRefused
	case errors.As(err, &dnsErr):
		switch {
		case dnsErr.IsNotFound:
			return KindDNS
		case dnsErr.IsTimeout:
			return KindDNSTimeout
		case dnsErr.IsTemporary: // SERVFAIL, REFUSED, "server misbehaving", no server to ask
			return KindDNSServFail
		}
		return KindDNS
	case errors.As(err, &addrErr):
		return KindDNS // the name gave no address to dial
	case errors.Is(err, errTooManyRedirects):
		return KindRedirects
	case errors.Is(err, ErrContentEncoding):
		return KindEncoding
	case strings.Contains(err.Error(), "server response headers exceeded"):
		return KindHeadersTooLarge // net/http's message, an error of no type
	case classifyTLS(err) != "":
		return classifyTLS(err)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return KindTimeout
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return KindConnect
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.EPIPE), serverClosed(err), closedBeforeWrite(err):
		return KindReset
	}
	return KindOther
}

// closedBeforeWrite reports whether err is a request that could not be
// written because its connection was closed already: net/http closes a
// connection when its reader sees the server's FIN, and a request written
// after that fails with "use of closed network connection". It is the
// server closing before answering, as errServerClosed is when the reader
// wins the race instead (CI saw it once in 20 such requests).
func closedBeforeWrite(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "write" && errors.Is(op.Err, net.ErrClosed)
}

// errServerClosed is net/http's message for a connection the server
// closed (an EOF) before the request's answer began: on a fresh
// connection the transport does not retry it and returns it as is, an
// unexported error that wraps nothing. It is a reset like any other (a
// server or proxy going away, closing what it had just accepted), not
// the host's answer.
const errServerClosed = "http: server closed idle connection"

// serverClosed reports whether err is, or wraps, net/http's error for a
// connection the server closed before answering.
func serverClosed(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == errServerClosed {
			return true
		}
	}
	return false
}

// response is what one GET brought back, body already consumed by read.
type response struct {
	status       int
	finalURL     *url.URL
	contentType  string
	server       string
	retryAfter   time.Duration
	location     string   // a redirect's Location, as sent
	robotsTag    []string // X-Robots-Tag headers
	capture      *Capture // the exchange, built for the archive (--warc)
	validators   validators
	cacheControl string               // robots.txt's Cache-Control, for its max-age
	refresh      string               // a Refresh header: a meta refresh of the answer's own
	tls          *tls.ConnectionState // the connection's, over https (nil: plain http)
	sts          string               // its Strict-Transport-Security header
}

// ask is one GET to make: its URL, its deadline, what a revisit sends and
// archives, and the lease's cookies.
type ask struct {
	url     string
	timeout time.Duration
	prev    *WarcRef   // where the last crawl archived the page (--warc), or nil
	cond    validators // a conditional request's validators, or none
	// jar holds the cookies the host set during its lease; nil until it
	// sets one. Each lease has its own: none is kept after the commit, so
	// no host follows the crawl to another and a long crawl keeps none.
	jar **cookiejar.Jar
}

// validators are a page's ETag and Last-Modified, sent back on a revisit
// as If-None-Match and If-Modified-Since (issue 27).
type validators struct{ etag, lastModified string }

// get performs one GET with its own deadline, hands the size-capped body,
// decoded, to read (which must consume what it needs before returning),
// and returns the response or a transport error. A nil read discards the
// body. Redirects are not followed: a redirect is the scheduler's next
// step, so that a hop waits for its host's delay without holding a worker.
// A body that cannot be decoded (a Content-Encoding that is not what it
// says, or one weaver does not know) is an error, as one cut short is.
func (c *Crawler) get(ctx context.Context, a ask, read func(io.Reader, *response) error) (*response, error) {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	rawURL, prev, cond := a.url, a.prev, a.cond
	var remote string
	if c.archive != nil {
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
			if host, _, err := net.SplitHostPort(info.Conn.RemoteAddr().String()); err == nil {
				remote = host
			}
		}})
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5")
	if cond.etag != "" {
		req.Header.Set("If-None-Match", cond.etag)
	}
	if cond.lastModified != "" {
		req.Header.Set("If-Modified-Since", cond.lastModified)
	}
	if a.jar != nil && *a.jar != nil {
		for _, ck := range (*a.jar).Cookies(req.URL) {
			req.AddCookie(ck)
		}
	}
	sent := c.now()
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	keepCookies(a.jar, resp)
	decoded, err := decodeBody(resp)
	if err != nil {
		return nil, err
	}
	r := &response{
		status:       resp.StatusCode,
		finalURL:     resp.Request.URL,
		contentType:  resp.Header.Get("Content-Type"),
		server:       resp.Header.Get("Server"),
		retryAfter:   parseRetryAfter(resp.Header.Get("Retry-After"), c.now()),
		location:     resp.Header.Get("Location"),
		robotsTag:    resp.Header.Values("X-Robots-Tag"),
		validators:   validators{etag: resp.Header.Get("ETag"), lastModified: resp.Header.Get("Last-Modified")},
		cacheControl: resp.Header.Get("Cache-Control"),
		refresh:      resp.Header.Get("Refresh"),
	}
	if resp.TLS != nil {
		r.tls, r.sts = resp.TLS, resp.Header.Get("Strict-Transport-Security")
	}
	var body io.Reader = io.LimitReader(decoded, c.cfg.MaxBodyBytes)
	var kept *bytes.Buffer
	if c.archive != nil {
		// --warc: the body the crawl reads is also kept for the record,
		// read to the cap whatever the crawl needed of it.
		kept = new(bytes.Buffer)
		body = io.TeeReader(body, kept)
	}
	switch {
	case isRedirect(r.status) && r.location != "":
		// A redirect's own body is not wanted; a little is read so that
		// the connection can be reused for the hop (as net/http does).
		_, _ = io.CopyN(io.Discard, body, 2<<10)
	case read != nil:
		if err := read(body, r); err != nil {
			return nil, err
		}
	}
	if kept != nil {
		if _, err := io.Copy(io.Discard, body); err != nil {
			return nil, err
		}
		truncated := int64(kept.Len()) >= c.cfg.MaxBodyBytes && peekMore(decoded)
		capture, err := c.archive.Record(ctx, req, resp, kept.Bytes(), truncated, remote, sent, prev)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrArchive, err)
		}
		r.capture = capture
	}
	// Whatever read left is not needed: the connection is not reused
	// rather than draining an endless or dripping body.
	return r, nil
}

// keepCookies keeps the cookies resp sets in *jar, made at the first.
func keepCookies(jar **cookiejar.Jar, resp *http.Response) {
	if jar == nil {
		return
	}
	cookies := resp.Cookies()
	if len(cookies) == 0 {
		return
	}
	if *jar == nil {
		// cookiejar.New fails only for options it is not given.
		*jar, _ = cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
	}
	(*jar).SetCookies(resp.Request.URL, cookies)
}

// peekMore reports whether r has a byte more to give.
func peekMore(r io.Reader) bool {
	var b [1]byte
	n, _ := r.Read(b[:])
	return n > 0
}

// Archive keeps the HTTP exchanges of a crawl (--warc): robots.txt,
// pages, redirect hops, retries. Record builds an exchange's records when
// it happens; they wait with the page for its commit, which writes them
// (Write): the archive holds the exchanges of committed pages, each once,
// and nothing of a page given back or never committed (a stop, a pause,
// a kill), which is fetched again later.
//
// prev, when not nil, is where the same page's response was recorded by
// an earlier crawl: an unchanged payload is then recorded as a revisit of
// it, and the Capture's Ref is prev itself (revisits always refer to the
// payload's original).
type Archive interface {
	Record(ctx context.Context, req *http.Request, resp *http.Response, body []byte, truncated bool, remoteIP string, sent time.Time, prev *WarcRef) (*Capture, error)
	// Write stages a page's captures in tx, in order: they are written
	// and made durable before tx commits, and not at all if it does not
	// (a kv.Resource). It sets each new record's Ref.File and Ref.Offset.
	Write(tx *kv.Tx, cs []*Capture) error
}

// Capture is one exchange as an Archive built it, waiting for its page's
// commit.
type Capture struct {
	// Ref is where the exchange's response record is (File and Offset
	// once written), or the original a revisit refers to.
	Ref     WarcRef
	Revisit bool   // Ref is the original's: Write does not move it
	Records []byte // the records, as the archive writes them
}

// WarcRef is where a page's response record is in a crawl's WARC files.
type WarcRef struct {
	File   string    // base name of the file (without .open)
	Offset int64     // of the exchange's request record; the response follows it
	ID     string    // WARC-Record-ID of the response
	Digest string    // its WARC-Payload-Digest, "sha1:BASE32"
	Date   time.Time // its WARC-Date
	URL    string    // its WARC-Target-URI
}

// String is the ref as graph.Node.Warc holds it: fields apart by spaces.
func (r WarcRef) String() string {
	if r.File == "" {
		return ""
	}
	return fmt.Sprintf("%s %d %s %s %s %s", r.File, r.Offset, r.ID, r.Digest, r.Date.UTC().Format(time.RFC3339Nano), r.URL)
}

// ParseWarcRef reads what String wrote.
func ParseWarcRef(s string) (WarcRef, bool) {
	f := strings.Fields(s)
	if len(f) != 6 {
		return WarcRef{}, false
	}
	off, err1 := strconv.ParseInt(f[1], 10, 64)
	date, err2 := time.Parse(time.RFC3339Nano, f[4])
	if err1 != nil || err2 != nil {
		return WarcRef{}, false
	}
	return WarcRef{File: f[0], Offset: off, ID: f[2], Digest: f[3], Date: date, URL: f[5]}, true
}

// ErrArchive wraps a failure to record an exchange: the crawl stops, and
// the page goes back to the queue uncommitted.
var ErrArchive = errors.New("crawl: recording the exchange failed")

// maxRetryAfter is the longest Retry-After weaver waits for; a server
// asking for more gets its error recorded instead.
const maxRetryAfter = 2 * time.Minute

func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// isRedirect reports whether status is one the crawl follows (with a
// Location): the codes net/http's client follows.
func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// hstsOn reports whether a Strict-Transport-Security header value asks
// for https (a max-age above 0, RFC 6797 §6.1.1).
func hstsOn(v string) bool {
	for _, d := range strings.Split(v, ";") {
		k, val, _ := strings.Cut(strings.TrimSpace(d), "=")
		if strings.EqualFold(strings.TrimSpace(k), "max-age") {
			n, err := strconv.ParseInt(strings.Trim(strings.TrimSpace(val), `"`), 10, 64)
			return err == nil && n > 0
		}
	}
	return false
}
