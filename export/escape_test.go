package export

import (
	"encoding/xml"
	"strings"
	"testing"
	"unicode/utf8"
)

// escapeSeeds seed the fuzz targets: the strings that break naive writers.
var escapeSeeds = []string{
	"", "plain", `"quoted" & 'single' <tag>`, "]]>", "--", "a\x00b", "\xff\xfe", "\xc3",
	"\xed\xa0\x80", "\r\n\r", "\t", "\uFFFE\uFFFF", "\u0085", "\x7f", `\`, `\"`, `\\"`,
	"&#0;", "&amp;", "\U0010FFFF", "é中🕸️",
}

func TestAppendXMLText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{`a&b<c>d"e'f`, "a&amp;b&lt;c&gt;d&quot;e&apos;f"},
		{"]]>", "]]&gt;"},
		{"nul\x00\x01\x1f end", "nul end"},
		{"cr\r\nlf\ttab", "cr&#xD;\nlf\ttab"},
		{"bad\xff\xfe!", "bad\uFFFD\uFFFD!"},
		{"\uFFFE\uFFFF\uFFFD", "\uFFFD"},
		{"\u0085 \U0001F578", "\u0085 \U0001F578"},
	} {
		if got := string(appendXMLText(nil, tc.in)); got != tc.want {
			t.Errorf("appendXMLText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestAppendDOTString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", `"plain"`},
		{`say "hi"`, `"say \"hi\""`},
		{`back\slash\`, `"back\\slash\\"`},
		{"two\nlines\r\n", `"two\nlines\n"`},
		{"tab\there", `"tab here"`},
		{"AT&T &#0;", `"AT&amp;T &amp;#0;"`},
		{"nul\x00\x7f\u0085!", `"nul!"`},
		{"bad\xff", "\"bad\uFFFD\""},
	} {
		if got := string(appendDOTString(nil, tc.in)); got != tc.want {
			t.Errorf("appendDOTString(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// FuzzAppendXMLText checks that any string gives character data an XML
// parser reads back as the string minus what XML cannot hold.
func FuzzAppendXMLText(f *testing.F) {
	for _, s := range escapeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		doc := append([]byte("<a>"), appendXMLText(nil, s)...)
		doc = append(doc, "</a>"...)
		var got string
		if err := xml.Unmarshal(doc, &got); err != nil {
			t.Fatalf("%q gives a document that does not parse: %v\n%q", s, err, doc)
		}
		var want strings.Builder
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			if xmlChar(r) {
				want.WriteRune(r)
			}
			i += n
		}
		if got != want.String() {
			t.Errorf("%q: read back %q, want %q", s, got, want.String())
		}
	})
}

// FuzzAppendDOTString checks that any string gives one DOT string token:
// quoted, no bare quote or control character inside, valid UTF-8, not
// ending in an escaping backslash, and reading back as the string.
func FuzzAppendDOTString(f *testing.F) {
	for _, s := range escapeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := string(appendDOTString(nil, s))
		if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' || !utf8.ValidString(q) {
			t.Fatalf("%q: bad token %q", s, q)
		}
		var got strings.Builder
		body := q[1 : len(q)-1]
		for i := 0; i < len(body); i++ {
			c := body[i]
			switch {
			case c < 0x20 || c == 0x7F:
				t.Fatalf("%q: control byte %#x in %q", s, c, q)
			case c == '"':
				t.Fatalf("%q: bare quote in %q", s, q)
			case c == '\\':
				if i+1 == len(body) {
					t.Fatalf("%q: trailing backslash escapes the closing quote in %q", s, q)
				}
				i++
				switch body[i] {
				case '\\', '"':
					got.WriteByte(body[i])
				case 'n':
					got.WriteByte('\n')
				default:
					t.Fatalf("%q: escape \\%c in %q", s, body[i], q)
				}
			case strings.HasPrefix(body[i:], "&amp;"):
				got.WriteByte('&')
				i += len("&amp;") - 1
			case c == '&':
				t.Fatalf("%q: bare & in %q", s, q)
			default:
				got.WriteByte(c)
			}
		}
		var want strings.Builder
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			i += n
			switch {
			case r == '\t':
				want.WriteByte(' ')
			case r == '\r', r == 0x7F, r >= 0x80 && r < 0xA0, !xmlChar(r):
			default:
				want.WriteRune(r)
			}
		}
		if got.String() != want.String() {
			t.Errorf("%q: read back %q, want %q", s, got.String(), want.String())
		}
	})
}

// FuzzAppendXMLAttr checks that any string gives an attribute value an
// XML parser reads back as the string minus what XML cannot hold: tabs,
// newlines and carriage returns survive attribute-value normalization.
func FuzzAppendXMLAttr(f *testing.F) {
	for _, s := range escapeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		doc := append([]byte(`<a v="`), appendXMLAttr(nil, s)...)
		doc = append(doc, `"/>`...)
		var got struct {
			V string `xml:"v,attr"`
		}
		if err := xml.Unmarshal(doc, &got); err != nil {
			t.Fatalf("%q gives a document that does not parse: %v\n%q", s, err, doc)
		}
		var want strings.Builder
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			if xmlChar(r) {
				want.WriteRune(r)
			}
			i += n
		}
		if got.V != want.String() {
			t.Errorf("%q: read back %q, want %q", s, got.V, want.String())
		}
	})
}
