package extract

import (
	"bytes"
	"errors"
	"mime"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// Encoding is how a page's bytes were read: the WHATWG name of the
// encoding, and what decided it.
type Encoding struct {
	Name string // "utf-8", "windows-1252", "shift_jis", "utf-16le", ...
	// By is what decided it: "bom", "header" (Content-Type's charset) or
	// "document" (the <meta> prescan of the first 1,024 bytes, else the
	// guess: UTF-8 when those are valid UTF-8, else windows-1252).
	By string
}

// Decoded returns doc as UTF-8, decoded from the encoding HTML's
// encoding sniffing algorithm gives it: its byte order mark, then the
// charset of contentType (its Content-Type header), then the <meta>
// prescan of its first 1,024 bytes, then UTF-8 if those are valid UTF-8,
// else windows-1252 — as x/net/html/charset's DetermineEncoding decides,
// the labels as the WHATWG Encoding Standard reads them (a meta charset
// of UTF-16 means UTF-8). A UTF-8 page is returned as it is (without its
// byte order mark), as is an ASCII page in an encoding that reads ASCII as
// ASCII; any other is decoded into a buffer of the Extractor, valid until
// its next call (bytes that are not of the encoding become U+FFFD). An
// encoding Go does not know is passed over as if it were not declared.
func (e *Extractor) Decoded(doc []byte, contentType string) ([]byte, Encoding) {
	enc, how := sniffEncoding(doc, contentType)
	if how.Name == "utf-8" {
		return bytes.TrimPrefix(doc, utf8BOM), how
	}
	switch {
	case how.By == "bom":
		doc = doc[2:] // UTF-16's BOM: UTF-8's is utf-8
	case asciiCompatible(how.Name) && isASCII(doc):
		return doc, how
	}
	out, err := transformAppend(e.decoded[:0], enc, doc)
	if err != nil {
		// The decoders replace what they cannot read; an error here is
		// none of the page's: read it as it came.
		return doc, how
	}
	e.decoded = out
	return out, how
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// sniffEncoding is DetermineEncoding with a quicker way for the page that
// says it is UTF-8 in its header (the web's most common answer).
func sniffEncoding(doc []byte, contentType string) (encoding.Encoding, Encoding) {
	if len(doc) >= 2 && (doc[0] == 0xFE && doc[1] == 0xFF || doc[0] == 0xFF && doc[1] == 0xFE) ||
		bytes.HasPrefix(doc, utf8BOM) {
		e, name, _ := charset.DetermineEncoding(doc, "")
		return e, Encoding{Name: name, By: "bom"}
	}
	if indexFold([]byte(contentType), "charset") >= 0 {
		if _, params, err := mime.ParseMediaType(contentType); err == nil {
			if label, ok := params["charset"]; ok {
				if e, name := charset.Lookup(label); e != nil {
					return e, Encoding{Name: name, By: "header"}
				}
			}
		}
	}
	e, name, _ := charset.DetermineEncoding(doc, "")
	head := doc[:min(len(doc), 1024)]
	if indexFold(head, "charset") < 0 && !isASCII(doc) {
		// The prescan found nothing: the encoding is a guess, which the
		// first <meta> that declares one changes (the HTML parser's
		// "change the encoding", which a browser does by reading the page
		// again). Bytes all ASCII read the same either way.
		if le, lname := laterMeta(doc, len(head)); le != nil {
			return le, Encoding{Name: lname, By: "document"}
		}
	}
	return e, Encoding{Name: name, By: "document"}
}

// laterMeta returns the encoding the first <meta> at or past from
// declares (a charset attribute, or http-equiv=content-type with a
// charset in its content), as the HTML parser reads one; nil for none.
// UTF-16 means UTF-8 and x-user-defined windows-1252 there, as in the
// prescan.
func laterMeta(doc []byte, from int) (encoding.Encoding, string) {
	for from < len(doc) {
		i := indexFold(doc[from:], "<meta")
		if i < 0 {
			return nil, ""
		}
		from += i
		z := html.NewTokenizer(bytes.NewReader(doc[from:min(len(doc), from+4096)]))
		from += len("<meta")
		if tt := z.Next(); tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		var label, equiv, content []byte
		for {
			k, v, more := z.TagAttr()
			switch string(k) {
			case "charset":
				label = v
			case "http-equiv":
				equiv = v
			case "content":
				content = v
			}
			if !more {
				break
			}
		}
		if len(label) == 0 && equalFold(equiv, "content-type") {
			label = charsetOfContent(content)
		}
		if len(label) == 0 {
			continue
		}
		e, name := charset.Lookup(string(label))
		switch {
		case e == nil:
			continue
		case strings.HasPrefix(name, "utf-16"):
			return unicode.UTF8, "utf-8"
		case name == "x-user-defined":
			e, name = charset.Lookup("windows-1252")
		}
		return e, name
	}
	return nil, ""
}

// charsetOfContent is HTML's "extracting a character encoding from a meta
// element": the value after "charset", "=" and spaces, quoted or not; nil
// for none.
func charsetOfContent(s []byte) []byte {
	const spaces = " \t\n\f\r"
	for {
		i := indexFold(s, "charset")
		if i < 0 {
			return nil
		}
		s = bytes.TrimLeft(s[i+len("charset"):], spaces)
		if len(s) == 0 || s[0] != '=' {
			continue
		}
		s = bytes.TrimLeft(s[1:], spaces)
		if len(s) == 0 {
			return nil
		}
		if q := s[0]; q == '"' || q == '\'' {
			if j := bytes.IndexByte(s[1:], q); j >= 0 {
				return s[1 : 1+j]
			}
			return nil
		}
		if j := bytes.IndexAny(s, spaces+";"); j >= 0 {
			return s[:j]
		}
		return s
	}
}

// asciiCompatible says whether the encoding reads bytes below 0x80 as
// ASCII, so that a page of such bytes only needs no decoding. ISO-2022-JP
// does when no escape sequence switches it (isASCII refuses ESC).
func asciiCompatible(name string) bool {
	return !strings.HasPrefix(name, "utf-16") && name != "replacement"
}

// isASCII reports whether doc is bytes below 0x80 but ESC.
func isASCII(doc []byte) bool {
	for _, b := range doc {
		if b >= 0x80 || b == 0x1B {
			return false
		}
	}
	return true
}

// transformAppend appends doc decoded from enc to dst.
func transformAppend(dst []byte, enc encoding.Encoding, doc []byte) ([]byte, error) {
	if enc == nil {
		enc = unicode.UTF8
	}
	dec := enc.NewDecoder()
	if cap(dst) < len(doc)+len(doc)/2 {
		dst = make([]byte, 0, len(doc)+len(doc)/2+16)
	}
	for {
		nDst, nSrc, err := dec.Transform(dst[len(dst):cap(dst)], doc, true)
		dst = dst[:len(dst)+nDst]
		doc = doc[nSrc:]
		if err == nil {
			return dst, nil
		}
		if !errors.Is(err, transform.ErrShortDst) {
			return dst, err
		}
		dst = append(dst, make([]byte, max(len(doc), 64))...)[:len(dst)]
	}
}

// indexFold is bytes.Index of an ASCII lower-case needle, ignoring the
// case of b's letters (equalFold), without a copy of b.
func indexFold(b []byte, needle string) int {
	for i := 0; i+len(needle) <= len(b); i++ {
		if b[i]|0x20 == needle[0]|0x20 && equalFold(b[i:i+len(needle)], needle) {
			return i
		}
	}
	return -1
}
