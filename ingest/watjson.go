package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeWAT fills w from a WAT record's JSON as encoding/json's Decoder
// decodes its first value into watRecord (what import read before issue
// 43), without reflection and without building what it does not read:
// keys match their field case-insensitively (bytes.EqualFold, after
// unescaping), a repeated key decodes again into the same field (a
// struct's fields merge, a list is decoded into the elements already
// there, a string or a raw value is replaced), null leaves a string or a
// struct alone and empties a pointer, a map or a list, strings are
// unescaped with each invalid UTF-8 byte and lone surrogate as U+FFFD, and
// the bytes after the first value are not read. The whole value must be
// JSON, and every field w has must hold its type: it returns errBadWAT
// otherwise, as the Decoder returned an error. FuzzDecodeWAT checks it
// against encoding/json.
func decodeWAT(data []byte, w *watRecord) error {
	s := jsonScanner{b: data}
	s.ws()
	switch s.peek() {
	case '{':
		return s.object(func(k []byte) error {
			if fold(k, "Envelope") {
				return s.envelope(w)
			}
			return s.skip()
		})
	case 'n':
		return s.null()
	}
	if err := s.skip(); err != nil {
		return err
	}
	return errBadWAT // a JSON value, not an object
}

var errBadWAT = errors.New("not a WAT record's JSON")

// maxDepth is encoding/json's limit on nesting.
const maxDepth = 10000

type jsonScanner struct {
	b     []byte
	i     int
	depth int
	buf   []byte // unescaping's
}

func (s *jsonScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next byte, 0 at the end.
func (s *jsonScanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *jsonScanner) lit(word string) error {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return errBadWAT
	}
	s.i += len(word)
	return nil
}

func (s *jsonScanner) null() error { return s.lit("null") }

// object reads an object at s.i, calling fn with each key (unescaped, valid
// until the next call) with s.i at the member's value, which fn must read.
func (s *jsonScanner) object(fn func(key []byte) error) error {
	if s.depth++; s.depth > maxDepth {
		return errBadWAT
	}
	s.i++ // {
	s.ws()
	if s.peek() == '}' {
		s.i++
		s.depth--
		return nil
	}
	for {
		if s.peek() != '"' {
			return errBadWAT
		}
		k, err := s.str()
		if err != nil {
			return err
		}
		s.ws()
		if s.peek() != ':' {
			return errBadWAT
		}
		s.i++
		s.ws()
		if err := fn(k); err != nil {
			return err
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.i++
			s.ws()
		case '}':
			s.i++
			s.depth--
			return nil
		default:
			return errBadWAT
		}
	}
}

// array reads an array at s.i, calling fn at each element, which fn must
// read.
func (s *jsonScanner) array(fn func(i int) error) error {
	if s.depth++; s.depth > maxDepth {
		return errBadWAT
	}
	s.i++ // [
	s.ws()
	if s.peek() == ']' {
		s.i++
		s.depth--
		return nil
	}
	for i := 0; ; i++ {
		if err := fn(i); err != nil {
			return err
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.i++
			s.ws()
		case ']':
			s.i++
			s.depth--
			return nil
		default:
			return errBadWAT
		}
	}
}

// skip reads any value.
func (s *jsonScanner) skip() error {
	switch c := s.peek(); {
	case c == '{':
		return s.object(func([]byte) error { return s.skip() })
	case c == '[':
		return s.array(func(int) error { return s.skip() })
	case c == '"':
		_, err := s.str()
		return err
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.null()
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	return errBadWAT
}

// number reads a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jsonScanner) number() error {
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.peek() == '-' {
		s.i++
	}
	switch c := s.peek(); {
	case c == '0':
		s.i++
	case c >= '1' && c <= '9':
		digits()
	default:
		return errBadWAT
	}
	if s.peek() == '.' {
		s.i++
		if digits() == 0 {
			return errBadWAT
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if digits() == 0 {
			return errBadWAT
		}
	}
	return nil
}

// str reads a string at s.i and returns it unescaped, in s.b when it has
// nothing to unescape, else in s.buf: valid until the next call.
func (s *jsonScanner) str() ([]byte, error) {
	s.i++ // "
	start := s.i
	plain := true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw := s.b[start:s.i]
			s.i++
			if plain {
				return raw, nil
			}
			s.buf = unquote(s.buf[:0], raw)
			return s.buf, nil
		case c == '\\':
			plain = false
			s.i++
			if s.i >= len(s.b) {
				return nil, errBadWAT
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				if s.i+5 > len(s.b) || getu4(s.b[s.i-1:]) < 0 {
					return nil, errBadWAT
				}
				s.i += 5
			default:
				return nil, errBadWAT
			}
		case c < 0x20:
			return nil, errBadWAT
		case c >= utf8.RuneSelf:
			plain = false // may need U+FFFD
			s.i++
		default:
			s.i++
		}
	}
	return nil, errBadWAT
}

// string reads a string field: a string replaces *dst, null leaves it.
func (s *jsonScanner) string(dst *string) error {
	switch s.peek() {
	case '"':
		v, err := s.str()
		if err == nil {
			*dst = string(v)
		}
		return err
	case 'n':
		return s.null()
	}
	s.skip()
	return errBadWAT
}

// fields reads a struct field: an object's members go to fn, null leaves
// the struct alone.
func (s *jsonScanner) fields(fn func(key []byte) error) error {
	switch s.peek() {
	case '{':
		return s.object(fn)
	case 'n':
		return s.null()
	}
	s.skip()
	return errBadWAT
}

// raw reads any value as json.RawMessage holds it.
func (s *jsonScanner) raw() (json.RawMessage, error) {
	start := s.i
	if err := s.skip(); err != nil {
		return nil, err
	}
	return bytes.Clone(s.b[start:s.i]), nil
}

// list reads a list field into *n elements of a slice of length *n and
// capacity c (grow: make room for one more), as encoding/json decodes into a
// slice: the elements already there are decoded into, null empties it.
func (s *jsonScanner) list(elem func(i int) error, setLen func(n int), null func()) error {
	switch s.peek() {
	case '[':
		n := 0
		err := s.array(func(i int) error {
			setLen(i + 1)
			n = i + 1
			return elem(i)
		})
		setLen(n)
		return err
	case 'n':
		null()
		return s.null()
	}
	s.skip()
	return errBadWAT
}

func (s *jsonScanner) envelope(w *watRecord) error {
	env := &w.Envelope
	return s.fields(func(k []byte) error {
		switch {
		case fold(k, "WARC-Header-Metadata"):
			h := &env.Header
			return s.fields(func(k []byte) error {
				switch {
				case fold(k, "WARC-Type"):
					return s.string(&h.Type)
				case fold(k, "WARC-Target-URI"):
					return s.string(&h.TargetURI)
				case fold(k, "WARC-Date"):
					return s.string(&h.Date)
				}
				return s.skip()
			})
		case fold(k, "Payload-Metadata"):
			return s.fields(func(k []byte) error {
				if fold(k, "HTTP-Response-Metadata") {
					return s.response(&env.Payload.Response)
				}
				return s.skip()
			})
		}
		return s.skip()
	})
}

// nullOrObject reads null (not open, the value read) or the start of
// an object (open, its members next); anything else is errBadWAT.
func (s *jsonScanner) nullOrObject() (open bool, err error) {
	switch s.peek() {
	case 'n':
		return false, s.null()
	case '{':
		return true, nil
	}
	s.skip()
	return false, errBadWAT
}

// openObject reads a pointer field's value up to its object's members:
// null sets *dst to nil; an object allocates *dst if it is nil and
// reports it open, its members next; anything else is errBadWAT, *dst
// left as it was.
func openObject[T any](s *jsonScanner, dst **T) (open bool, err error) {
	if open, err = s.nullOrObject(); !open {
		if err == nil {
			*dst = nil // null
		}
		return false, err
	}
	if *dst == nil {
		*dst = new(T)
	}
	return true, nil
}

func (s *jsonScanner) response(dst **watResponse) error {
	if open, err := openObject(s, dst); !open {
		return err
	}
	r := *dst
	return s.object(func(k []byte) error {
		switch {
		case fold(k, "Response-Message"):
			return s.fields(func(k []byte) error {
				if fold(k, "Status") {
					v, err := s.raw()
					r.Message.Status = v
					return err
				}
				return s.skip()
			})
		case fold(k, "Headers"):
			return s.headers(&r.Headers)
		case fold(k, "HTML-Metadata"):
			return s.html(&r.HTML)
		}
		return s.skip()
	})
}

func (s *jsonScanner) headers(dst *map[string]json.RawMessage) error {
	if open, err := s.nullOrObject(); !open {
		if err == nil {
			*dst = nil // null
		}
		return err
	}
	if *dst == nil {
		*dst = map[string]json.RawMessage{}
	}
	h := *dst
	return s.object(func(k []byte) error {
		name := string(k)
		v, err := s.raw()
		h[name] = v
		return err
	})
}

func (s *jsonScanner) html(dst **watHTML) error {
	if open, err := openObject(s, dst); !open {
		return err
	}
	m := *dst
	return s.object(func(k []byte) error {
		switch {
		case fold(k, "Head"):
			return s.fields(func(k []byte) error {
				switch {
				case fold(k, "Title"):
					return s.string(&m.Head.Title)
				case fold(k, "Base"):
					return s.string(&m.Head.Base)
				case fold(k, "Metas"):
					metas := &m.Head.Metas
					return s.list(func(i int) error {
						e := &(*metas)[i]
						return s.fields(func(k []byte) error {
							switch {
							case fold(k, "name"):
								return s.string(&e.Name)
							case fold(k, "property"):
								return s.string(&e.Property)
							case fold(k, "content"):
								return s.string(&e.Content)
							case fold(k, "http-equiv"):
								return s.string(&e.Equiv)
							}
							return s.skip()
						})
					}, func(n int) { *metas = setLen(*metas, n) }, func() { *metas = nil })
				}
				return s.skip()
			})
		case fold(k, "Links"):
			links := &m.Links
			return s.list(func(i int) error {
				e := &(*links)[i]
				return s.fields(func(k []byte) error {
					switch {
					case fold(k, "path"):
						return s.string(&e.Path)
					case fold(k, "url"):
						return s.string(&e.URL)
					}
					return s.skip()
				})
			}, func(n int) { *links = setLen(*links, n) }, func() { *links = nil })
		}
		return s.skip()
	})
}

// setLen gives s length n as encoding/json does while it decodes into a
// slice: within its capacity the elements there are kept (and decoded
// into), past it new ones are zero; an empty list is a new empty slice,
// not nil.
func setLen[T any](s []T, n int) []T {
	if n == 0 {
		return []T{}
	}
	if n > cap(s) {
		s = append(s[:cap(s)], make([]T, n-cap(s))...)
	}
	return s[:n]
}

// fold reports whether a key names field as encoding/json matches them.
func fold(key []byte, field string) bool {
	if len(key) == len(field) {
		for i := 0; i < len(key); i++ {
			a, b := key[i], field[i]
			if a == b {
				continue
			}
			if a|0x20 != b|0x20 || (a|0x20) < 'a' || (a|0x20) > 'z' {
				goto slow
			}
		}
		return true
	}
slow:
	return bytes.EqualFold(key, []byte(field))
}

// getu4 decodes \uXXXX from the start of s, or returns -1 (encoding/json's).
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	r, err := strconv.ParseUint(string(s[2:6]), 16, 32)
	if err != nil {
		return -1
	}
	return rune(r)
}

// unquote appends the unescaped form of a string's raw bytes (between its
// quotes, already checked) to b, as encoding/json's unquoteBytes does.
func unquote(b, s []byte) []byte {
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			r++
			switch s[r] {
			case '"', '\\', '/', '\'':
				b = append(b, s[r])
				r++
			case 'b':
				b = append(b, '\b')
				r++
			case 'f':
				b = append(b, '\f')
				r++
			case 'n':
				b = append(b, '\n')
				r++
			case 'r':
				b = append(b, '\r')
				r++
			case 't':
				b = append(b, '\t')
				r++
			case 'u':
				r--
				rr := getu4(s[r:])
				r += 6
				if utf16.IsSurrogate(rr) {
					rr1 := getu4(s[r:])
					if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
						r += 6
						b = utf8.AppendRune(b, dec)
						break
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			b = utf8.AppendRune(b, rr)
		}
	}
	return b
}
