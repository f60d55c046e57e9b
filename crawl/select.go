package crawl

import (
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/weaver-crawler/weaver/graph"
)

// target is a host a page links to, with the scheme of the first link.
type target struct {
	host     string
	scheme   string
	weight   uint64 // pages of the source host linking to it
	nofollow uint64 // of them, pages whose links to it were all rel nofollow, ugc or sponsored
	redirect uint64 // of them, pages that redirected to it
	typed    bool   // within one page: every link to it read so far was typed
}

// excluder decides whether a host is excluded. exclude_hosts usually
// starts with DefaultExcludeHosts: those are checked with string
// comparisons (the regexp cost 3 % of a zero-latency crawl's CPU); any
// other patterns by one compiled alternation.
type excluder struct {
	defaults bool           // DefaultExcludeHosts lead exclude_hosts
	re       *regexp.Regexp // the other patterns; nil: none
}

func newExcluder(patterns []string) (*excluder, error) {
	x := &excluder{}
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

func (x *excluder) excluded(host string) bool {
	return (x.defaults && defaultExcluded(host)) || (x.re != nil && x.re.MatchString(host))
}

// excludedSites are the sites of DefaultExcludeHosts' first pattern.
var excludedSites = []string{"facebook.com", "twitter.com", "instagram.com", "linkedin.com", "google-analytics.com", "doubleclick.net"}

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
		if !strings.HasSuffix(name, "."+s) {
			continue
		}
		// What precedes ".site" must be non-empty labels: no empty label.
		pre := name[:len(name)-len(s)-1]
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

// selector applies seed 000 §5.3 to one page's links in DOM order: other
// hosts only, not excluded, one per host, the first max of them.
type selector struct {
	source  string
	max     int
	exclude *excluder
	picked  []target
	seen    map[string]int // host → its index in picked, or -1 when not picked (excluded)
}

func (s *selector) reset(source string, max int, x *excluder) {
	s.source, s.max, s.exclude = source, max, x
	s.picked = s.picked[:0]
	if s.seen == nil {
		s.seen = make(map[string]int, 16)
	}
	clear(s.seen)
}

// add considers one link; it returns false once max targets are picked,
// so extraction can stop.
func (s *selector) add(u *url.URL) bool { return s.addLink(u, false) }

// addLink is add for a link whose rel is typed (nofollow, ugc,
// sponsored) or not: a picked host stays typed while every link to it is.
func (s *selector) addLink(u *url.URL, typed bool) bool {
	host, err := graph.HostOf(u)
	if err != nil || host == s.source {
		return true
	}
	if i, dup := s.seen[host]; dup {
		if i >= 0 && !typed {
			s.picked[i].typed = false
		}
		return true
	}
	if s.exclude.excluded(host) {
		s.seen[host] = -1
		return true
	}
	s.seen[host] = len(s.picked)
	s.picked = append(s.picked, target{host: host, scheme: u.Scheme, typed: typed})
	return s.max <= 0 || len(s.picked) < s.max
}
