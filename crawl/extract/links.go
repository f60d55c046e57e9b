package extract

import (
	"bytes"
	"net/url"
	"strings"
)

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
	la := readLinkAttrs(z)
	if !la.hasHref || !la.hasRel || !hasToken(la.rel, "canonical") {
		return ""
	}
	u, ok := e.resolveHref(la.href, base)
	if !ok {
		return ""
	}
	return strings.ToValidUTF8(u.String(), "\uFFFD")
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
	std, ok := e.standard(e.href, base.Scheme)
	if !ok {
		return nil, false
	}
	ref, err := url.Parse(string(std))
	if err != nil {
		return nil, false
	}
	u := resolve(base, ref)
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, false
	}
	u.RawQuery = standardQuery(u.RawQuery, e.Query)
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
	std, ok := e.standard(e.href, pageURL.Scheme)
	if !ok {
		return
	}
	ref, err := url.Parse(string(std))
	if err != nil {
		return
	}
	base := pageURL.ResolveReference(ref)
	base.Fragment, base.RawFragment = "", ""
	p.base = base
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
