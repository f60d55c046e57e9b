package fakeweb

import (
	"net"
	"sort"
	"strings"
	"sync"
	"time"
)

// Config describes a generated web. The zero value gives 1,000 hosts from seed
// 0 with no latency and no faults.
type Config struct {
	// Hosts is the number of generated hosts; 0 means 1,000. FromEdges
	// ignores it.
	Hosts int
	// Seed determines everything: names, links, titles, filler, robots.txt.
	Seed int64
	// Latency is how long every response waits before its first byte.
	Latency time.Duration
	// Jitter adds to each response's wait a further delay drawn evenly
	// from [0, Jitter): hosts answer in an order no crawler can plan for.
	Jitter time.Duration
	// LinksPerPage is the mean number of links from a home page to other
	// hosts of the web (each page draws from [n/2, 3n/2]); 0 means 25, or
	// 8 with Topics.
	// Same-host, excluded and malformed links come on top.
	LinksPerPage int
	// PageBytes is the mean home page size (each page draws from ±15%); 0
	// means 30,000.
	PageBytes int
	// Faults gives hosts misbehaviours, keyed by host name. A key that is not
	// a host of the web adds an extra host, appended to Hosts in name order
	// and linked from the start of a regular host's page (the k-th extra host
	// from host k mod the number of regular hosts).
	Faults map[string]Fault
	// FaultRepeat is how many requests TooMany429, Burst5xx and Unavailable
	// fail; 0 means 2.
	FaultRepeat int
	// RobotsDisallowEvery makes every Nth host (hosts N-1, 2N-1, ...) disallow
	// / for the agent "weaver". 0 means 50 for New and never for FromEdges;
	// negative means never.
	RobotsDisallowEvery int
	// CrawlDelayEvery gives every Nth host (hosts N/2, N/2+N, ...) a
	// "Crawl-delay: 1". 0 means 25 for New and never for FromEdges; negative
	// means never.
	CrawlDelayEvery int
	// Shells makes hosts JavaScript shells (see Shell), keyed by host name of
	// the web; other keys are ignored. It wins over ShellEvery.
	Shells map[string]Shell
	// CertFaults gives names (any name a client asks for, host of the web
	// or not) a broken certificate or a stalled handshake when the web is
	// served by StartTLS. ExpectedEdges counts a host of the web that has
	// one as failed.
	CertFaults map[string]CertFault
	// ShellEvery makes every Nth host (hosts N/3, N/3+N, ...) a ShellLinks
	// shell; 0 means none.
	ShellEvery int
	// Topics, when positive, makes a topical web (see topics.go) of that
	// many groups of sites that link mostly among themselves, with hubs
	// and a few links across, instead of links drawn from one popularity
	// law over every host; Topic tells a host's group. FromEdges ignores
	// it.
	Topics int
	// Scripts adds hosts whose answers are written out by hand (see
	// Script), keyed by host name; a name of the web's own is replaced.
	// No other host links to them: a crawl reaches them as seeds, or
	// through each other.
	Scripts map[string]Script
	// ApexEvery, when positive, gives every Nth host (hosts N-1, 2N-1,
	// ..., never the seed) a twin name, its apex or www. name, that other
	// pages link to instead of the host's own: the twin answers every
	// request, robots.txt included, with a 301 to the same path of the
	// host, as most real sites send apex to www or www to apex. New only.
	ApexEvery int
}

// Request is one request the web answered.
type Request struct {
	Host   string    // lower-cased, without port
	Path   string    // path and, if any, "?" and the raw query
	At     time.Time // when it arrived
	Status int       // status code sent (200 for streamed and reset bodies)
	Proto  string    // the request's protocol: "HTTP/1.1", "HTTP/2.0"
	TLS    bool      // it came over TLS (StartTLS)
}

// robotsKind is the robots.txt a host serves when it has no robots fault.
type robotsKind uint8

const (
	robotsPlain      robotsKind = iota // Disallow: /private/
	robotsCommented                    // the same with comments, Allow and Sitemap
	robotsMissing                      // 404
	robotsDelay                        // Crawl-delay: 1
	robotsDisallowed                   // Disallow: / for weaver
)

// baseMode is the <base> element a home page carries.
type baseMode uint8

const (
	baseNone   baseMode = iota
	baseOther           // <base href> to the page's first linked host
	baseSame            // <base href="/blog/">
	baseTarget          // <base target="_blank">, which must not change resolution
)

// siteKind selects the home page renderer.
type siteKind uint8

const (
	kindGenerated siteKind = iota
	kindLoop
	kindSite   // a host of NewSites, with several pages (pages holds them)
	kindScript // a host of Config.Scripts (script holds its answers)
	kindTwin   // a twin name of Config.ApexEvery, redirecting to host twin
)

// site is one host of the web.
type site struct {
	name   string
	kind   siteKind
	out    []int32 // hosts linked from the home page, in DOM order, duplicates kept
	fault  Fault
	robots robotsKind
	base   baseMode
	shell  Shell     // the home page is a JavaScript shell (see Web.shellOf)
	title  string    // fixed decoded title; "" means generated from the seed
	desc   string    // fixed decoded description
	pages  *siteInfo // the pages of a kindSite host
	script *Script   // the answers of a kindScript host
	// twin is, for a kindTwin name, the host it redirects to; for a host
	// with hasTwin, its twin (Config.ApexEvery).
	twin    int32
	hasTwin bool // pages link to the host by its twin's name
}

// Web is a deterministic set of virtual hosts served by one http.Handler. It
// is safe for concurrent use.
type Web struct {
	seed      int64
	cfg       Config
	sites     []site
	index     map[string]int // host name to position in sites
	seedIndex int
	malformed int
	topic     []int32 // a topical web's hosts' topics (Config.Topics); nil for other webs

	mu        sync.Mutex     // guards the fields below
	reqs      []Request      // every request, in arrival order
	counts    map[string]int // requests per host
	pageCount map[string]int // non-robots requests per host, for TooMany429, Burst5xx, Unavailable
}

const (
	defaultHosts        = 1000
	defaultLinksPerPage = 25
	defaultPageBytes    = 30000
	defaultFaultRepeat  = 2
	defaultDisallow     = 50
	defaultCrawlDelay   = 25
	maxChildren         = 4 // tree children per host; see genGraph
)

// New generates a web from cfg. Equal configs give identical webs.
func New(cfg Config) *Web {
	if cfg.Hosts <= 0 {
		cfg.Hosts = defaultHosts
	}
	if cfg.RobotsDisallowEvery == 0 {
		cfg.RobotsDisallowEvery = defaultDisallow
	}
	if cfg.CrawlDelayEvery == 0 {
		cfg.CrawlDelayEvery = defaultCrawlDelay
	}
	if cfg.Topics > 0 {
		return newTopical(cfg)
	}
	w := newWeb(cfg)
	names := genNames(cfg.Seed, cfg.Hosts)
	w.sites = make([]site, len(names))
	for i, n := range names {
		w.sites[i] = site{name: n, robots: w.robotsFor(i)}
	}
	w.genGraph()
	w.finish()
	return w
}

// newTopical is New for a topical web.
func newTopical(cfg Config) *Web {
	if cfg.LinksPerPage <= 0 {
		cfg.LinksPerPage = defaultTopicLinks
	}
	w := newWeb(cfg)
	names, tp := genTopicNames(cfg.Seed, cfg.Hosts, cfg.Topics)
	w.sites = make([]site, len(names))
	for i, n := range names {
		w.sites[i] = site{name: n, robots: w.robotsFor(i)}
	}
	w.topic = tp.topic
	w.genTopicGraph(tp)
	w.topicMeta(tp)
	w.finish()
	return w
}

// newWeb fills in the defaults shared by every constructor.
func newWeb(cfg Config) *Web {
	if cfg.LinksPerPage <= 0 {
		cfg.LinksPerPage = defaultLinksPerPage
	}
	if cfg.PageBytes <= 0 {
		cfg.PageBytes = defaultPageBytes
	}
	if cfg.FaultRepeat <= 0 {
		cfg.FaultRepeat = defaultFaultRepeat
	}
	return &Web{
		seed:      cfg.Seed,
		cfg:       cfg,
		counts:    make(map[string]int),
		pageCount: make(map[string]int),
	}
}

// robotsFor returns the robots.txt kind of host i.
func (w *Web) robotsFor(i int) robotsKind {
	if n := w.cfg.RobotsDisallowEvery; n > 0 && i%n == n-1 {
		return robotsDisallowed
	}
	if n := w.cfg.CrawlDelayEvery; n > 0 && i%n == n/2 {
		return robotsDelay
	}
	switch i % 11 {
	case 5:
		return robotsMissing
	case 2, 8:
		return robotsCommented
	}
	return robotsPlain
}

// finish applies the faults, adding extra hosts for fault keys that name no
// host, and builds the index.
func (w *Web) finish() {
	w.buildIndex()
	var extra []string
	for name, f := range w.cfg.Faults {
		name = normalizeHost(name)
		if name == "" {
			continue
		}
		if i, ok := w.index[name]; ok {
			w.sites[i].fault |= f
			continue
		}
		extra = append(extra, name)
	}
	sort.Strings(extra)
	regular := len(w.sites)
	for k, name := range extra {
		var f Fault
		for key, kf := range w.cfg.Faults {
			if normalizeHost(key) == name {
				f |= kf
			}
		}
		i := len(w.sites)
		w.sites = append(w.sites, site{name: name, fault: f, robots: robotsPlain})
		// Prepending keeps the link within the parent's first few distinct
		// hosts, so a crawler with a small max_outbound_links still finds it.
		if regular > 0 {
			p := k % regular
			w.sites[p].out = append([]int32{int32(i)}, w.sites[p].out...)
		}
		w.index[name] = i
	}
	w.applyShells()
	w.addTwins()
	w.addScripts()
}

// addTwins gives every ApexEvery-th generated host a twin name (apex for a
// www. host, www. for any other) when that name is not a host already.
func (w *Web) addTwins() {
	n := w.cfg.ApexEvery
	if n <= 0 {
		return
	}
	regular := len(w.sites)
	for i := n - 1; i < regular; i += n {
		s := &w.sites[i]
		if i == w.seedIndex || s.kind != kindGenerated {
			continue
		}
		name := "www." + s.name
		if apex, ok := strings.CutPrefix(s.name, "www."); ok && strings.Contains(apex, ".") {
			name = apex
		}
		if _, taken := w.index[name]; taken {
			continue
		}
		s.twin, s.hasTwin = int32(len(w.sites)), true
		w.index[name] = len(w.sites)
		w.sites = append(w.sites, site{name: name, kind: kindTwin, twin: int32(i), robots: robotsPlain})
	}
}

// linkName is the name pages link to host i by: its twin's, if it has one.
func (w *Web) linkName(i int32) string {
	if s := &w.sites[i]; s.hasTwin {
		return w.sites[s.twin].name
	}
	return w.sites[i].name
}

// Twin returns the host a twin name (Config.ApexEvery) redirects to, or
// "" when host is no twin.
func (w *Web) Twin(host string) string {
	if i := w.lookup(host); i >= 0 && w.sites[i].kind == kindTwin {
		return w.sites[w.sites[i].twin].name
	}
	return ""
}

// addScripts makes the hosts of Config.Scripts, in name order.
func (w *Web) addScripts() {
	names := make([]string, 0, len(w.cfg.Scripts))
	for name := range w.cfg.Scripts {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		sc := w.cfg.Scripts[name]
		s := site{name: normalizeHost(name), kind: kindScript, script: &sc}
		if i, ok := w.index[s.name]; ok {
			w.sites[i] = s
			continue
		}
		w.index[s.name] = len(w.sites)
		w.sites = append(w.sites, s)
	}
}

func (w *Web) buildIndex() {
	w.index = make(map[string]int, len(w.sites))
	for i, s := range w.sites {
		w.index[s.name] = i
	}
}

// normalizeHost lower-cases a Host header or host name and drops its port and
// any trailing dot.
func normalizeHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
		if strings.Contains(h, ":") {
			h = "[" + h + "]"
		}
	}
	return strings.TrimSuffix(h, ".")
}

// lookup returns the position of host, or -1.
func (w *Web) lookup(host string) int {
	if i, ok := w.index[normalizeHost(host)]; ok {
		return i
	}
	return -1
}

// Hosts returns the host names of the web; a host's position is its number and
// host 0 is the seed of a generated web.
func (w *Web) Hosts() []string {
	out := make([]string, len(w.sites))
	for i, s := range w.sites {
		out[i] = s.name
	}
	return out
}

// Seed returns the URL a crawl of the web starts from, http://<seed host>/.
func (w *Web) Seed() string {
	return "http://" + w.sites[w.seedIndex].name + "/"
}

// Title returns the decoded <title> of host's home page, or "" for a host not
// in the web. InvalidBytes hosts serve it with invalid bytes inserted; pages
// replaced by a fault have other titles.
func (w *Web) Title(host string) string {
	i := w.lookup(host)
	if i < 0 {
		return ""
	}
	t, _ := w.meta(i)
	return t
}

// Description returns the decoded meta description of host's home page, or ""
// for a host not in the web.
func (w *Web) Description(host string) string {
	i := w.lookup(host)
	if i < 0 {
		return ""
	}
	_, d := w.meta(i)
	return d
}

// Links returns the href attributes of the <a> elements of host's home page,
// in document order, exactly as written in the markup (entities, spaces and
// case included). It returns nil for a host not in the web and for one whose
// fault leaves no page (see Fault). A shell host's links are the ones its
// script adds, or nil for a shell whose links no polite browser sees (see
// Shell).
func (w *Web) Links(host string) []string {
	i := w.lookup(host)
	if i < 0 {
		return nil
	}
	return w.links(i)
}

// Fault returns the faults of host.
func (w *Web) Fault(host string) Fault {
	i := w.lookup(host)
	if i < 0 {
		return 0
	}
	return w.sites[i].fault
}

// Malformed returns how many input lines FromEdges skipped as malformed; it is
// 0 for other webs.
func (w *Web) Malformed() int {
	return w.malformed
}

// record counts a request and returns how many non-robots requests host had
// before it. The caller holds w.mu.
func (w *Web) record(host string, robots bool) int {
	w.counts[host]++
	n := w.pageCount[host]
	if !robots {
		w.pageCount[host] = n + 1
	}
	return n
}

// Requests returns a copy of the requests answered since creation or Reset.
// The record grows by about 100 bytes a request; long benchmarks call Reset.
func (w *Web) Requests() []Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Request(nil), w.reqs...)
}

// RequestCount returns how many requests host received since creation or
// Reset.
func (w *Web) RequestCount(host string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.counts[normalizeHost(host)]
}

// Reset forgets recorded requests and restarts the TooMany429, Burst5xx
// and Unavailable counters.
func (w *Web) Reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reqs = nil
	w.counts = make(map[string]int)
	w.pageCount = make(map[string]int)
}
