package extract_test

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html"

	"github.com/weaver-crawler/weaver/crawl/extract"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

const pageURL = "https://example.com/dir/page.html?x=1#top"

// run extracts from doc as found at page, returning the links as strings.
func run(tb testing.TB, e *extract.Extractor, page, doc string) ([]string, extract.Info) {
	tb.Helper()
	u, err := url.Parse(page)
	if err != nil {
		tb.Fatal(err)
	}
	var links []string
	info, err := e.Page(strings.NewReader(doc), u, func(link *url.URL) bool {
		links = append(links, link.String())
		return true
	})
	if err != nil {
		tb.Fatalf("Page: %v", err)
	}
	if info.Links != len(links) {
		tb.Errorf("Info.Links = %d, but fn was called %d times", info.Links, len(links))
	}
	return links, info
}

func TestPage_Links(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("a", extract.MaxURLLen-len("https://example.com/"))
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"relative", `<a href="x.html">`, []string{"https://example.com/dir/x.html"}},
		{"root-relative", `<a href="/y">`, []string{"https://example.com/y"}},
		{"dot segments", `<a href="../../up/./z">`, []string{"https://example.com/up/z"}},
		{"query only", `<a href="?q=2">`, []string{"https://example.com/dir/page.html?q=2"}},
		{"absolute", `<a href="http://other.example/a?b=c">`, []string{"http://other.example/a?b=c"}},
		{"absolute upper-case scheme", `<a href="HTTPS://Other.Example/">`, []string{"https://Other.Example/"}},
		{"protocol-relative", `<a href="//cdn.example/x">`, []string{"https://cdn.example/x"}},
		{"empty href is the page", `<a href="">`, []string{"https://example.com/dir/page.html?x=1"}},
		{"fragment stripped", `<a href="/p#sec">`, []string{"https://example.com/p"}},
		{"fragment only", `<a href="#top">`, []string{"https://example.com/dir/page.html?x=1"}},
		{"no href", `<a name="x">a</a><a>b</a>`, nil},
		{"area", `<map><area href="/area1"><area nohref><area href="//m.example/"></map>`, []string{"https://example.com/area1", "https://m.example/"}},
		{"link and img ignored", `<link href="/style.css"><img src="/i.png"><script src="/s.js"></script>`, nil},
		{"iframe", `<a href="/1"><iframe src="//embed.example/v"><a href="/no"></iframe><a href="/2">`, []string{"https://example.com/1", "https://embed.example/v", "https://example.com/2"}},
		{"frameset", `<frameset cols="50%,*"><frame src="left.html"><frame name=x><frame src="http://other.example/"></frameset>`, []string{"https://example.com/dir/left.html", "http://other.example/"}},
		{"frame outside a frameset dropped", `<frame src="/f"><a href="/a">`, []string{"https://example.com/a"}},
		{"frames in a template dropped", `<template><iframe src="/i"></iframe><frameset><frame src="/f"></template><frame src="/g">`, nil},
		{"document order", `<a href="/1"><area href="/2"><a href="/3">`, []string{"https://example.com/1", "https://example.com/2", "https://example.com/3"}},
		{"base absolute", `<base href="https://base.example/b/"><a href="c">`, []string{"https://base.example/b/c"}},
		{"base relative to page", `<base href="../sub/"><a href="c">`, []string{"https://example.com/sub/c"}},
		{"base applies after it only", `<a href="c"><base href="/b/"><a href="c">`, []string{"https://example.com/dir/c", "https://example.com/b/c"}},
		{"first base wins", `<base href="/one/"><base href="/two/"><a href="c">`, []string{"https://example.com/one/c"}},
		{"base without href skipped", `<base target="_blank"><base href="/two/"><a href="c">`, []string{"https://example.com/two/c"}},
		{"unparseable base counts but falls back", `<base href="http://[::1"><base href="/two/"><a href="c">`, []string{"https://example.com/dir/c"}},
		// The URL Standard's readings (every browser's), which net/url's differ from:
		{"special scheme without slashes", `<a href="http:theodi.org/nodes/leeds">`, []string{"http://theodi.org/nodes/leeds"}},
		{"same scheme without slashes is relative", `<a href="https:x/y">`, []string{"https://example.com/dir/x/y"}},
		{"backslashes are slashes", `<a href="http:\\host\a\b?q=\">`, []string{`http://host/a/b?q=\`}},
		{"slash backslash is a host", `<a href="/\host/x">`, []string{"https://host/x"}},
		{"three slashes are a host", `<a href="///host/x">`, []string{"https://host/x"}},
		{"percent-encoded host", `<a href="http://ex%41mple.com/">`, []string{"http://exAmple.com/"}},
		{"percent-encoded forbidden host", `<a href="http://a%2fb.com/">`, nil},
		{"colon in first segment is a path", `<a href=":x">`, []string{"https://example.com/dir/:x"}},
		{"user name net/url refuses", "<a href=\"http://u`{:p@h/\">", []string{"http://u%60%7B:p@h/"}},
		{"no host after scheme", `<a href="http:///">`, nil},
		{"base in template skipped", `<template><base href="/t/"></template><a href="c">`, []string{"https://example.com/dir/c"}},
		{"non-http base", `<base href="ftp://f.example/"><a href="c"><a href="http://h.example/">`, []string{"http://h.example/"}},
		{"javascript", `<a href="javascript:alert(1)"><a href=" JavaScript:void(0)">`, nil},
		{"mailto tel data ftp", `<a href="mailto:a@b.example"><a href="tel:+44"><a href="data:text/html,<a>"><a href="ftp://f.example/">`, nil},
		{"scheme-like path", `<a href="./a:b">`, []string{"https://example.com/dir/a:b"}},
		{"whitespace trimmed", "<a href=\" \t\n/a \n\">", []string{"https://example.com/a"}},
		{"newline inside removed", "<a href=\"/b\n/c\">", []string{"https://example.com/b/c"}},
		{"tab inside removed", "<a href=\"ht\ttp://t.example/\">", []string{"http://t.example/"}},
		{"upper-case tags and attributes", `<A HREF="/u"><AREA Href="/v"><BASE HREF="/w/">`, []string{"https://example.com/u", "https://example.com/v"}},
		{"unquoted attributes", `<a class=x href=/u?a=1&b=2 id=y>`, []string{"https://example.com/u?a=1&b=2"}},
		{"single quotes", `<a href='/s q'>`, []string{"https://example.com/s%20q"}},
		{"entity amp", `<a href="/e?a=1&amp;b=2">`, []string{"https://example.com/e?a=1&b=2"}},
		{"double-escaped amp", `<a href="/e?a=1&amp;amp;b=2">`, []string{"https://example.com/e?a=1&amp;b=2"}},
		{"legacy entity before = kept in attribute", `<a href="/e?a=1&copy=2">`, []string{"https://example.com/e?a=1&copy=2"}},
		{"numeric entities", `<a href="&#x2F;n&#47;m">`, []string{"https://example.com/n/m"}},
		{"duplicate href: first wins", `<a href="/first" href="/second">`, []string{"https://example.com/first"}},
		{"script", `<script>document.write('<a href="/s">')</script><a href="/after">`, []string{"https://example.com/after"}},
		{"script with less-than", `<script>if (a<b) { x = "</scr" + "ipt><a href='/s'>"; }</script><a href="/after">`, []string{"https://example.com/after"}},
		{"style", `<style>/* <a href="/s"> */</style><a href="/after">`, []string{"https://example.com/after"}},
		{"textarea", `<textarea><a href="/t"></textarea>`, nil},
		{"title", `<title><a href="/t"></title>`, nil},
		{"noscript", `<noscript><a href="/n"></noscript><a href="/after">`, []string{"https://example.com/n", "https://example.com/after"}},
		{"comment", `<!-- <a href="/c"> --><a href="/after">`, []string{"https://example.com/after"}},
		{"template", `<template><a href="/t"></template><a href="/after">`, []string{"https://example.com/after"}},
		{"nested template", `<template><template><a href="/t1"></template><a href="/t2"></template><a href="/after">`, []string{"https://example.com/after"}},
		{"unclosed template", `<template><a href="/t">`, nil},
		{"stray template end", `</template><a href="/after">`, []string{"https://example.com/after"}},
		{"svg link", `<svg><a href="/svg"></a></svg>`, []string{"https://example.com/svg"}},
		{"unparseable", `<a href="http://[::1"><a href="http://a b/"><a href="/%zz"><a href="http://h:port/">`, nil},
		// The URL Standard: after another special scheme, the slashes are optional.
		{"http without host", `<a href="http:"><a href="http:///x"><a href="http:opaque">`, []string{"http://x", "http://opaque"}},
		{"max length", `<a href="` + long + `">`, []string{long}},
		{"over max length", `<a href="` + long + `a">`, nil},
		{"over max length after resolution", `<a href="` + strings.Repeat("b", extract.MaxURLLen-10) + `">`, nil},
		{"over max length after escaping", `<a href="/` + strings.Repeat(" ", 700) + `x">`, nil},
		{"huge attribute skipped", `<a title="` + strings.Repeat("x", 300_000) + `" href="/` + strings.Repeat("y", 100_000) + `"><a href="/after">`, []string{"https://example.com/after"}},
		{"no html at all", "just text, no tags", nil},
		{"unterminated tag", `<a href="/ok"><a href="/cut`, []string{"https://example.com/ok"}},
	}
	var e extract.Extractor
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := run(t, &e, pageURL, tt.doc)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestPage_Info(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want extract.Info
	}{
		{"title with entities and newlines", "<title>\n  Fish &amp; Chips &mdash;\n\t the\r\n  best  </title>", extract.Info{Title: "Fish & Chips — the best"}},
		{"title with markup inside", "<title>a <b>bold</b> move</title>", extract.Info{Title: "a <b>bold</b> move"}},
		{"upper-case title", "<TITLE>Up</TITLE>", extract.Info{Title: "Up"}},
		{"first title only", "<title>One</title><title>Two</title>", extract.Info{Title: "One"}},
		{"empty first title", "<title></title><title>Two</title>", extract.Info{Title: ""}},
		{"svg title skipped", "<svg><title>icon</title></svg><title>Page</title>", extract.Info{Title: "Page"}},
		{"template title skipped", "<template><title>t</title></template><title>Page</title>", extract.Info{Title: "Page"}},
		{"invalid UTF-8 in title", "<title>caf\xe9 \xff\xfe ok</title>", extract.Info{Title: "caf\ufffd \ufffd\ufffd ok"}},
		{"NUL and controls in title", "<title>a\x00b\x01c\x7fd\u0085e</title>", extract.Info{Title: "a\ufffdbcd e"}},
		{"unicode spaces collapse", "<title>\u00a0a\u2003\u00a0b\u3000</title>", extract.Info{Title: "a b"}},
		{"unterminated title", "<title>cut off", extract.Info{Title: "cut off"}},
		{"description", `<meta name="description" content="  The   page
			about things. ">`, extract.Info{Description: "The page about things."}},
		{"description name case-insensitive", `<META NAME="Description" CONTENT="d">`, extract.Info{Description: "d"}},
		{"description entities", `<meta name=description content="a &amp; b &lt;c&gt;">`, extract.Info{Description: "a & b <c>"}},
		{"missing description", `<title>T</title><meta name="keywords" content="k">`, extract.Info{Title: "T"}},
		{"empty description skipped", `<meta name="description" content="  "><meta name="description" content="second">`, extract.Info{Description: "second"}},
		{"description without content skipped", `<meta name="description"><meta name="description" content="second">`, extract.Info{Description: "second"}},
		{"first description wins", `<meta name="description" content="one"><meta name="description" content="two">`, extract.Info{Description: "one"}},
		{"og:description fallback", `<meta property="og:description" content="og">`, extract.Info{Description: "og"}},
		{"og:description by name", `<meta name="og:description" content="og">`, extract.Info{Description: "og"}},
		{"description beats og", `<meta property="og:description" content="og"><meta name="description" content="d">`, extract.Info{Description: "d"}},
		{"description in template skipped", `<template><meta name="description" content="t"></template>`, extract.Info{}},
		{"nofollow", `<meta name="robots" content="noindex, nofollow">`,
			extract.Info{NoFollow: true, Robots: extract.Directives{NoIndex: true, NoFollow: true, List: "noindex,nofollow"}}},
		{"nofollow upper-case", `<meta name="ROBOTS" content="NOFOLLOW">`,
			extract.Info{NoFollow: true, Robots: extract.Directives{NoFollow: true, List: "nofollow"}}},
		{"none", `<meta name="robots" content="none">`,
			extract.Info{NoFollow: true, Robots: extract.Directives{NoIndex: true, NoFollow: true, List: "none"}}},
		{"follow", `<meta name="robots" content="index,follow">`, extract.Info{Robots: extract.Directives{List: "index,follow"}}},
		{"nofollow as part of a word", `<meta name="robots" content="nofollowing">`, extract.Info{}},
		{"other bot's nofollow", `<meta name="googlebot" content="nofollow">`, extract.Info{}},
		{"weaver's own meta", `<meta name="Weaver" content="noindex">`, extract.Info{Robots: extract.Directives{NoIndex: true, List: "noindex"}}},
		{"robots and weaver merged", `<meta name="robots" content="noarchive"><meta name="weaver" content="nofollow, noarchive">`,
			extract.Info{NoFollow: true, Robots: extract.Directives{NoFollow: true, List: "noarchive,nofollow"}}},
		{"unknown directives and values", `<meta name="robots" content="max-snippet:20 bogus, all">`,
			extract.Info{Robots: extract.Directives{List: "max-snippet,all"}}},
		{"canonical", `<link rel="canonical" href="/c?x=1#f">`, extract.Info{Canonical: "https://example.com/c?x=1"}},
		{"canonical among rel tokens, after base", `<base href="https://b.example/d/"><LINK REL="alternate Canonical" HREF="e">`,
			extract.Info{Base: "https://b.example/d/", Canonical: "https://b.example/d/e"}},
		{"first canonical wins", `<link rel=canonical href="/one"><link rel=canonical href="/two">`, extract.Info{Canonical: "https://example.com/one"}},
		{"canonical to another scheme dropped", `<link rel="canonical" href="ftp://f.example/">`, extract.Info{}},
		{"stylesheet is no canonical", `<link rel="stylesheet" href="/s.css"><link rel="canonicalx" href="/x">`, extract.Info{}},
		{"base", `<base href="/b/">`, extract.Info{Base: "https://example.com/b/"}},
		{"base fragment dropped", `<base href="https://o.example/x#f">`, extract.Info{Base: "https://o.example/x"}},
		{"links counted", `<a href="/1"><a href="mailto:x@y"><a href="/2">`, extract.Info{Links: 2}},
	}
	var e extract.Extractor
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := run(t, &e, pageURL, tt.doc)
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestPage_Caps(t *testing.T) {
	var e extract.Extractor
	_, info := run(t, &e, pageURL, "<title>"+strings.Repeat("é ", 5000)+"</title><meta name=description content=\""+strings.Repeat("ab ", 5000)+"\">")
	if n := utf8.RuneCountInString(info.Title); n > extract.MaxTitleRunes || n < extract.MaxTitleRunes-1 {
		t.Errorf("title has %d runes, want %d or one less", n, extract.MaxTitleRunes)
	}
	if n := utf8.RuneCountInString(info.Description); n > extract.MaxDescriptionRunes || n < extract.MaxDescriptionRunes-1 {
		t.Errorf("description has %d runes, want %d or one less", n, extract.MaxDescriptionRunes)
	}
	if strings.HasSuffix(info.Title, " ") || strings.HasSuffix(info.Description, " ") {
		t.Errorf("capped text ends with a space")
	}
}

func TestPage_StopEarly(t *testing.T) {
	doc := `<html><head><title>Kept</title><meta name="description" content="Also kept"></head><body>` +
		strings.Repeat(`<a href="/x">x</a>`, 100) + `<meta name="robots" content="nofollow">`
	u, _ := url.Parse(pageURL)
	calls := 0
	info, err := extract.Page(strings.NewReader(doc), u, func(*url.URL) bool {
		calls++
		return calls < 3
	})
	if err != nil {
		t.Fatal(err)
	}
	want := extract.Info{Title: "Kept", Description: "Also kept", Links: 3}
	if calls != 3 || info != want {
		t.Errorf("got %d calls, %+v; want 3 calls, %+v", calls, info, want)
	}
}

func TestPage_NilFunc(t *testing.T) {
	u, _ := url.Parse(pageURL)
	info, err := extract.Page(strings.NewReader(`<a href="/1"><a href="/2">`), u, nil)
	if err != nil || info.Links != 2 {
		t.Errorf("got %+v, %v; want 2 links counted", info, err)
	}
}

func TestPage_NoPageURL(t *testing.T) {
	_, err := extract.Page(strings.NewReader(`<a href="/1">`), nil, nil)
	if !errors.Is(err, extract.ErrNoPageURL) {
		t.Errorf("got %v, want ErrNoPageURL", err)
	}
}

var errBroken = errors.New("connection reset")

// brokenReader returns its data, then errBroken.
type brokenReader struct{ r io.Reader }

func (b brokenReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		return n, errBroken
	}
	return n, err
}

func TestPage_ReadError(t *testing.T) {
	u, _ := url.Parse(pageURL)
	var links int
	info, err := extract.Page(brokenReader{strings.NewReader(`<title>T</title><a href="/1"><a href="/2">`)}, u, func(*url.URL) bool {
		links++
		return true
	})
	if !errors.Is(err, errBroken) {
		t.Errorf("got %v, want errBroken", err)
	}
	if info.Title != "T" || info.Links != 2 || links != 2 {
		t.Errorf("got %+v, want the title and both links read before the error", info)
	}
}

func TestPage_Truncated(t *testing.T) {
	e := extract.Extractor{MaxBuf: 4096}
	doc := `<title>T</title><a href="/before">` + `<a title="` + strings.Repeat("x", 10_000) + `" href="/huge">` + `<a href="/after">`
	links, info := run(t, &e, pageURL, doc)
	if !info.Truncated || info.Title != "T" || len(links) != 1 || links[0] != "https://example.com/before" {
		t.Errorf("got %q, %+v; want only /before, title T, Truncated", links, info)
	}
	// The same Extractor then reads a normal page in full.
	links, info = run(t, &e, pageURL, `<a href="/1">`)
	if info.Truncated || len(links) != 1 {
		t.Errorf("after truncation: got %q, %+v", links, info)
	}
}

func TestPage_Hostile(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	garbage := make([]byte, 2<<20)
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	// Sprinkle some '<a href=' so that the garbage has tags too.
	for i := 0; i+20 < len(garbage); i += 997 {
		copy(garbage[i:], `<a href="/g`)
	}
	tests := []struct {
		name string
		doc  string
		min  int // fewest links wanted
	}{
		{"deep nesting", strings.Repeat("<div><span><b>", 10_000) + `<a href="/deep">` + strings.Repeat("<i>", 10_000), 1},
		{"deep unclosed templates", strings.Repeat("<template>", 10_000) + `<a href="/t">`, 0},
		{"many attributes", `<a ` + strings.Repeat(`x=1 `, 50_000) + `href="/many">`, 1},
		{"binary garbage", string(garbage), 1},
		{"only less-thans", strings.Repeat("<", 1<<20), 0},
		{"unterminated comment", "<!--" + strings.Repeat("<a href=/c>", 10_000), 0},
	}
	var e extract.Extractor
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			links, info := run(t, &e, pageURL, tt.doc)
			if el := time.Since(start); el > slowdown*2*time.Second {
				t.Errorf("took %v, want under %v", el, slowdown*2*time.Second)
			}
			if len(links) < tt.min {
				t.Errorf("got %d links, want at least %d", len(links), tt.min)
			}
			checkResult(t, links, info)
		})
	}
}

// checkResult checks what must hold of any page's result.
func checkResult(t *testing.T, links []string, info extract.Info) {
	t.Helper()
	for _, l := range links {
		u, err := url.Parse(l)
		if err != nil {
			t.Errorf("link %q does not parse: %v", l, err)
			continue
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" {
			t.Errorf("link %q is not an absolute http(s) URL without fragment", l)
		}
		if len(l) > extract.MaxURLLen {
			t.Errorf("link of %d bytes, over MaxURLLen", len(l))
		}
	}
	if !utf8.ValidString(info.Title) || !utf8.ValidString(info.Description) || !utf8.ValidString(info.Base) {
		t.Errorf("Info has invalid UTF-8: %#v", info)
	}
	if utf8.RuneCountInString(info.Title) > extract.MaxTitleRunes || utf8.RuneCountInString(info.Description) > extract.MaxDescriptionRunes {
		t.Errorf("Info text over its cap")
	}
	if strings.TrimSpace(info.Title) != info.Title || strings.TrimSpace(info.Description) != info.Description {
		t.Errorf("Info text not trimmed: %#v", info)
	}
	if info.NoFollow != info.Robots.NoFollow {
		t.Errorf("Info.NoFollow %v, Robots.NoFollow %v", info.NoFollow, info.Robots.NoFollow)
	}
	if c := info.Canonical; c != "" {
		u, err := url.Parse(c)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" || len(c) > extract.MaxURLLen || !utf8.ValidString(c) {
			t.Errorf("canonical %q is not an absolute http(s) URL without fragment (%v)", c, err)
		}
	}
}

func TestPage_Golden(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("testdata", "page.html"))
	if err != nil {
		t.Fatal(err)
	}
	var e extract.Extractor
	links, info := run(t, &e, "https://www.northern-courier.example/", string(doc))
	checkResult(t, links, info)
	wantInfo := extract.Info{
		Title:       "The Northern Courier — News, Sport & Weather for the North East",
		Description: "Independent local news from Tyneside, Wearside & Teesside: politics, sport, culture and the weather, updated every hour.",
		Links:       len(links),
		Robots:      extract.Directives{List: "index,follow,max-image-preview"},
		Canonical:   "https://www.northern-courier.example/",
	}
	if info != wantInfo {
		t.Errorf("Info:\ngot  %+v\nwant %+v", info, wantInfo)
	}
	got := strings.Join(links, "\n") + "\n"
	golden := filepath.Join("testdata", "golden", "page.links")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("links differ from %s (run with -update to accept):\n%s", golden, lineDiff(string(want), got))
	}
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	in := func(s string) map[string]int {
		m := map[string]int{}
		for _, l := range strings.Split(s, "\n") {
			m[l]++
		}
		return m
	}
	w, g := in(want), in(got)
	var b strings.Builder
	for l, n := range w {
		if g[l] < n {
			b.WriteString("- " + l + "\n")
		}
	}
	for l, n := range g {
		if w[l] < n {
			b.WriteString("+ " + l + "\n")
		}
	}
	if b.Len() == 0 {
		return "(same lines, different order)"
	}
	return b.String()
}

func FuzzPage(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.html"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds in testdata: %v", err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	var e extract.Extractor
	small := extract.Extractor{MaxBuf: 512}
	anchors := extract.Extractor{AnchorText: true}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var plain []string
		for _, e := range []*extract.Extractor{&e, &small} {
			links, info := run(t, e, pageURL, string(doc))
			checkResult(t, links, info)
			if e == &small {
				continue
			}
			plain = links
		}
		checkAttrs(t, doc)
		// With anchor texts: the same links, in the same order, each
		// with valid, capped text.
		u, _ := url.Parse(pageURL)
		var got []string
		anchors.Links(strings.NewReader(string(doc)), u, func(l extract.Link) bool {
			got = append(got, l.URL.String())
			if !utf8.ValidString(l.Text) || utf8.RuneCountInString(l.Text) > extract.MaxAnchorRunes || len(l.RelAttr) > extract.MaxRelLen {
				t.Errorf("link %s: text %q, rel %q", l.URL, l.Text, l.RelAttr)
			}
			return true
		})
		if !slices.Equal(got, plain) {
			t.Errorf("with anchor texts: %d links %q, without %d %q", len(got), got, len(plain), plain)
		}
	})
}

func BenchmarkPage(b *testing.B) {
	doc, err := os.ReadFile(filepath.Join("testdata", "page.html"))
	if err != nil {
		b.Fatal(err)
	}
	u, _ := url.Parse("https://www.northern-courier.example/")
	b.Run("extract", func(b *testing.B) {
		var e extract.Extractor
		var r bytes.Reader
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			r.Reset(doc)
			if _, err := e.Page(&r, u, func(*url.URL) bool { return true }); err != nil {
				b.Fatal(err)
			}
		}
	})
	// PageBytes: the same extraction through the byte scanner.
	b.Run("scan", func(b *testing.B) {
		var e extract.Extractor
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.PageBytes(doc, u, func(*url.URL) bool { return true }); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Decoded, then PageBytes, as the crawl reads a page: a UTF-8 page
	// by its header, one that declares nothing (the prescan), and one in
	// windows-1252 (decoded).
	for _, c := range []struct{ name, header string }{
		{"decoded-utf8-header", "text/html; charset=utf-8"},
		{"decoded-undeclared", "text/html"},
		{"decoded-windows-1252", "text/html; charset=windows-1252"},
	} {
		page := doc
		if c.name == "decoded-windows-1252" {
			page = append(bytes.Clone(doc), "<p>caf\xe9</p>"...)
		}
		b.Run(c.name, func(b *testing.B) {
			var e extract.Extractor
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			for b.Loop() {
				d, _ := e.Decoded(page, c.header)
				if _, err := e.PageBytes(d, u, func(*url.URL) bool { return true }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// The floor: the tokenizer alone, reading every tag's name.
	b.Run("tokenizer-only", func(b *testing.B) {
		var r bytes.Reader
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			r.Reset(doc)
			z := html.NewTokenizer(&r)
			for z.Next() != html.ErrorToken {
			}
		}
	})
}

// TestLinks_Rel: Links reports each link with the rel keywords weaver
// records, any case, among other tokens; Page reports the same links.
func TestLinks_Rel(t *testing.T) {
	doc := `<a href="http://a.example/">plain</a>
<a rel="nofollow noopener" href="http://b.example/">nf</a>
<a REL="UGC" href="http://c.example/">ugc</a>
<area rel="sponsored nofollow" href="http://d.example/">
<a rel=" external " href="http://e.example/">ext</a>
<a rel="ugc" rel="nofollow" href="http://f.example/">first rel counts</a>
<a rel="nofollow">no href</a>`
	want := []struct {
		url string
		rel extract.Rel
	}{
		{"http://a.example/", 0},
		{"http://b.example/", extract.RelNofollow},
		{"http://c.example/", extract.RelUGC},
		{"http://d.example/", extract.RelSponsored | extract.RelNofollow},
		{"http://e.example/", 0},
		{"http://f.example/", extract.RelUGC},
	}
	u, _ := url.Parse(pageURL)
	var e extract.Extractor
	var got []extract.Link
	info, err := e.Links(strings.NewReader(doc), u, func(l extract.Link) bool {
		got = append(got, l)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || info.Links != len(want) {
		t.Fatalf("got %d links (Info.Links %d), want %d", len(got), info.Links, len(want))
	}
	for i, w := range want {
		if got[i].URL.String() != w.url || got[i].Rel != w.rel || got[i].Rel.Typed() != (w.rel != 0) {
			t.Errorf("link %d: got %s rel %q, want %s rel %q", i, got[i].URL, got[i].Rel, w.url, w.rel)
		}
	}
	links, _ := run(t, &e, pageURL, doc)
	for i := range links {
		if links[i] != want[i].url {
			t.Errorf("Page link %d: got %s, want %s", i, links[i], want[i].url)
		}
	}
}

func TestRobotsTag(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		want   extract.Directives
	}{
		{"none", nil, extract.Directives{}},
		{"for everyone", []string{"noindex, nofollow"}, extract.Directives{NoIndex: true, NoFollow: true, List: "noindex,nofollow"}},
		{"none means both", []string{"NONE"}, extract.Directives{NoIndex: true, NoFollow: true, List: "none"}},
		{"weaver's", []string{"weaver: nofollow"}, extract.Directives{NoFollow: true, List: "nofollow"}},
		{"weaver's in any case", []string{"Weaver:noindex"}, extract.Directives{NoIndex: true, List: "noindex"}},
		{"another bot's", []string{"googlebot: noindex, nofollow"}, extract.Directives{}},
		{"agents switch after a comma", []string{"googlebot: noindex, weaver: nofollow, noarchive"},
			extract.Directives{NoFollow: true, List: "nofollow,noarchive"}},
		{"several headers", []string{"googlebot: none", "noarchive", "weaver: noindex"},
			extract.Directives{NoIndex: true, List: "noarchive,noindex"}},
		{"unavailable_after is no agent", []string{"unavailable_after: 25 Jun 2010 15:00:00 PST, nofollow"},
			extract.Directives{NoFollow: true, List: "unavailable_after,nofollow"}},
		{"max-snippet value", []string{"max-snippet: 20, noindex"}, extract.Directives{NoIndex: true, List: "max-snippet,noindex"}},
		{"all", []string{"all"}, extract.Directives{List: "all"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := extract.RobotsTag(tt.values, "weaver"); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	meta := extract.Directives{NoIndex: true, List: "noindex,noarchive"}
	if got := meta.Merge(extract.RobotsTag([]string{"nofollow, noarchive"}, "weaver")); got != (extract.Directives{NoIndex: true, NoFollow: true, List: "noindex,noarchive,nofollow"}) {
		t.Errorf("Merge: got %+v", got)
	}
}

// TestLinks_AnchorText: with AnchorText, Links reports each link with its
// text (an image's alt inside it, an area's alt; no script), normalised
// and capped, and its rel keywords; an <a> left open ends at the next one
// or at the end of the page; the links are the same, in the same order,
// as without.
func TestLinks_AnchorText(t *testing.T) {
	long := strings.Repeat("word ", 60)
	doc := `<title>T</title>
<a href="http://a.example/">  Plain
   text </a>
<a rel="NoFollow  noopener" href="http://b.example/"><img src=x alt="Logo of B"> and <b>bold</b></a>
<area alt=" map area " href="http://c.example/">
<area alt="A &amp; B" href="http://c2.example/">
<a href="http://d.example/">before<script>var x = "<a>";</script> after</a>
<a href="http://e.example/">left open
<a href="http://f.example/">` + long + `</a>
<template><a href="http://t.example/">inert</a></template>
<a href="http://g.example/"></a>
<a href="http://h.example/">at the end`
	want := []extract.Link{
		{Text: "Plain text"},
		{Text: "Logo of B and bold", RelAttr: "nofollow noopener", Rel: extract.RelNofollow},
		{Text: "map area"},
		{Text: "A & B"}, // read through TagAttr, as its href is
		{Text: "before after"},
		{Text: "left open"},
		{Text: strings.TrimSpace(long[:extract.MaxAnchorRunes])},
		{},
		{Text: "at the end"},
	}
	urls := []string{"http://a.example/", "http://b.example/", "http://c.example/", "http://c2.example/", "http://d.example/", "http://e.example/", "http://f.example/", "http://g.example/", "http://h.example/"}
	u, _ := url.Parse(pageURL)
	e := extract.Extractor{AnchorText: true}
	var got []extract.Link
	info, err := e.Links(strings.NewReader(doc), u, func(l extract.Link) bool {
		got = append(got, l)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || info.Links != len(want) || info.Title != "T" {
		t.Fatalf("got %d links (Info.Links %d, title %q), want %d", len(got), info.Links, info.Title, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.URL.String() != urls[i] || g.Text != w.Text || g.RelAttr != w.RelAttr || g.Rel != w.Rel {
			t.Errorf("link %d: got %s %q rel %q (%v), want %s %q rel %q (%v)", i, g.URL, g.Text, g.RelAttr, g.Rel, urls[i], w.Text, w.RelAttr, w.Rel)
		}
	}
	// Stopping at a link stops there.
	n := 0
	if _, err := e.Links(strings.NewReader(doc), u, func(l extract.Link) bool { n++; return n < 3 }); err != nil || n != 3 {
		t.Errorf("stopped after %d links (%v), want 3", n, err)
	}
	// Without AnchorText: the same links, no text.
	e.AnchorText = false
	var plain []extract.Link
	e.Links(strings.NewReader(doc), u, func(l extract.Link) bool { plain = append(plain, l); return true })
	if len(plain) != len(urls) {
		t.Fatalf("without AnchorText: %d links, want %d", len(plain), len(urls))
	}
	for i := range plain {
		if plain[i].URL.String() != urls[i] || plain[i].Text != "" || plain[i].RelAttr != "" {
			t.Errorf("without AnchorText, link %d: %s %q %q", i, plain[i].URL, plain[i].Text, plain[i].RelAttr)
		}
	}
}

// A page a browser rendered ran its scripts: its <noscript> is text.
func TestPage_NoscriptWithScripting(t *testing.T) {
	u, _ := url.Parse("https://example.com/")
	doc := []byte(`<noscript><a href="/n"></noscript><a href="/after">`)
	for _, scripting := range []bool{false, true} {
		ex := extract.Extractor{Scripting: scripting}
		var got []string
		ex.PageBytes(doc, u, func(l *url.URL) bool { got = append(got, l.Path); return true })
		var viaTokenizer []string
		ex.Page(bytes.NewReader(doc), u, func(l *url.URL) bool { viaTokenizer = append(viaTokenizer, l.Path); return true })
		want := "/n /after"
		if scripting {
			want = "/after"
		}
		if strings.Join(got, " ") != want || strings.Join(viaTokenizer, " ") != want {
			t.Errorf("scripting %v: scanner %v, tokenizer %v; want %s", scripting, got, viaTokenizer, want)
		}
	}
}

// ContentType reads the header once: its type and whether it is HTML, or,
// with no header or one that does not parse, the body's sniffed type.
func TestContentType(t *testing.T) {
	for _, c := range []struct {
		header, body, want string
		html               bool
	}{
		{"text/html; charset=utf-8", "plain", "text/html; charset=utf-8", true},
		{"application/xhtml+xml", "", "application/xhtml+xml", true},
		{"image/png", "<html>", "image/png", false},
		{"", "\n <html><a href=/>", "text/html; charset=utf-8", true},
		{"", "plain <a href=/>", "text/plain; charset=utf-8", false},
		{"text/html; charset", "<!DOCTYPE html>", "text/html; charset=utf-8", true},
		{"text/html; charset", "hello", "text/plain; charset=utf-8", false},
	} {
		got, html := extract.ContentType(c.header, []byte(c.body))
		if got != c.want || html != c.html || html != extract.IsHTML(got) {
			t.Errorf("ContentType(%q, %q) = %q, %v; want %q, %v", c.header, c.body, got, html, c.want, c.html)
		}
	}
}
