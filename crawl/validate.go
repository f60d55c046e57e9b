package crawl

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/shard"
)

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
