package ingest

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http/httputil"
	"strings"

	"github.com/weaver-crawler/weaver/crawl/extract"
	"github.com/weaver-crawler/weaver/crawl/pick"
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
		return nil
	case status >= 300 && status < 400:
		im.redirect(&p, u, h.Get("Location"))
		return nil
	case status >= 400:
		im.stats.HTTPErrors++
		return nil
	case !extract.IsHTML(h.Get("Content-Type")):
		im.stats.NonHTML++
		return nil
	}
	body, err := rec.Payload()
	if err != nil {
		return err
	}
	if err := im.readBody(body, h.Get("Transfer-Encoding"), h.Get("Content-Encoding")); err != nil {
		// An answer whose encoding does not decode is still a page, as
		// the crawl parses what it could read.
		im.logf("%s: offset %d: %s: body: %v", rec.TargetURI, rec.Offset, host, err)
	}
	data := im.body.Bytes()
	sum := sha256.Sum256(data)
	p.crawled, p.path = true, pagePath(u)
	p.ctype, p.server = h.Get("Content-Type"), h.Get("Server")
	p.bytes, p.hash = int64(len(data)), hex.EncodeToString(sum[:])
	im.sel.Reset(host, im.opts.MaxOutboundLinks, im.exclude)
	info, _ := im.ex.PageBytes(data, u, im.sel.Add) // in memory: the byte scanner, as the crawl reads a page
	p.title, p.desc = info.Title, info.Description
	if p.desc == "" {
		p.desc = p.title
	}
	p.targets = append([]pick.Target(nil), im.sel.Picked()...)
	im.stats.Pages++
	im.batch = append(im.batch, p)
	return nil
}

// readBody reads at most MaxBodyBytes of a payload into im.body, undoing
// chunked transfer coding and gzip or deflate content coding as an HTTP
// client would (archives keep the bytes as they were sent).
func (im *parser) readBody(r io.Reader, te, ce string) error {
	im.body.Reset()
	if strings.Contains(strings.ToLower(te), "chunked") {
		r = httputil.NewChunkedReader(r)
	}
	switch strings.ToLower(strings.TrimSpace(ce)) {
	case "gzip", "x-gzip":
		var err error
		if im.gz == nil {
			im.gz, err = gzip.NewReader(r)
		} else {
			err = im.gz.Reset(r)
		}
		if err != nil {
			return err
		}
		r = im.gz
	}
	_, err := im.body.ReadFrom(io.LimitReader(r, im.opts.MaxBodyBytes))
	return err
}
