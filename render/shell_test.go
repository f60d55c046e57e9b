package render_test

import (
	"testing"

	"github.com/weaver-crawler/weaver/render"
)

func TestLooksLikeShell(t *testing.T) {
	for _, tc := range []struct {
		name string
		html string
		want bool
	}{
		{"empty", ``, false},
		{"plain page with links", `<html><body><a href="http://a.example/">a</a></body></html>`, false},
		{"links and a script", `<a href="/x">x</a><script src="/app.js"></script>`, false},
		{"links and inline script", `<a href="/x">x</a><script>go()</script>`, false},
		{"no links, script src", `<html><body><h1>Hi</h1><script src="/app.js"></script></body></html>`, true},
		{"no links, inline script", `<body><p>x</p><script>document.write('<a href=/y>y</a>')</script>`, true},
		{"no links, empty inline script", `<body><p>x</p><script>  </script>`, false},
		{"no links, no script", `<body><p>Just text.</p></body>`, false},
		{"link only in script text", `<script>var s='<a href="/x">x</a>'</script>`, true},
		{"link only in noscript", `<noscript><a href="/x">enable JavaScript</a></noscript><script src=a.js></script>`, true},
		{"link only in template", `<template><a href="/x">x</a></template><script src=a.js></script>`, true},
		{"link only in comment", `<!-- <a href="/x">x</a> --><script src=a.js></script>`, true},
		{"anchor without href", `<a name="top">top</a><script src=a.js></script>`, true},
		{"anchor with blank href", `<a href="  ">top</a><script src=a.js></script>`, true},
		{"area link", `<map><area href="/x"></map><script src=a.js></script>`, false},
		{"upper case", `<A HREF="/x">x</A><SCRIPT SRC="a.js"></SCRIPT>`, false},
		{"empty #app with links", `<nav><a href="/about">About</a></nav><div id="app"></div><script src=/app.js></script>`, true},
		{"#app with space and comment", `<div id="app">
		  <!-- filled by the app --> </div>`, true},
		{"empty #root", `<a href="/x">x</a><div id=root></div>`, true},
		{"empty #__next", `<a href="/x">x</a><div id="__next"></div>`, true},
		{"#app with content", `<a href="/x">x</a><div id="app"><p>Server rendered</p></div><script src=/a.js></script>`, false},
		{"#app with text", `<a href="/x">x</a><div id="app">Loading…</div>`, false},
		{"#__next server rendered", `<div id="__next"><a href="/docs">Docs</a></div><script src=/_next/main.js></script>`, false},
		{"other id", `<a href="/x">x</a><div id="application"></div>`, false},
		{"unclosed #app at the end", `<a href="/x">x</a><div id="app">`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := render.LooksLikeShell([]byte(tc.html)); got != tc.want {
				t.Errorf("LooksLikeShell(%q): got %v, want %v", tc.html, got, tc.want)
			}
		})
	}
}

func TestFindBrowser(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if _, err := render.FindBrowser("/nonexistent/chromium", env(nil)); err == nil || !contains(err.Error(), "--browser") {
		t.Errorf("FindBrowser(missing flag path): got %v, want an error naming --browser", err)
	}
	if _, err := render.FindBrowser("", env(map[string]string{"WEAVER_BROWSER": "/nonexistent/chrome"})); err == nil || !contains(err.Error(), "--browser") {
		t.Errorf("FindBrowser(missing WEAVER_BROWSER): got %v, want an error naming --browser", err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := render.FindBrowser("", env(nil)); err == nil || !contains(err.Error(), "--browser") {
		t.Errorf("FindBrowser(empty PATH): got %v, want an error naming --browser", err)
	}
	if p, err := render.FindBrowser("/bin/sh", env(map[string]string{"WEAVER_BROWSER": "/nonexistent"})); err != nil || p != "/bin/sh" {
		t.Errorf("FindBrowser(flag wins): got %q, %v; want /bin/sh", p, err)
	}
	if p, err := render.FindBrowser("", env(map[string]string{"WEAVER_BROWSER": "/bin/sh"})); err != nil || p != "/bin/sh" {
		t.Errorf("FindBrowser(WEAVER_BROWSER): got %q, %v; want /bin/sh", p, err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
