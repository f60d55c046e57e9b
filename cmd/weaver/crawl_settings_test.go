package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	weavercrawl "github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/kv"
)

// TestCrawl_SettingsPrecedence: on resume, each source overrides the
// settings stored in the store in the order defaults < stored < config
// file < environment < flags, each change is one line naming its source,
// and what a run was given is what the next bare resume runs by.
func TestCrawl_SettingsPrecedence(t *testing.T) {
	w := fakeweb.Loop3()
	srv, err := w.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	conf := filepath.Join(dir, "crawl.json")
	warcs := filepath.Join(dir, "warcs")
	if err := os.WriteFile(conf, []byte(`{"max_depth": 4, "max_outbound_links": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	crawl := func(vars map[string]string, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		e := &env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }}
		args = append([]string{"crawl", "--db", db, "--metrics", db + ".metrics", "--quiet"}, args...)
		if code := run(context.Background(), e, args); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out.String(), errb.String())
		}
		return strings.Join(regexp.MustCompile(`(?m)^\[INFO\] Setting .*$`).FindAllString(out.String(), -1), "\n")
	}
	if got := crawl(nil, "--connect-to", srv.ConnectTo(), "--delay", "0", "--max-depth", "2", "--max-outbound-links", "3", w.Seed()); got != "" {
		t.Errorf("first crawl: %q", got)
	}
	steps := []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"WEAVER_MAX_DEPTH": "6"}, []string{"--config", conf, "--max-depth", "8"}, "[INFO] Setting max_depth: 2 → 8, by flag --max-depth"},
		{map[string]string{"WEAVER_MAX_DEPTH": "6"}, []string{"--config", conf}, "[INFO] Setting max_depth: 8 → 6, by environment WEAVER_MAX_DEPTH"},
		{nil, []string{"--config", conf}, "[INFO] Setting max_depth: 6 → 4, by config file " + conf},
		{nil, nil, ""}, // a bare resume runs by what the last run was given
		{nil, []string{"--max-depth", "0", "--exclude-host", `^x\.`}, "[INFO] Setting max_depth: 4 → 0 (no limit), by flag --max-depth\n" +
			`[INFO] Setting exclude_hosts: added ^x\., by flag --exclude-host`},
		{nil, []string{"--exclude-host", `^x\.`}, ""}, // already in the stored list
		{nil, []string{"--warc", warcs}, "[INFO] Setting warc_dir: (none) → " + warcs + ", by flag --warc"},
		{nil, nil, ""}, // archives on, into the same directory
		{nil, []string{"--warc-max-size", "500000"}, "[INFO] Setting warc_max_size: 0 (1 GB) → 500000, by flag --warc-max-size"},
		{nil, []string{"--no-warc"}, "[INFO] Setting warc_dir: " + warcs + " → (none), by flag --no-warc"},
		{nil, nil, ""}, // and stays off
	}
	for i, s := range steps {
		if got := crawl(s.env, s.args...); got != s.want {
			t.Errorf("step %d (%v): got\n%s\nwant\n%s", i, s.args, got, s.want)
		}
	}
}

// TestCrawl_WarcDirOfAnOlderStore: a store whose settings were stored by
// a weaver that did not remember warc_dir, but whose crawl wrote WARC
// (meta warc.dir), is resumed writing WARC there.
func TestCrawl_WarcDirOfAnOlderStore(t *testing.T) {
	w := fakeweb.Loop3()
	srv, err := w.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	warcs := filepath.Join(dir, "warcs")
	crawl := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		e := &env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
		args = append([]string{"crawl", "--db", db, "--metrics", db + ".metrics", "--quiet"}, args...)
		if code := run(context.Background(), e, args); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out.String(), errb.String())
		}
		return out.String()
	}
	crawl("--connect-to", srv.ConnectTo(), "--delay", "0", "--max-crawls-per-node", "1", "--warc", warcs, w.Seed())
	// What an older weaver stored: the settings without warc_dir.
	s, err := kv.Open(db, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx *kv.Tx) error {
		set, err := weavercrawl.ReadSettings(tx)
		if err != nil {
			return err
		}
		delete(set, "warc_dir")
		delete(set, "warc_max_size")
		return weavercrawl.PutSettings(tx, set)
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	before, _ := filepath.Glob(filepath.Join(warcs, "*.warc.gz"))
	out := crawl("--max-crawls-per-node", "2", w.Seed())
	if !strings.Contains(out, "WARC: 1 file") || !strings.Contains(out, " in "+warcs) {
		t.Errorf("the resume of an older store did not write WARC into %s:\n%s", warcs, out)
	}
	if after, _ := filepath.Glob(filepath.Join(warcs, "*.warc.gz")); len(after) != len(before)+1 {
		t.Errorf("WARC files %v, then %v: want one more", before, after)
	}
}

// TestCrawl_READMEConfigKeys: README.md's table of config keys lists
// exactly the settings of crawl.Table, each with its flag and its
// default, and names every flag of weaver crawl (the others: --config,
// --retry-failed, --no-warc), and only those.
func TestCrawl_READMEConfigKeys(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Config keys\n")
	if !ok {
		t.Fatal("README.md has no section ## Config keys")
	}
	backquoted := regexp.MustCompile("`([a-z_]+)`")
	rows := map[string][]string{} // key → [flag, default]
	flags := map[string]bool{}    // every flag the table names
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "| ") || len(cells) < 5 || strings.TrimSpace(cells[2]) == "config key" {
			continue
		}
		flag := strings.Trim(strings.TrimSpace(cells[1]), "`")
		flag, _, _ = strings.Cut(strings.TrimPrefix(flag, "--"), " ")
		flag, _, _ = strings.Cut(flag, "[")
		if flag != "" {
			flags[flag] = true
		}
		def := strings.ReplaceAll(strings.TrimSpace(cells[3]), "`", "")
		for _, m := range backquoted.FindAllStringSubmatch(cells[2], -1) {
			if _, dup := rows[m[1]]; dup {
				t.Errorf("README.md lists %s twice", m[1])
			}
			rows[m[1]] = []string{flag, def}
		}
	}
	if len(rows) < 10 || len(flags) < 10 {
		t.Fatalf("README.md's config keys: only %d keys and %d flags found", len(rows), len(flags))
	}
	for _, s := range weavercrawl.Table {
		row, ok := rows[s.Key]
		if !ok {
			t.Errorf("README.md's config keys lack %s", s.Key)
			continue
		}
		delete(rows, s.Key)
		if row[0] != s.Flag {
			t.Errorf("README.md: %s has flag %q, want %q", s.Key, row[0], s.Flag)
		}
		if want := defaultText(s); row[1] != want {
			t.Errorf("README.md: %s has default %q, want %q", s.Key, row[1], want)
		}
	}
	for key := range rows {
		t.Errorf("README.md lists %s, which is not a setting of crawl.Table", key)
	}
	fs := flag.NewFlagSet("crawl", flag.ContinueOnError)
	var f crawlFlagValues
	f.define(fs)
	fs.VisitAll(func(fl *flag.Flag) {
		if !flags[fl.Name] {
			t.Errorf("README.md's config keys lack --%s", fl.Name)
		}
		delete(flags, fl.Name)
	})
	for name := range flags {
		t.Errorf("README.md's config keys list --%s, which weaver crawl lacks", name)
	}
}

// defaultText is a setting's default as README.md's table writes it
// (without its backquotes): a duration as 1s or 24h, the zero value of a
// number or a bool as 0 or false, of a string or a list as nothing.
func defaultText(s weavercrawl.Setting) string {
	if s.DefaultText != "" {
		return s.DefaultText
	}
	var c weavercrawl.Config
	switch p := s.Field(&c).(type) {
	case *int:
		v, _ := s.Default.(int)
		if !strings.HasSuffix(s.Key, "_ms") || v == 0 {
			return strconv.Itoa(v)
		}
		d := (time.Duration(v) * time.Millisecond).String()
		if strings.HasSuffix(d, "m0s") {
			d = strings.TrimSuffix(d, "0s")
		}
		return strings.TrimSuffix(d, "0m")
	case *int64:
		v, _ := s.Default.(int64)
		return strconv.FormatInt(v, 10)
	case *bool:
		v, _ := s.Default.(bool)
		return strconv.FormatBool(v)
	case *string:
		v, _ := s.Default.(string)
		return v
	case *[]string:
		v, _ := s.Default.([]string)
		return strings.Join(v, " ")
	default:
		return fmt.Sprintf("%T %v", p, s.Default)
	}
}
