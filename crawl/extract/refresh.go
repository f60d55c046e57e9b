package extract

import "net/url"

// ParseRefresh reads a refresh declaration, the content of a <meta
// http-equiv="refresh"> or a Refresh header, as HTML's "shared declarative
// refresh steps" do: a delay in seconds (digits, then any digits and
// dots), then, after whitespace and one ';' or ',', an optional "url="
// (any case, whitespace around '='), and the URL, its quotes (' or ")
// removed. ok is false for a declaration a browser ignores; a valid one
// without a URL refreshes the page itself (target ""). The delay is not
// bounded: a crawler takes any delay as a redirect.
func ParseRefresh(content []byte) (delay int, target []byte, ok bool) {
	s := content
	i := skipASCIISpace(s, 0)
	start := i
	for i < len(s) && isDigit(s[i]) {
		if delay < 1<<30 {
			delay = delay*10 + int(s[i]-'0')
		}
		i++
	}
	if i == start && (i >= len(s) || s[i] != '.') {
		return 0, nil, false
	}
	for i < len(s) && (isDigit(s[i]) || s[i] == '.') {
		i++
	}
	if i >= len(s) {
		return delay, nil, true
	}
	if c := s[i]; c != ';' && c != ',' && !isSpace(c) {
		return 0, nil, false
	}
	i = skipASCIISpace(s, i)
	if i < len(s) && (s[i] == ';' || s[i] == ',') {
		i++
	}
	i = skipASCIISpace(s, i)
	if i >= len(s) {
		return delay, nil, true
	}
	target = s[i:] // "parse" below takes the rest as it is
	if lowerIs(s, i, 'u') {
		if j := i + 1; lowerIs(s, j, 'r') && lowerIs(s, j+1, 'l') {
			j = skipASCIISpace(s, j+2)
			if j < len(s) && s[j] == '=' {
				j = skipASCIISpace(s, j+1)
				target = unquote(s[j:])
			}
		}
	} else {
		target = unquote(target)
	}
	return delay, target, true
}

// unquote removes a leading quote from s and cuts s at the next one.
func unquote(s []byte) []byte {
	if len(s) == 0 || (s[0] != '\'' && s[0] != '"') {
		return s
	}
	q := s[0]
	s = s[1:]
	for i := range s {
		if s[i] == q {
			return s[:i]
		}
	}
	return s
}

func lowerIs(s []byte, i int, c byte) bool { return i < len(s) && s[i]|0x20 == c }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func skipASCIISpace(s []byte, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// Refresh resolves a refresh declaration's URL against base: the page it
// sends the reader to, when that is an http(s) URL other than page itself
// (both without fragment); nil when it has none, or reloads the page.
func (e *Extractor) Refresh(content []byte, base, page *url.URL) *url.URL {
	_, target, ok := ParseRefresh(content)
	if !ok || len(target) == 0 {
		return nil
	}
	u, ok := e.resolveHref(target, base)
	if !ok || sameDocument(u, page) {
		return nil
	}
	return u
}

// sameDocument reports whether u is page without its fragment.
func sameDocument(u, page *url.URL) bool {
	if page == nil {
		return false
	}
	p := *page
	p.Fragment, p.RawFragment = "", ""
	return u.String() == p.String()
}
