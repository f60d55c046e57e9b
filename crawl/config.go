package crawl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/crawl/pick"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/shard"
)

// Config is everything a crawl is told. Its JSON keys are seed 000 §3's,
// plus weaver's own; every key can also come from the environment
// (WEAVER_<KEY>) and most from a flag. Package crawl never reads flags or
// the environment itself: cmd/weaver fills a Config and hands it over.
type Config struct {
	SeedURL              string   `json:"seed_url"`
	SeedURLs             []string `json:"seed_urls"`
	SeedsFile            string   `json:"seeds_file"`              // one seed URL a line; "-": stdin (read by cmd/weaver)
	MaxDepth             int      `json:"max_depth"`               // 0: no limit
	MaxCrawlsPerNode     int      `json:"max_crawls_per_node"`     // crawls of a host over the store's life; 0: no cap
	MaxSubdomainsPerRoot int      `json:"max_subdomains_per_root"` // 0: no limit
	MaxOutboundLinks     int      `json:"max_outbound_links"`      // 0: no limit
	ConcurrentWorkers    int      `json:"concurrent_workers"`      // ≥ 1
	RequestTimeoutMS     int      `json:"request_timeout_ms"`
	RetryAttempts        int      `json:"retry_attempts"`
	RetryDelayMS         int      `json:"retry_delay_ms"`
	DBPath               string   `json:"db_path"`
	MetricsPath          string   `json:"metrics_path"`

	ExcludeHosts         []string `json:"exclude_hosts"` // regular expressions matched against the whole normalised host
	PolitenessDelayMS    int      `json:"politeness_delay_ms"`
	UserAgent            string   `json:"user_agent"`
	IgnoreRobots         bool     `json:"ignore_robots"`
	AllowPrivateNetworks bool     `json:"allow_private_networks"`
	MaxBodyBytes         int64    `json:"max_body_bytes"`
	MaxPages             int      `json:"max_pages"` // 0: no limit
	ConnectTo            []string `json:"connect_to"`
	RobotsCacheTTLMS     int      `json:"robots_cache_ttl_ms"`
	ProgressIntervalMS   int      `json:"progress_interval_ms"`
	Quiet                bool     `json:"quiet"`
	JSONLogs             bool     `json:"json_logs"`
	Listen               string   `json:"listen"`
	TokenFile            string   `json:"token_file"`       // the --listen API's bearer token, in a file of one line
	MetricsPublic        bool     `json:"metrics_public"`   // /metrics answers without the token
	Cluster              string   `json:"cluster"`          // NATS server URL(s): this crawl is one shard of a cluster
	Shard                string   `json:"shard"`            // "K/N" with cluster: shard K of N
	ClusterReplicas      int      `json:"cluster_replicas"` // replicas of the stream and KV bucket a shard creates (1)
	CrawlName            string   `json:"crawl_name"`       // the cluster crawl's name (default: from the seeds)
	// PagesPerHost is how many pages of a host one crawl of it fetches:
	// the home page, then up to PagesPerHost−1 more of the same host,
	// breadth-first from the links found (1: the home page alone).
	PagesPerHost int `json:"pages_per_host"`
	// AnchorsPerEdge is how many example links a crawl keeps per edge
	// (--anchors): the page, the target URL, the anchor text and rel of
	// the links that made it, in the store's anchors bucket for weaver
	// show. 0 keeps none: each one costs about as much as an edge.
	AnchorsPerEdge int `json:"anchors_per_edge"`
	// Scope, when set, are regular expressions on the normalised host:
	// only hosts matching one are fetched; links to the others are edges
	// to nodes marked out_of_scope.
	Scope []string `json:"scope"`
	// Render is when pages go through a browser: never, auto (pages that
	// look like a JavaScript shell) or always.
	Render string `json:"render"`
	// WarcDir, when set, is where every HTTP exchange is written as WARC
	// (--warc); WarcMaxSize rotates its files (0: 1 GB).
	WarcDir     string `json:"warc_dir"`
	WarcMaxSize int64  `json:"warc_max_size"`
	// MinFreeSpace pauses the crawl while a file system it writes to (the
	// store's, the WARC files', metrics.log's) has fewer free bytes (0:
	// never; a write that fails for want of room pauses it all the same).
	MinFreeSpace int64 `json:"min_free_space"`
	// CAFile is a PEM file of one or more CA certificates trusted in
	// addition to the system's roots (a corporate TLS proxy, an
	// intranet), by fetches, robots.txt and the browser alike.
	CAFile string `json:"ca_file"`
	// DNSServer, when set, is the DNS server (IP or IP:PORT, port 53 by
	// default) names are resolved with instead of the system's resolver.
	DNSServer string `json:"dns_server"`
	// Browser is the chromium or Chrome that renders pages (--browser;
	// the environment's WEAVER_BROWSER is this key's variable): a path, or
	// a name looked up on PATH. Empty: chromium or google-chrome on PATH.
	Browser string `json:"browser"`
	// RevisitAfterMS, when set, is the revisit policy (--revisit): a host
	// crawled before is crawled again when due, after an interval that
	// starts here and adapts to what each crawl finds, up to RevisitMaxMS
	// (0: 32 times RevisitAfterMS). MaxDurationMS ends a run after that
	// long (0: no limit).
	RevisitAfterMS int `json:"revisit_after_ms"`
	RevisitMaxMS   int `json:"revisit_max_ms"`
	MaxDurationMS  int `json:"max_duration_ms"`

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

// DefaultExcludeHosts expresses seed 000 §5.3 exactly: the six sites and
// their subdomains, and hosts whose FIRST label is ads or analytics.
var DefaultExcludeHosts = pick.DefaultExcludeHosts

// Defaults returns the configuration used when nothing is said.
func Defaults() Config {
	return Config{
		MaxDepth:             5,
		MaxCrawlsPerNode:     3,
		MaxSubdomainsPerRoot: 3,
		MaxOutboundLinks:     10,
		ConcurrentWorkers:    3,
		RequestTimeoutMS:     5000,
		RetryAttempts:        3,
		RetryDelayMS:         5000,
		DBPath:               "weaver.bolt",
		MetricsPath:          "metrics.log",
		ExcludeHosts:         append([]string(nil), DefaultExcludeHosts...),
		PolitenessDelayMS:    1000,
		UserAgent:            DefaultUserAgent,
		MaxBodyBytes:         1 << 20,
		RobotsCacheTTLMS:     24 * 3600 * 1000,
		ProgressIntervalMS:   5000,
		ClusterReplicas:      1,
		PagesPerHost:         1,
		Render:               RenderNever,
		MinFreeSpace:         DefaultMinFreeSpace,
	}
}

// DefaultMinFreeSpace is min_free_space when nothing is said: 512 MB, far
// above what a crawl writes between two looks at the free space, and far
// below what a disk with room to spare has.
const DefaultMinFreeSpace = 512e6

// Keys returns every config key, sorted.
func Keys() []string {
	var out []string
	for _, f := range fields() {
		out = append(out, f.key)
	}
	sort.Strings(out)
	return out
}

type field struct {
	key string
	ptr any // *int, *int64, *string, *bool or *[]string inside a Config
}

func (c *Config) fieldsOf() []field {
	return []field{
		{"seed_url", &c.SeedURL}, {"seed_urls", &c.SeedURLs}, {"seeds_file", &c.SeedsFile},
		{"max_depth", &c.MaxDepth}, {"max_crawls_per_node", &c.MaxCrawlsPerNode},
		{"max_subdomains_per_root", &c.MaxSubdomainsPerRoot}, {"max_outbound_links", &c.MaxOutboundLinks},
		{"concurrent_workers", &c.ConcurrentWorkers}, {"request_timeout_ms", &c.RequestTimeoutMS},
		{"retry_attempts", &c.RetryAttempts}, {"retry_delay_ms", &c.RetryDelayMS},
		{"db_path", &c.DBPath}, {"metrics_path", &c.MetricsPath},
		{"exclude_hosts", &c.ExcludeHosts}, {"politeness_delay_ms", &c.PolitenessDelayMS},
		{"user_agent", &c.UserAgent}, {"ignore_robots", &c.IgnoreRobots},
		{"allow_private_networks", &c.AllowPrivateNetworks}, {"max_body_bytes", &c.MaxBodyBytes},
		{"max_pages", &c.MaxPages}, {"connect_to", &c.ConnectTo},
		{"robots_cache_ttl_ms", &c.RobotsCacheTTLMS}, {"progress_interval_ms", &c.ProgressIntervalMS},
		{"quiet", &c.Quiet}, {"json_logs", &c.JSONLogs}, {"listen", &c.Listen},
		{"token_file", &c.TokenFile}, {"metrics_public", &c.MetricsPublic},
		{"cluster", &c.Cluster}, {"shard", &c.Shard}, {"cluster_replicas", &c.ClusterReplicas},
		{"crawl_name", &c.CrawlName}, {"pages_per_host", &c.PagesPerHost}, {"scope", &c.Scope},
		{"anchors_per_edge", &c.AnchorsPerEdge},
		{"render", &c.Render}, {"warc_dir", &c.WarcDir}, {"warc_max_size", &c.WarcMaxSize}, {"min_free_space", &c.MinFreeSpace},
		{"ca_file", &c.CAFile}, {"dns_server", &c.DNSServer},
		{"browser", &c.Browser},
		{"revisit_after_ms", &c.RevisitAfterMS}, {"revisit_max_ms", &c.RevisitMaxMS}, {"max_duration_ms", &c.MaxDurationMS},
	}
}

func fields() []field { var c Config; return c.fieldsOf() }

func (c *Config) field(key string) (field, bool) {
	for _, f := range c.fieldsOf() {
		if f.key == key {
			return f, true
		}
	}
	return field{}, false
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
	panic(fmt.Sprintf("crawl: config key %s is a %T", key, f.ptr)) // fieldsOf has only the types above
}

// ConfigError names the key (and the source) of a bad configuration value.
type ConfigError struct {
	Source string // "config file", "environment WEAVER_MAX_DEPTH", "flag --max-depth"...
	Key    string
	Msg    string
}

func (e *ConfigError) Error() string {
	if e.Source == "" { // a default, or a value assigned directly
		return fmt.Sprintf("config: key %q: %s", e.Key, e.Msg)
	}
	if e.Key == "" {
		return fmt.Sprintf("config: %s: %s", e.Source, e.Msg)
	}
	if flag, ok := strings.CutPrefix(e.Source, "flag "); ok { // the flag as typed, then the key
		return fmt.Sprintf("%s (%s): %s", flag, e.Key, e.Msg)
	}
	return fmt.Sprintf("config: %s: key %q: %s", e.Source, e.Key, e.Msg)
}

// LoadJSON applies a JSON config document to c. Unknown keys, values of
// the wrong type and duplicate keys are errors naming the key.
func (c *Config) LoadJSON(data []byte, source string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return &ConfigError{Source: source, Msg: "not JSON: " + err.Error()}
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return &ConfigError{Source: source, Msg: "want a JSON object of keys"}
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return &ConfigError{Source: source, Msg: "not JSON: " + err.Error()}
		}
		key := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return &ConfigError{Source: source, Key: key, Msg: "not JSON: " + err.Error()}
		}
		if seen[key] {
			return &ConfigError{Source: source, Key: key, Msg: "given twice"}
		}
		seen[key] = true
		f, ok := c.field(key)
		if !ok {
			return &ConfigError{Source: source, Key: key, Msg: "unknown key (known: " + strings.Join(Keys(), ", ") + ")"}
		}
		if err := setJSON(f, raw); err != nil {
			return &ConfigError{Source: source, Key: key, Msg: err.Error()}
		}
		c.From(key, source)
	}
	if _, err := dec.Token(); err != nil {
		return &ConfigError{Source: source, Msg: "not JSON: " + err.Error()}
	}
	if dec.More() {
		return &ConfigError{Source: source, Msg: "trailing data after the JSON object"}
	}
	return nil
}

// wantDuration says what a *_ms key accepts.
const wantDuration = "a duration such as 1.5s or 250ms (or a whole number of milliseconds)"

func setJSON(f field, raw json.RawMessage) error {
	var err error
	isNumber := len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'))
	switch p := f.ptr.(type) {
	case *int:
		if strings.HasSuffix(f.key, "_ms") {
			// A duration: milliseconds, or Go's syntax in a string ("1.5s").
			var text string
			if json.Unmarshal(raw, &text) == nil {
				d, err := time.ParseDuration(text)
				if err != nil {
					return fmt.Errorf("want %s, got %s", wantDuration, raw)
				}
				*p = int(d / time.Millisecond)
				return nil
			}
			if !isNumber {
				return fmt.Errorf("want %s, got %s", wantDuration, raw)
			}
		}
		var n json.Number
		if err = json.Unmarshal(raw, &n); err != nil || !isNumber {
			return fmt.Errorf("want a whole number, got %s", raw)
		}
		var v int64
		if v, err = strconv.ParseInt(n.String(), 10, 0); err != nil {
			return fmt.Errorf("want a whole number, got %s", raw)
		}
		*p = int(v)
	case *int64:
		var text string
		if slices.Contains(byteKeys, f.key) && json.Unmarshal(raw, &text) == nil {
			if *p, err = ParseBytes(text); err != nil {
				return fmt.Errorf("want a size in bytes (512MB, 1GiB), got %s", raw)
			}
			return nil
		}
		var n json.Number
		if err = json.Unmarshal(raw, &n); err != nil || !isNumber {
			return fmt.Errorf("want a whole number, got %s", raw)
		}
		if *p, err = strconv.ParseInt(n.String(), 10, 64); err != nil {
			return fmt.Errorf("want a whole number, got %s", raw)
		}
	case *string:
		if err = json.Unmarshal(raw, p); err != nil {
			return fmt.Errorf("want a string, got %s", raw)
		}
	case *bool:
		if err = json.Unmarshal(raw, p); err != nil {
			return fmt.Errorf("want true or false, got %s", raw)
		}
	case *[]string:
		var list []string
		if err = json.Unmarshal(raw, &list); err != nil {
			return fmt.Errorf("want a list of strings, got %s", raw)
		}
		*p = list
	}
	return nil
}

// Set applies one value given as text (from the environment or a flag).
// Lists are comma-separated; durations for *_ms keys may be written as Go
// durations ("1.5s") or as milliseconds.
func (c *Config) Set(key, value, source string) error {
	if err := c.set(key, value, source); err != nil {
		return err
	}
	c.From(key, source)
	return nil
}

func (c *Config) set(key, value, source string) error {
	f, ok := c.field(key)
	if !ok {
		return &ConfigError{Source: source, Key: key, Msg: "unknown key"}
	}
	bad := func(want string) error {
		return &ConfigError{Source: source, Key: key, Msg: fmt.Sprintf("want %s, got %q", want, value)}
	}
	switch p := f.ptr.(type) {
	case *int:
		if strings.HasSuffix(key, "_ms") {
			if d, err := time.ParseDuration(value); err == nil {
				*p = int(d / time.Millisecond)
				return nil
			}
		}
		v, err := strconv.Atoi(strings.TrimSpace(value))
		if err != nil && strings.HasSuffix(key, "_ms") {
			return bad(wantDuration)
		}
		if err != nil {
			return bad("a whole number")
		}
		*p = v
	case *int64:
		if slices.Contains(byteKeys, key) {
			v, err := ParseBytes(value)
			if err != nil {
				return bad("a size in bytes (512MB, 1GiB)")
			}
			*p = v
			return nil
		}
		v, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return bad("a whole number")
		}
		*p = v
	case *string:
		*p = value
	case *bool:
		v, err := strconv.ParseBool(strings.TrimSpace(value))
		if err != nil {
			return bad("true or false")
		}
		*p = v
	case *[]string:
		*p = nil
		for _, s := range strings.Split(value, ",") {
			if s = strings.TrimSpace(s); s != "" {
				*p = append(*p, s)
			}
		}
	}
	return nil
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

// Validate checks every value and names the first bad key.
func (c *Config) Validate() error {
	nonNeg := []struct {
		key string
		v   int64
	}{
		{"max_depth", int64(c.MaxDepth)}, {"max_subdomains_per_root", int64(c.MaxSubdomainsPerRoot)},
		{"max_outbound_links", int64(c.MaxOutboundLinks)}, {"request_timeout_ms", int64(c.RequestTimeoutMS)},
		{"retry_attempts", int64(c.RetryAttempts)}, {"retry_delay_ms", int64(c.RetryDelayMS)},
		{"politeness_delay_ms", int64(c.PolitenessDelayMS)}, {"max_body_bytes", c.MaxBodyBytes},
		{"max_pages", int64(c.MaxPages)}, {"robots_cache_ttl_ms", int64(c.RobotsCacheTTLMS)},
		{"progress_interval_ms", int64(c.ProgressIntervalMS)}, {"warc_max_size", c.WarcMaxSize}, {"min_free_space", c.MinFreeSpace},
		{"max_crawls_per_node", int64(c.MaxCrawlsPerNode)}, {"revisit_after_ms", int64(c.RevisitAfterMS)},
		{"revisit_max_ms", int64(c.RevisitMaxMS)}, {"max_duration_ms", int64(c.MaxDurationMS)},
	}
	for _, n := range nonNeg {
		if n.v < 0 {
			return c.invalid(n.key, "must not be negative, got %d", n.v)
		}
	}
	if c.RevisitMaxMS > 0 && c.RevisitMaxMS < c.RevisitAfterMS {
		return c.invalid("revisit_max_ms", "must be at least revisit_after_ms (%dms), got %dms", c.RevisitAfterMS, c.RevisitMaxMS)
	}
	if c.AnchorsPerEdge < 0 || c.AnchorsPerEdge > graph.MaxAnchors {
		return c.invalid("anchors_per_edge", "must be 0 to %d, got %d", graph.MaxAnchors, c.AnchorsPerEdge)
	}
	if c.PagesPerHost < 1 || c.PagesPerHost > 10000 {
		return c.invalid("pages_per_host", "must be 1 to 10000, got %d", c.PagesPerHost)
	}
	switch c.Render {
	case RenderNever, RenderAuto, RenderAlways:
	default:
		return c.invalid("render", "must be never, auto or always, got %q", c.Render)
	}
	for _, re := range c.Scope {
		if _, err := regexp.Compile(re); err != nil {
			return c.invalid("scope", "bad regular expression %q: %v", re, err)
		}
	}
	if c.ConcurrentWorkers < 1 || c.ConcurrentWorkers > 1024 {
		return c.invalid("concurrent_workers", "must be 1 to 1024, got %d", c.ConcurrentWorkers)
	}
	if c.RequestTimeoutMS == 0 {
		return c.invalid("request_timeout_ms", "must be positive")
	}
	if c.MaxBodyBytes == 0 {
		return c.invalid("max_body_bytes", "must be positive")
	}
	if c.DBPath == "" {
		return c.invalid("db_path", "must not be empty")
	}
	if strings.TrimSpace(c.UserAgent) == "" {
		return c.invalid("user_agent", "must not be empty")
	}
	for _, s := range c.Seeds() {
		if err := CheckSeed(s); err != nil {
			return c.invalid("seed_url", "%s", err.Error())
		}
	}
	for _, re := range c.ExcludeHosts {
		if _, err := regexp.Compile(re); err != nil {
			return c.invalid("exclude_hosts", "bad regular expression %q: %v", re, err)
		}
	}
	for _, ct := range c.ConnectTo {
		if _, err := ParseConnectTo(ct); err != nil {
			return c.invalid("connect_to", "%s", err.Error())
		}
	}
	if c.CAFile != "" {
		if _, err := LoadCAFile(c.CAFile); err != nil {
			return c.invalid("ca_file", "%s", err.Error())
		}
	}
	if c.DNSServer != "" {
		if _, err := CheckDNSServer(c.DNSServer); err != nil {
			return c.invalid("dns_server", "%s", err.Error())
		}
	}
	return c.validateCluster()
}

// validateCluster checks cluster, shard and cluster_replicas: a shard
// needs a server and a server a shard.
func (c *Config) validateCluster() error {
	switch {
	case c.Cluster == "" && c.Shard != "":
		return c.invalid("shard", "is for a cluster crawl: give cluster (--cluster URL) too")
	case c.Cluster != "" && c.Shard == "":
		return c.invalid("shard", "must be set in a cluster crawl: K/N, e.g. 0/3 for the first of three shards")
	case c.Cluster == "" && c.CrawlName != "":
		return c.invalid("crawl_name", "names a cluster crawl: give cluster (--cluster URL) too")
	case c.ClusterReplicas < 1 || c.ClusterReplicas > 5:
		return c.invalid("cluster_replicas", "must be 1 to 5, got %d", c.ClusterReplicas)
	}
	if c.Shard != "" {
		if _, err := shard.Parse(c.Shard); err != nil {
			return c.invalid("shard", "%s", err.Error())
		}
	}
	if c.Cluster != "" {
		for _, u := range strings.Split(c.Cluster, ",") {
			p, err := url.Parse(strings.TrimSpace(u))
			if err != nil || p.Host == "" || (p.Scheme != "nats" && p.Scheme != "tls" && p.Scheme != "ws" && p.Scheme != "wss") {
				return c.invalid("cluster", "%q is not a NATS server URL (nats://host:4222)", u)
			}
		}
	}
	return nil
}

// CheckSeed returns an error unless s is an absolute http(s) URL with a host.
func CheckSeed(s string) error {
	if err := CheckURL(s); err != nil {
		return fmt.Errorf("seed %w", err)
	}
	return nil
}

// CheckURL is CheckSeed's test, its error starting with the quoted URL
// rather than with "seed" (for a caller that says where the URL came
// from: seeds.txt:12: "ftp://x" is not an http(s) URL). A bare host
// (example.com) is told the URL it likely means.
func CheckURL(s string) error {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil && !strings.Contains(s, "://") {
		if hint := bareHost(s); hint != "" {
			return fmt.Errorf("%q is not an http(s) URL: did you mean %s?", s, hint)
		}
	}
	if err != nil {
		return fmt.Errorf("%q is not a URL: %v", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		if hint := bareHost(s); hint != "" && !strings.Contains(s, "://") {
			return fmt.Errorf("%q is not an http(s) URL: did you mean %s?", s, hint)
		}
		return fmt.Errorf("%q is not an http(s) URL", s)
	}
	if u.Host == "" {
		return fmt.Errorf("%q has no host", s)
	}
	return nil
}

// bareHost returns https://s/ when s, without a scheme, reads as a host
// (with a port or path perhaps): a name with a dot, or localhost.
func bareHost(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s, " \t") || strings.HasPrefix(s, "/") {
		return ""
	}
	u, err := url.Parse("https://" + s)
	if err != nil || u.Host == "" || u.User != nil {
		return ""
	}
	if h := u.Hostname(); !strings.Contains(strings.Trim(h, "."), ".") && h != "localhost" {
		return ""
	}
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String()
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
