package graph

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/weaver-crawler/weaver/kv"

	"github.com/vmihailenco/msgpack/v5"
)

// Status says what weaver knows about a node: why it has, or has not, out-links.
type Status string

// The fetch statuses a node can carry. A user filters on them in every export.
const (
	StatusDiscovered      Status = "discovered"        // seen as a link target, never fetched
	StatusCrawled         Status = "crawled"           // fetched and parsed (any 2xx/3xx page)
	StatusRobotsDisallow  Status = "robots_disallowed" // robots.txt forbids its home page
	StatusDNSError        Status = "dns_error"         // its name did not resolve
	StatusHTTPError       Status = "http_error"        // answered with a 4xx/5xx code (see Node.HTTPStatus)
	StatusTimeout         Status = "timeout"           // no complete answer within the timeout, after retries
	StatusRefused         Status = "refused"           // resolves to a private, loopback or otherwise forbidden address
	StatusExcludedByLimit Status = "excluded_by_limit" // not queued: depth or subdomain limit reached
	StatusFetchError      Status = "fetch_error"       // any other transport failure (reset, TLS, too many redirects...)
	StatusOutOfScope      Status = "out_of_scope"      // linked to, but outside the crawl's --scope: never fetched, never queued
)

// Node is one host of the graph. Its ID never changes once given.
type Node struct {
	ID          uint64    `msgpack:"id"`
	Host        string    `msgpack:"h"`            // normalised host (see NormalizeHost), with a non-default port if any
	Domain      string    `msgpack:"d,omitempty"`  // registrable domain (eTLD+1) of Host, or Host itself
	Scheme      string    `msgpack:"sc,omitempty"` // scheme of the link or seed that first found it: "http" or "https"
	Title       string    `msgpack:"t,omitempty"`
	Description string    `msgpack:"ds,omitempty"` // meta description, or the title when there is none
	CrawlCount  int       `msgpack:"cc,omitempty"` // successful fetches (an HTTP answer was received)
	FailCount   int       `msgpack:"fc,omitempty"` // transport failures after all retries
	Status      Status    `msgpack:"st,omitempty"`
	HTTPStatus  int       `msgpack:"hs,omitempty"`
	ContentType string    `msgpack:"ct,omitempty"`
	Server      string    `msgpack:"sv,omitempty"`
	Bytes       int64     `msgpack:"b,omitempty"`  // body bytes read (capped by max_body_bytes)
	FetchMS     int64     `msgpack:"ms,omitempty"` // duration of the last fetch in milliseconds
	ContentHash string    `msgpack:"ch,omitempty"` // hex sha256 of the body read
	Error       string    `msgpack:"e,omitempty"`  // last error message, if any
	Depth       int       `msgpack:"dp,omitempty"` // smallest depth at which it was queued or seen
	FirstSeen   time.Time `msgpack:"fs,omitempty"`
	LastSeen    time.Time `msgpack:"ls,omitempty"`
	LastCrawl   time.Time `msgpack:"lc,omitempty"` // zero when never fetched
	// Canonical is the home page's <link rel="canonical"> as an absolute
	// URL, "" when it had none.
	Canonical string `msgpack:"cn,omitempty"`
	// RobotsDirectives are the robots directives of the host's last crawl,
	// from <meta name="robots"> or name="weaver" and X-Robots-Tag, lower
	// case, comma-separated, each once ("noindex,nofollow"); "" when none.
	RobotsDirectives string `msgpack:"rd,omitempty"`
	// MirrorOf is the id of the first host (by FirstSeen, then id) of the
	// mirror group whose home pages share this node's ContentHash; 0 when
	// the node is no copy (alone, or the group's first). NoteContentHash
	// keeps it.
	MirrorOf uint64 `msgpack:"mo,omitempty"`
	// PagesFetched is how many pages of the host its last crawl fetched
	// (the home page included).
	PagesFetched int `msgpack:"pf,omitempty"`
	// RenderMS is the time the browser took to render the home page of
	// the host's last crawl (--render); 0 when it was not rendered.
	RenderMS int64 `msgpack:"rm,omitempty"`
	// Warc is where the response record of the home page of the host's
	// last crawl is, with --warc: crawl.WarcRef's text form.
	Warc string `msgpack:"wa,omitempty"`

	// The revisit schedule (issue 27): NextDue is when the host is due
	// again (zero without a revisit policy), IntervalMS the interval that
	// gave it, adapted by each crawl; Changes counts the crawls that found
	// the page (title, description, canonical, robots, status) or the
	// out-links changed, LastChange the last of them; NotModified counts
	// the crawls answered 304.
	NextDue     time.Time `msgpack:"nd,omitempty"`
	IntervalMS  int64     `msgpack:"iv,omitempty"`
	Changes     int       `msgpack:"cg,omitempty"`
	LastChange  time.Time `msgpack:"lg,omitempty"`
	NotModified int       `msgpack:"nm,omitempty"`
	// ETag and LastModified are the home page's validators from its last
	// 200 answer, sent back on a revisit (If-None-Match, If-Modified-Since).
	ETag         string `msgpack:"et,omitempty"`
	LastModified string `msgpack:"lm,omitempty"`
	// RedirectTo is where the home page of the host's last crawl
	// redirected, when it sent the crawl to another host (a 3xx's
	// Location, absolute); "" when it did not. Since schema 4.
	RedirectTo string `msgpack:"rt,omitempty"`
	// SeedRedirects is, for a host at depth 0 because a seed redirected
	// to it (the user named it), how many redirects from that seed led
	// here: a chain is a seed's for at most 5 hops, after which each hop
	// is a hop of depth, so a redirect trap cannot hold max_depth off.
	// 0 for a seed itself and for any other host. Since schema 4.
	SeedRedirects int `msgpack:"sr,omitempty"`
	// Home is the URL that answered the host's first page at its last
	// crawl, after the redirects within the host (http → https, / →
	// /en/), when it is not the home page by Scheme (which the crawl sets
	// to the scheme that answered): the next crawl asks it directly, so a
	// revisit's conditional request reaches the page that answers. Since
	// schema 4.
	Home string `msgpack:"hm,omitempty"`
	// TLSProblem is what a verifying client refuses of the host's
	// certificate or handshake, which a crawl with --insecure accepted:
	// a certificate failure's cause (tls_expired, tls_wrong_name,
	// tls_self_signed, tls_unknown_ca, tls_certificate), or tls_legacy
	// (TLS below 1.2, or a legacy cipher suite); "" for none. Since
	// schema 4.
	TLSProblem string `msgpack:"tp,omitempty"`
	// HSTS: the host's last home page answer over https carried a
	// Strict-Transport-Security header (max-age above 0): weaver never
	// falls back to http for it. Since schema 4.
	HSTS bool `msgpack:"hv,omitempty"`
}

// Rendered reports whether the home page of n's last crawl went through
// the browser.
func (n *Node) Rendered() bool { return n.RenderMS > 0 }

// Edge is a directed host→host link; Weight counts the fetched pages of
// From that link to To (a page once, however many links it holds), summed
// over From's crawls.
type Edge struct {
	From      uint64 // from the key, not stored in the value
	To        uint64 // from the key, not stored in the value
	Weight    uint64
	FirstSeen time.Time
	LastSeen  time.Time
	// Nofollow counts, out of Weight, the pages whose links to To all had
	// a rel of nofollow, ugc or sponsored.
	Nofollow uint64
	// Redirect counts, out of Weight, the times From's page redirected to
	// To instead of linking to it.
	Redirect uint64
	// Frame counts, out of Weight, the pages of From that showed To in a
	// frame (a <frame src> or an <iframe src>).
	Frame uint64
}

// EncodeMsgpack stores an edge as [weight, first seen, last seen] with
// the times in Unix nanoseconds: edges are the most numerous records, and
// this is several times faster and smaller than the reflective form. An
// edge with link facts (Nofollow, Redirect) appends them: [..., nofollow,
// redirect]; the common edge without any keeps the three fields, so stores
// written before facts existed read the same; an edge with frames appends
// those too: [..., nofollow, redirect, frame] (schema 4). Since schema 3 an edge seen
// in one commit only (last seen = first seen, no facts: most edges of a
// crawl) is [weight, first seen], 9 bytes less.
func (e *Edge) EncodeMsgpack(enc *msgpack.Encoder) error {
	var b [edgeMaxLen]byte
	_, err := enc.Writer().Write(appendEdge(b[:0], e))
	return err
}

// edgeFields is how many fields e's stored form has: 2, 3 or 5.
func edgeFields(e *Edge) int {
	switch {
	case e.Frame != 0:
		return 6
	case e.Nofollow != 0 || e.Redirect != 0:
		return 5
	case UnixNano(e.LastSeen) == UnixNano(e.FirstSeen):
		return 2
	}
	return 3
}

// DecodeMsgpack reads what EncodeMsgpack wrote.
func (e *Edge) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n != 2 && n != 3 && n != 5 && n != 6 {
		return fmt.Errorf("graph: edge record has %d fields, want 2, 3, 5 or 6", n)
	}
	if e.Weight, err = dec.DecodeUint64(); err != nil {
		return err
	}
	var first, last int64
	if first, err = dec.DecodeInt64(); err != nil {
		return err
	}
	last = first
	if n > 2 {
		if last, err = dec.DecodeInt64(); err != nil {
			return err
		}
	}
	e.FirstSeen, e.LastSeen = FromUnixNano(first), FromUnixNano(last)
	e.Nofollow, e.Redirect, e.Frame = 0, 0, 0
	if n >= 5 {
		if e.Nofollow, err = dec.DecodeUint64(); err != nil {
			return err
		}
		if e.Redirect, err = dec.DecodeUint64(); err != nil {
			return err
		}
	}
	if n == 6 {
		if e.Frame, err = dec.DecodeUint64(); err != nil {
			return err
		}
	}
	return nil
}

// edgeMaxLen bounds appendEdge's output: a fixarray byte and six
// numbers of at most 9 bytes.
const edgeMaxLen = 1 + 6*9

// appendEdge appends the bytes EncodeMsgpack writes for e, without an
// encoder: msgpack's compact unsigned form for the weight and facts, its
// int form for the times (which msgpack writes as unsigned when ≥ 0).
func appendEdge(b []byte, e *Edge) []byte {
	n := edgeFields(e)
	b = append(b, 0x90|byte(n))
	b = appendUint(b, e.Weight)
	b = appendInt(b, UnixNano(e.FirstSeen))
	if n == 2 {
		return b
	}
	b = appendInt(b, UnixNano(e.LastSeen))
	if n >= 5 {
		b = appendUint(b, e.Nofollow)
		b = appendUint(b, e.Redirect)
	}
	if n == 6 {
		b = appendUint(b, e.Frame)
	}
	return b
}

// appendUint is msgpack's compact EncodeUint.
func appendUint(b []byte, n uint64) []byte {
	switch {
	case n <= 0x7f:
		return append(b, byte(n))
	case n <= math.MaxUint8:
		return append(b, 0xcc, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xcf), n)
}

// appendInt is msgpack's compact EncodeInt.
func appendInt(b []byte, n int64) []byte {
	switch {
	case n >= 0:
		return appendUint(b, uint64(n))
	case n >= -32:
		return append(b, byte(int8(n)))
	case n >= math.MinInt8:
		return append(b, 0xd0, byte(int8(n)))
	case n >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(int16(n)))
	case n >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(int32(n)))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

// decodeEdge decodes an edge value as kv.Decode would: the form
// appendEdge writes directly (the edges are the most numerous records,
// and a reader of the whole graph decodes each), anything else through
// kv.Decode.
func decodeEdge(v []byte, e *Edge) error {
	if parseEdge(v, e) {
		return nil
	}
	return kv.Decode(v, e)
}

// parseEdge decodes v into e when v is exactly what appendEdge writes (an
// array of two, three or five integers, the counts unsigned, nothing after
// it), and reports whether it was; e is then what DecodeMsgpack gives. It
// reads with the node head's reader.
func parseEdge(v []byte, e *Edge) bool {
	r := headReader{b: v, ok: true}
	n := r.byte()
	if n != 0x92 && n != 0x93 && n != 0x95 && n != 0x96 {
		return false
	}
	w, first := r.uint(), r.int()
	last := first
	if n != 0x92 {
		last = r.int()
	}
	var nofollow, redirect, frame uint64
	if n >= 0x95 {
		nofollow, redirect = r.uint(), r.uint()
	}
	if n == 0x96 {
		frame = r.uint()
	}
	if !r.ok || r.i != len(v) {
		return false
	}
	e.Weight, e.Nofollow, e.Redirect, e.Frame = w, nofollow, redirect, frame
	e.FirstSeen, e.LastSeen = FromUnixNano(first), FromUnixNano(last)
	return true
}

// UnixNano is t as an edge record keeps its times: Unix nanoseconds, 0
// for the zero time (FromUnixNano's inverse). Code that holds many edges'
// times in memory (an import's links, a merge's edges) keeps them so.
func UnixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// FromUnixNano is the time of n Unix nanoseconds, in UTC; the zero time
// for 0 (UnixNano's inverse).
func FromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
