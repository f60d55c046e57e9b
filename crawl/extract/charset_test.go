package extract_test

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/weaver-crawler/weaver/crawl/extract"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/tooltest"
)

// TestDecoded_Encodings reads pages in the web's encodings as a browser
// does: title, anchor text and the IDN host of the first link as the
// page's author wrote them, and the second link, which a byte read as a
// quote would lose.
func TestDecoded_Encodings(t *testing.T) {
	base, _ := url.Parse("http://page.test/")
	var ex extract.Extractor
	ex.AnchorText = true
	for _, p := range tooltest.EncodedPages(t) {
		t.Run(p.Name, func(t *testing.T) {
			doc, enc := ex.Decoded(p.Body, p.Header)
			by := p.By
			if by == "meta" {
				by = "document" // the prescan's
			}
			if enc.Name != p.Encoding || enc.By != by {
				t.Errorf("encoding %+v, want %s by %s", enc, p.Encoding, p.By)
			}
			var hosts, texts []string
			info, _ := ex.LinksBytes(doc, base, func(l extract.Link) bool {
				h, err := graph.HostOf(l.URL)
				if err != nil {
					t.Errorf("%s: %v", l.URL, err)
				}
				hosts, texts = append(hosts, h), append(texts, l.Text)
				return true
			})
			if info.Title != p.Title {
				t.Errorf("title %q, want %q", info.Title, p.Title)
			}
			if want := []string{p.Host, "after.test"}; strings.Join(hosts, " ") != strings.Join(want, " ") {
				t.Errorf("hosts %q, want %q", hosts, want)
			}
			if len(texts) == 0 || texts[0] != p.Anchor {
				t.Errorf("anchor texts %q, want %q first", texts, p.Anchor)
			}
		})
	}
}

// TestDecoded_BadInput: each odd page has one outcome, valid UTF-8, and
// UTF-8 pages come back as they are.
func TestDecoded_BadInput(t *testing.T) {
	var ex extract.Extractor
	for _, c := range []struct {
		name, header, body, enc string
	}{
		{"unknown label in the header", "text/html; charset=x-no-such", "<a href=/>é</a>", "utf-8"},
		{"unknown meta label", "text/html", `<meta charset="x-klingon"><a href=/>\xe9</a>`, "windows-1252"},
		{"meta UTF-16 in an ASCII page", "text/html", `<meta charset="utf-16"><title>a</title>`, "utf-8"},
		{"lying BOM", "text/html", "\xff\xfe<title>ascii</title>", "utf-16le"},
		{"invalid UTF-8 declared", "text/html; charset=utf-8", "<title>a\xff\xfeb</title>", "utf-8"},
		{"invalid Shift_JIS", "text/html; charset=shift_jis", "<title>\x81\x20\xa0\xfd</title>", "shift_jis"},
		{"odd UTF-16 length", "text/html; charset=utf-16be", "\x00<\x00t\x00", "utf-16be"},
		{"replacement encoding", "text/html; charset=iso-2022-kr", "<title>x</title>", "replacement"},
		{"empty", "", "", "windows-1252"},
		{"header charset quoted", `text/html; charset="EUC-KR"`, "<title>x</title>", "euc-kr"},
	} {
		doc, enc := ex.Decoded([]byte(c.body), c.header)
		if enc.Name != c.enc {
			t.Errorf("%s: %s, want %s", c.name, enc.Name, c.enc)
		}
		if !utf8.Valid(doc) && enc.Name != "utf-8" {
			t.Errorf("%s: decoded into invalid UTF-8 %q", c.name, doc)
		}
		i2, _ := ex.PageBytes(doc, mustURL("http://a.test/"), nil)
		if !utf8.ValidString(i2.Title) {
			t.Errorf("%s: title %q is not UTF-8", c.name, i2.Title)
		}
	}
	utf := []byte("<title>déjà</title>")
	if doc, _ := ex.Decoded(utf, "text/html; charset=utf-8"); &doc[0] != &utf[0] {
		t.Error("a UTF-8 page was copied")
	}
	if doc, _ := ex.Decoded(append([]byte("\xef\xbb\xbf"), utf...), ""); string(doc) != string(utf) {
		t.Errorf("UTF-8 BOM: %q", doc)
	}
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// FuzzDecoded holds the decoded path to the tokenizer: whatever the bytes
// and the header, the page Decoded gives is read by the scanner as
// x/net/html's tokenizer reads the same decoded bytes, and a page decoded
// from another encoding is valid UTF-8.
func FuzzDecoded(f *testing.F) {
	headers := []string{"text/html", "text/html; charset=utf-8", "text/html; charset=shift_jis", "text/html; charset=utf-16be",
		"text/html; charset=iso-2022-jp", "text/html; charset=windows-1251", "text/html; charset=gb18030", "text/html; charset=x-nope"}
	f.Add([]byte(`<meta charset="euc-kr"><title>\xc7\xd1</title><a href="http://\xc7\xd1.test/">x</a>`), uint8(0))
	f.Add([]byte("\xff\xfe<\x00a\x00 \x00h\x00r\x00e\x00f\x00=\x00/\x00>\x00"), uint8(0))
	f.Add([]byte("<a href='/\x1b$B%\"\x1b(B'>x</a><a href=/after>"), uint8(4))
	f.Add([]byte("<title>\x82\xa0</title>"), uint8(2))
	f.Fuzz(func(t *testing.T, doc []byte, h uint8) {
		var ex extract.Extractor
		header := headers[int(h)%len(headers)]
		out, enc := ex.Decoded(doc, header)
		if enc.Name != "utf-8" && !utf8.Valid(out) {
			t.Fatalf("%q as %s: decoded into invalid UTF-8 %q", doc, enc.Name, out)
		}
		sameTokens(t, bytes.Clone(out))
	})
}

// A page that declares nothing in its first 1,024 bytes is read in the
// encoding of its first later <meta> that declares one (a charset, or an
// http-equiv Content-Type with a charset), as a browser reads it again.
func TestDecoded_LaterMeta(t *testing.T) {
	pad := "<!-- " + strings.Repeat("x", 1100) + " -->"
	var ex extract.Extractor
	for _, c := range []struct{ meta, enc string }{
		{`<meta charset="UTF-8">`, "utf-8"},
		{`<META HTTP-EQUIV="Content-Type" CONTENT="text/html; Charset = 'koi8-r'">`, "koi8-r"},
		{`<meta name="x"><meta http-equiv=content-type content="text/html">`, "windows-1252"},
		{`<meta charset="utf-16">`, "utf-8"},
	} {
		doc := []byte(pad + c.meta + "<title>caf\xc3\xa9</title>")
		if _, enc := ex.Decoded(doc, "text/html"); enc.Name != c.enc {
			t.Errorf("%s: %s, want %s", c.meta, enc.Name, c.enc)
		}
	}
}
