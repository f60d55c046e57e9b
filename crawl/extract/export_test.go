package extract

import (
	"bytes"

	"golang.org/x/net/html"
)

// Attrs returns the attributes of z's current start tag as extract reads
// them: keys lower-cased, the first of repeated keys only. inPlace reports
// whether they were read from the raw tag rather than through TagAttr.
func Attrs(z *html.Tokenizer) (attrs [][2]string, inPlace bool) {
	a := newAttrs(z)
	seen := map[string]bool{}
	for {
		k, v, ok := a.next()
		if !ok {
			return attrs, a.raw != nil
		}
		key := string(lower(k))
		if !seen[key] {
			seen[key] = true
			attrs = append(attrs, [2]string{key, string(v)})
		}
	}
}

func lower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// Tok is one token as a test compares it: type, raw bytes, text (text,
// comment and doctype tokens) and, for a start tag, its attributes as
// extract reads them (keys lower-cased, the first of repeated keys only).
type Tok struct {
	Type  html.TokenType
	Raw   string
	Text  string
	Attrs [][2]string
}

// Tokens returns doc's tokens, read by the scanner (scan) or by the
// tokenizer, up to and including the error token, with the error; with
// scripting, as Extractor.Scripting reads.
func Tokens(doc []byte, scan, scripting bool) ([]Tok, error) {
	var src source
	if scan {
		s := new(scanner)
		s.reset(doc)
		s.scripting = scripting
		src = s
	} else {
		src = tokenizer{html.NewTokenizer(bytes.NewReader(doc)), scripting}
	}
	var out []Tok
	for {
		tt := src.Next()
		t := Tok{Type: tt, Raw: string(src.Raw())}
		switch tt {
		case html.ErrorToken:
			return append(out, t), src.Err()
		case html.TextToken, html.CommentToken, html.DoctypeToken:
			t.Text = string(src.Text())
			if again := src.Text(); len(again) != 0 {
				t.Text += "|again:" + string(again)
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			a := src.attrs()
			seen := map[string]bool{}
			for {
				k, v, ok := a.next()
				if !ok {
					break
				}
				key := string(lower(k))
				if !seen[key] {
					seen[key] = true
					t.Attrs = append(t.Attrs, [2]string{key, string(v)})
				}
			}
		}
		out = append(out, t)
	}
}

// Scanned reports whether PageBytes reads doc with the scanner (rather
// than the tokenizer).
func (e *Extractor) Scanned(doc []byte) bool {
	_, ok := e.bytesSource(doc).(*scanner)
	return ok
}
