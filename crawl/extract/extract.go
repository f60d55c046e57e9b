package extract

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"golang.org/x/net/html"
	"golang.org/x/text/encoding"
)

// Info is what Page learns about a page besides its links.
type Info struct {
	Title       string // text of the first <title>, normalised, at most MaxTitleRunes runes
	Description string // content of the first non-empty <meta name=description>, else of og:description; at most MaxDescriptionRunes runes
	Base        string // the URL links resolved against after the first <base href>, "" when there was none or it did not parse
	Links       int    // how many links were passed to fn
	Frames      int    // of them, how many were a <frame src> or an <iframe src> (Link.Frame)
	// Frameset: the page is a frameset (it has a <frameset>): what it
	// shows, and so its links, are in its frames.
	Frameset  bool
	NoFollow  bool // a <meta name=robots> or name=weaver says "nofollow" or "none" (Robots.NoFollow)
	Truncated bool // a token was longer than MaxBuf: the rest of the page was not read
	// Robots are the directives of the page's <meta name="robots"> and
	// <meta name="weaver"> tags, all of them merged (X-Robots-Tag headers
	// are the caller's: see RobotsTag and Directives.Merge).
	Robots Directives
	// Canonical is the first <link rel="canonical" href>, resolved as links
	// are (against the <base href> before it), without fragment; "" when
	// there was none or it is not an http(s) URL of at most MaxURLLen bytes.
	Canonical string
	// Refresh is where the page's first valid <meta http-equiv="refresh">
	// sends the reader (see ParseRefresh), resolved as links are; nil when
	// it has none, when that refresh reloads the page itself, or when its
	// URL is not an http(s) URL of at most MaxURLLen bytes.
	Refresh *url.URL
}

// Link is a link of a page with what its rel attribute says.
type Link struct {
	URL *url.URL // absolute http(s), without fragment; the callee may keep it
	Rel Rel      // nofollow, ugc, sponsored: see Rel.Typed
	// Frame: the link is a <frame src> (of a frameset) or an <iframe
	// src>: the page shows the target inside itself rather than linking
	// to it. It has no Text nor RelAttr.
	Frame bool
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
	// Scripting reads a page as a browser running its scripts does: the
	// content of a <noscript> is raw text, not markup (a page a browser
	// rendered, whose scripts ran). Without it, a <noscript> holds markup
	// and its links count, as for a browser with scripting off.
	Scripting bool
	// Query is the encoding a link's query is percent-encoded in, as the
	// URL Standard says: the page's (Encoding.QueryEncoding of what
	// Decoded found); nil, UTF-8. It never changes a link's host.
	Query encoding.Encoding

	title, desc, og textBuf // Info.Title, Info.Description, og:description as they are read
	anchor          textBuf // the text of the <a> being read, with AnchorText
	href            []byte  // the href being cleaned
	alt             []byte  // the href rewritten as the URL Standard reads it, when it must be (see standard)
	scan            scanner // PageBytes's and LinksBytes's
	decoded         []byte  // Decoded's page, when it is not UTF-8
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
	return tokenizer{z, e.Scripting}
}

// bytesSource returns e's scanner over doc, or the tokenizer when a token
// of doc could reach MaxBuf: the tokenizer then stops with
// ErrBufferExceeded (Info.Truncated), which the scanner does not mimic.
func (e *Extractor) bytesSource(doc []byte) source {
	if len(doc) >= e.maxBuf() {
		return e.tokenizer(bytes.NewReader(doc))
	}
	e.scan.reset(doc)
	e.scan.scripting = e.Scripting
	return &e.scan
}

// page is Page with either fn (links only) or lfn (links and rel), reading
// the page's tokens from z.
func (e *Extractor) page(z source, pageURL *url.URL, fn func(link *url.URL) bool, lfn func(link Link) bool) (Info, error) {
	if pageURL == nil {
		return Info{}, ErrNoPageURL
	}
	e.title.reset(MaxTitleRunes)
	e.desc.reset(MaxDescriptionRunes)
	e.og.reset(MaxDescriptionRunes)
	r := pageRun{e: e, z: z, pageURL: pageURL, fn: fn, lfn: lfn, anchors: e.AnchorText && lfn != nil}
	r.p.base = pageURL
	var err error
	for {
		tt := z.Next()
		if r.p.inTitle && tt != html.TextToken {
			r.p.inTitle, r.p.titleDone = false, true
		}
		if r.p.rawText && tt != html.TextToken {
			r.p.rawText = false
		}
		more := true
		switch tt {
		case html.ErrorToken:
			err, more = r.end(), false
		case html.TextToken:
			r.text()
		case html.StartTagToken, html.SelfClosingTagToken:
			more = r.startTag(tt)
		case html.EndTagToken:
			more = r.endTag()
		}
		if !more {
			break
		}
	}
	return r.finish(), err
}

// pageRun is one page's reading by page: where it is in the document, what
// it found, and the link whose text is being read.
type pageRun struct {
	e       *Extractor
	z       source
	pageURL *url.URL
	fn      func(link *url.URL) bool
	lfn     func(link Link) bool
	anchors bool // links are reported with their text (AnchorText and lfn)
	p       pageState
	info    Info
	pend    Link // with anchors: the <a> whose text is being read, when pend.URL != nil
}

// end takes the tokenizer's last word: the end of the page, a page over
// its buffer (Truncated), or a read error.
func (r *pageRun) end() error {
	switch zerr := r.z.Err(); {
	case zerr == io.EOF:
	case errors.Is(zerr, html.ErrBufferExceeded):
		r.info.Truncated = true
	default:
		return fmt.Errorf("extract: read: %w", zerr)
	}
	return nil
}

// text takes a text token: the title's, or the pending link's.
func (r *pageRun) text() {
	if r.p.inTitle {
		r.e.title.write(r.z.Text())
	}
	if r.pend.URL != nil && !r.p.rawText && r.p.template == 0 {
		r.e.anchor.write(r.z.Text())
	}
}

// startTag takes a start (or self-closing) tag. It reports false when a
// callback asks to stop.
func (r *pageRun) startTag(tt html.TokenType) bool {
	name := tagName(r.z.Raw())
	switch {
	case r.p.template > 0:
		if equalLower(name, "template") {
			r.p.template++
		}
	case r.anchors && (equalLower(name, "a") || equalLower(name, "area")):
		return r.anchorStart(name, tt)
	case equalLower(name, "a"), equalLower(name, "area"):
		return r.link()
	case r.p.svg == 0 && (equalLower(name, "iframe") || r.p.frameset && equalLower(name, "frame")):
		return r.frame()
	case r.pend.URL != nil && equalLower(name, "img"):
		if alt, ok := attr(r.z, "alt"); ok {
			r.e.anchor.write([]byte(" "))
			r.e.anchor.write(alt)
		}
	case r.pend.URL != nil && isRawText(name):
		r.p.rawText = true // a script's or style's text is not the link's
	default:
		r.headTag(name, tt)
	}
	return true
}

// headTag takes the tags that are not links: the canonical link, <base>,
// <meta>, <title>, and the <template> and <svg> whose content is not the
// page's.
func (r *pageRun) headTag(name []byte, tt html.TokenType) {
	switch {
	case equalLower(name, "link"):
		if r.info.Canonical == "" {
			r.info.Canonical = r.e.canonical(r.z, r.p.base)
		}
	case equalLower(name, "base"):
		if !r.p.baseSeen {
			r.e.baseTag(r.z, &r.p, r.pageURL)
		}
	case equalLower(name, "meta"):
		r.e.meta(r.z, &r.info, &r.p, r.pageURL)
	case equalLower(name, "title"):
		// The tokenizer reads <title/> as <title> too, as browsers do.
		r.p.inTitle = !r.p.titleDone && r.p.svg == 0
	case equalLower(name, "template"):
		r.p.template++
	case equalLower(name, "frameset"):
		// A <frame> is a frame only in a frameset: a browser drops it
		// anywhere else.
		r.p.frameset = r.p.frameset || r.p.svg == 0
	case equalLower(name, "svg"):
		if tt == html.StartTagToken {
			r.p.svg++
		}
	}
}

// link reports an <a> or <area> without its text.
func (r *pageRun) link() bool {
	u, rel, ok := r.e.link(readLinkAttrs(r.z), r.p.base)
	if !ok {
		return true
	}
	r.info.Links++
	if r.fn != nil && !r.fn(u) {
		return false
	}
	return r.lfn == nil || r.lfn(Link{URL: u, Rel: rel})
}

// frame reports a <frame src> or an <iframe src>. A link whose text is
// being read ends there, so that links are reported in document order.
func (r *pageRun) frame() bool {
	src, ok := attr(r.z, "src")
	if !ok {
		return true
	}
	u, ok := r.e.resolveHref(src, r.p.base)
	if !ok {
		return true
	}
	if r.anchors && !r.e.flushAnchor(&r.pend, r.lfn) {
		return false
	}
	r.info.Links++
	r.info.Frames++
	if r.fn != nil && !r.fn(u) {
		return false
	}
	return r.lfn == nil || r.lfn(Link{URL: u, Frame: true})
}

// anchorStart takes an <a> or <area> whose text is wanted: an <area>'s is
// its alt, reported at once; an <a>'s is read until its end (an <a> ends
// the one before it, as in a browser).
func (r *pageRun) anchorStart(name []byte, tt html.TokenType) bool {
	if !r.e.flushAnchor(&r.pend, r.lfn) {
		return false
	}
	la := readLinkAttrs(r.z)
	u, rel, ok := r.e.link(la, r.p.base)
	if !ok {
		return true
	}
	r.info.Links++
	l := Link{URL: u, Rel: rel, RelAttr: relText(la.rel)}
	if equalLower(name, "area") || tt == html.SelfClosingTagToken {
		if la.hasAlt && equalLower(name, "area") {
			r.e.anchor.reset(MaxAnchorRunes)
			r.e.anchor.write(la.alt)
			l.Text = r.e.anchor.String()
		}
		return r.lfn(l)
	}
	r.pend = l
	r.e.anchor.reset(MaxAnchorRunes)
	return true
}

// endTag takes an end tag: the pending link's, or the end of a <template>
// or an <svg>.
func (r *pageRun) endTag() bool {
	name := tagName(r.z.Raw())
	switch {
	case r.pend.URL != nil && equalLower(name, "a"):
		return r.e.flushAnchor(&r.pend, r.lfn)
	case equalLower(name, "template"):
		if r.p.template > 0 {
			r.p.template--
		}
	case equalLower(name, "svg"):
		if r.p.svg > 0 && r.p.template == 0 {
			r.p.svg--
		}
	}
	return true
}

// finish reports a link the page ended inside, and returns what the page
// held.
func (r *pageRun) finish() Info {
	if r.pend.URL != nil {
		r.e.flushAnchor(&r.pend, r.lfn) // the page ended inside the link
	}
	info := r.info
	info.Frameset = r.p.frameset
	info.Title = r.e.title.String()
	info.Description = r.e.desc.String()
	if info.Description == "" {
		info.Description = r.e.og.String()
	}
	if r.p.baseSeen && r.p.base != r.pageURL {
		// An opaque base ("data:\xff") is not escaped by String.
		info.Base = strings.ToValidUTF8(r.p.base.String(), "\uFFFD")
	}
	return info
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
	refreshed bool     // a valid refresh declaration was read: later ones do not count
	frameset  bool     // a <frameset> was read: its <frame>s are frames
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

// meta reads the current <meta> tag into info (robots, refresh) and e's
// buffers (descriptions).
func (e *Extractor) meta(z source, info *Info, p *pageState, pageURL *url.URL) {
	var name, property, content, equiv []byte
	var hasName, hasProperty, hasContent, hasEquiv bool // only the first of repeated attributes counts
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
		case !hasEquiv && equalFold(key, "http-equiv"):
			equiv, hasEquiv = val, true
		}
	}
	if !hasContent {
		return
	}
	if hasEquiv && !p.refreshed && equalFold(equiv, "refresh") {
		// The first declaration a browser accepts is the one it follows
		// (the document "will declaratively refresh" after it).
		if _, _, ok := ParseRefresh(content); ok {
			p.refreshed = true
			info.Refresh = e.Refresh(content, p.base, pageURL)
		}
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

// ContentType is the type a response is read as, and whether that is HTML
// (as IsHTML says), from one parse of the header: its Content-Type header
// when that is a media type that parses, else the type its body sniffs as
// (the WHATWG MIME Sniffing Standard's rules for a resource with no
// supplied type, as net/http's DetectContentType applies them: HTML only
// when the body starts, after white space, with one of HTML's tags).
func ContentType(header string, body []byte) (ctype string, html bool) {
	if header != "" {
		if mt, _, err := mime.ParseMediaType(header); err == nil {
			return header, htmlType(mt)
		}
	}
	ctype = http.DetectContentType(body)
	return ctype, strings.HasPrefix(ctype, "text/html")
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
	return htmlType(mt)
}

// htmlType reports whether a parsed media type is HTML's.
func htmlType(mt string) bool { return mt == "text/html" || mt == "application/xhtml+xml" }

// source is what page reads a document's tokens from: x/net/html's
// Tokenizer (tokenizer, the reference) or the scanner (PageBytes).
type source interface {
	Next() html.TokenType
	Raw() []byte
	Text() []byte
	Err() error
	attrs() attrs // of the current start tag
}

// tokenizer is the Tokenizer as a source, reading as HTML's parser reads
// with scripting disabled (as weaver reads, running no script): a
// <noscript> holds markup, not raw text; with scripting, raw text.
type tokenizer struct {
	*html.Tokenizer
	scripting bool
}

func (t tokenizer) Next() html.TokenType {
	tt := t.Tokenizer.Next()
	if tt == html.StartTagToken && !t.scripting && equalLower(tagName(t.Raw()), "noscript") {
		t.NextIsNotRawText()
	}
	return tt
}

func (t tokenizer) attrs() attrs { return newAttrs(t.Tokenizer) }
