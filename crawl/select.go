package crawl

import (
	"net/url"

	"github.com/weaver-crawler/weaver/crawl/pick"
)

// The selection itself lives in package pick, which weaver import shares;
// these are the crawl's names for it.

// target is a host a page links to, with the scheme of the first link.
type target struct {
	host   string
	scheme string
}

// excluder decides whether a host is excluded (pick.Excluder).
type excluder struct{ x *pick.Excluder }

func newExcluder(patterns []string) (*excluder, error) {
	x, err := pick.NewExcluder(patterns)
	if err != nil {
		return nil, err
	}
	return &excluder{x}, nil
}

func (x *excluder) excluded(host string) bool { return x.x.Excluded(host) }

// selector applies seed 000 §5.3 to one page's links (pick.Selector),
// keeping the picked targets as the crawl's.
type selector struct {
	s      pick.Selector
	picked []target
}

func (s *selector) reset(source string, max int, x *excluder) {
	s.s.Reset(source, max, x.x)
	s.picked = s.picked[:0]
}

// add considers one link; it returns false once max targets are picked,
// so extraction can stop.
func (s *selector) add(u *url.URL) bool {
	more := s.s.Add(u)
	if p := s.s.Picked(); len(p) > len(s.picked) {
		t := p[len(p)-1]
		s.picked = append(s.picked, target{host: t.Host, scheme: t.Scheme})
	}
	return more
}
