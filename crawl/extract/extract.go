package extract

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/url"
	"strings"
	"sync"

	"golang.org/x/net/html"
)

// Info is what Page learns about a page besides its links.
type Info struct {
	Title       string // text of the first <title>, normalised, at most MaxTitleRunes runes
	Description string // content of the first non-empty <meta name=description>, else of og:description; at most MaxDescriptionRunes runes
	Base        string // the URL links resolved against after the first <base href>, "" when there was none or it did not parse
	Links       int    // how many links were passed to fn
	NoFollow    bool   // a <meta name=robots> or name=weaver says "nofollow" or "none" (Robots.NoFollow)
	Truncated   bool   // a token was longer than MaxBuf: the rest of the page was not read
	// Robots are the directives of the page's <meta name="robots"> and
	// <meta name="weaver"> tags, all of them merged (X-Robots-Tag headers
	// are the caller's: see RobotsTag and Directives.Merge).
	Robots Directives
	// Canonical is the first <link rel="canonical" href>, resolved as links
	// are (against the <base href> before it), without fragment; "" when
	// there was none or it is not an http(s) URL of at most MaxURLLen bytes.
	Canonical string
}

// Link is a link of a page with what its rel attribute says.
type Link struct {
	URL *url.URL // absolute http(s), without fragment; the callee may keep it
	Rel Rel      // nofollow, ugc, sponsored: see Rel.Typed
	// Text and RelAttr are set with Extractor.AnchorText only. Text is the
	// link's text: the text of the <a> element, the alt text of the
	// images in it, or an <area>'s alt, normalised as Info.Title is, at
	// most MaxAnchorRunes runes. RelAttr is the rel attribute's keywords,
	// lower case, one space between them, at most MaxRelLen bytes.
	Text    string
	RelAttr string
}

// Limits on what Page reports.
const (
	MaxURLLen           = 2048    // longest link reported, in bytes
	MaxTitleRunes       = 1000    // Info.Title is cut to this many runes
	MaxDescriptionRunes = 2000    // Info.Description is cut to this many runes
	DefaultMaxBuf       = 1 << 20 // Extractor.MaxBuf when zero
	MaxAnchorRunes      = 100     // Link.Text is cut to this many runes
	MaxRelLen           = 64      // Link.RelAttr is cut to this many bytes (at a keyword)
)

// Extractor extracts links and Info from pages, reusing its buffers from
// one page to the next. The zero value is ready to use. An Extractor must
// not be used by two goroutines at once.
type Extractor struct {
	// MaxBuf bounds the bytes the tokenizer holds for a single token (a
	// tag with its attributes, or a run of text, such as an inline script).
	// A longer token ends extraction with Info.Truncated set. Zero means
	// DefaultMaxBuf.
	MaxBuf int
	// AnchorText makes Links report each link's text and rel attribute
	// (Link.Text, Link.RelAttr). A link of an <a> element is then reported
	// once its text is read: at its </a>, at the next <a>, or at the end
	// of the page, whichever comes first.
	AnchorText bool

	title, desc, og textBuf // Info.Title, Info.Description, og:description as they are read
	anchor          textBuf // the text of the <a> being read, with AnchorText
	href            []byte  // the href being cleaned
	scan            scanner // PageBytes's and LinksBytes's
}

// pool holds the Extractors of the package-level Page.
var pool = sync.Pool{New: func() any { return new(Extractor) }}

// Page is Extractor.Page on a pooled Extractor.
func Page(r io.Reader, pageURL *url.URL, fn func(link *url.URL) bool) (Info, error) {
	e := pool.Get().(*Extractor)
	defer pool.Put(e)
	return e.Page(r, pageURL, fn)
}

// Page reads the HTML page at pageURL from r and calls fn with each link
// of the page, in document order (see the package documentation for which
// links, and how they are resolved). Each link is a new *url.URL that fn
// may keep. When fn returns false, Page stops reading and returns the Info
// gathered so far. fn may be nil, to count links and read Info only.
//
// Page returns ErrNoPageURL when pageURL is nil, and a read error of r
// (wrapped) together with the Info gathered before it. A page that is not
// HTML, or not valid UTF-8, is not an error: it is read as the tokenizer
// reads it.
func (e *Extractor) Page(r io.Reader, pageURL *url.URL, fn func(link *url.URL) bool) (Info, error) {
	return e.page(e.tokenizer(r), pageURL, fn, nil)
}

// Links is Page reporting each link with its rel keywords (see Link).
func (e *Extractor) Links(r io.Reader, pageURL *url.URL, fn func(link Link) bool) (Info, error) {
	return e.page(e.tokenizer(r), pageURL, nil, fn)
}

// PageBytes is Page for a page already in memory. It gives what Page
// gives, link for link, but reads the page with a byte scanner (see
// scanner) several times faster than the tokenizer, when the page is
// shorter than MaxBuf; a longer page, whose tokens could exceed it, is
// read by the tokenizer. It never returns a read error.
func (e *Extractor) PageBytes(doc []byte, pageURL *url.URL, fn func(link *url.URL) bool) (Info, error) {
	return e.page(e.bytesSource(doc), pageURL, fn, nil)
}

// LinksBytes is Links for a page already in memory, as PageBytes is Page.
func (e *Extractor) LinksBytes(doc []byte, pageURL *url.URL, fn func(link Link) bool) (Info, error) {
	return e.page(e.bytesSource(doc), pageURL, nil, fn)
}

// maxBuf is MaxBuf with its default.
func (e *Extractor) maxBuf() int {
	if e.MaxBuf <= 0 {
		return DefaultMaxBuf
	}
	return e.MaxBuf
}

// tokenizer returns x/net/html's tokenizer over r, bounded by MaxBuf.
func (e *Extractor) tokenizer(r io.Reader) source {
	z := html.NewTokenizer(r)
	z.SetMaxBuf(e.maxBuf())
	return tokenizer{z}
}

// bytesSource returns e's scanner over doc, or the tokenizer when a token
// of doc could reach MaxBuf: the tokenizer then stops with
// ErrBufferExceeded (Info.Truncated), which the scanner does not mimic.
func (e *Extractor) bytesSource(doc []byte) source {
	if len(doc) >= e.maxBuf() {
		return e.tokenizer(bytes.NewReader(doc))
	}
	e.scan.reset(doc)
	return &e.scan
}

// page is Page with either fn (links only) or lfn (links and rel), reading
// the page's tokens from z.
func (e *Extractor) page(z source, pageURL *url.URL, fn func(link *url.URL) bool, lfn func(link Link) bool) (Info, error) {
	var info Info
	if pageURL == nil {
		return info, ErrNoPageURL
	}
	e.title.reset(MaxTitleRunes)
	e.desc.reset(MaxDescriptionRunes)
	e.og.reset(MaxDescriptionRunes)
	p := pageState{base: pageURL}
	anchors := e.AnchorText && lfn != nil
	var pend Link // with anchors: the <a> whose text is being read, when pend.URL != nil

	var err error
loop:
	for {
		tt := z.Next()
		if p.inTitle && tt != html.TextToken {
			p.inTitle, p.titleDone = false, true
		}
		if p.rawText && tt != html.TextToken {
			p.rawText = false
		}
		switch tt {
		case html.ErrorToken:
			switch zerr := z.Err(); {
			case zerr == io.EOF:
			case errors.Is(zerr, html.ErrBufferExceeded):
				info.Truncated = true
			default:
				err = fmt.Errorf("extract: read: %w", zerr)
			}
			break loop

		case html.TextToken:
			if p.inTitle {
				e.title.write(z.Text())
			}
			if pend.URL != nil && !p.rawText && p.template == 0 {
				e.anchor.write(z.Text())
			}

		case html.StartTagToken, html.SelfClosingTagToken:
			name := tagName(z.Raw())
			switch {
			case p.template > 0:
				if equalLower(name, "template") {
					p.template++
				}
			case anchors && (equalLower(name, "a") || equalLower(name, "area")):
				// An <a> ends the one before it, as in a browser.
				if !e.flushAnchor(&pend, lfn) {
					break loop
				}
				la := readLinkAttrs(z)
				u, rel, ok := e.link(la, p.base)
				if !ok {
					continue
				}
				info.Links++
				l := Link{URL: u, Rel: rel, RelAttr: relText(la.rel)}
				if equalLower(name, "area") || tt == html.SelfClosingTagToken {
					if la.hasAlt && equalLower(name, "area") {
						e.anchor.reset(MaxAnchorRunes)
						e.anchor.write(la.alt)
						l.Text = e.anchor.String()
					}
					if !lfn(l) {
						break loop
					}
					continue
				}
				pend = l
				e.anchor.reset(MaxAnchorRunes)
			case equalLower(name, "a"), equalLower(name, "area"):
				u, rel, ok := e.link(readLinkAttrs(z), p.base)
				if !ok {
					continue
				}
				info.Links++
				if fn != nil && !fn(u) {
					break loop
				}
				if lfn != nil && !lfn(Link{URL: u, Rel: rel}) {
					break loop
				}
			case pend.URL != nil && equalLower(name, "img"):
				if alt, ok := attr(z, "alt"); ok {
					e.anchor.write([]byte(" "))
					e.anchor.write(alt)
				}
			case pend.URL != nil && isRawText(name):
				p.rawText = true // a script's or style's text is not the link's
			case equalLower(name, "link"):
				if info.Canonical == "" {
					info.Canonical = e.canonical(z, p.base)
				}
			case equalLower(name, "base"):
				if !p.baseSeen {
					e.baseTag(z, &p, pageURL)
				}
			case equalLower(name, "meta"):
				e.meta(z, &info)
			case equalLower(name, "title"):
				// The tokenizer reads <title/> as <title> too, as browsers do.
				p.inTitle = !p.titleDone && p.svg == 0
			case equalLower(name, "template"):
				p.template++
			case equalLower(name, "svg"):
				if tt == html.StartTagToken {
					p.svg++
				}
			}

		case html.EndTagToken:
			name := tagName(z.Raw())
			switch {
			case pend.URL != nil && equalLower(name, "a"):
				if !e.flushAnchor(&pend, lfn) {
					break loop
				}
			case equalLower(name, "template"):
				if p.template > 0 {
					p.template--
				}
			case equalLower(name, "svg"):
				if p.svg > 0 && p.template == 0 {
					p.svg--
				}
			}
		}
	}

	if pend.URL != nil {
		e.flushAnchor(&pend, lfn) // the page ended inside the link
	}
	info.Title = e.title.String()
	info.Description = e.desc.String()
	if info.Description == "" {
		info.Description = e.og.String()
	}
	if p.baseSeen && p.base != pageURL {
		// An opaque base ("data:\xff") is not escaped by String.
		info.Base = strings.ToValidUTF8(p.base.String(), "\uFFFD")
	}
	return info, err
}

// pageState is where Page is in the document.
type pageState struct {
	base      *url.URL // what links resolve against
	baseSeen  bool     // a <base href> was seen: later ones do not count
	inTitle   bool     // the next text tokens are the first title's
	titleDone bool     // the first title has been read
	template  int      // depth of <template> elements, whose content is inert
	svg       int      // depth of <svg> elements, whose <title> is not the page's
	rawText   bool     // the next text token is a script's or style's (AnchorText only)
}

// flushAnchor reports the pending link, if any, with the text read for
// it, and clears it. It returns false when lfn asks to stop.
func (e *Extractor) flushAnchor(pend *Link, lfn func(Link) bool) bool {
	if pend.URL == nil {
		return true
	}
	l := *pend
	*pend = Link{}
	l.Text = e.anchor.String()
	return lfn(l)
}

// isRawText reports whether a start tag's element holds raw text the
// tokenizer reports as text, which is not what a reader sees as a link's
// text.
func isRawText(name []byte) bool {
	for _, t := range []string{"script", "style", "noscript", "iframe", "noembed", "noframes", "xmp", "textarea"} {
		if equalLower(name, t) {
			return true
		}
	}
	return false
}

// relText returns a rel attribute's keywords in lower case, separated by
// one space, cut at a keyword to at most MaxRelLen bytes; "" for none.
func relText(v []byte) string {
	if len(v) == 0 {
		return ""
	}
	var b []byte
	for _, w := range bytes.Fields(v) {
		if len(b)+1+len(w) > MaxRelLen {
			break
		}
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = append(b, bytes.ToLower(w)...)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// link returns the link of an <a> or <area> tag with attributes la, if
// it has one worth reporting, with the rel keywords weaver records.
func (e *Extractor) link(la linkAttrs, base *url.URL) (*url.URL, Rel, bool) {
	if !la.hasHref {
		return nil, 0, false
	}
	u, ok := e.resolveHref(la.href, base)
	if !ok {
		return nil, 0, false
	}
	var r Rel
	if la.hasRel {
		r = parseRel(la.rel)
	}
	return u, r, true
}

// canonical returns the current <link> tag's href when its rel holds
// "canonical" and the href is worth reporting, else "".
func (e *Extractor) canonical(z source, base *url.URL) string {
	href, rel, hasHref, hasRel := hrefRel(z)
	if !hasHref || !hasRel || !hasToken(rel, "canonical") {
		return ""
	}
	u, ok := e.resolveHref(href, base)
	if !ok {
		return ""
	}
	return strings.ToValidUTF8(u.String(), "\uFFFD")
}

// hrefRel reads the current tag's href and rel attributes.
func hrefRel(z source) (href, rel []byte, hasHref, hasRel bool) {
	la := readLinkAttrs(z)
	return la.href, la.rel, la.hasHref, la.hasRel
}

// linkAttrs are the attributes weaver reads of a link tag, valid until the
// tokenizer moves on: only the first of repeated attributes counts, as in
// a browser.
type linkAttrs struct {
	href, rel, alt          []byte
	hasHref, hasRel, hasAlt bool
}

// readLinkAttrs reads them in one pass: a tag whose attributes go through
// the tokenizer's TagAttr (one with an entity, a NUL or a CR) gives them
// once, and an <area>'s alt read after its href was lost.
func readLinkAttrs(z source) linkAttrs {
	var la linkAttrs
	a := z.attrs()
	for {
		k, v, ok := a.next()
		if !ok {
			return la
		}
		switch {
		case !la.hasHref && equalFold(k, "href"):
			la.href, la.hasHref = v, true
		case !la.hasRel && equalFold(k, "rel"):
			la.rel, la.hasRel = v, true
		case !la.hasAlt && equalFold(k, "alt"):
			la.alt, la.hasAlt = v, true
		}
	}
}

// resolveHref cleans and resolves an href as a browser does, and returns
// it when it is an absolute http(s) URL of at most MaxURLLen bytes.
func (e *Extractor) resolveHref(href []byte, base *url.URL) (*url.URL, bool) {
	e.href = cleanHref(e.href[:0], href)
	if len(e.href) > MaxURLLen || !maybeHTTP(e.href) {
		return nil, false
	}
	ref, err := url.Parse(string(e.href))
	if err != nil {
		return nil, false
	}
	u := resolve(base, ref)
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, false
	}
	u.Fragment, u.RawFragment = "", ""
	if tooLong(u) {
		return nil, false
	}
	// A host with a colon ("//::") can come out of resolving as a URL that
	// does not parse again: such a link is no link.
	if strings.Contains(u.Host, ":") {
		if _, err := url.Parse(u.String()); err != nil {
			return nil, false
		}
	}
	return u, true
}

// resolve returns ref resolved against base, as base.ResolveReference(ref)
// does, but reusing ref when that is only a matter of copying base's
// scheme (and host): an absolute or root-relative reference without dot
// segments. That saves the URL copy and path rebuilding that
// ResolveReference does, for most links of most pages.
func resolve(base, ref *url.URL) *url.URL {
	if ref.Opaque != "" || strings.Contains(ref.Path, "/.") {
		return base.ResolveReference(ref)
	}
	if ref.Scheme != "" || ref.Host != "" || ref.User != nil {
		if ref.Scheme == "" {
			ref.Scheme = base.Scheme
		}
		return ref
	}
	if strings.HasPrefix(ref.Path, "/") {
		ref.Scheme, ref.User, ref.Host = base.Scheme, base.User, base.Host
		return ref
	}
	return base.ResolveReference(ref)
}

// baseTag records the current <base> tag's href, if it has one, as the URL
// later links resolve against. Only the first <base href> counts, even if
// its value does not parse (then links resolve against the page URL).
func (e *Extractor) baseTag(z source, p *pageState, pageURL *url.URL) {
	href, ok := attr(z, "href")
	if !ok {
		return
	}
	p.baseSeen = true
	e.href = cleanHref(e.href[:0], href)
	if len(e.href) > MaxURLLen {
		return
	}
	ref, err := url.Parse(string(e.href))
	if err != nil {
		return
	}
	base := pageURL.ResolveReference(ref)
	base.Fragment, base.RawFragment = "", ""
	p.base = base
}

// meta reads the current <meta> tag into info (robots) and e's buffers
// (descriptions).
func (e *Extractor) meta(z source, info *Info) {
	var name, property, content []byte
	var hasName, hasProperty, hasContent bool // only the first of repeated attributes counts
	a := z.attrs()
	for {
		key, val, ok := a.next()
		if !ok {
			break
		}
		switch {
		case !hasName && equalFold(key, "name"):
			name, hasName = trimSpace(val), true
		case !hasProperty && equalFold(key, "property"):
			property, hasProperty = trimSpace(val), true
		case !hasContent && equalFold(key, "content"):
			content, hasContent = val, true
		}
	}
	if !hasContent {
		return
	}
	switch {
	case equalFold(name, "description"):
		if e.desc.empty() {
			e.desc.write(content)
		}
	case equalFold(name, "og:description") || equalFold(property, "og:description"):
		if e.og.empty() {
			e.og.write(content)
		}
	case equalFold(name, "robots"), equalFold(name, "weaver"):
		info.Robots.Add(string(content))
		info.NoFollow = info.Robots.NoFollow
	}
}

// attr returns the value of the current tag's attribute key, which must be
// lower case. Only the first of repeated attributes counts, as in browsers.
func attr(z source, key string) ([]byte, bool) {
	a := z.attrs()
	for {
		k, v, ok := a.next()
		if !ok {
			return nil, false
		}
		if equalFold(k, key) {
			return v, true
		}
	}
}

// tagName returns the name of a start or end tag from its raw bytes ("<a"
// or "</a" followed by the name), in its original case.
func tagName(raw []byte) []byte {
	i := 1
	if len(raw) > 1 && raw[1] == '/' {
		i = 2
	}
	if i > len(raw) {
		return nil
	}
	raw = raw[i:]
	for j, c := range raw {
		switch c {
		case ' ', '\n', '\r', '\t', '\f', '/', '>':
			return raw[:j]
		}
	}
	return raw
}

// equalLower reports whether b equals s, a lower-case ASCII word, ignoring
// the case of b.
func equalLower(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		if b[i]|0x20 != s[i] {
			return false
		}
	}
	return true
}

// equalFold reports whether b equals s, a lower-case ASCII string that
// may contain non-letters, ignoring the case of b's ASCII letters.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// isSpace reports whether c is ASCII whitespace as HTML defines it.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// trimSpace returns b without leading and trailing ASCII whitespace.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// cleanHref appends to dst the href as a browser's URL parser sees it:
// leading and trailing C0 controls and spaces removed, and tabs and
// newlines removed everywhere. It stops once it has appended more than
// MaxURLLen bytes.
func cleanHref(dst, href []byte) []byte {
	for len(href) > 0 && href[0] <= ' ' {
		href = href[1:]
	}
	for len(href) > 0 && href[len(href)-1] <= ' ' {
		href = href[:len(href)-1]
	}
	for _, c := range href {
		if c != '\t' && c != '\n' && c != '\r' {
			if len(dst) > MaxURLLen {
				break // too long to report: no need to copy the rest
			}
			dst = append(dst, c)
		}
	}
	return dst
}

// maybeHTTP reports whether href has no scheme (it is relative, and the
// base decides) or the scheme http or https, so that mailto:, javascript:,
// tel: or data: links are dropped without parsing them.
func maybeHTTP(href []byte) bool {
	for i, c := range href {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case c == ':' && i > 0:
			return equalLower(href[:i], "http") || equalLower(href[:i], "https")
		default:
			return true
		}
	}
	return true
}

// tooLong reports whether u.String() is longer than MaxURLLen, building
// the string only when it could be: escaping at most triples a byte.
func tooLong(u *url.URL) bool {
	n := len(u.Scheme) + len(u.Host) + len(u.Path) + len(u.RawPath) + len(u.RawQuery) + 8
	if u.User != nil {
		n += len(u.User.String())
	}
	if 3*n <= MaxURLLen {
		return false
	}
	return len(u.String()) > MaxURLLen
}

// IsHTML reports whether a Content-Type is (or may be) HTML: a missing one
// is parsed too, as browsers sniff.
func IsHTML(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.Contains(strings.ToLower(ct), "html")
	}
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// source is what page reads a document's tokens from: x/net/html's
// Tokenizer (tokenizer, the reference) or the scanner (PageBytes).
type source interface {
	Next() html.TokenType
	Raw() []byte
	Text() []byte
	Err() error
	attrs() attrs // of the current start tag
}

// tokenizer is the Tokenizer as a source.
type tokenizer struct{ *html.Tokenizer }

func (t tokenizer) attrs() attrs { return newAttrs(t.Tokenizer) }
