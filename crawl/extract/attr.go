package extract

import (
	"bytes"

	"golang.org/x/net/html"
)

// The tokenizer's TagAttr copies every key and value it returns (twice,
// in x/net v0.62.0), so reading the attributes of every <a> costs a few
// allocations per link. Most tags need no such work: without '&' there is
// nothing to unescape, without NUL nothing to replace and without CR no
// newline to convert, and the attributes can be read from the tag's raw
// bytes in place. attrs does that, splitting the tag exactly as
// Tokenizer.readTag does, and falls back on TagAttr for the other tags.

// attrs iterates over the attributes of the current start tag of z.
type attrs struct {
	z   *html.Tokenizer
	raw []byte // the tag's raw bytes when read in place, nil when using TagAttr
	i   int    // position in raw
	end bool   // no attribute left
	// fix, when reading in place for the scanner, is where keys and
	// values that TagAttr would change (a NUL, a CR, an entity that
	// simpleEntities accepted) are rewritten; nil for the tokenizer's
	// tags, which then have none.
	fix *[]byte
}

// newAttrs starts iterating over the attributes of z's current start tag.
func newAttrs(z *html.Tokenizer) attrs {
	raw := z.Raw()
	if bytes.ContainsAny(raw, "&\x00\r") {
		return attrs{z: z}
	}
	return attrs{z: z, raw: raw, i: afterName(raw)}
}

// rawAttrs starts iterating over the attributes of the start tag raw (from
// its '<' to its '>'), read in place as TagAttr would return them, fixing
// NULs, CRs and the entities unescapeAttr knows into *fix, which only
// grows (values returned stay valid while *fix is not cut). A tag with an
// entity it does not know is read by a tokenizer of its own: a start tag
// is tokenized the same wherever it stands.
func rawAttrs(raw []byte, fix *[]byte) attrs {
	if bytes.IndexByte(raw, '&') >= 0 && !simpleEntities(raw) {
		z := html.NewTokenizer(bytes.NewReader(raw))
		z.Next()
		return attrs{z: z}
	}
	return attrs{raw: raw, i: afterName(raw), fix: fix}
}

// next returns the next attribute, its key in the tag's case (compare it
// with equalFold) and its value unescaped. Attributes with an empty key
// are skipped; a repeated key is returned again, whereas TagAttr returns
// only the first, so callers keep the first they see.
func (a *attrs) next() (key, val []byte, ok bool) {
	if a.end {
		return nil, nil, false
	}
	if a.raw == nil {
		key, val, more := a.z.TagAttr()
		a.end = !more
		return key, val, key != nil
	}
	for {
		key, val, ok = a.rawNext()
		if !ok || len(key) > 0 {
			if ok && a.fix != nil {
				key, val = a.fixUp(key, val)
			}
			return key, val, ok
		}
	}
}

// fixUp rewrites key and value as TagAttr does: NUL to U+FFFD, then, in
// the value, CR and CR LF to LF and entities unescaped. It copies only
// what changes, into a.fix, which grows by appending so that the values
// returned before stay valid until the next tag.
func (a *attrs) fixUp(key, val []byte) ([]byte, []byte) {
	if bytes.IndexByte(key, 0) >= 0 {
		start := len(*a.fix)
		*a.fix = appendNULFixed(*a.fix, key)
		key = (*a.fix)[start:len(*a.fix):len(*a.fix)]
	}
	if bytes.IndexByte(val, 0) < 0 && bytes.IndexByte(val, '\r') < 0 && bytes.IndexByte(val, '&') < 0 {
		return key, val
	}
	start := len(*a.fix)
	*a.fix = appendNULFixed(*a.fix, val)
	v := convertNewlines((*a.fix)[start:])
	*a.fix = unescapeAttr((*a.fix)[:start+len(v)], start)
	return key, (*a.fix)[start:len(*a.fix):len(*a.fix)]
}

// afterName returns the index in raw just past a start tag's name and the
// whitespace after it, as readTagName and skipWhiteSpace leave it.
func afterName(raw []byte) int {
	i := 1 // '<'
	for i < len(raw) {
		c := raw[i]
		i++
		if isSpace(c) {
			break
		}
		if c == '/' || c == '>' {
			i--
			break
		}
	}
	return skipSpace(raw, i)
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && isSpace(raw[i]) {
		i++
	}
	return i
}

// rawNext reads one attribute from a.raw, as one turn of the loop of
// Tokenizer.readTag with readTagAttrKey and readTagAttrVal.
func (a *attrs) rawNext() (key, val []byte, ok bool) {
	raw, i := a.raw, a.i
	if i >= len(raw) || raw[i] == '>' {
		a.end = true
		return nil, nil, false
	}
	// The key runs to whitespace, '/', '>' or an '=' that is not its
	// first byte.
	start := i
	for i < len(raw) {
		c := raw[i]
		i++
		if c == '=' && i == start+1 {
			continue
		}
		if c == '=' || c == '/' || c == '>' || isSpace(c) {
			i--
			break
		}
	}
	key = raw[start:i]
	// The value follows an '=' (whitespace around it allowed), quoted or
	// running to whitespace or '>'; a '/' instead of '=' is consumed.
	i = skipSpace(raw, i)
	switch {
	case i >= len(raw):
	case raw[i] == '/':
		i++
	case raw[i] == '=':
		i = skipSpace(raw, i+1)
		if i >= len(raw) {
			break
		}
		switch q := raw[i]; q {
		case '>':
		case '"', '\'':
			i++
			j := bytes.IndexByte(raw[i:], q)
			if j < 0 {
				j = len(raw) - i
			}
			val = raw[i : i+j]
			i += j + 1
		default:
			j := i + 1
			for j < len(raw) && !isSpace(raw[j]) && raw[j] != '>' {
				j++
			}
			val = raw[i:j]
			i = j
			if i < len(raw) && raw[i] != '>' {
				i++ // the whitespace that ended the value
			}
		}
	}
	a.i = skipSpace(raw, i)
	return key, val, true
}
