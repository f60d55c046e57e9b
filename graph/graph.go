package graph

import "time"

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
)

// Node is one host of the graph. Its ID never changes once given.
type Node struct {
	ID          uint64    `msgpack:"id"`
	Host        string    `msgpack:"h"`  // normalised host (see NormalizeHost), with a non-default port if any
	Domain      string    `msgpack:"d"`  // registrable domain (eTLD+1) of Host, or Host itself
	Scheme      string    `msgpack:"sc"` // scheme of the link or seed that first found it: "http" or "https"
	Title       string    `msgpack:"t"`
	Description string    `msgpack:"ds"` // meta description, or the title when there is none
	CrawlCount  int       `msgpack:"cc"` // successful fetches (an HTTP answer was received)
	FailCount   int       `msgpack:"fc"` // transport failures after all retries
	Status      Status    `msgpack:"st"`
	HTTPStatus  int       `msgpack:"hs"`
	ContentType string    `msgpack:"ct"`
	Server      string    `msgpack:"sv"`
	Bytes       int64     `msgpack:"b"`  // body bytes read (capped by max_body_bytes)
	FetchMS     int64     `msgpack:"ms"` // duration of the last fetch in milliseconds
	ContentHash string    `msgpack:"ch"` // hex sha256 of the body read
	Error       string    `msgpack:"e"`  // last error message, if any
	Depth       int       `msgpack:"dp"` // smallest depth at which it was queued or seen
	FirstSeen   time.Time `msgpack:"fs"`
	LastSeen    time.Time `msgpack:"ls"`
	LastCrawl   time.Time `msgpack:"lc"` // zero when never fetched
}

// Edge is a directed host→host link; Weight counts how many times a crawled
// page of From was seen linking to To.
type Edge struct {
	From      uint64    `msgpack:"-"`
	To        uint64    `msgpack:"-"`
	Weight    uint64    `msgpack:"w"`
	FirstSeen time.Time `msgpack:"fs"`
	LastSeen  time.Time `msgpack:"ls"`
}
