package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/crawl"
)

// TestParseFlags_Anywhere: flags are taken before and after arguments,
// a boolean flag takes no next argument, a flag with a value does even
// when it starts with a dash, and "--" ends the flags.
func TestParseFlags_Anywhere(t *testing.T) {
	for _, tc := range []struct {
		args []string
		pos  string
		js   bool
		db   string
		err  string
	}{
		{[]string{"a", "--json", "b"}, "a|b", true, "", ""},
		{[]string{"a", "--db", "x", "b", "--json=false"}, "a|b", false, "x", ""},
		{[]string{"--json", "a"}, "a", true, "", ""}, // a boolean takes no value
		{[]string{"a", "--db", "-x"}, "a", false, "-x", ""},
		{[]string{"-", "--db=x"}, "-", false, "x", ""}, // "-" is an argument: stdin
		{[]string{"a", "--", "--json", "-"}, "a|--json|-", false, "", ""},
		{[]string{"a", "--db"}, "", false, "", "flag needs an argument: --db"},
		{[]string{"a", "--jsn"}, "", false, "", "unknown flag --jsn: did you mean --json?"},
		{[]string{"--zzz"}, "", false, "", "unknown flag --zzz"},
	} {
		e := &env{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
		fs := newFlagSet(e, "t", "t", "")
		js := fs.Bool("json", false, "")
		db := fs.String("db", "", "")
		err := parseFlags(fs, tc.args)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err || exitCode(err) != 2 {
				t.Errorf("%q: got %v, want %q (exit 2)", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || strings.Join(fs.Args(), "|") != tc.pos || *js != tc.js || *db != tc.db {
			t.Errorf("%q: got %q json=%v db=%q err=%v; want %q %v %q", tc.args, fs.Args(), *js, *db, err, tc.pos, tc.js, tc.db)
		}
	}
}

// runIn runs weaver in-process with environ as its environment.
func runIn(t *testing.T, environ []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	vars := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	e := &env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return vars[k] }, Environ: func() []string { return environ }}
	code = run(context.Background(), e, args)
	return code, out.String(), errb.String()
}

// TestEnviron_Warnings: each unknown WEAVER_ variable is one warning line
// naming the closest variable; keys and weaver's other variables are not
// warned about; nor is anything when there is nothing close.
func TestEnviron_Warnings(t *testing.T) {
	db := filepath.Join(t.TempDir(), "none.bolt")
	environ := []string{
		"PATH=/bin", "WEAVER_MAX_DEPTH=2", "WEAVER_DB_PATH=" + db, "WEAVER_TOKEN=x", "WEAVER_BROWSER=/b",
		"WEAVER_CPUPROFILE=", "WEAVER_TRACE=", "WEAVER_BLOCKPROFILE=", "WEAVER_MUTEXPROFILE=", "WEAVER_CLUSTER=",
		"WEAVER_MAX_DEPT=2", "WEAVER_WORKERS=8", "WEAVER_ZZZZZZ=1", "weaver_max_pages=3", "WEAVER_TOKNE=x",
	}
	_, _, stderr := runIn(t, environ, "status")
	want := `weaver: warning: WEAVER_MAX_DEPT is not a weaver variable, ignored: did you mean WEAVER_MAX_DEPTH?
weaver: warning: WEAVER_TOKNE is not a weaver variable, ignored: did you mean WEAVER_TOKEN?
weaver: warning: WEAVER_WORKERS is not a weaver variable, ignored: did you mean WEAVER_CONCURRENT_WORKERS? (the environment takes config keys; --workers sets concurrent_workers)
weaver: warning: WEAVER_ZZZZZZ is not a weaver variable, ignored (weaver reads WEAVER_ and a config key in capitals, e.g. WEAVER_MAX_DEPTH)
weaver: warning: weaver_max_pages is not a weaver variable, ignored: did you mean WEAVER_MAX_PAGES?
weaver status: ` + db
	if !strings.HasPrefix(stderr, want) {
		t.Errorf("got\n%s\nwant it to start\n%s", stderr, want)
	}
	// Every crawl flag's name as a variable names its key.
	for _, f := range crawlFlags {
		name := envName(strings.ReplaceAll(f.flag, "-", "_"))
		if name == envName(f.key) {
			continue
		}
		_, _, stderr := runIn(t, []string{name + "=1"}, "status", "--db", db)
		if !strings.Contains(stderr, "did you mean "+envName(f.key)+"?") {
			t.Errorf("%s: %q", name, stderr)
		}
	}
	if _, _, stderr := runIn(t, []string{"WEAVER_MAX_DEPTH=1"}, "status", "--db", db); strings.Contains(stderr, "warning") {
		t.Errorf("a key warned about: %q", stderr)
	}
}

// TestEnviron_KnownVariables: every WEAVER_ variable the sources name
// (outside tests) is a config key's or in otherVariables, so no variable
// weaver reads is ever warned about.
func TestEnviron_KnownVariables(t *testing.T) {
	known := slices.Clone(otherVariables)
	for _, k := range crawl.Keys() {
		known = append(known, envName(k))
	}
	re := regexp.MustCompile(`"(WEAVER_[A-Z0-9_]*)"`)
	var found []string
	for _, dir := range []string{".", "../../render", "../../serve", "../../crawl", "../../cluster", "../../export", "../../archive", "../../ingest"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				if m[1] == "WEAVER_" { // a prefix: cluster's stream names, the keys' variables
					continue
				}
				found = append(found, m[1])
				if !slices.Contains(known, m[1]) {
					t.Errorf("%s reads %s, which warnEnviron does not know: add it to otherVariables", f, m[1])
				}
			}
		}
	}
	sort.Strings(found)
	if len(found) < 7 { // the scan itself must find what is there
		t.Errorf("found only %q", found)
	}
}

// TestDurationFlags_NeedUnit: every flag of every command whose help says
// DURATION refuses a bare number, takes 0, and takes a duration.
func TestDurationFlags_NeedUnit(t *testing.T) {
	flagRe := regexp.MustCompile(`(?m)^\s+-(\S+) DURATION`)
	var checked []string
	for name := range commands {
		_, stdout, _ := runIn(t, nil, name, "-h")
		for _, m := range flagRe.FindAllStringSubmatch(stdout, -1) {
			checked = append(checked, name+" --"+m[1])
			code, _, stderr := runIn(t, nil, name, "--"+m[1], "1")
			if code != 2 || !strings.Contains(stderr, "--"+m[1]+": a duration needs a unit: 1s or 1ms") {
				t.Errorf("weaver %s --%s 1: exit %d, %q", name, m[1], code, stderr)
			}
			for _, ok := range []string{"0", "1.5s", "250ms"} {
				_, _, stderr := runIn(t, nil, name, "--"+m[1], ok, "--zzz")
				if !strings.Contains(stderr, "unknown flag --zzz") { // parsed past the duration
					t.Errorf("weaver %s --%s %s: %q", name, m[1], ok, stderr)
				}
			}
		}
	}
	sort.Strings(checked)
	want := []string{"crawl --delay", "crawl --max-duration", "crawl --retry-delay", "crawl --revisit", "crawl --revisit-max", "crawl --timeout", "import --progress", "show --timeout", "status --timeout"}
	if !slices.Equal(checked, want) {
		t.Errorf("duration flags checked: %q, want at least %q", checked, want)
	}
}

// TestSeedsFile_Stream: the file's seeds are read with their line
// numbers, comments, blank lines and a byte order mark skipped; a line
// too long is refused naming it.
func TestSeedsFile_Stream(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.txt")
	os.WriteFile(p, []byte("\ufeff# c\nhttp://a.test/\n\n  https://b.test/x  \r\n#http://c.test/\n"), 0o644)
	f := &seedsFile{name: "s.txt", path: p}
	var got []string
	if err := f.Seeds()(func(s string) error { got = append(got, s); return nil }); err != nil || strings.Join(got, " ") != "http://a.test/ https://b.test/x" {
		t.Errorf("got %q, %v", got, err)
	}
	os.WriteFile(p, []byte("http://a.test/\n"+strings.Repeat("x", maxSeedLine+1)+"\n"), 0o644)
	err := f.Seeds()(func(string) error { return nil })
	if err == nil || !strings.HasPrefix(err.Error(), "s.txt:2: line longer than") {
		t.Errorf("long line: %v", err)
	}
}
