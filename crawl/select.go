package crawl

import (
	"net/url"

	"github.com/weaver-crawler/weaver/crawl/pick"
	"github.com/weaver-crawler/weaver/graph"
)

// The selection itself lives in package pick, which weaver import shares;
// these are the crawl's names for it.

// target is a host a page links to, with the scheme of the first link,
// and what the host's pages did to it.
type target struct {
	host     string
	scheme   string
	weight   uint64 // pages of the source host linking to it
	nofollow uint64 // of them, pages whose links to it were all rel nofollow, ugc or sponsored
	redirect uint64 // of them, pages that redirected to it
	frame    uint64 // of them, pages that showed it in a frame
	// anchors are example links to it from the host's pages, with
	// anchors_per_edge (graph.Anchor).
	anchors []graph.Anchor
	// first is the page of the host to crawl first, when a page of the
	// source redirected to it ("": its home page, by its scheme).
	first string
	// page and redirectPage are the last page of the source (numbered from
	// 1) that counted it and that redirected to it; typed, whether that
	// page's links to it were all typed so far.
	page, redirectPage, framePage int
	typed                         bool
	// home: the home page redirected to it, so that a seed's redirect
	// target is a seed too (depth 0: the user named it).
	home bool
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

// selector applies seed 000 §5.3 to one page's links (pick.Selector).
type selector struct{ s pick.Selector }

func (s *selector) reset(source string, max int, x *excluder) { s.s.Reset(source, max, x.x) }

// addLink is add for a link whose rel is typed or not, a frame or not.
func (s *selector) addLink(u *url.URL, typed, frame bool) bool { return s.s.AddLink(u, typed, frame) }

// picked are the targets picked since reset, in order.
func (s *selector) picked() []pick.Target { return s.s.Picked() }
