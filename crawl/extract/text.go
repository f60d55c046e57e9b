package extract

import (
	"unicode"
	"unicode/utf8"
)

// textBuf accumulates page text normalised for storage: valid UTF-8 (each
// invalid byte becomes U+FFFD), runs of whitespace collapsed to one space,
// no leading or trailing space, control characters and the noncharacters
// U+FFFE and U+FFFF (which XML forbids) dropped, and at most max runes.
// Writing stops once it is full, so a huge title costs no more than a
// short one.
type textBuf struct {
	b     []byte
	runes int  // runes in b
	max   int  // most runes b may hold
	space bool // whitespace was seen after the last rune written
}

// reset empties t and sets its capacity in runes.
func (t *textBuf) reset(max int) {
	t.b, t.runes, t.max, t.space = t.b[:0], 0, max, false
}

// empty reports whether nothing has been kept (whitespace does not count).
func (t *textBuf) empty() bool { return len(t.b) == 0 }

// String returns the text kept.
func (t *textBuf) String() string { return string(t.b) }

// write appends p, normalised.
func (t *textBuf) write(p []byte) {
	for len(p) > 0 && t.runes < t.max {
		r, size := rune(p[0]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(p) // U+FFFD, size 1 for an invalid byte
		}
		p = p[size:]
		switch {
		case r < utf8.RuneSelf && isSpace(byte(r)), r >= utf8.RuneSelf && unicode.IsSpace(r):
			t.space = len(t.b) > 0
			continue
		case r < 0x20, r >= 0x7f && r <= 0x9f, r == 0xfffe, r == 0xffff:
			continue
		}
		if t.space {
			t.space = false
			if t.runes+2 > t.max {
				// The space would be the last rune: the text ends here.
				t.runes = t.max
				return
			}
			t.b = append(t.b, ' ')
			t.runes++
		}
		t.b = utf8.AppendRune(t.b, r)
		t.runes++
	}
}
