package ingest

import (
	"encoding/json"
	"html"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/crawl/extract"
	"github.com/weaver-crawler/weaver/crawl/pick"
)

// watRecord is the part of a Common Crawl WAT record's JSON that import
// reads (https://commoncrawl.org/the-data/get-started/#WAT-Format), as
// decodeWAT fills it.
type watRecord struct {
	Envelope struct {
		Header struct {
			Type      string `json:"WARC-Type"`
			TargetURI string `json:"WARC-Target-URI"`
			Date      string `json:"WARC-Date"`
		} `json:"WARC-Header-Metadata"`
		Payload struct {
			Response *watResponse `json:"HTTP-Response-Metadata"`
		} `json:"Payload-Metadata"`
	} `json:"Envelope"`
}

// watResponse is a WAT record's HTTP-Response-Metadata.
type watResponse struct {
	Message struct {
		Status json.RawMessage `json:"Status"` // "200", or 200
	} `json:"Response-Message"`
	Headers map[string]json.RawMessage `json:"Headers"` // a string, or a list of them
	HTML    *watHTML                   `json:"HTML-Metadata"`
}

// watHTML is a WAT record's HTML-Metadata.
type watHTML struct {
	Head struct {
		Title string `json:"Title"`
		Base  string `json:"Base"`
		Metas []struct {
			Name     string `json:"name"`
			Property string `json:"property"`
			Content  string `json:"content"`
			Equiv    string `json:"http-equiv"`
		} `json:"Metas"`
	} `json:"Head"`
	Links []struct {
		Path string `json:"path"`
		URL  string `json:"url"`
	} `json:"Links"`
}

// header returns a WAT header's value, case-insensitively; of a list, the
// first.
func header(h map[string]json.RawMessage, name string) string {
	for k, raw := range h {
		if !strings.EqualFold(k, name) {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		var list []string
		if json.Unmarshal(raw, &list) == nil && len(list) > 0 {
			return list[0]
		}
	}
	return ""
}

// wat records a WAT metadata record of an HTML response as a crawled page
// whose links are those of its <a href> and <area href>, in the order the
// WAT lists them, selected as a crawl selects; a redirect as an edge.
func (im *parser) wat(rec *raw) error {
	if rec.payload == nil && rec.readErr != nil {
		return rec.readErr
	}
	var w watRecord
	if err := decodeWAT(rec.payload, &w); err != nil {
		// Not a WAT record after all, or a damaged one: the other
		// records go on.
		im.stats.Other++
		im.logf("%s: offset %d: not a WAT record's JSON, counted as other", rec.TargetURI, rec.Offset)
		return nil
	}
	env := &w.Envelope
	resp := env.Payload.Response
	if env.Header.Type != "response" || resp == nil {
		im.stats.Metadata++
		return nil
	}
	uri := env.Header.TargetURI
	if uri == "" {
		uri = rec.TargetURI
	}
	u, host, ok := im.source(uri)
	if !ok {
		return nil
	}
	status, _ := strconv.Atoi(strings.Trim(string(resp.Message.Status), `" `))
	date := rec.Date
	if t, err := time.Parse(time.RFC3339, env.Header.Date); err == nil {
		date = t
	}
	p := page{host: host, scheme: u.Scheme, date: date, status: status}
	ct := header(resp.Headers, "Content-Type")
	switch {
	case u.Path == "/robots.txt":
		im.stats.Robots++
		return nil
	case status >= 300 && status < 400:
		im.redirect(&p, u, header(resp.Headers, "Location"))
		return nil
	case status >= 400:
		im.stats.HTTPErrors++
		return nil
	case status < 200 || !extract.IsHTML(ct) || resp.HTML == nil:
		im.stats.NonHTML++
		return nil
	}
	p.targets = im.watLinks(u, host, resp.HTML)
	p.title, p.desc = im.watTitle(u, resp.HTML)
	if p.desc == "" {
		p.desc = p.title
	}
	p.crawled, p.path = true, pagePath(u)
	p.ctype, p.server = ct, header(resp.Headers, "Server")
	im.stats.Pages++
	im.batch = append(im.batch, p)
	return nil
}

// watLinks selects, as a crawl selects, the hosts of the <a href> and
// <area href> links of the WAT page at u (of host), in the order the WAT
// lists them.
func (im *parser) watLinks(u *url.URL, host string, meta *watHTML) []pick.Target {
	base := u
	if meta.Head.Base != "" {
		if b, err := u.Parse(strings.TrimSpace(meta.Head.Base)); err == nil {
			base = b
		}
	}
	im.sel.Reset(host, im.opts.MaxOutboundLinks, im.exclude)
	for _, l := range meta.Links {
		tag, attr, _ := strings.Cut(l.Path, "@/")
		if attr != "href" || (!strings.EqualFold(tag, "A") && !strings.EqualFold(tag, "AREA")) {
			continue
		}
		to, err := base.Parse(strings.TrimSpace(l.URL))
		if err != nil || (to.Scheme != "http" && to.Scheme != "https") || len(l.URL) > extract.MaxURLLen {
			continue
		}
		to.Fragment = ""
		if !im.sel.Add(to) {
			break
		}
	}
	targets := append([]pick.Target(nil), im.sel.Picked()...)
	for _, m := range meta.Head.Metas {
		if strings.EqualFold(m.Equiv, "refresh") {
			if _, _, ok := extract.ParseRefresh([]byte(m.Content)); ok {
				// The first refresh a browser accepts is the one it follows.
				return im.withRefresh(targets, host, im.ex.Refresh([]byte(m.Content), base, u))
			}
		}
	}
	return targets
}

// watTitle returns the title and description of the WAT page at u. They
// go through the extractor, so that they are cleaned and capped as a
// crawled page's are.
func (im *parser) watTitle(u *url.URL, meta *watHTML) (title, description string) {
	var desc, og string
	for _, m := range meta.Head.Metas {
		switch {
		case strings.EqualFold(m.Name, "description") && desc == "":
			desc = m.Content
		case strings.EqualFold(m.Property, "og:description") && og == "":
			og = m.Content
		}
	}
	if desc == "" {
		desc = og
	}
	doc := "<title>" + html.EscapeString(meta.Head.Title) + "</title><meta name=description content=\"" + html.EscapeString(desc) + "\">"
	info, _ := im.ex.PageBytes([]byte(doc), u, nil)
	return info.Title, info.Description
}
