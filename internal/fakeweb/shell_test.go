package fakeweb_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

func getPath(t *testing.T, w *fakeweb.Web, host, path string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "http://"+host+path, nil)
	rec := httptest.NewRecorder()
	w.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

func TestWeb_Shells(t *testing.T) {
	plain := fakeweb.New(fakeweb.Config{Hosts: 30, Seed: 3})
	hosts := plain.Hosts()
	w := fakeweb.New(fakeweb.Config{Hosts: 30, Seed: 3, ShellEvery: 10, Shells: map[string]fakeweb.Shell{
		hosts[1]: fakeweb.ShellLoop, hosts[2]: fakeweb.ShellScriptDisallowed, "not-a-host.example": fakeweb.ShellLinks,
	}})
	for i, h := range hosts {
		want := fakeweb.NoShell
		switch {
		case i == 1:
			want = fakeweb.ShellLoop
		case i == 2:
			want = fakeweb.ShellScriptDisallowed
		case i%10 == 3:
			want = fakeweb.ShellLinks
		}
		if got := w.Shell(h); got != want {
			t.Errorf("Shell(%s) (host %d): got %v, want %v", h, i, got, want)
		}
		if got := plain.Shell(h); got != fakeweb.NoShell {
			t.Errorf("a web without shells: Shell(%s): got %v", h, got)
		}
	}

	shell := hosts[3]
	code, page := getPath(t, w, shell, "/")
	if code != 200 || !strings.Contains(page, `<div id="app"></div>`) || !strings.Contains(page, `<script src="http://`+shell+`/app.js">`) || strings.Contains(page, "<a ") {
		t.Errorf("shell home page: %d %q", code, page)
	}
	code, js := getPath(t, w, shell, "/app.js")
	if code != 200 || !strings.Contains(js, "setTimeout(build, 200)") || !strings.Contains(js, "createElement('a')") {
		t.Errorf("app.js: %d %q", code, js)
	}
	if got, want := len(w.Links(shell)), len(plain.Links(shell)); got != want || got == 0 {
		t.Errorf("Links(shell): got %d, want %d (the links the script adds)", got, want)
	}
	if w.Links(hosts[1]) != nil || w.Links(hosts[2]) != nil {
		t.Errorf("Links of a looping or script-disallowed shell: got %v, %v, want none", w.Links(hosts[1]), w.Links(hosts[2]))
	}
	if _, robots := getPath(t, w, hosts[2], "/robots.txt"); !strings.Contains(robots, "Disallow: /app.js") {
		t.Errorf("robots.txt of ShellScriptDisallowed: %q", robots)
	}
	if _, js := getPath(t, w, hosts[1], "/app.js"); !strings.Contains(js, "for (;;) {}") {
		t.Errorf("app.js of ShellLoop: %q", js)
	}
	// An ordinary host is unchanged, and has no /app.js.
	_, a := getPath(t, w, hosts[0], "/")
	_, b := getPath(t, plain, hosts[0], "/")
	if a != b {
		t.Error("the home page of a host that is no shell changed")
	}
	if code, _ := getPath(t, w, hosts[0], "/app.js"); code != 404 {
		t.Errorf("/app.js of an ordinary host: got %d, want 404", code)
	}
}
