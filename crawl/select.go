package crawl

import (
	"net/url"
	"regexp"
	"strings"

	"weaver/graph"
)

// target is a host a page links to, with the scheme of the first link.
type target struct {
	host   string
	scheme string
}

// excluder decides whether a host is excluded, with one compiled
// alternation of exclude_hosts.
type excluder struct {
	re *regexp.Regexp
}

func newExcluder(patterns []string) (*excluder, error) {
	if len(patterns) == 0 {
		return &excluder{}, nil
	}
	parts := make([]string, len(patterns))
	for i, p := range patterns {
		parts[i] = "(?:" + p + ")"
	}
	re, err := regexp.Compile(strings.Join(parts, "|"))
	if err != nil {
		return nil, err
	}
	return &excluder{re: re}, nil
}

func (x *excluder) excluded(host string) bool { return x.re != nil && x.re.MatchString(host) }

// selector applies seed 000 §5.3 to one page's links in DOM order: other
// hosts only, not excluded, one per host, the first max of them.
type selector struct {
	source  string
	max     int
	exclude *excluder
	picked  []target
	seen    map[string]struct{}
}

func (s *selector) reset(source string, max int, x *excluder) {
	s.source, s.max, s.exclude = source, max, x
	s.picked = s.picked[:0]
	if s.seen == nil {
		s.seen = make(map[string]struct{}, 16)
	}
	clear(s.seen)
}

// add considers one link; it returns false once max targets are picked,
// so extraction can stop.
func (s *selector) add(u *url.URL) bool {
	host, err := graph.HostOf(u)
	if err != nil || host == s.source {
		return true
	}
	if _, dup := s.seen[host]; dup {
		return true
	}
	s.seen[host] = struct{}{}
	if s.exclude.excluded(host) {
		return true
	}
	s.picked = append(s.picked, target{host: host, scheme: u.Scheme})
	return s.max <= 0 || len(s.picked) < s.max
}
