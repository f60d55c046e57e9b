package ingest

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"github.com/weaver-crawler/weaver/crawl/decode"
	"github.com/weaver-crawler/weaver/crawl/extract"
	"github.com/weaver-crawler/weaver/crawl/pick"
	"github.com/weaver-crawler/weaver/crawl/robots"
	"github.com/weaver-crawler/weaver/graph"
)

func (im *parser) response(rec *raw) error {
	status, ok := rec.HTTPStatus()
	if !ok {
		im.stats.Other++
		return nil
	}
	u, host, ok := im.source(rec.TargetURI)
	if !ok {
		return nil
	}
	h := rec.HTTPHeader()
	p := page{host: host, scheme: u.Scheme, date: rec.Date, status: status}
	switch {
	case u.Path == "/robots.txt":
		im.stats.Robots++
		if status < 300 || status >= 400 {
			// The host's own answer (a redirect's target is judged where
			// it is): its rules, judged in order with the requests.
			p.rules = robots.FromResponse(status, im.robotsBody(rec, h))
			im.batch = append(im.batch, p)
		}
		return nil
	case status >= 300 && status < 400:
		im.redirect(&p, u, h.Get("Location"))
		return nil
	case status >= 400:
		im.stats.HTTPErrors++
		return nil
	case h == nil:
		// Headers that do not parse (a Content-Length of -1): no type,
		// no page.
		im.stats.BadHeaders++
		return nil
	case !extract.IsHTML(h.Get("Content-Type")) && pagePath(u) != "/":
		im.stats.NonHTML++
		return nil
	}
	if rec.Truncated != "" && !strings.EqualFold(rec.Truncated, "length") {
		// Cut by the connection or the clock: a failed fetch gives no
		// link, as in a crawl. Cut at a length cap, it is a page.
		im.stats.Failed++
		return nil
	}
	body, err := rec.Payload()
	if err != nil {
		return err
	}
	if err := im.readBody(body, h.Get("Transfer-Encoding"), h.Get("Content-Encoding")); err != nil {
		// A body that does not decode is a failed fetch, as in a crawl.
		im.logf("%s: offset %d: %s: body: %v (a failed page, no link)", rec.TargetURI, rec.Offset, host, err)
		im.stats.Failed++
		return nil
	}
	data := im.body.Bytes()
	ctype, isHTML := extract.ContentType(h.Get("Content-Type"), data) // a type missing or unreadable is sniffed, as in a crawl
	sum := sha256.Sum256(data)
	p.crawled, p.path = true, pagePath(u)
	p.ctype, p.server = ctype, h.Get("Server")
	p.bytes, p.hash = int64(len(data)), hex.EncodeToString(sum[:])
	if !isHTML {
		// Not a page: no link. A home page's answer is the host's crawl,
		// as a crawl records it (its type, size and hash).
		im.stats.NonHTML++
		if p.path == "/" {
			im.batch = append(im.batch, p)
		}
		return nil
	}
	im.sel.Reset(host, im.opts.MaxOutboundLinks, im.exclude)
	doc, enc := im.ex.Decoded(data, p.ctype) // UTF-8, as the crawl reads the bytes
	im.ex.Query = enc.QueryEncoding()
	info, _ := im.ex.PageBytes(doc, u, im.sel.Add) // in memory: the byte scanner, as the crawl reads a page
	// The page's robots directives, as the crawl obeys them: noindex keeps
	// its title and description out, nofollow its links (not a refresh,
	// which a browser follows whatever they say).
	directives := info.Robots.Merge(extract.RobotsTag(h.Values("X-Robots-Tag"), "weaver"))
	p.title, p.desc = info.Title, info.Description
	if p.desc == "" {
		p.desc = p.title
	}
	if directives.NoIndex {
		p.title, p.desc = "", ""
	}
	p.canonical, p.directives = info.Canonical, directives.List
	picked := im.sel.Picked()
	if directives.NoFollow {
		picked = nil
	}
	p.targets = im.withRefresh(append([]pick.Target(nil), picked...), host, info.Refresh)
	im.stats.Pages++
	im.batch = append(im.batch, p)
	return nil
}

// robotsBody is a robots.txt answer's body, its codings undone as a
// crawl's are; nil when there is none or it does not decode (read as
// empty, which allows, as an unreadable file would).
func (im *parser) robotsBody(rec *raw, h http.Header) []byte {
	if rec.payload == nil {
		return nil
	}
	if err := im.readBody(bytes.NewReader(rec.payload), h.Get("Transfer-Encoding"), h.Get("Content-Encoding")); err != nil {
		return nil
	}
	return bytes.Clone(im.body.Bytes())
}

// withRefresh adds to a page's targets the host its refresh sends it to
// (nil: none), as the crawl counts it: a redirect, whatever the
// selection's limit, unless the host is the page's own, excluded or a
// target already.
func (im *parser) withRefresh(targets []pick.Target, host string, refresh *url.URL) []pick.Target {
	if refresh == nil {
		return targets
	}
	h, err := graph.HostOf(refresh)
	if err != nil || h == host || im.exclude.Excluded(h) {
		return targets
	}
	for _, t := range targets {
		if t.Host == h {
			return targets
		}
	}
	return append(targets, pick.Target{Host: h, Scheme: refresh.Scheme})
}

// readBody reads at most MaxBodyBytes of a payload into im.body, undoing
// chunked transfer coding and content codings as the crawl does (package
// decode; archives keep the bytes as they were sent).
func (im *parser) readBody(r io.Reader, te, ce string) error {
	im.body.Reset()
	if strings.Contains(strings.ToLower(te), "chunked") {
		r = httputil.NewChunkedReader(r)
	}
	switch c := strings.ToLower(strings.TrimSpace(ce)); c {
	case "gzip", "x-gzip": // the common case, with a reader kept from record to record
		var err error
		if im.gz == nil {
			im.gz, err = gzip.NewReader(r)
		} else {
			err = im.gz.Reset(r)
		}
		if err != nil {
			return fmt.Errorf("%w %s: %w", decode.ErrContentEncoding, c, err)
		}
		r = decode.Named(im.gz, c, nil)
	default:
		var err error
		if r, err = decode.Reader(ce, r, nil); err != nil {
			return err
		}
	}
	_, err := im.body.ReadFrom(io.LimitReader(r, im.opts.MaxBodyBytes))
	return err
}
