package extract

// isRawText reports whether a start tag's element holds raw text the
// tokenizer reports as text, which is not what a reader sees as a link's
// text (a <noscript> holds markup: see tokenizer).
func isRawText(name []byte) bool {
	for _, t := range []string{"script", "style", "iframe", "noembed", "noframes", "xmp", "textarea"} {
		if equalLower(name, t) {
			return true
		}
	}
	return false
}

// attr returns the value of the current tag's attribute key, which must be
// lower case. Only the first of repeated attributes counts, as in browsers.
func attr(z source, key string) ([]byte, bool) {
	a := z.attrs()
	for {
		k, v, ok := a.next()
		if !ok {
			return nil, false
		}
		if equalFold(k, key) {
			return v, true
		}
	}
}

// tagName returns the name of a start or end tag from its raw bytes ("<a"
// or "</a" followed by the name), in its original case.
func tagName(raw []byte) []byte {
	i := 1
	if len(raw) > 1 && raw[1] == '/' {
		i = 2
	}
	if i > len(raw) {
		return nil
	}
	raw = raw[i:]
	for j, c := range raw {
		switch c {
		case ' ', '\n', '\r', '\t', '\f', '/', '>':
			return raw[:j]
		}
	}
	return raw
}

// equalLower reports whether b equals s, a lower-case ASCII word, ignoring
// the case of b.
func equalLower(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		if b[i]|0x20 != s[i] {
			return false
		}
	}
	return true
}

// equalFold reports whether b equals s, a lower-case ASCII string that
// may contain non-letters, ignoring the case of b's ASCII letters.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// isSpace reports whether c is ASCII whitespace as HTML defines it.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// trimSpace returns b without leading and trailing ASCII whitespace.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}
