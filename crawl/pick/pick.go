// Package pick is the crawl's link selection (seed 000 §5.3), shared by
// the crawl and by weaver import so that a graph built from WARC files is
// the graph a crawl of the same pages records: of a page's links in
// document order, other hosts only, not excluded, one per host, the first
// max of them.
package pick

import (
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/weaver-crawler/weaver/graph"
)

// DefaultExcludeHosts expresses seed 000 §5.3's list, and x.com (twitter's
// name since 2023, issue 52): the seven sites and their subdomains, and
// hosts whose FIRST label is ads or analytics.
var DefaultExcludeHosts = []string{
	`^(?:[^.]+\.)*(?:facebook\.com|twitter\.com|x\.com|instagram\.com|linkedin\.com|google-analytics\.com|doubleclick\.net)(?::\d+)?$`,
	`^(?:ads|analytics)\.`,
}

// Target is a host a page links to, with the scheme of the first link.
type Target struct {
	Host   string
	Scheme string
	Typed  bool // every link to it read was rel nofollow, ugc or sponsored
	Frame  bool // a link to it read was a frame (a <frame src> or an <iframe src>)
}

// Excluder decides whether a host is excluded. exclude_hosts usually
// starts with DefaultExcludeHosts: those are checked with string
// comparisons (the regexp cost 3 % of a zero-latency crawl's CPU); any
// other patterns by one compiled alternation.
type Excluder struct {
	defaults bool           // DefaultExcludeHosts lead exclude_hosts
	re       *regexp.Regexp // the other patterns; nil: none
}

// NewExcluder compiles exclude_hosts patterns, regular expressions matched
// against the whole normalised host. It returns the regexp package's error
// for a bad pattern.
func NewExcluder(patterns []string) (*Excluder, error) {
	x := &Excluder{}
	if n := len(DefaultExcludeHosts); len(patterns) >= n && slices.Equal(patterns[:n], DefaultExcludeHosts) {
		x.defaults, patterns = true, patterns[n:]
	}
	if len(patterns) == 0 {
		return x, nil
	}
	parts := make([]string, len(patterns))
	for i, p := range patterns {
		parts[i] = "(?:" + p + ")"
	}
	re, err := regexp.Compile(strings.Join(parts, "|"))
	if err != nil {
		return nil, err
	}
	x.re = re
	return x, nil
}

// Excluded reports whether host, normalised, is excluded.
func (x *Excluder) Excluded(host string) bool {
	return (x.defaults && defaultExcluded(host)) || (x.re != nil && x.re.MatchString(host))
}

// excludedSites are the sites of DefaultExcludeHosts' first pattern.
var excludedSites = []string{"facebook.com", "twitter.com", "x.com", "instagram.com", "linkedin.com", "google-analytics.com", "doubleclick.net"}

// defaultExcluded is exactly DefaultExcludeHosts, without a regexp:
// ^(?:[^.]+\.)*(?:SITES)(?::\d+)?$ and ^(?:ads|analytics)\.
func defaultExcluded(host string) bool {
	if strings.HasPrefix(host, "ads.") || strings.HasPrefix(host, "analytics.") {
		return true
	}
	name := host
	if i := strings.LastIndexByte(name, ':'); i >= 0 && allDigits(name[i+1:]) {
		name = name[:i]
	}
	for _, s := range excludedSites {
		if name == s {
			return true
		}
		// ".site" ends name (compared without building ".site": that
		// allocation was 2 % of an import's CPU).
		cut := len(name) - len(s) - 1
		if cut < 0 || name[cut] != '.' || name[cut+1:] != s {
			continue
		}
		// What precedes ".site" must be non-empty labels: no empty label.
		pre := name[:cut]
		if pre != "" && pre[0] != '.' && pre[len(pre)-1] != '.' && !strings.Contains(pre, "..") {
			return true
		}
	}
	return false
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Selector applies seed 000 §5.3 to one page's links in DOM order: other
// hosts only, not excluded, one per host, the first max of them. Reset it
// for each page; it keeps its memory from page to page.
type Selector struct {
	source  string
	max     int
	exclude *Excluder
	picked  []Target
	seen    map[string]int // host → its index in picked, or -1 when not picked (excluded)
}

// Reset starts a page of host source: at most max targets (0: no limit),
// excluded by x.
func (s *Selector) Reset(source string, max int, x *Excluder) {
	s.source, s.max, s.exclude = source, max, x
	s.picked = s.picked[:0]
	if s.seen == nil {
		s.seen = make(map[string]int, 16)
	}
	clear(s.seen)
}

// Add considers one link; it returns false once max targets are picked,
// so extraction can stop.
func (s *Selector) Add(u *url.URL) bool { return s.AddLink(u, false, false) }

// AddLink is Add for a link whose rel is typed (nofollow, ugc,
// sponsored) or not, and that is a frame or not: a picked host stays
// Typed while every link to it read is, and is Frame once one is.
func (s *Selector) AddLink(u *url.URL, typed, frame bool) bool {
	host, err := graph.HostOf(u)
	if err != nil || host == s.source {
		return true
	}
	if i, dup := s.seen[host]; dup {
		if i >= 0 && !typed {
			s.picked[i].Typed = false
		}
		if i >= 0 && frame {
			s.picked[i].Frame = true
		}
		return true
	}
	if s.exclude.Excluded(host) {
		s.seen[host] = -1
		return true
	}
	s.seen[host] = len(s.picked)
	s.picked = append(s.picked, Target{Host: host, Scheme: u.Scheme, Typed: typed, Frame: frame})
	return s.max <= 0 || len(s.picked) < s.max
}

// Picked returns the targets picked since Reset, in order. The slice is
// the Selector's until the next Reset.
func (s *Selector) Picked() []Target { return s.picked }
