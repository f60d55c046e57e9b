package export

import (
	"strings"
	"time"
	"unicode/utf8"
)

// Titles and descriptions come from arbitrary web pages: any bytes at all.
// Each format gets them through one of these functions, which never fail
// and always give text its readers accept.

// xmlChar reports whether r may appear in an XML 1.0 document (the Char
// production): tab, newline, carriage return, and everything from space on
// except surrogates and U+FFFE, U+FFFF.
func xmlChar(r rune) bool {
	switch {
	case r == '\t', r == '\n', r == '\r':
		return true
	case r < 0x20:
		return false
	case r <= 0xD7FF:
		return true
	case r < 0xE000:
		return false
	case r <= 0xFFFD:
		return true
	case r < 0x10000:
		return false
	}
	return r <= utf8.MaxRune
}

// appendXMLText appends s as XML character data: invalid UTF-8 becomes
// U+FFFD, characters XML 1.0 forbids (NUL, other C0 controls, U+FFFE,
// U+FFFF) are dropped, and the markup characters are escaped, so "]]>" and
// quotes are harmless too. A carriage return is written as a reference so
// that parsers do not turn it into a newline.
func appendXMLText(dst []byte, s string) []byte { return appendXML(dst, s, false) }

// appendXMLAttr is appendXMLText for an attribute value: tab and newline
// are written as references too, which attribute-value normalization
// would otherwise turn into spaces.
func appendXMLAttr(dst []byte, s string) []byte { return appendXML(dst, s, true) }

func appendXML(dst []byte, s string, attr bool) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == '&':
				dst = append(dst, "&amp;"...)
			case c == '<':
				dst = append(dst, "&lt;"...)
			case c == '>':
				dst = append(dst, "&gt;"...)
			case c == '"':
				dst = append(dst, "&quot;"...)
			case c == '\'':
				dst = append(dst, "&apos;"...)
			case c == '\r':
				dst = append(dst, "&#xD;"...)
			case attr && c == '\t':
				dst = append(dst, "&#x9;"...)
			case attr && c == '\n':
				dst = append(dst, "&#xA;"...)
			case c == '\t', c == '\n', c >= 0x20:
				dst = append(dst, c)
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, "\uFFFD"...)
		case xmlChar(r):
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}

// appendDOTString appends s as a double-quoted DOT string that Graphviz
// reads back as s: invalid UTF-8 becomes U+FFFD, a newline becomes the
// escString "\n", other characters XML forbids are dropped (Graphviz
// copies strings into SVG, which is XML), '\' and '"' are escaped, and '&'
// is written as "&amp;" because Graphviz decodes HTML entities in strings:
// a title holding "&#0;" would otherwise reach the SVG as a NUL.
func appendDOTString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == '"':
				dst = append(dst, `\"`...)
			case c == '\\':
				dst = append(dst, `\\`...)
			case c == '&':
				dst = append(dst, "&amp;"...)
			case c == '\n':
				dst = append(dst, `\n`...)
			case c == '\t':
				dst = append(dst, ' ')
			case c >= 0x20 && c != 0x7F:
				dst = append(dst, c)
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, "\uFFFD"...)
		case r >= 0x80 && r < 0xA0: // C1 controls: legal, but no font draws them
		case xmlChar(r):
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// validUTF8 returns s with each byte that is not part of valid UTF-8
// replaced by U+FFFD, as encoding/json does: SQLite stores any bytes in
// TEXT, but its clients (Python's sqlite3 among them) fail on a value that
// does not decode.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isoTime formats t in RFC 3339, UTC, for the text formats; "" when zero.
func isoTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
