package extract

import (
	"bytes"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// The scanner reads attributes in place, and must change them exactly as
// the tokenizer's TagAttr does: NUL to U+FFFD, CR LF and CR to LF, and
// character references unescaped by x/net/html's unescape(v, true), which
// is not exported. The numeric references are ported here whole; of the
// 2,231 named ones only a few that pages use in attributes are known
// (simpleNames), with the values x/net/html itself gives them. A tag with
// any other '&' is read by a tokenizer of its own (rawAttrs).

// simpleNames are the named references unescapeAttr decodes, each with
// its ';': a name with a ';' means the same in an attribute as in text.
var simpleNames = func() map[string]rune {
	m := map[string]rune{}
	for _, n := range []string{"amp;", "lt;", "gt;", "quot;", "apos;", "nbsp;", "copy;", "reg;", "hellip;",
		"mdash;", "ndash;", "laquo;", "raquo;", "middot;", "bull;", "lsquo;", "rsquo;", "ldquo;", "rdquo;",
		"euro;", "pound;", "times;", "eacute;"} {
		r := []rune(html.UnescapeString("&" + n))
		if len(r) != 1 {
			panic("extract: no single rune for &" + n)
		}
		m[n] = r[0]
	}
	return m
}()

// entityName returns the end of the name of the reference at s[0] == '&':
// the longest run of ASCII letters and digits after it, with the ';' that
// follows it, if one does (x/net/html's unescapeEntity).
func entityName(s []byte) int {
	i := 1
	for i < len(s) {
		c := s[i]
		i++
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			continue
		}
		if c != ';' {
			i--
		}
		break
	}
	return i
}

// simpleEntities reports whether every '&' of a tag is one that
// unescapeAttr handles: numeric, a name of simpleNames, or no name at all.
// The names are read in the raw tag: a value ends with a quote, a space or
// '>', none of which a name holds, so a name read there is the name read
// in the value.
func simpleEntities(raw []byte) bool {
	for {
		i := bytes.IndexByte(raw, '&')
		if i < 0 {
			return true
		}
		raw = raw[i:]
		if len(raw) > 1 && raw[1] != '#' {
			if n := entityName(raw); n > 1 {
				if _, ok := simpleNames[string(raw[1:n])]; !ok {
					return false
				}
			}
		}
		raw = raw[1:]
	}
}

// replacementTable is x/net/html's: numeric references to 0x80–0x9F are
// read as Windows-1252.
var replacementTable = [...]rune{
	'\u20AC', '\u0081', '\u201A', '\u0192', '\u201E', '\u2026', '\u2020', '\u2021',
	'\u02C6', '\u2030', '\u0160', '\u2039', '\u0152', '\u008D', '\u017D', '\u008F',
	'\u0090', '\u2018', '\u2019', '\u201C', '\u201D', '\u2022', '\u2013', '\u2014',
	'\u02DC', '\u2122', '\u0161', '\u203A', '\u0153', '\u009D', '\u017E', '\u0178',
}

// entityAt decodes the reference at s[0] == '&' in an attribute value: the
// rune and the bytes it took, or 0 bytes when it is a plain '&'. Numeric
// references are x/net/html's unescapeEntity; a name must be one of
// simpleNames (simpleEntities checked it).
func entityAt(s []byte) (rune, int) {
	if len(s) <= 1 {
		return 0, 0
	}
	if s[1] != '#' {
		n := entityName(s)
		if r, ok := simpleNames[string(s[1:n])]; ok {
			return r, n
		}
		return 0, 0
	}
	if len(s) <= 2 {
		return 0, 0
	}
	i := 2
	hex := false
	if c := s[i]; c == 'x' || c == 'X' {
		hex = true
		i++
	}
	i0 := i
	x := rune(0)
	for i < len(s) {
		c := s[i]
		var d, mult rune
		switch {
		case '0' <= c && c <= '9':
			d = rune(c) - '0'
		case hex && 'a' <= c && c <= 'f':
			d = rune(c) - 'a' + 10
		case hex && 'A' <= c && c <= 'F':
			d = rune(c) - 'A' + 10
		default:
			goto done
		}
		mult = 10
		if hex {
			mult = 16
		}
		if x <= 0x10FFFF {
			x = mult*x + d
		}
		i++
	}
done:
	if i == i0 {
		return 0, 0
	}
	if i < len(s) && s[i] == ';' {
		i++
	}
	switch {
	case 0x80 <= x && x <= 0x9F:
		x = replacementTable[x-0x80]
	case x == 0 || 0xD800 <= x && x <= 0xDFFF || x > 0x10FFFF:
		x = '\uFFFD'
	}
	return x, i
}

// unescapeAttr unescapes b[start:] in place, as an attribute value whose
// references simpleEntities accepted; it returns b cut to the new end. A
// reference is never shorter than its UTF-8 encoding, so the output never
// overtakes the input.
func unescapeAttr(b []byte, start int) []byte {
	dst := start
	for src := start; src < len(b); {
		c := b[src]
		if c != '&' {
			b[dst] = c
			dst++
			src++
			continue
		}
		r, n := entityAt(b[src:])
		if n == 0 {
			b[dst] = '&'
			dst++
			src++
			continue
		}
		src += n
		dst += utf8.EncodeRune(b[dst:], r)
	}
	return b[:dst]
}

// appendNULFixed appends b to dst with each NUL made U+FFFD.
func appendNULFixed(dst, b []byte) []byte {
	for {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return append(dst, b...)
		}
		dst = append(append(dst, b[:i]...), "\ufffd"...)
		b = b[i+1:]
	}
}

// convertNewlines converts "\r" and "\r\n" in s to "\n", in place (x/net/html's).
func convertNewlines(s []byte) []byte {
	for i, c := range s {
		if c != '\r' {
			continue
		}
		src := i + 1
		if src >= len(s) || s[src] != '\n' {
			s[i] = '\n'
			continue
		}
		dst := i
		for src < len(s) {
			if s[src] == '\r' {
				if src+1 < len(s) && s[src+1] == '\n' {
					src++
				}
				s[dst] = '\n'
			} else {
				s[dst] = s[src]
			}
			src++
			dst++
		}
		return s[:dst]
	}
	return s
}
