package extract_test

import (
	"encoding/hex"
	"encoding/json"
	"html"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/crawl/extract"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/tooltest"
)

// urlCase is one case of the WHATWG URL Standard's urltestdata.json.
type urlCase struct {
	Input    string `json:"input"`
	Base     string `json:"base"`
	Failure  bool   `json:"failure"`
	Href     string `json:"href"`
	Protocol string `json:"protocol"`
	Host     string `json:"host"`
	Hostname string `json:"hostname"`
	Port     string `json:"port"`
}

// httpBaseCases returns urltestdata's cases whose base is an http(s) URL:
// the links a page can hold.
func httpBaseCases(t testing.TB) []urlCase {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "data", "url", "urltestdata.json"))
	if err != nil {
		t.Fatal(err)
	}
	var all []json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		t.Fatal(err)
	}
	var cases []urlCase
	for _, m := range all {
		var c urlCase
		if json.Unmarshal(m, &c) != nil { // a comment: a string
			continue
		}
		if strings.HasPrefix(c.Base, "http://") || strings.HasPrefix(c.Base, "https://") {
			cases = append(cases, c)
		}
	}
	return cases
}

// nodeForm is the host weaver records for the URL Standard's host: its
// root dot dropped (see graph.NormalizeHost).
func nodeForm(c urlCase) string {
	h := strings.TrimSuffix(c.Hostname, ".")
	if c.Port != "" {
		h += ":" + c.Port
	}
	return h
}

// dnsName reports whether the Standard's hostname is one weaver records:
// an IP address or a name of letters, digits, '-' and '_' labels (the
// Standard lets "!", "$" or "&" through, which no DNS name holds).
func dnsName(h string) bool {
	if strings.HasPrefix(h, "[") {
		return true
	}
	h = strings.TrimSuffix(h, ".")
	if h == "" {
		return false
	}
	for _, l := range strings.Split(h, ".") {
		if l == "" || len(l) > 63 {
			return false
		}
		for _, c := range l {
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// TestURLStandard_HTTPBase: every urltestdata case whose base is http(s),
// written as an <a href> on a page at that base, gives the link the URL
// Standard gives: its scheme, and its host in weaver's node form; no link
// where the Standard fails or gives another scheme.
func TestURLStandard_HTTPBase(t *testing.T) {
	cases := httpBaseCases(t)
	if len(cases) < 190 {
		t.Fatalf("%d cases with an http(s) base: the file is not urltestdata.json", len(cases))
	}
	var ex extract.Extractor
	counts := map[string]int{}
	for _, c := range cases {
		base, err := url.Parse(c.Base)
		if err != nil {
			t.Fatalf("base %q: %v", c.Base, err)
		}
		doc := `<a href="` + html.EscapeString(c.Input) + `">x</a>`
		// A link counts when the crawler would record it: its host is a
		// host weaver normalises.
		var got []*url.URL
		if _, err := ex.PageBytes([]byte(doc), base, func(l *url.URL) bool {
			if _, err := graph.HostOf(l); err == nil {
				got = append(got, l)
			}
			return true
		}); err != nil {
			t.Fatal(err)
		}
		wantLink := !c.Failure && (c.Protocol == "http:" || c.Protocol == "https:")
		switch {
		case !wantLink:
			counts["no link expected"]++
			if len(got) != 0 {
				t.Errorf("%q on %q: link %q, the Standard gives %s", c.Input, c.Base, got[0], why(c))
			}
		case !dnsName(c.Hostname):
			counts["no DNS name"]++
			if len(got) != 0 {
				t.Errorf("%q on %q: host of %q recorded for the Standard's %q, not a DNS name", c.Input, c.Base, got[0], c.Host)
			}
		case len(got) != 1:
			counts["failed"]++
			t.Errorf("%q on %q: %d links, the Standard gives %q", c.Input, c.Base, len(got), c.Href)
		default:
			h, err := graph.HostOf(got[0])
			if err != nil || got[0].Scheme+":" != c.Protocol || h != nodeForm(c) {
				counts["failed"]++
				t.Errorf("%q on %q: weaver %q (host %q, %v), the Standard %q (host %q)", c.Input, c.Base, got[0], h, err, c.Href, nodeForm(c))
				continue
			}
			counts["same host"]++
		}
	}
	t.Logf("%d cases with an http(s) base: %v", len(cases), counts)
}

func why(c urlCase) string {
	if c.Failure {
		return "a failure"
	}
	return c.Protocol + " " + c.Href
}

// FuzzHref: any href on an http(s) page gives no link or one that is an
// absolute http(s) URL whose text parses again, to the same host.
func FuzzHref(f *testing.F) {
	for _, c := range httpBaseCases(f) {
		f.Add(c.Input, strings.HasPrefix(c.Base, "https:"))
	}
	var ex extract.Extractor
	f.Fuzz(func(t *testing.T, href string, https bool) {
		base, _ := url.Parse("http://example.org/a/b?c")
		if https {
			base.Scheme = "https"
		}
		doc := `<a href="` + html.EscapeString(href) + `">`
		ex.PageBytes([]byte(doc), base, func(l *url.URL) bool {
			if l.Scheme != "http" && l.Scheme != "https" || l.Host == "" {
				t.Fatalf("%q: link %q", href, l)
			}
			again, err := url.Parse(l.String())
			if err != nil || again.Host != l.Host {
				t.Fatalf("%q: link %q does not parse again to its host (%v)", href, l, err)
			}
			return true
		})
	})
}

// TestQuery_PageEncoding: a link's query is percent-encoded in the page's
// encoding, as the URL Standard says (UTF-8 for UTF-8 and UTF-16 pages), a
// character the encoding cannot hold as "&#N;" (escaped); Python's codecs
// are the judge of the bytes.
func TestQuery_PageEncoding(t *testing.T) {
	py := tooltest.Python(t, "json, urllib.parse", "/usr/bin/python3", "python3")
	const script = `import json, sys, urllib.parse
cases = [("shift_jis", "日本語"), ("euc-jp", "日本語"), ("gb18030", "中文"), ("euc-kr", "한국어"),
         ("windows-1251", "пример"), ("koi8-r", "пример"), ("iso-8859-2", "žluť"), ("windows-1252", "café"),
         ("utf-8", "日本"), ("utf-16le", "日本")]
out = []
for enc, text in cases:
    href = "/s?q=" + text + "&amp;e=&#26085;&amp;x='a b'"
    page = ('<meta charset="%s"><a href="%s">x</a>' % (enc, href)).encode(enc)
    if enc.startswith("utf-16"):
        page = b"\xff\xfe" + page
    qenc = "utf-8" if enc.startswith("utf-") else enc
    pct = lambda bs: "".join(chr(b) if 0x20 < b < 0x7f and chr(b) not in "\"#<>'" else "%%%02X" % b for b in bs)
    lacks = "日".encode(qenc, "xmlcharrefreplace")
    e = pct(lacks) if lacks[:1] != b"&" else "%26%23" + lacks[2:-1].decode() + "%3B"
    want = "q=" + pct(text.encode(qenc)) + "&e=" + e + "&x=%27a%20b%27"
    out.append({"enc": enc, "page": page.hex(), "query": want})
json.dump(out, sys.stdout)`
	out, err := exec.Command(py, "-c", script).Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	var cases []struct{ Enc, Page, Query string }
	if err := json.Unmarshal(out, &cases); err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse("http://page.test/")
	var ex extract.Extractor
	for _, c := range cases {
		page, _ := hex.DecodeString(c.Page)
		doc, enc := ex.Decoded(page, "text/html")
		ex.Query = enc.QueryEncoding()
		var got []string
		ex.PageBytes(doc, base, func(l *url.URL) bool { got = append(got, l.RawQuery); return true })
		if len(got) != 1 || got[0] != c.Query {
			t.Errorf("%s (read as %s): query %q, want %q", c.Enc, enc.Name, got, c.Query)
		}
	}
}
