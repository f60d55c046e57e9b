package extract_test

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/crawl/extract"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

// tricky are documents whose tokens depend on the tokenizer's corners: the
// end of the input inside every kind of token, raw text and script
// escapes, comments, doctypes, self-closing tags, attribute values with
// references, NULs and CRs.
var tricky = []string{
	"", "<", "<a", "<a ", "<a href", "<a href=", `<a href="x`, `<a href='x' `, "</", "</a", "</a ", "</>", "<!", "<!-",
	"<!--", "<!-- x", "<!-- x -", "<!-- x --", "<!-- x --!", "<!-->", "<!--->", "<!---->", "<!-- --!>x", "<!-- --!-->", "<!-- --!x-->",
	"<!DOCTYPE html>", "<!doctype", "<!DOCTY", "<!DOCTYPE", "<!DOCTYPE ", "<!x>", "<?xml?>", "<?", "</ x>", "</1>", "<1>", "a<b",
	"a < b", "<<a href=/x>", "<a/>", "<a x/>", "<a x=/>", `<a x="/"/>`, "<a x=y/>", "<a x=1 x=2/>", "<a X=1 x=2/>", "<a =x/>", "<a ==x/>",
	"<br/ >", "<a / href=/x>", "<a\thref=/t\nrel=nofollow\f>", "<title>T</title>", "<title/>x</title>", "<TITLE>a &amp; b</TiTlE >",
	"<title>a</title", "<title>a</titlex</title>", "<title>a\x00b\r\nc\rd</title>", "<textarea>&lt;a href=/x></textarea><a href=/y>",
	"<script>a</script>", "<script>", "<script></script>", "<script>a<!--b</script>c-->d</script><a href=/s>", "<script><!--<script>x</script>--></script><a href=/s>",
	"<script><!--<script>x</script>-- ></script>after</script>", "<script><!--<scriptx>", "<script><!-<a>", "<SCRIPT>x</SCRIPT ", "<script>x</script\t",
	"<style>a<b</style><a href=/a>", "<xmp><a href=/x></xmp>", "<iframe><a href=/x></iframe>", "<noembed>x</noembed>", "<noframes></noframes>",
	"<noscript><a href=/n></noscript>", "<plaintext><a href=/p>", "<plaintext/>x", "<a href=\"/a&amp;b\">", "<a href=\"/a&ampb\">",
	"<a href=\"/a&amp=b\">", "<a href=\"&#x2F;&#47;&#0;&#128;&#xD800;&#x110000;&#99999999999;&#;&#x;&#\">", "<a href=\"&#65\">", "<a href=&#x41",
	"<a href=\"&copy=1&copy;&COPY;&nbsp;&notin;&notit;&;&\">", "<a h\x00ref=/x href=/y\x00z>", "<a href=\"/x\r\ny\rz\">", "<a href=\"&lt;&gt;&quot;&apos;\">",
	"text &amp; &copy &notit; &#169 more", "<a href=/x>link &amp; text\x00\r\n</a>", "<base href=/b/><a href=c>",
	"<meta name=robots content=\"noindex,&#110;ofollow\">", "<link rel=canonical href=\"/c&amp;d\">", "<svg><title>i</title><a href=/s/></svg>",
	"<template><a href=/t></template><a href=/u>", "<a href=x><img alt=\"A &amp; B\"></a>", "<area href=/ar alt=\"x&#10;y\">",
	"<meta http-equiv=refresh content=\"0; url=http://r.test/&amp;x\">", "<META HTTP-EQUIV=Refresh CONTENT='5;URL=\"/in\"'>",
	"<meta http-equiv=\"refresh\" content=\"0;url=&#x68;ttp://e.test/\">", "<meta content=1 http-equiv=refresh><meta http-equiv=refresh content=\"0,x\">",
}

// fakewebPages are home pages of the fake web a benchmark crawls (30 KB, 40
// links), of its sites (typed links, robots meta tags) and of its faulty
// hosts.
func fakewebPages(tb testing.TB) [][]byte {
	tb.Helper()
	get := func(w *fakeweb.Web, host, path string) []byte {
		rec := httptest.NewRecorder()
		w.ServeHTTP(rec, httptest.NewRequest("GET", "http://"+host+path, nil))
		return rec.Body.Bytes()
	}
	var pages [][]byte
	faults := map[string]fakeweb.Fault{"many.example": fakeweb.ManyLinks, "utf.example": fakeweb.InvalidUTF8,
		"bytes.example": fakeweb.InvalidBytes, "private.example": fakeweb.LinksToPrivate, "trap.example": fakeweb.CalendarTrap}
	w := fakeweb.New(fakeweb.Config{Hosts: 20, LinksPerPage: 40, Faults: faults})
	for _, h := range w.Hosts() {
		if _, ok := faults[h]; ok && h == "many.example" {
			continue // 10 MB: too big a seed
		}
		pages = append(pages, get(w, h, "/"))
	}
	s := fakeweb.NewSites(fakeweb.SitesConfig{Hosts: 6, Pages: 3})
	for _, h := range s.Hosts() {
		pages = append(pages, get(s, h, "/"), get(s, h, "/p2"))
	}
	return pages
}

// testdataPages are the pages under testdata.
func testdataPages(tb testing.TB) [][]byte {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.html"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no pages in testdata: %v", err)
	}
	var pages [][]byte
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		pages = append(pages, b)
	}
	return pages
}

// sameTokens fails t when the scanner's tokens of doc are not the tokenizer's.
func sameTokens(t *testing.T, doc []byte) {
	t.Helper()
	sameTokensScripting(t, doc, false)
	sameTokensScripting(t, doc, true)
}

func sameTokensScripting(t *testing.T, doc []byte, scripting bool) {
	t.Helper()
	got, gotErr := extract.Tokens(doc, true, scripting)
	want, wantErr := extract.Tokens(doc, false, scripting)
	if gotErr != wantErr {
		t.Errorf("end: scanner %v, tokenizer %v", gotErr, wantErr)
	}
	for i := range max(len(got), len(want)) {
		var g, w extract.Tok
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g.Type != w.Type || g.Raw != w.Raw || g.Text != w.Text || fmt.Sprint(g.Attrs) != fmt.Sprint(w.Attrs) {
			t.Fatalf("doc %q (scripting %v): token %d:\nscanner   %#v\ntokenizer %#v", doc, scripting, i, g, w)
		}
	}
}

// extraction is everything an extraction reports, as text.
func extraction(e *extract.Extractor, doc []byte, scan, links bool, stop int) string {
	var b strings.Builder
	u, _ := url.Parse(pageURL)
	n := 0
	more := func() bool { n++; return stop <= 0 || n < stop }
	var info extract.Info
	var err error
	switch {
	case links && scan:
		info, err = e.LinksBytes(doc, u, func(l extract.Link) bool {
			fmt.Fprintf(&b, "%s rel=%d text=%q relattr=%q\n", l.URL, l.Rel, l.Text, l.RelAttr)
			return more()
		})
	case links:
		info, err = e.Links(bytes.NewReader(doc), u, func(l extract.Link) bool {
			fmt.Fprintf(&b, "%s rel=%d text=%q relattr=%q\n", l.URL, l.Rel, l.Text, l.RelAttr)
			return more()
		})
	case scan:
		info, err = e.PageBytes(doc, u, func(l *url.URL) bool { fmt.Fprintln(&b, l); return more() })
	default:
		info, err = e.Page(bytes.NewReader(doc), u, func(l *url.URL) bool { fmt.Fprintln(&b, l); return more() })
	}
	refresh := info.Refresh
	info.Refresh = nil // a pointer: printed by its URL below
	fmt.Fprintf(&b, "info %+v refresh %v err %v", info, refresh, err)
	return b.String()
}

// sameExtraction fails t when PageBytes and LinksBytes (the scanner) do
// not report what Page and Links (the tokenizer) report for doc, with and
// without anchor texts, when told to stop after stop links (0: never).
func sameExtraction(t *testing.T, doc []byte, stop int) {
	t.Helper()
	for _, e := range []*extract.Extractor{{}, {AnchorText: true}, {MaxBuf: len(doc) + 1}} {
		if !e.Scanned(doc) {
			t.Fatalf("MaxBuf %d: a %d-byte page is not scanned", e.MaxBuf, len(doc))
		}
		for _, links := range []bool{false, true} {
			if links != e.AnchorText && e.MaxBuf == 0 {
				continue // AnchorText is for Links; a small MaxBuf tries both
			}
			got, want := extraction(e, doc, true, links, stop), extraction(e, doc, false, links, stop)
			if got != want {
				t.Fatalf("doc %q (anchor text %v, Links %v, stop %d):\nscanner:\n%s\ntokenizer:\n%s", doc, e.AnchorText, links, stop, got, want)
			}
		}
	}
}

func TestScanner_SameTokens(t *testing.T) {
	docs := append(testdataPages(t), fakewebPages(t)...)
	for _, d := range tricky {
		docs = append(docs, []byte(d), []byte(d+"<a href=/after>after</a>"), []byte("x"+d+" "))
	}
	for _, doc := range docs {
		sameTokens(t, doc)
		sameExtraction(t, doc, 0)
		sameExtraction(t, doc, 3)
	}
}

// TestPageBytes_LongPage: a page of MaxBuf bytes or more goes to the
// tokenizer, which alone knows where a token would exceed MaxBuf.
func TestPageBytes_LongPage(t *testing.T) {
	e := extract.Extractor{MaxBuf: 64}
	doc := []byte(`<a href="/one"><a title="` + strings.Repeat("x", 100) + `" href="/two"><a href="/three">`)
	if e.Scanned(doc) || !e.Scanned(doc[:63]) {
		t.Fatalf("Scanned: got %v for %d bytes, %v for 63; want false, true", e.Scanned(doc), len(doc), e.Scanned(doc[:63]))
	}
	got, want := extraction(&e, doc, true, false, 0), extraction(&e, doc, false, false, 0)
	if got != want || !strings.Contains(got, "Truncated:true") {
		t.Errorf("scanner:\n%s\ntokenizer:\n%s\n(want the same, truncated)", got, want)
	}
}

// TestPageBytes_NoAlias: the scanner never writes into the page it reads
// (NULs, CRs and references are rewritten in its own buffers).
func TestPageBytes_NoAlias(t *testing.T) {
	doc := []byte("<title>a\r\nb &amp; c\x00</title><a href=\"/x&amp;y\r\nz\x00\">t\r\n&amp;</a><a href=\"&notin;\">")
	orig := bytes.Clone(doc)
	var e extract.Extractor
	u, _ := url.Parse(pageURL)
	e.LinksBytes(doc, u, func(extract.Link) bool { return true })
	e.AnchorText = true
	e.LinksBytes(doc, u, func(extract.Link) bool { return true })
	if !bytes.Equal(doc, orig) {
		t.Errorf("page changed:\n%q\nwas\n%q", doc, orig)
	}
}

// FuzzScanner: on any input, the scanner gives the tokenizer's tokens, and
// PageBytes and LinksBytes give what Page and Links give. Seeded with the
// pages under testdata, the fake web's pages and the tricky documents;
// make fuzz runs it.
func FuzzScanner(f *testing.F) {
	for _, p := range testdataPages(f) {
		f.Add(p, uint8(3))
	}
	for _, p := range fakewebPages(f) {
		f.Add(p, uint8(7))
	}
	for i, d := range tricky {
		f.Add([]byte(d), uint8(i%4))
	}
	f.Fuzz(func(t *testing.T, doc []byte, stop uint8) {
		sameTokens(t, doc)
		sameExtraction(t, doc, int(stop))
	})
}
