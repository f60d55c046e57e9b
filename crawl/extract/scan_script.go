package extract

import (
	"bytes"
	"strconv"
)

// The states of readScript: the tokenizer's labels.
const (
	scriptData = iota
	scriptDataLessThanSign
	scriptDataEndTagOpen
	scriptDataEscapeStart
	scriptDataEscapeStartDash
	scriptDataEscaped
	scriptDataEscapedDash
	scriptDataEscapedDashDash
	scriptDataEscapedLessThanSign
	scriptDataEscapedEndTagOpen
	scriptDataDoubleEscapeStart
	scriptDataDoubleEscaped
	scriptDataDoubleEscapedDash
	scriptDataDoubleEscapedDashDash
	scriptDataDoubleEscapedLessThanSign
	scriptDataDoubleEscapeEnd
)

// readScript reads up to the "</" of the </script> that ends a script,
// following the escaping rules the tokenizer follows (its gotos are the
// states here). It returns at the end of the input too.
func (s *scanner) readScript() {
	state := scriptData
	for {
		if m := scriptMoves[state]; m.ok {
			c := s.readByte()
			if s.eof {
				return
			}
			state = m.by(c)
			continue
		}
		var done bool
		if state, done = s.scriptStep(state); done {
			return
		}
	}
}

// scriptMove is a state of readScript that reads one byte and moves by it
// alone: a dash, a '<', a '>', or anything else (ok: the state is one).
type scriptMove struct {
	dash, lt, gt, other int
	ok                  bool
}

func (m scriptMove) by(c byte) int {
	switch c {
	case '-':
		return m.dash
	case '<':
		return m.lt
	case '>':
		return m.gt
	}
	return m.other
}

// scriptMoves are the (double) escaped states: the tokenizer's, which a
// '>' after two dashes ends.
var scriptMoves = [...]scriptMove{
	scriptDataEscaped:               {scriptDataEscapedDash, scriptDataEscapedLessThanSign, scriptDataEscaped, scriptDataEscaped, true},
	scriptDataEscapedDash:           {scriptDataEscapedDashDash, scriptDataEscapedLessThanSign, scriptDataEscaped, scriptDataEscaped, true},
	scriptDataEscapedDashDash:       {scriptDataEscapedDashDash, scriptDataEscapedLessThanSign, scriptData, scriptDataEscaped, true},
	scriptDataDoubleEscaped:         {scriptDataDoubleEscapedDash, scriptDataDoubleEscapedLessThanSign, scriptDataDoubleEscaped, scriptDataDoubleEscaped, true},
	scriptDataDoubleEscapedDash:     {scriptDataDoubleEscapedDashDash, scriptDataDoubleEscapedLessThanSign, scriptDataDoubleEscaped, scriptDataDoubleEscaped, true},
	scriptDataDoubleEscapedDashDash: {scriptDataDoubleEscapedDashDash, scriptDataDoubleEscapedLessThanSign, scriptData, scriptDataDoubleEscaped, true},
	scriptDataDoubleEscapeEnd:       {}, // the array spans every state
}

// scriptStep runs one of readScript's other states and returns the next,
// or done at the end of the script or of the input.
func (s *scanner) scriptStep(state int) (next int, done bool) {
	switch state {
	case scriptData:
		i := bytes.IndexByte(s.b[s.pos:], '<')
		if i < 0 {
			s.pos, s.eof = len(s.b), true
			return 0, true
		}
		s.pos += i + 1
		return scriptDataLessThanSign, false
	case scriptDataLessThanSign:
		return s.scriptPeek('/', scriptDataEndTagOpen, '!', scriptDataEscapeStart, scriptData)
	case scriptDataEscapeStart:
		return s.scriptPeek('-', scriptDataEscapeStartDash, '-', scriptDataEscapeStartDash, scriptData)
	case scriptDataEscapeStartDash:
		return s.scriptPeek('-', scriptDataEscapedDashDash, '-', scriptDataEscapedDashDash, scriptData)
	case scriptDataDoubleEscapedLessThanSign:
		return s.scriptPeek('/', scriptDataDoubleEscapeEnd, '/', scriptDataDoubleEscapeEnd, scriptDataDoubleEscaped)
	case scriptDataEndTagOpen:
		return scriptData, s.readRawEndTag() || s.eof
	case scriptDataEscapedEndTagOpen:
		return scriptDataEscaped, s.readRawEndTag() || s.eof
	case scriptDataEscapedLessThanSign:
		c := s.readByte()
		switch {
		case s.eof:
			return 0, true
		case c == '/':
			return scriptDataEscapedEndTagOpen, false
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			return scriptDataDoubleEscapeStart, false
		}
		s.pos--
		return scriptData, false
	case scriptDataDoubleEscapeStart:
		return s.scriptDoubleEscapeStart()
	case scriptDataDoubleEscapeEnd:
		if s.readRawEndTag() {
			s.pos += len("</script>")
			return scriptDataEscaped, false
		}
		return scriptDataDoubleEscaped, s.eof
	}
	panic("extract: readScript: no state " + strconv.Itoa(state))
}

// scriptPeek reads a byte and moves to toA after a, to toB after b, or
// backs up to read it again in other.
func (s *scanner) scriptPeek(a byte, toA int, b byte, toB int, other int) (int, bool) {
	c := s.readByte()
	switch {
	case s.eof:
		return 0, true
	case c == a:
		return toA, false
	case c == b:
		return toB, false
	}
	s.pos--
	return other, false
}

// scriptDoubleEscapeStart reads "script" and a byte that ends it after
// "<" in an escaped script: the script is then double escaped.
func (s *scanner) scriptDoubleEscapeStart() (int, bool) {
	s.pos--
	for i := 0; i < len("script"); i++ {
		c := s.readByte()
		if s.eof {
			return 0, true
		}
		if c != "script"[i] && c != "SCRIPT"[i] {
			s.pos--
			return scriptDataEscaped, false
		}
	}
	c := s.readByte()
	if s.eof {
		return 0, true
	}
	switch c {
	case ' ', '\n', '\r', '\t', '\f', '/', '>':
		return scriptDataDoubleEscaped, false
	}
	s.pos--
	return scriptDataEscaped, false
}
