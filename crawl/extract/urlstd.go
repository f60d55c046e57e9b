package extract

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
)

// The URL Standard reads some hrefs of an http(s) page otherwise than
// net/url does, and every browser follows the Standard: a backslash is a
// slash before the query; "https:host/x" and "http:///host" name the host
// (the slashes after a special scheme are optional, and any number of
// them, of either kind, do); "http:x" on an http page is relative, as is
// ":x"; "///host" is a host; a host may be percent-encoded
// ("ex%41mple.com"); a user name may hold bytes net/url refuses. standard
// rewrites such an href into the one net/url resolves to the Standard's
// URL, so that links resolve as a browser resolves them; the hrefs of
// nearly every page need none of it, and cost one scan.

// standard returns href, cleaned (see cleanHref), rewritten for net/url
// as the URL Standard parses it against a base of scheme baseScheme
// ("http" or "https"), and false when the Standard fails to parse it. It
// may return href itself, or e.alt's bytes.
func (e *Extractor) standard(href []byte, baseScheme string) ([]byte, bool) {
	scheme, rest, hasScheme := splitScheme(href)
	if hasScheme && !equalLower(scheme, "http") && !equalLower(scheme, "https") {
		return href, true // not a special scheme: net/url's reading stands
	}
	end := len(href)
	if i := bytes.IndexAny(href, "?#"); i >= 0 {
		end = i
	}
	if bytes.IndexByte(href[:end], '\\') >= 0 {
		e.alt = append(e.alt[:0], href...)
		for i, c := range e.alt[:end] {
			if c == '\\' {
				e.alt[i] = '/'
			}
		}
		href = e.alt
		scheme, rest, _ = splitScheme(href)
	}
	switch {
	case hasScheme && equalLower(scheme, baseScheme) && !bytes.HasPrefix(rest, []byte("//")):
		// "http:x", "http:/x" on an http page: relative, the scheme says
		// nothing more.
		href = rest
		hasScheme = false
	case hasScheme:
		// The authority follows whatever slashes there are, or none.
		n := 0
		for n < len(rest) && rest[n] == '/' {
			n++
		}
		if n != 2 {
			if n == len(rest) {
				return nil, false // no host
			}
			b := make([]byte, 0, len(scheme)+3+len(rest)-n)
			b = append(append(append(b, scheme...), "://"...), rest[n:]...)
			href = b
		}
		rest = href[len(scheme)+3:]
		return e.authority(href, len(href)-len(rest))
	}
	if !hasScheme && bytes.HasPrefix(href, []byte("//")) {
		n := 2
		for n < len(href) && href[n] == '/' {
			n++
		}
		if n == len(href) {
			return nil, false // "///": no host
		}
		if n > 2 {
			href = href[n-2:]
		}
		return e.authority(href, 2)
	}
	// A path whose first segment holds a colon (":x", "[a:b]") is not a
	// scheme to the Standard, but net/url refuses it: "./" keeps it a path.
	for _, c := range href {
		if c == '/' || c == '?' || c == '#' {
			break
		}
		if c == ':' {
			return append([]byte("./"), href...), true
		}
	}
	return href, true
}

// splitScheme splits href at the colon that ends its scheme, when it
// starts with one (an ASCII letter, then letters, digits, '+', '-', '.').
func splitScheme(href []byte) (scheme, rest []byte, ok bool) {
	for i, c := range href {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case c == ':' && i > 0:
			return href[:i], href[i+1:], true
		default:
			return nil, href, false
		}
	}
	return nil, href, false
}

// authority rewrites the authority of href, which starts at start (after
// "//"), where net/url reads it otherwise than the Standard: a user name
// or password with bytes net/url refuses is percent-encoded, and a
// percent-encoded host is decoded (net/url refuses "%41" in a host). It
// returns false when the decoded host holds a code point no domain may
// hold, a failure to the Standard.
func (e *Extractor) authority(href []byte, start int) ([]byte, bool) {
	end := len(href)
	if i := bytes.IndexAny(href[start:], "/?#"); i >= 0 {
		end = start + i
	}
	auth := href[start:end]
	at := bytes.LastIndexByte(auth, '@')
	host := auth[at+1:]
	needUser := at >= 0 && !validUserinfo(auth[:at])
	pct := bytes.IndexByte(host, '%') >= 0 && (len(host) == 0 || host[0] != '[')
	if !needUser && !pct {
		return href, true
	}
	b := make([]byte, 0, len(href)+16)
	b = append(b, href[:start]...)
	if at >= 0 {
		if needUser {
			b = escapeUserinfo(b, auth[:at])
		} else {
			b = append(b, auth[:at]...)
		}
		b = append(b, '@')
	}
	if pct {
		name, port := host, []byte(nil)
		if i := bytes.LastIndexByte(host, ':'); i >= 0 {
			name, port = host[:i], host[i:]
		}
		var ok bool
		if b, ok = unescapeHost(b, name); !ok {
			return nil, false
		}
		b = append(b, port...)
	} else {
		b = append(b, host...)
	}
	return append(b, href[end:]...), true
}

// validUserinfo reports whether net/url takes u as a URL's user
// information (RFC 3986's characters).
func validUserinfo(u []byte) bool {
	for _, c := range u {
		if !userinfoByte(c) {
			return false
		}
	}
	return true
}

func userinfoByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return bytes.IndexByte([]byte("-._:~!$&'()*+,;=%@"), c) >= 0
}

// escapeUserinfo appends u with the bytes net/url refuses percent-encoded,
// as the Standard's userinfo percent-encode set has them.
func escapeUserinfo(b, u []byte) []byte {
	for _, c := range u {
		if userinfoByte(c) {
			b = append(b, c)
			continue
		}
		b = appendPct(b, c)
	}
	return b
}

// unescapeHost appends name percent-decoded, and reports false when the
// result holds a forbidden domain code point of the Standard (a C0
// control, space, # % / : < > ? @ [ \ ] ^ | or DEL) or is not UTF-8 (both
// are failures of the Standard's host parser).
func unescapeHost(b, name []byte) ([]byte, bool) {
	start := len(b)
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '%' && i+2 < len(name) && isHex(name[i+1]) && isHex(name[i+2]) {
			c = unhex(name[i+1])<<4 | unhex(name[i+2])
			i += 2
		}
		b = append(b, c)
	}
	for _, c := range b[start:] {
		if c <= ' ' || c == 0x7f || bytes.IndexByte([]byte("#%/:<>?@[\\]^|"), c) >= 0 {
			return nil, false
		}
	}
	return b, utf8.Valid(b[start:])
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// QueryEncoding is the encoding the URL Standard percent-encodes a link's
// query in on a page of this encoding: the page's own, but UTF-8 for
// UTF-8 and UTF-16 pages (nil).
func (enc Encoding) QueryEncoding() encoding.Encoding {
	switch enc.Name {
	case "", "utf-8", "utf-16le", "utf-16be", "replacement":
		return nil
	}
	e, err := htmlindex.Get(enc.Name) // strict: charset.Lookup's writes "&#N;" itself
	if err != nil {
		return nil
	}
	return e
}

// standardQuery returns q percent-encoded as the URL Standard encodes a
// special URL's query: C0 controls, space, '"', '#', '<', '>', '\” and
// every byte of a non-ASCII character, the character encoded first in
// enc (nil: UTF-8; a character enc cannot encode becomes "&#N;", the
// Standard's HTML error mode). net/url keeps a query's bytes as written.
// q is returned itself when it needs nothing.
func standardQuery(q string, enc encoding.Encoding) string {
	i := 0
	for i < len(q) && !queryEscaped(q[i]) {
		i++
	}
	if i == len(q) {
		return q
	}
	b := make([]byte, 0, len(q)+16)
	b = append(b, q[:i]...)
	for i < len(q) {
		c := q[i]
		if !queryEscaped(c) {
			b = append(b, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = appendPct(b, c)
			i++
			continue
		}
		// A run of non-ASCII text, encoded in enc.
		j := i
		for j < len(q) && q[j] >= utf8.RuneSelf {
			j++
		}
		b = encodeQuery(b, q[i:j], enc)
		i = j
	}
	return string(b)
}

// encodeQuery appends run, non-ASCII text of a query, encoded in enc
// (nil: UTF-8) and percent-encoded as the Standard's "percent-encode
// after encoding" does: each byte of the query percent-encode set
// escaped, and a character enc cannot encode as "%26%23N%3B" (its "&#N;"
// escaped).
func encodeQuery(b []byte, run string, enc encoding.Encoding) []byte {
	escape := func(raw []byte) {
		for _, c := range raw {
			if queryEscaped(c) {
				b = appendPct(b, c)
			} else {
				b = append(b, c)
			}
		}
	}
	if enc == nil {
		escape([]byte(run))
		return b
	}
	if out, err := enc.NewEncoder().String(run); err == nil {
		escape([]byte(out)) // the common case: the page's text is its encoding's
		return b
	}
	// A character the encoding lacks (a page's &#N; entity): character by
	// character, each encoded alone.
	for _, r := range run {
		out, err := enc.NewEncoder().String(string(r))
		if err != nil {
			b = strconv.AppendInt(append(b, "%26%23"...), int64(r), 10)
			b = append(b, "%3B"...)
			continue
		}
		escape([]byte(out))
	}
	return b
}

// queryEscaped reports whether the Standard percent-encodes byte c of a
// special URL's query.
func queryEscaped(c byte) bool {
	return c <= ' ' || c >= 0x7f || c == '"' || c == '#' || c == '<' || c == '>' || c == '\''
}

// appendPct appends c percent-encoded, in upper-case hex as the URL
// Standard writes it.
func appendPct(b []byte, c byte) []byte {
	const hex = "0123456789ABCDEF"
	return append(b, '%', hex[c>>4], hex[c&15])
}
