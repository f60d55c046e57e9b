package crawl

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/crawl/pick"
)

// Config is everything a crawl is told. Each field is a setting of Table,
// which gives its config key (seed 000 §3's, plus weaver's own), default
// and flag; every key can also come from the environment (WEAVER_<KEY>).
// Package crawl never reads flags or the environment itself: cmd/weaver
// fills a Config and hands it over.
type Config struct {
	SeedURL              string
	SeedURLs             []string
	SeedsFile            string // one seed URL a line; "-": stdin (read by cmd/weaver)
	MaxDepth             int    // 0: no limit
	MaxCrawlsPerNode     int    // crawls of a host over the store's life; 0: no cap
	MaxSubdomainsPerRoot int    // 0: no limit
	MaxOutboundLinks     int    // 0: no limit
	ConcurrentWorkers    int    // ≥ 1
	RequestTimeoutMS     int
	RetryAttempts        int
	RetryDelayMS         int
	DBPath               string
	MetricsPath          string

	ExcludeHosts         []string // regular expressions matched against the whole normalised host
	PolitenessDelayMS    int
	UserAgent            string
	IgnoreRobots         bool
	AllowPrivateNetworks bool
	// Insecure accepts any certificate, TLS 1.0 and later and the legacy
	// cipher suites (curl's --insecure), recording what a verifying
	// client would have refused on the node (graph.Node.TLSProblem).
	Insecure           bool
	MaxBodyBytes       int64
	MaxPages           int // 0: no limit
	ConnectTo          []string
	RobotsCacheTTLMS   int
	ProgressIntervalMS int
	Quiet              bool
	JSONLogs           bool
	Listen             string
	TokenFile          string // the --listen API's bearer token, in a file of one line
	MetricsPublic      bool   // /metrics answers without the token
	Cluster            string // NATS server URL(s): this crawl is one shard of a cluster
	Shard              string // "K/N" with cluster: shard K of N
	ClusterReplicas    int    // replicas of the stream and KV bucket a shard creates (1)
	CrawlName          string // the cluster crawl's name (default: from the seeds)
	// PagesPerHost is how many pages of a host one crawl of it fetches:
	// the home page, then up to PagesPerHost−1 more of the same host,
	// breadth-first from the links found (1: the home page alone).
	PagesPerHost int
	// AnchorsPerEdge is how many example links a crawl keeps per edge
	// (--anchors): the page, the target URL, the anchor text and rel of
	// the links that made it, in the store's anchors bucket for weaver
	// show. 0 keeps none: each one costs about as much as an edge.
	AnchorsPerEdge int
	// Scope, when set, are regular expressions on the normalised host:
	// only hosts matching one are fetched; links to the others are edges
	// to nodes marked out_of_scope.
	Scope []string
	// Render is when pages go through a browser: never, auto (pages that
	// look like a JavaScript shell) or always.
	Render string
	// WarcDir, when set, is where every HTTP exchange is written as WARC
	// (--warc); WarcMaxSize rotates its files (0: 1 GB).
	WarcDir     string
	WarcMaxSize int64
	// MinFreeSpace pauses the crawl while a file system it writes to (the
	// store's, the WARC files', metrics.log's) has fewer free bytes (0:
	// never; a write that fails for want of room pauses it all the same).
	MinFreeSpace int64
	// CAFile is a PEM file of one or more CA certificates trusted in
	// addition to the system's roots (a corporate TLS proxy, an
	// intranet), by fetches, robots.txt and the browser alike.
	CAFile string
	// DNSServer, when set, is the DNS server (IP or IP:PORT, port 53 by
	// default) names are resolved with instead of the system's resolver.
	DNSServer string
	// Browser is the chromium or Chrome that renders pages (--browser;
	// the environment's WEAVER_BROWSER is this key's variable): a path, or
	// a name looked up on PATH. Empty: chromium or google-chrome on PATH.
	Browser string
	// RevisitAfterMS, when set, is the revisit policy (--revisit): a host
	// crawled before is crawled again when due, after an interval that
	// starts here and adapts to what each crawl finds, up to RevisitMaxMS
	// (0: 32 times RevisitAfterMS). MaxDurationMS ends a run after that
	// long (0: no limit).
	RevisitAfterMS int
	RevisitMaxMS   int
	MaxDurationMS  int

	// from records which source last set each key (LoadJSON, Set, From),
	// so that Validate's errors say where a bad value came from.
	from map[string]string
}

// From records that source (e.g. "flag --connect-to") set key, for a value
// assigned to c's field directly rather than through Set.
func (c *Config) From(key, source string) {
	// A new map each time: copies of a Config (a job's, from the serve
	// base) must not share what one of them records.
	from := maps.Clone(c.from)
	if from == nil {
		from = map[string]string{}
	}
	from[key] = source
	c.from = from
}

// invalid is Validate's error for key: it names the source that set it.
func (c *Config) invalid(key, format string, a ...any) error {
	return &ConfigError{Source: c.from[key], Key: key, Msg: fmt.Sprintf(format, a...)}
}

// DefaultUserAgent names weaver (robots.txt product token "weaver") and
// where to read about it.
const DefaultUserAgent = "weaver/0.1 (+https://github.com/weaver-crawler/weaver; host-graph crawler)"

// DefaultExcludeHosts expresses seed 000 §5.3's list, and x.com: the seven
// sites and their subdomains, and hosts whose FIRST label is ads or
// analytics.
var DefaultExcludeHosts = pick.DefaultExcludeHosts

// Defaults returns the configuration used when nothing is said: every
// setting's Default (Table).
func Defaults() Config {
	var c Config
	for _, s := range Table {
		if s.Default != nil {
			setDefault(s.Field(&c), s.Default)
		}
	}
	return c
}

// setDefault sets the field ptr to v, a Default of its type (a list is
// copied: no two Configs share one).
func setDefault(ptr, v any) {
	switch p := ptr.(type) {
	case *int:
		*p = v.(int)
	case *int64:
		*p = v.(int64)
	case *string:
		*p = v.(string)
	case *bool:
		*p = v.(bool)
	case *[]string:
		*p = slices.Clone(v.([]string))
	}
}

// DefaultMinFreeSpace is min_free_space when nothing is said: 512 MB, far
// above what a crawl writes between two looks at the free space, and far
// below what a disk with room to spare has.
const DefaultMinFreeSpace = 512e6

// Keys returns every config key, sorted.
func Keys() []string {
	out := keysWhere(func(*Setting) bool { return true })
	sort.Strings(out)
	return out
}

// field is a setting and where its value is in a Config.
type field struct {
	Setting
	ptr any // *int, *int64, *string, *bool or *[]string inside a Config
}

func (c *Config) field(key string) (field, bool) {
	s, ok := Lookup(key)
	if !ok {
		return field{}, false
	}
	return field{s, s.Field(c)}, true
}

// Get returns key's value as text (a list joined with commas), and
// whether key exists.
func (c *Config) Get(key string) (string, bool) {
	f, ok := c.field(key)
	if !ok {
		return "", false
	}
	switch p := f.ptr.(type) {
	case *int:
		return strconv.Itoa(*p), true
	case *int64:
		return strconv.FormatInt(*p, 10), true
	case *string:
		return *p, true
	case *bool:
		return strconv.FormatBool(*p), true
	case *[]string:
		return strings.Join(*p, ","), true
	}
	panic(fmt.Sprintf("crawl: config key %s is a %T", key, f.ptr)) // Table has only the types above
}

// Seeds returns seed_url and seed_urls, in that order, without duplicates.
func (c *Config) Seeds() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range append([]string{c.SeedURL}, c.SeedURLs...) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Durations of the *_ms keys.
func (c *Config) timeout() time.Duration    { return time.Duration(c.RequestTimeoutMS) * time.Millisecond }
func (c *Config) retryDelay() time.Duration { return time.Duration(c.RetryDelayMS) * time.Millisecond }

// openHosts bounds the hosts a crawl has started and not finished (most
// of them parked for their delay): enough for every worker to keep busy
// while each host waits a second between its requests, and a bound on
// what a web of slow Crawl-delays may hold open.
func (c *Config) openHosts() int { return max(256, 64*c.ConcurrentWorkers) }

// UncapRevisits lifts max_crawls_per_node's cap when a revisit policy is
// set and no one chose a cap for it: no source set the key, or only the
// settings stored by a crawl that had no revisit policy (storedRevisit
// false), whose cap was the default of a crawl that fetched each host
// once. A host is then crawled for as long as the store lives, and the
// store remembers 0.
func (c *Config) UncapRevisits(storedRevisit bool) {
	if c.RevisitAfterMS <= 0 {
		return
	}
	src := c.from["max_crawls_per_node"]
	if src == "" || (strings.HasPrefix(src, "settings stored") && !storedRevisit) {
		c.MaxCrawlsPerNode = 0
		c.From("max_crawls_per_node", "revisit_after_ms (no cap by default)")
	}
}

// revisit is the revisit policy's first interval; 0: no revisits.
func (c *Config) revisit() time.Duration { return time.Duration(c.RevisitAfterMS) * time.Millisecond }

// revisitMax is the longest revisit interval.
func (c *Config) revisitMax() time.Duration {
	if c.RevisitMaxMS > 0 {
		return time.Duration(c.RevisitMaxMS) * time.Millisecond
	}
	return 32 * c.revisit()
}

// revisitMin is the shortest revisit interval: half the first, never
// below the politeness delay.
func (c *Config) revisitMin() time.Duration { return max(c.revisit()/2, c.delay()) }

func (c *Config) delay() time.Duration { return time.Duration(c.PolitenessDelayMS) * time.Millisecond }
func (c *Config) robotsTTL() time.Duration {
	return time.Duration(c.RobotsCacheTTLMS) * time.Millisecond
}
