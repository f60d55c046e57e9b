package extract

import (
	"bytes"
	"io"

	"golang.org/x/net/html"
)

// scanner gives the tokens x/net/html's Tokenizer gives for a page held in
// memory, with the same boundaries (Raw), types, text and attributes, at
// several times its speed: text, quoted attribute values and raw text are
// skipped with bytes.IndexByte rather than read a byte at a time through
// a reader, and attributes are only located, not copied, lowered and
// deduplicated, until page asks for those of a tag it wants.
//
// Each step below is the Tokenizer method of the same name (x/net v0.62.0,
// token.go) with the input as a slice: readByte's io.EOF is pos reaching
// len(b). The Tokenizer stays the reference: FuzzScanner compares the two
// token by token and page by page. The scanner has no MaxBuf: PageBytes
// uses the tokenizer for a page that could exceed it.
type scanner struct {
	b         []byte
	pos       int  // the next byte to read: the tokenizer's raw.end
	raw, data span // as the tokenizer's
	eof       bool // a read went past the end: the tokenizer's err == io.EOF
	tt        html.TokenType
	rawTag    string // see the tokenizer's rawTag
	scripting bool   // a <noscript> holds raw text (Extractor.Scripting)
	textIsRaw bool
	// convertNUL: NULs in the text become U+FFFD (raw text and RCDATA).
	convertNUL bool
	// lastVal is the value of the last attribute readTag saved (the
	// tokenizer's z.attr[nAttrs-1][1]), valid when nAttr > 0.
	lastVal span
	nAttr   int
	keys    []span          // the keys saved so far in the tag being read
	seen    map[string]bool // the same, lowered, on a tag with many attributes
	text    []byte          // Text's copy when it must change the bytes
	fix     []byte          // attrs' rewritten keys and values, for the current token
}

// span is a range of the input, start inclusive, end exclusive.
type span struct{ start, end int }

// reset starts scanning b.
func (s *scanner) reset(b []byte) {
	*s = scanner{b: b, keys: s.keys[:0], text: s.text[:0], fix: s.fix[:0], seen: s.seen}
	clear(s.seen)
}

// readByte is the tokenizer's: the next byte, or 0 and eof at the end.
func (s *scanner) readByte() byte {
	if s.pos >= len(s.b) {
		s.eof = true
		return 0
	}
	c := s.b[s.pos]
	s.pos++
	return c
}

// Err is io.EOF once Next has returned html.ErrorToken.
func (s *scanner) Err() error {
	if s.tt != html.ErrorToken {
		return nil
	}
	return io.EOF
}

// Raw is the current token's bytes.
func (s *scanner) Raw() []byte { return s.b[s.raw.start:s.raw.end] }

// attrs iterates over the current start tag's attributes (see rawAttrs).
func (s *scanner) attrs() attrs { return rawAttrs(s.Raw(), &s.fix) }

// Text is the tokenizer's Text: the text of a text, comment or doctype
// token, with CR LF and CR made LF, NULs made U+FFFD where the tokenizer
// does, and entities unescaped unless the text is raw. A second call for
// the same token returns nothing, as the tokenizer's does.
func (s *scanner) Text() []byte {
	switch s.tt {
	case html.TextToken, html.CommentToken, html.DoctypeToken:
	default:
		return nil
	}
	t := s.b[s.data.start:s.data.end]
	s.data = span{s.raw.end, s.raw.end}
	nul := (s.convertNUL || s.tt == html.CommentToken) && bytes.IndexByte(t, 0) >= 0
	cr := bytes.IndexByte(t, '\r') >= 0
	amp := !s.textIsRaw && bytes.IndexByte(t, '&') >= 0
	if !nul && !cr && !amp {
		return t // nothing to change: the input itself
	}
	t = convertNewlines(append(s.text[:0], t...))
	if nul {
		t = bytes.ReplaceAll(t, []byte{0}, []byte("\ufffd"))
	}
	if amp {
		t = append(t[:0], html.UnescapeString(string(t))...)
	}
	s.text = t
	return t
}

// Next is the tokenizer's Next.
func (s *scanner) Next() html.TokenType {
	s.raw = span{s.pos, s.pos}
	s.data = span{s.pos, s.pos}
	s.fix = s.fix[:0]
	if s.eof {
		s.tt = html.ErrorToken
		return s.tt
	}
	if s.rawTag != "" {
		if s.rawTag == "plaintext" {
			s.pos, s.eof = len(s.b), true
			s.data.end = s.pos
			s.textIsRaw = true
		} else {
			s.readRawOrRCDATA()
		}
		if s.data.end > s.data.start {
			s.raw.end = s.pos
			s.tt, s.convertNUL = html.TextToken, true
			return s.tt
		}
	}
	s.textIsRaw, s.convertNUL = false, false
	s.tt = s.next()
	s.raw.end = s.pos
	return s.tt
}

// next is the loop of the tokenizer's Next after its raw text.
func (s *scanner) next() html.TokenType {
	for {
		i := bytes.IndexByte(s.b[s.pos:], '<')
		if i < 0 {
			s.pos, s.eof = len(s.b), true
			break
		}
		s.pos += i + 1
		c := s.readByte()
		if s.eof {
			break
		}
		var tt html.TokenType
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			tt = html.StartTagToken
		case c == '/':
			tt = html.EndTagToken
		case c == '!' || c == '?':
			tt = html.CommentToken
		default:
			s.pos-- // reconsume c
			continue
		}
		// Text before the tag is a token of its own.
		if x := s.pos - len("<a"); s.raw.start < x {
			s.pos = x
			s.data.end = x
			return html.TextToken
		}
		switch tt {
		case html.StartTagToken:
			return s.readStartTag()
		case html.EndTagToken:
			c = s.readByte()
			if s.eof {
				return s.textToEOF()
			}
			if c == '>' {
				return html.CommentToken // "</>"
			}
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
				s.readTag(false)
				if s.eof {
					return html.ErrorToken
				}
				return html.EndTagToken
			}
			s.pos--
			s.readUntilCloseAngle()
			return html.CommentToken
		default:
			if c == '!' {
				return s.readMarkupDeclaration()
			}
			s.pos--
			s.readUntilCloseAngle()
			return html.CommentToken
		}
	}
	return s.textToEOF()
}

// textToEOF ends the loop at the end of the input: what was read is a
// text token, if anything was.
func (s *scanner) textToEOF() html.TokenType {
	if s.raw.start < s.pos {
		s.data.end = s.pos
		return html.TextToken
	}
	return html.ErrorToken
}

// skipWhiteSpace is the tokenizer's.
func (s *scanner) skipWhiteSpace() {
	for s.pos < len(s.b) && isSpace(s.b[s.pos]) {
		s.pos++
	}
	if s.pos >= len(s.b) {
		s.eof = true
	}
}

// readRawOrRCDATA reads up to the "</" of the end tag of rawTag.
func (s *scanner) readRawOrRCDATA() {
	if s.rawTag == "script" {
		s.readScript()
		s.data.end = s.pos
		s.textIsRaw = true
		s.rawTag = ""
		return
	}
	for {
		i := bytes.IndexByte(s.b[s.pos:], '<')
		if i < 0 {
			s.pos, s.eof = len(s.b), true
			break
		}
		s.pos += i + 1
		c := s.readByte()
		if s.eof {
			break
		}
		if c != '/' {
			s.pos--
			continue
		}
		if s.readRawEndTag() || s.eof {
			break
		}
	}
	s.data.end = s.pos
	// A textarea's or title's RCDATA can hold escaped entities.
	s.textIsRaw = s.rawTag != "textarea" && s.rawTag != "title"
	s.rawTag = ""
}

// readRawEndTag reads rawTag's name after "</" and a byte that ends it;
// when they are there it backs up to the "</" and reports true.
func (s *scanner) readRawEndTag() bool {
	for i := 0; i < len(s.rawTag); i++ {
		c := s.readByte()
		if s.eof {
			return false
		}
		if c != s.rawTag[i] && c != s.rawTag[i]-('a'-'A') {
			s.pos--
			return false
		}
	}
	c := s.readByte()
	if s.eof {
		return false
	}
	switch c {
	case ' ', '\n', '\r', '\t', '\f', '/', '>':
		s.pos -= 3 + len(s.rawTag)
		return true
	}
	s.pos--
	return false
}

// readStartTag reads a start tag after its "<" and first letter: raw
// text follows some, and it may be self-closing.
func (s *scanner) readStartTag() html.TokenType {
	s.readTag(true)
	if s.eof {
		return html.ErrorToken
	}
	name := s.b[s.data.start:s.data.end]
	if len(name) > 0 {
		switch name[0] | 0x20 {
		case 'i', 'n', 'p', 's', 't', 'x':
			for _, t := range [...]string{"iframe", "noembed", "noframes", "noscript", "plaintext", "script", "style", "textarea", "title", "xmp"} {
				if equalFold(name, t) && (t != "noscript" || s.scripting) {
					s.rawTag = t
					break
				}
			}
		}
	}
	// Self-closing: a '/' before the '>' that is not the end of the last
	// saved attribute's unquoted value (<p a=/>).
	if s.b[s.pos-2] == '/' && (s.nAttr == 0 || s.pos-2 != s.lastVal.end-1) {
		return html.SelfClosingTagToken
	}
	return html.StartTagToken
}

// readTag reads a tag's name and attributes, up to and including its '>'.
// With save it tracks the attributes the tokenizer would keep (a non-empty
// key not seen before in the tag, in any case) for readStartTag.
func (s *scanner) readTag(save bool) {
	s.nAttr = 0
	s.keys = s.keys[:0]
	if s.seen != nil {
		clear(s.seen)
	}
	s.readTagName()
	if s.skipWhiteSpace(); s.eof {
		return
	}
	for {
		c := s.readByte()
		if s.eof || c == '>' {
			break
		}
		s.pos--
		key := s.readTagAttrKey()
		val := s.readTagAttrVal()
		if save && key.end > key.start && s.saveKey(key) {
			s.nAttr++
			s.lastVal = val
		}
		if s.skipWhiteSpace(); s.eof {
			break
		}
	}
}

// saveKey reports whether key is new in the tag, remembering it: the
// tokenizer keeps the first of repeated attributes only. A tag of many
// attributes is checked through a map, as the tokenizer does.
func (s *scanner) saveKey(key span) bool {
	k := s.b[key.start:key.end]
	if len(s.seen) > 0 || len(s.keys) >= 16 {
		if s.seen == nil {
			s.seen = map[string]bool{}
		}
		if len(s.seen) == 0 {
			for _, o := range s.keys {
				s.seen[string(lowerASCII(s.b[o.start:o.end]))] = true
			}
		}
		l := string(lowerASCII(k))
		if s.seen[l] {
			return false
		}
		s.seen[l] = true
		s.keys = append(s.keys, key)
		return true
	}
	for _, o := range s.keys {
		if equalFoldBytes(s.b[o.start:o.end], k) {
			return false
		}
	}
	s.keys = append(s.keys, key)
	return true
}

// readTagName sets data to the tag's name; the first letter was read.
func (s *scanner) readTagName() {
	s.data.start = s.pos - 1
	for s.pos < len(s.b) {
		switch s.b[s.pos] {
		case ' ', '\n', '\r', '\t', '\f':
			s.data.end = s.pos
			s.pos++
			return
		case '/', '>':
			s.data.end = s.pos
			return
		}
		s.pos++
	}
	s.eof = true
	s.data.end = s.pos
}

// readTagAttrKey reads an attribute's key: up to whitespace, '/', '>' or
// an '=' that is not its first byte.
func (s *scanner) readTagAttrKey() span {
	start := s.pos
	for s.pos < len(s.b) {
		switch c := s.b[s.pos]; c {
		case '=':
			if s.pos == start {
				break // an '=' first is part of the key
			}
			return span{start, s.pos}
		case ' ', '\n', '\r', '\t', '\f', '/', '>':
			return span{start, s.pos}
		}
		s.pos++
	}
	s.eof = true
	return span{start, s.pos}
}

// readTagAttrVal reads an attribute's value, if it has one.
func (s *scanner) readTagAttrVal() span {
	v := span{s.pos, s.pos}
	if s.skipWhiteSpace(); s.eof {
		return v
	}
	c := s.readByte()
	if c == '/' {
		return v // self-closing state
	}
	if c != '=' {
		s.pos--
		return v
	}
	if s.skipWhiteSpace(); s.eof {
		return v
	}
	q := s.readByte()
	switch q {
	case '>':
		s.pos--
		return v
	case '\'', '"':
		v.start = s.pos
		i := bytes.IndexByte(s.b[s.pos:], q)
		if i < 0 {
			s.pos, s.eof = len(s.b), true
			v.end = s.pos
			return v
		}
		v.end = s.pos + i
		s.pos += i + 1
		return v
	default:
		v.start = s.pos - 1
		for s.pos < len(s.b) {
			switch s.b[s.pos] {
			case ' ', '\n', '\r', '\t', '\f':
				v.end = s.pos
				s.pos++
				return v
			case '>':
				v.end = s.pos
				return v
			}
			s.pos++
		}
		s.eof = true
		v.end = s.pos
		return v
	}
}

// lowerASCII returns a lower-case copy of b (ASCII letters only, as the
// tokenizer's lower).
func lowerASCII(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// equalFoldBytes reports whether a and b are equal ignoring ASCII case.
func equalFoldBytes(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
