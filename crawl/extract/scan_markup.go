package extract

import (
	"bytes"

	"golang.org/x/net/html"
)

// readComment reads a comment after its "<!--".
func (s *scanner) readComment() {
	s.data.start = s.pos
	s.data.end = s.commentEnd()
	if s.data.end < s.data.start {
		s.data.end = s.data.start // "<!-->"
	}
}

// commentEnd reads up to the end of a comment and returns where its text
// ends.
func (s *scanner) commentEnd() int {
	dashes, beginning := 0, true
	for {
		c := s.readByte()
		if s.eof {
			return s.abruptCommentEnd()
		}
		switch c {
		case '-':
			dashes++
			continue
		case '>':
			if dashes >= 2 || beginning {
				return s.pos - len("-->")
			}
		case '!':
			if dashes >= 2 {
				c = s.readByte()
				if s.eof {
					return s.abruptCommentEnd()
				} else if c == '>' {
					return s.pos - len("--!>")
				} else if c == '-' {
					dashes = 1
					beginning = false
					continue
				}
			}
		}
		dashes = 0
		beginning = false
	}
}

// abruptCommentEnd is the tokenizer's calculateAbruptCommentDataEnd.
func (s *scanner) abruptCommentEnd() int {
	raw := s.b[s.raw.start:s.pos]
	if len(raw) >= len("<!--") {
		raw = raw[len("<!--"):]
		switch {
		case bytes.HasSuffix(raw, []byte("--!")):
			return s.pos - 3
		case bytes.HasSuffix(raw, []byte("--")):
			return s.pos - 2
		case bytes.HasSuffix(raw, []byte("-")):
			return s.pos - 1
		}
	}
	return s.pos
}

// readUntilCloseAngle reads up to and including the next '>'.
func (s *scanner) readUntilCloseAngle() {
	s.data.start = s.pos
	i := bytes.IndexByte(s.b[s.pos:], '>')
	if i < 0 {
		s.pos, s.eof = len(s.b), true
		s.data.end = s.pos
		return
	}
	s.pos += i + 1
	s.data.end = s.pos - 1
}

// readMarkupDeclaration reads what follows "<!": a comment, a doctype or
// a bogus comment (CDATA sections are bogus comments: the tokenizer's
// AllowCDATA is off).
func (s *scanner) readMarkupDeclaration() html.TokenType {
	s.data.start = s.pos
	var c [2]byte
	for i := range 2 {
		c[i] = s.readByte()
		if s.eof {
			s.data.end = s.pos
			if i == 1 && c[0] == '>' {
				s.data.end--
			}
			return html.CommentToken
		}
	}
	if c[0] == '-' && c[1] == '-' {
		s.readComment()
		return html.CommentToken
	}
	s.pos -= 2
	if s.readDoctype() {
		return html.DoctypeToken
	}
	s.readUntilCloseAngle()
	return html.CommentToken
}

// readDoctype reads "DOCTYPE" (any case) and what follows up to '>', or
// backs up and reports false.
func (s *scanner) readDoctype() bool {
	const d = "DOCTYPE"
	for i := 0; i < len(d); i++ {
		c := s.readByte()
		if s.eof {
			// The tokenizer backs up and forgets the end for now.
			s.pos, s.eof = s.data.start, false
			return false
		}
		if c != d[i] && c != d[i]+('a'-'A') {
			s.pos = s.data.start
			return false
		}
	}
	if s.skipWhiteSpace(); s.eof {
		s.data.start, s.data.end = s.pos, s.pos
		return true
	}
	s.readUntilCloseAngle()
	return true
}
