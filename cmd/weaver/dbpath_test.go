package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/warc"
)

// chdir runs the rest of the test in dir: a command that ignored
// WEAVER_DB_PATH would use ./weaver.bolt there.
func chdir(t *testing.T, dir string) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chdir(wd) })
}

// Every command that takes --db reads WEAVER_DB_PATH when --db is not
// given, and --db wins over it: export, check, snapshot and import did
// not (import created ./weaver.bolt instead).
func TestDBPath_FromEnvironment(t *testing.T) {
	dir := t.TempDir()
	chdir(t, dir)
	db := archiveStore(t, filepath.Join(dir, "env.bolt"), 6, nil)
	flagDB := archiveStore(t, filepath.Join(dir, "flag.bolt"), 4, nil)
	env := map[string]string{"WEAVER_DB_PATH": db}

	for _, c := range []struct {
		args []string
		want string // in stdout
	}{
		{[]string{"export", "--json", "-"}, `"host5.test"`},
		{[]string{"check"}, "ok: 6 nodes"},
		{[]string{"status"}, "Nodes:          6"},
		{[]string{"rank"}, "host"},
		{[]string{"layout"}, "laid out 6 hosts"},
		{[]string{"snapshot", filepath.Join(dir, "copy.bolt")}, "6 nodes"},
		// --db wins over the environment.
		{[]string{"export", "--db", flagDB, "--json", "-"}, `"host3.test"`},
		{[]string{"check", "--db", flagDB}, "ok: 4 nodes"},
		{[]string{"check", flagDB}, "ok: 4 nodes"},
		{[]string{"snapshot", "--db", flagDB, filepath.Join(dir, "copy4.bolt")}, "4 nodes"},
	} {
		code, out, errs := runWeaverCmd(t, env, c.args...)
		if code != 0 || !strings.Contains(out+errs, c.want) {
			t.Errorf("WEAVER_DB_PATH=%s weaver %s: exit %d, want 0 and %q\n%.500s%s", db, strings.Join(c.args, " "), code, c.want, out, errs)
		}
	}
	if strings.Contains(mustRun(t, env, "export", "--db", flagDB, "--json", "-"), "host5.test") {
		t.Error("export read WEAVER_DB_PATH's store although --db was given")
	}

	// import extends the store the environment names.
	warcDir := filepath.Join(t.TempDir(), "warc")
	writeTestWarc(t, warcDir, "https://new.test/", `<a href="https://other.test/">x</a>`)
	if code, out, errs := runWeaverCmd(t, env, "import", "--quiet", warcDir); code != 0 || !strings.Contains(out, "store "+db+": 8 nodes") {
		t.Errorf("import: exit %d, want it to extend %s\n%s%s", code, db, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "weaver.bolt")); err == nil {
		t.Error("a command created ./weaver.bolt instead of using WEAVER_DB_PATH")
	}
}

func mustRun(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	code, out, errs := runWeaverCmd(t, env, args...)
	if code != 0 {
		t.Fatalf("weaver %s: exit %d\n%s", strings.Join(args, " "), code, errs)
	}
	return out
}

// writeTestWarc writes a WARC file in dir holding one HTML response.
func writeTestWarc(t *testing.T, dir, url, html string) {
	t.Helper()
	w, _, err := warc.Open(warc.Options{Dir: dir, Prefix: "test"})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp := &http.Response{
		StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"text/html"}}, Body: io.NopCloser(strings.NewReader(html)), Request: req,
	}
	if _, err := w.WriteExchange(context.Background(), warc.FromHTTP(req, resp, []byte(html), false, "127.0.0.1", time.Now())); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
