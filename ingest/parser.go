package ingest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/crawl/extract"
	"github.com/weaver-crawler/weaver/crawl/pick"
	"github.com/weaver-crawler/weaver/crawl/robots"
	"github.com/weaver-crawler/weaver/graph"
)

// parser turns records into pages (parse.go): one per goroutine that
// parses. What it parsed since the caller last took it is in stats,
// batch and logs.
type parser struct {
	opts    Options
	exclude *pick.Excluder
	scope   *regexp.Regexp

	sel  pick.Selector
	ex   extract.Extractor
	body bytes.Buffer
	gz   *gzip.Reader

	stats Stats    // the counts of the records parsed
	batch []page   // the pages they add
	logs  []string // the lines they log
}

func (im *importer) newParser() *parser {
	return &parser{opts: im.opts, exclude: im.exclude, scope: im.scope}
}

func (im *parser) logf(format string, a ...any) {
	if im.opts.Log != nil {
		im.logs = append(im.logs, fmt.Sprintf(format, a...))
	}
}

// page is what one record adds to the graph.
type page struct {
	host, scheme string
	date         time.Time
	crawled      bool   // an HTML answer: the node's crawl fields may be set
	path         string // the URL's path ("/" for the home page)
	status       int
	ctype        string
	server       string
	bytes        int64
	hash         string
	title, desc  string
	canonical    string // the page's <link rel=canonical>
	directives   string // its robots directives (meta and X-Robots-Tag), as the crawl records them
	targets      []pick.Target
	// A robots.txt answer (rules not nil), to judge the host's home page
	// by for the agent of the archive's requests; or a request (ua not
	// ""), which says who made the requests after it. Neither is a page.
	rules *robots.Rules
	ua    string
}

// record turns one record into a page of the batch, or a count.
func (im *parser) record(rec *raw) error {
	switch rec.Type {
	case "response":
		return im.response(rec)
	case "metadata":
		if strings.HasPrefix(strings.ToLower(rec.ContentType), "application/json") {
			return im.wat(rec)
		}
		im.stats.Metadata++
	case "request":
		im.stats.Requests++
		if rec.ua != "" {
			im.batch = append(im.batch, page{ua: rec.ua})
		}
	case "revisit":
		im.stats.Revisits++
	default:
		im.stats.Other++
	}
	return nil
}

// source parses a record's target URI into its URL and normalised host;
// ok is false (and the record counted as other) when it has none.
func (im *parser) source(uri string) (*url.URL, string, bool) {
	u, err := url.Parse(strings.TrimSpace(uri))
	if err != nil {
		im.stats.Other++
		return nil, "", false
	}
	host, err := graph.HostOf(u)
	if err != nil {
		im.stats.Other++
		return nil, "", false
	}
	if im.scope != nil && !im.scope.MatchString(host) {
		im.stats.OutOfScope++
		return nil, "", false
	}
	return u, host, true
}

// pagePath is the path by which facts chooses a host's page: "/" for
// the home page, else the path with any query.
func pagePath(u *url.URL) string {
	switch {
	case (u.Path == "" || u.Path == "/") && u.RawQuery == "":
		return "/"
	case u.Path == "" || u.Path == "/":
		return "/?" + u.RawQuery
	case u.RawQuery != "":
		return u.Path + "?" + u.RawQuery
	}
	return u.Path
}

// redirect records a 3xx answer whose Location is on another host as an
// edge to that host.
func (im *parser) redirect(p *page, u *url.URL, location string) {
	im.stats.Redirects++
	if location == "" {
		return
	}
	to, err := u.Parse(strings.TrimSpace(location))
	if err != nil {
		return
	}
	im.sel.Reset(p.host, im.opts.MaxOutboundLinks, im.exclude)
	im.sel.Add(to)
	if len(im.sel.Picked()) == 0 {
		return
	}
	p.targets = append([]pick.Target(nil), im.sel.Picked()...)
	im.batch = append(im.batch, *p)
}
