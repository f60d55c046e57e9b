package extract_test

import (
	"bytes"
	"net/url"
	"testing"

	"github.com/weaver-crawler/weaver/crawl/extract"
)

// TestParseRefresh follows HTML's "shared declarative refresh steps" case
// by case: the delay, the separators, url= in any case, quotes, and what
// a browser ignores.
func TestParseRefresh(t *testing.T) {
	for _, tc := range []struct {
		in     string
		ok     bool
		delay  int
		target string
	}{
		{"0; url=http://a.test/", true, 0, "http://a.test/"},
		{"5;URL='http://a.test/x'", true, 5, "http://a.test/x"},
		{" 5 ,URL='x'", true, 5, "x"},
		{`0;url="a b"c`, true, 0, "a b"},
		{"0;url='x", true, 0, "x"},
		{"30", true, 30, ""},
		{"30;", true, 30, ""},
		{"30 ; ", true, 30, ""},
		{"0; url=", true, 0, ""},
		{".5; url=x", true, 0, "x"},
		{"1.5 url=x", true, 1, "x"},
		{"1...2.3;x", true, 1, "x"},
		{"0; u", true, 0, "u"},
		{"0; urlfoo", true, 0, "urlfoo"},
		{"0;url = 'x'", true, 0, "x"},
		{"0;URL\t=\t\"x\"", true, 0, "x"},
		{"0, x.html", true, 0, "x.html"},
		{"0;'x.html'", true, 0, "x.html"},
		{"0; ur=x", true, 0, "ur=x"},
		{"3;url=x y", true, 3, "x y"},
		{"", false, 0, ""},
		{"   ", false, 0, ""},
		{"abc", false, 0, ""},
		{"-1; url=x", false, 0, ""},
		{"1x; url=y", false, 0, ""},
		{"; url=x", false, 0, ""},
		{"99999999999999999999; url=x", true, 1 << 30, "x"},
	} {
		delay, target, ok := extract.ParseRefresh([]byte(tc.in))
		if ok != tc.ok || (ok && (delay < tc.delay || (tc.delay < 1<<30 && delay != tc.delay) || string(target) != tc.target)) {
			t.Errorf("ParseRefresh(%q) = %d, %q, %v; want %d, %q, %v", tc.in, delay, target, ok, tc.delay, tc.target, tc.ok)
		}
	}
}

// TestPage_Refresh: Info.Refresh is the first refresh declaration a
// browser accepts, resolved against the <base> before it; a refresh of
// the page itself, one in a <template> or one to another scheme is none.
// Both readers of a page (the scanner and the tokenizer) agree.
func TestPage_Refresh(t *testing.T) {
	const page = "http://site.test/dir/"
	for _, tc := range []struct{ doc, want string }{
		{`<meta http-equiv="refresh" content="0; url=http://b.test/x#frag">`, "http://b.test/x"},
		{`<META HTTP-EQUIV="REFRESH" CONTENT="1;URL=../up">`, "http://site.test/up"},
		{`<base href="http://c.test/"><meta http-equiv=refresh content="0;url=in">`, "http://c.test/in"},
		{`<meta http-equiv="refresh" content="bad"><meta http-equiv="refresh" content="0;url=http://d.test/">`, "http://d.test/"},
		{`<meta http-equiv="refresh" content="0;url=http://e.test/"><meta http-equiv="refresh" content="0;url=http://f.test/">`, "http://e.test/"},
		{`<meta http-equiv="refresh" content="30"><meta http-equiv="refresh" content="0;url=http://g.test/">`, ""},
		{`<meta http-equiv="refresh" content="0; url=` + page + `">`, ""},
		{`<meta http-equiv="refresh" content="0; url=mailto:a@b.test">`, ""},
		{`<template><meta http-equiv="refresh" content="0;url=http://h.test/"></template>`, ""},
		{`<meta http-equiv="refresh">`, ""},
		{`<meta http-equiv=" refresh" content="0;url=http://i.test/">`, ""},
		{`<meta content="0;url=http://j.test/&amp;x" http-equiv="refresh">`, "http://j.test/&x"},
		{`<body><p><meta http-equiv="refresh" content="0;url=http://k.test/"></p>`, "http://k.test/"},
	} {
		u, _ := url.Parse(page)
		var e extract.Extractor
		scanned, _ := e.PageBytes([]byte(tc.doc), u, nil)
		read, _ := e.Page(bytes.NewReader([]byte(tc.doc)), u, nil)
		for name, info := range map[string]extract.Info{"scanner": scanned, "tokenizer": read} {
			got := ""
			if info.Refresh != nil {
				got = info.Refresh.String()
			}
			if got != tc.want {
				t.Errorf("%s: %s: Refresh %q, want %q", name, tc.doc, got, tc.want)
			}
		}
	}
}
