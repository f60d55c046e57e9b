package crawl

import "slices"

// Setting is one crawl setting and everything said of it: its config key
// (a config file's key, WEAVER_<KEY> in the environment, the job API's
// key, the stored settings' key), the Config field it fills, its default,
// weaver crawl's flag for it, whether a store remembers it and whether the
// job API refuses it. Table holds them all: a new setting is a field of
// Config and a row of Table.
type Setting struct {
	Key   string            // the config key
	Field func(*Config) any // the field of the Config: *int, *int64, *string, *bool or *[]string
	// Default is the value when nothing is said, of the field's type
	// (milliseconds for a *_ms key); nil: the zero value.
	Default any
	// DefaultText is the default as README.md's table of config keys
	// states it, when not the value itself ("off", "social and ad hosts").
	DefaultText string

	// Flag is weaver crawl's flag, without its dashes; "": none. A list's
	// flag is repeatable and replaces the list, or with Adds adds to it.
	Flag  string
	Usage string // the flag's help, the name of its value in backquotes
	Adds  bool

	Bytes   bool   // a size: a flag or the environment may give it a unit (512MB, 1GiB), a config file a number or such a string
	NoLimit bool   // 0 means no limit
	Stored  bool   // a store remembers it (SettingKeys): see Table for why the others are not
	Machine bool   // it names a file of the machine the crawl runs on (MachineKeys)
	Graph   bool   // it shapes the graph a crawl records (GraphKeys)
	Refused string // why the job API of weaver serve refuses it; "": a job may set it
}

// Table is every crawl setting, once. The stored settings come first, in
// the order weaver status lists them.
//
// A store remembers the settings that decide what a crawl fetches, how
// politely, and what it records, among them all that decide what it
// produces: the WARC directory and file size (a resume keeps archiving
// where the crawl started to; weaver crawl stores warc_dir as an absolute
// path, so that a resume from another working directory finds it), the
// render mode and browser, scope and pages_per_host. The others are not
// stored, each for the reason its row gives.
//
// Refused says why a job of weaver serve may not set a key: where the
// job's files go, what the operator decides (the network, the log, the
// API), and what a job cannot do. Every other key works in a job; a path
// among them (warc_dir) must lead inside the server's --dir.
var Table = []Setting{
	{Key: "max_depth", Field: func(c *Config) any { return &c.MaxDepth }, Default: 5, Stored: true, Graph: true, NoLimit: true,
		Flag: "max-depth", Usage: "deepest hop `N` from a seed to queue; 0 = no limit (default 5)"},
	{Key: "max_crawls_per_node", Field: func(c *Config) any { return &c.MaxCrawlsPerNode }, Default: 3, DefaultText: "3 (none with --revisit)", Stored: true, Graph: true, NoLimit: true,
		Flag: "max-crawls-per-node", Usage: "times `N` a host may be crawled over the store's life; 0 = no cap (default 3; no cap with --revisit)"},
	{Key: "max_subdomains_per_root", Field: func(c *Config) any { return &c.MaxSubdomainsPerRoot }, Default: 3, Stored: true, Graph: true, NoLimit: true,
		Flag: "max-subdomains-per-root", Usage: "hosts `N` queued per registrable domain; 0 = no limit (default 3)"},
	{Key: "max_outbound_links", Field: func(c *Config) any { return &c.MaxOutboundLinks }, Default: 10, Stored: true, Graph: true, NoLimit: true,
		Flag: "max-outbound-links", Usage: "distinct other hosts `N` kept per page; 0 = no limit (default 10)"},
	{Key: "exclude_hosts", Field: func(c *Config) any { return &c.ExcludeHosts }, Default: DefaultExcludeHosts, DefaultText: "social and ad hosts", Stored: true, Graph: true,
		Flag: "exclude-host", Adds: true, Usage: "`REGEXP` of hosts to leave out, added to exclude_hosts; repeatable"},
	{Key: "ignore_robots", Field: func(c *Config) any { return &c.IgnoreRobots }, Stored: true, Graph: true,
		Flag: "ignore-robots", Usage: "do not fetch or obey robots.txt"},
	{Key: "insecure", Field: func(c *Config) any { return &c.Insecure }, Stored: true,
		Flag: "insecure", Usage: "accept any certificate, TLS 1.0 and later and legacy cipher suites (curl's --insecure); the certificate's problem is recorded on the node (tls_problem)"},
	{Key: "allow_private_networks", Field: func(c *Config) any { return &c.AllowPrivateNetworks }, Stored: true,
		Refused: "the operator decides it (weaver serve --allow-private-networks)",
		Flag:    "allow-private-networks", Usage: "allow connections to loopback and private addresses"},
	{Key: "connect_to", Field: func(c *Config) any { return &c.ConnectTo }, Stored: true,
		Refused: "the operator decides it (weaver serve --connect-to)",
		Flag:    "connect-to", Usage: "`HOST1:PORT1:HOST2:PORT2` as curl's --connect-to; repeatable"},
	{Key: "concurrent_workers", Field: func(c *Config) any { return &c.ConcurrentWorkers }, Default: 3, Stored: true,
		Flag: "workers", Usage: "concurrent workers `N` (default 3)"},
	{Key: "request_timeout_ms", Field: func(c *Config) any { return &c.RequestTimeoutMS }, Default: 5000, Stored: true,
		Flag: "timeout", Usage: "per-request timeout `DURATION`, e.g. 5s or 1500ms (default 5s; +2s per retry)"},
	{Key: "retry_attempts", Field: func(c *Config) any { return &c.RetryAttempts }, Default: 3, Stored: true,
		Flag: "retries", Usage: "retries `N` of timeouts and 5xx (default 3)"},
	{Key: "retry_delay_ms", Field: func(c *Config) any { return &c.RetryDelayMS }, Default: 5000, Stored: true,
		Flag: "retry-delay", Usage: "wait `DURATION` before a retry, e.g. 5s or 500ms (default 5s)"},
	{Key: "politeness_delay_ms", Field: func(c *Config) any { return &c.PolitenessDelayMS }, Default: 1000, Stored: true,
		Flag: "delay", Usage: "minimum `DURATION` between requests to one host, e.g. 1.5s or 0 (default 1s)"},
	{Key: "user_agent", Field: func(c *Config) any { return &c.UserAgent }, Default: DefaultUserAgent, DefaultText: "weaver/0.1 (+…)", Stored: true,
		Flag: "user-agent", Usage: "User-Agent `STRING` (robots.txt token: weaver)"},
	{Key: "max_body_bytes", Field: func(c *Config) any { return &c.MaxBodyBytes }, Default: int64(1 << 20), Stored: true,
		Flag: "max-body-bytes", Usage: "read at most `N` bytes of a page (default 1048576)"},
	{Key: "robots_cache_ttl_ms", Field: func(c *Config) any { return &c.RobotsCacheTTLMS }, Default: 24 * 3600 * 1000, Stored: true},
	{Key: "pages_per_host", Field: func(c *Config) any { return &c.PagesPerHost }, Default: 1, Stored: true, Graph: true,
		Flag: "pages-per-host", Usage: "pages `N` fetched per crawl of a host: the home page, then N−1 more of the same host, breadth-first (default 1)"},
	{Key: "scope", Field: func(c *Config) any { return &c.Scope }, Stored: true, Graph: true,
		Flag: "scope", Usage: "`REGEXP` on the normalised host: only hosts matching one are fetched (links to others are edges to out_of_scope nodes); repeatable"},
	{Key: "render", Field: func(c *Config) any { return &c.Render }, Default: RenderNever, Stored: true, Graph: true,
		Refused: "weaver serve runs no browser: jobs crawl without rendering",
		Flag:    "render", Usage: "`MODE` of running pages' scripts in a browser: never, auto (pages that look like a JavaScript shell) or always (default never)"},
	{Key: "browser", Field: func(c *Config) any { return &c.Browser }, DefaultText: "$WEAVER_BROWSER, else chromium on PATH", Stored: true, Machine: true,
		Refused: "weaver serve runs no browser: jobs crawl without rendering",
		Flag:    "browser", Usage: "the chromium or Chrome `PATH` for --render (default $WEAVER_BROWSER, else chromium or google-chrome on PATH)"},
	{Key: "warc_dir", Field: func(c *Config) any { return &c.WarcDir }, Stored: true, Machine: true,
		Flag: "warc", Usage: "write every HTTP exchange (robots.txt, pages, redirects) as WARC/1.1 files in `DIR`; the store remembers it as an absolute path, and a resume keeps writing there"},
	{Key: "warc_max_size", Field: func(c *Config) any { return &c.WarcMaxSize }, DefaultText: "1 GB", Bytes: true, Stored: true,
		Flag: "warc-max-size", Usage: "close a WARC file before it passes `BYTES` (e.g. 500MB; default 1 GB)"},
	{Key: "ca_file", Field: func(c *Config) any { return &c.CAFile }, Stored: true, Machine: true,
		Refused: "the operator decides which roots to trust",
		Flag:    "ca-file", Usage: "trust the CA certificates in the PEM `FILE` besides the system's roots (a TLS proxy, an intranet CA)"},
	{Key: "dns_server", Field: func(c *Config) any { return &c.DNSServer }, DefaultText: "system resolver", Stored: true,
		Refused: "the operator decides the network",
		Flag:    "dns-server", Usage: "resolve names with the DNS server at `ADDR` (IP or IP:PORT) instead of the system's resolver"},
	{Key: "revisit_after_ms", Field: func(c *Config) any { return &c.RevisitAfterMS }, DefaultText: "off", Stored: true,
		Flag: "revisit", Usage: "crawl a host again when due: its interval starts at `DURATION` (e.g. 6h) and adapts to how often it changes; the crawl then runs until a signal, --max-pages or --max-duration (default off)"},
	{Key: "revisit_max_ms", Field: func(c *Config) any { return &c.RevisitMaxMS }, DefaultText: "32 × --revisit", Stored: true,
		Flag: "revisit-max", Usage: "with --revisit: the longest interval `DURATION` (default 32 × --revisit)"},
	{Key: "anchors_per_edge", Field: func(c *Config) any { return &c.AnchorsPerEdge }, Stored: true,
		Flag: "anchors", Usage: "keep up to `N` example links per host→host edge (page URL, target URL, anchor text, rel) for weaver show; 0 = none (default 0)"},
	// Where each run's metrics go: stored absolute, so that a resume from
	// any working directory writes them where the crawl's went.
	{Key: "metrics_path", Field: func(c *Config) any { return &c.MetricsPath }, Default: "metrics.log", Stored: true, Machine: true,
		Refused: "a job's metrics are <id>.metrics.json in the server's --dir",
		Flag:    "metrics", Usage: "write each run's metrics JSON to `FILE` (default metrics.log; the store remembers it as an absolute path, and a resume writes there)"},
	// The status API's address and secret: a resume serves where the crawl
	// did (an address that cannot be bound then is a warning: the crawl
	// still serves this machine's readers on loopback).
	{Key: "listen", Field: func(c *Config) any { return &c.Listen }, Stored: true,
		Refused: "the API is weaver serve's",
		Flag:    "listen", Usage: "serve the status API on `ADDR` while crawling (e.g. 127.0.0.1:8088); without it the crawl serves this machine's weaver commands on a loopback port of its own"},
	{Key: "token_file", Field: func(c *Config) any { return &c.TokenFile }, Stored: true, Machine: true,
		Refused: "the API's token is weaver serve's --token-file",
		Flag:    "token-file", Usage: "demand the bearer token in `FILE` on every --listen endpoint (or set WEAVER_TOKEN); needed off loopback"},

	// The seeds are in the store already (nodes and frontier):
	// remembering them would make a bare resume re-queue them.
	{Key: "seed_url", Field: func(c *Config) any { return &c.SeedURL }},
	{Key: "seed_urls", Field: func(c *Config) any { return &c.SeedURLs }},
	{Key: "seeds_file", Field: func(c *Config) any { return &c.SeedsFile },
		Refused: "a file of the server's: a job gives its seeds in the request",
		Flag:    "seeds-file", Usage: "read seed URLs from `FILE`, one a line (blank lines and # comments skipped); - for stdin"},
	// The store is where the settings are.
	{Key: "db_path", Field: func(c *Config) any { return &c.DBPath }, Default: "weaver.bolt",
		Refused: "a job's store is <id>.bolt in the server's --dir",
		Flag:    "db", Usage: "the bbolt store `FILE` (default weaver.bolt)"},
	// One run's budget, chosen again for each run.
	{Key: "max_pages", Field: func(c *Config) any { return &c.MaxPages }, NoLimit: true,
		Flag: "max-pages", Usage: "stop after `N` page fetches; 0 = no limit"},
	{Key: "max_duration_ms", Field: func(c *Config) any { return &c.MaxDurationMS }, NoLimit: true,
		Flag: "max-duration", Usage: "stop after `DURATION` (termination_reason max_duration); 0 = no limit"},
	{Key: "progress_interval_ms", Field: func(c *Config) any { return &c.ProgressIntervalMS }, Default: 5000},
	{Key: "quiet", Field: func(c *Config) any { return &c.Quiet },
		Flag: "quiet", Usage: "no per-page log lines"},
	{Key: "json_logs", Field: func(c *Config) any { return &c.JSONLogs },
		Refused: "the operator decides the log's format (weaver serve --json-logs)",
		Flag:    "json-logs", Usage: "log lines as JSON objects"},
	// One run's openness of the status API.
	{Key: "metrics_public", Field: func(c *Config) any { return &c.MetricsPublic },
		Refused: "the API's token is weaver serve's --token-file",
		Flag:    "metrics-public", Usage: "let /metrics answer without the token"},
	// The free space of the machine's disks, chosen again for each run (a
	// resume may run elsewhere).
	{Key: "min_free_space", Field: func(c *Config) any { return &c.MinFreeSpace }, Default: int64(DefaultMinFreeSpace), DefaultText: "512MB", Bytes: true,
		Refused: "the operator decides it (weaver serve --min-free-space)",
		Flag:    "min-free-space", Usage: "pause the crawl while a file system it writes to (store, WARC files, metrics.log) has fewer than `BYTES` free, and go on by itself when there is room (e.g. 2GB; default 512MB; 0 = off: only a write that fails for want of room pauses it)"},
	// A shard's membership is recorded by the cluster (meta cluster.crawl
	// and cluster.shard, the crawl's KV bucket), and the server URL may
	// carry a password.
	{Key: "cluster", Field: func(c *Config) any { return &c.Cluster },
		Refused: "a job is not a shard of a cluster crawl",
		Flag:    "cluster", Usage: "crawl as one shard of a cluster through the NATS JetStream server at `URL` (nats://host:4222)"},
	{Key: "shard", Field: func(c *Config) any { return &c.Shard },
		Refused: "a job is not a shard of a cluster crawl",
		Flag:    "shard", Usage: "with --cluster: this process is shard `K/N` (K from 0)"},
	{Key: "cluster_replicas", Field: func(c *Config) any { return &c.ClusterReplicas }, Default: 1,
		Refused: "a job is not a shard of a cluster crawl",
		Flag:    "cluster-replicas", Usage: "with --cluster: replicas `N` of the stream and KV bucket a shard creates (default 1)"},
	{Key: "crawl_name", Field: func(c *Config) any { return &c.CrawlName }, DefaultText: "a digest of the seeds",
		Refused: "a job is not a shard of a cluster crawl",
		Flag:    "crawl-name", Usage: "with --cluster: the cluster crawl's `NAME` (default: a digest of the seed URLs)"},
}

// SettingKeys are the config keys a store remembers (Setting.Stored), in
// Table's order.
var SettingKeys = keysWhere(func(s *Setting) bool { return s.Stored })

// notStored are the config keys SettingKeys leaves out (see Table why).
var notStored = keysWhere(func(s *Setting) bool { return !s.Stored })

// MachineKeys are the settings that name files of the machine a crawl
// runs on (where its WARC files go, which browser renders, which CAs it
// trusts): stored for a resume on that machine, but not compared by
// weaver merge, and not written into the WARC files' warcinfo records.
var MachineKeys = keysWhere(func(s *Setting) bool { return s.Machine })

// GraphKeys are the settings that shape the graph a crawl records: which
// hosts are queued and which links kept. Every shard of a cluster crawl
// must share them, and weaver merge warns when its inputs differ in them.
// (Changing them changes what a cluster compares: the shards of a running
// cluster crawl must all run the same weaver.)
var GraphKeys = keysWhere(func(s *Setting) bool { return s.Graph })

// keysWhere returns the keys of Table's settings for which keep is true,
// in Table's order.
func keysWhere(keep func(*Setting) bool) []string {
	var out []string
	for i := range Table {
		if keep(&Table[i]) {
			out = append(out, Table[i].Key)
		}
	}
	return out
}

// Lookup returns key's setting, and whether there is one.
func Lookup(key string) (Setting, bool) {
	i := slices.IndexFunc(Table, func(s Setting) bool { return s.Key == key })
	if i < 0 {
		return Setting{}, false
	}
	return Table[i], true
}
