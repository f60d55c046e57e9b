package crawl_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/crawl"
)

// FuzzConfig feeds arbitrary bytes to the JSON config loader and arbitrary
// key/value pairs to Set: never a panic, and an error always names what it
// rejects.
func FuzzConfig(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "config", "*.json"))
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, "max_depth", "3")
		}
	}
	f.Add([]byte(`{"seed_url": "https://example.com", "max_depth": 5}`), "request_timeout_ms", "1.5s")
	f.Add([]byte(`{"exclude_hosts": ["(", "x"]}`), "exclude_hosts", "a,b")
	f.Add([]byte(`{"max_depth": 1e99}`), "max_pages", "-1")
	f.Add([]byte(`[]`), "nope", "")
	f.Fuzz(func(t *testing.T, data []byte, key, value string) {
		cfg := crawl.Defaults()
		if err := cfg.LoadJSON(data, "fuzz"); err != nil {
			if !strings.HasPrefix(err.Error(), "config: fuzz") {
				t.Fatalf("error does not name its source: %v", err)
			}
			return
		}
		_ = cfg.Set(key, value, "flag")
		if err := cfg.Validate(); err != nil && !strings.Contains(err.Error(), "key") {
			t.Fatalf("validation error names no key: %v", err)
		}
	})
}

func TestConfig_LoadJSON(t *testing.T) {
	for _, tc := range []struct {
		doc, want string
	}{
		{`{"max_depth": 2, "seed_urls": ["http://a.test/"]}`, ""},
		{`{"max_depth": "2"}`, `key "max_depth": want a whole number`},
		{`{"max_depth": 2.5}`, `key "max_depth": want a whole number`},
		{`{"ignore_robots": "yes"}`, `key "ignore_robots": want true or false`},
		{`{"politeness_delay_ms": "1.5s", "request_timeout_ms": 2000}`, ""},
		{`{"politeness_delay_ms": "abc"}`, `key "politeness_delay_ms": want a duration such as 1.5s`},
		{`{"politeness_delay_ms": true}`, `key "politeness_delay_ms": want a duration such as 1.5s`},
		{`{"seed_urls": "http://a/"}`, `key "seed_urls": want a list of strings`},
		{`{"max_depth": 1, "max_depth": 2}`, `key "max_depth": given twice`},
		{`{"colour": "blue"}`, `key "colour": unknown key`},
		{`{"max_depth": 1} {}`, `trailing data`},
		{`"x"`, `want a JSON object`},
	} {
		cfg := crawl.Defaults()
		err := cfg.LoadJSON([]byte(tc.doc), "file c.json")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.doc, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want %q", tc.doc, err, tc.want)
		}
	}
}

// TestConfig_Set_Duration: a duration key set from text accepts Go's
// syntax or milliseconds, and a bad value says a duration is wanted.
func TestConfig_Set_Duration(t *testing.T) {
	cfg := crawl.Defaults()
	for value, want := range map[string]int{"1.5s": 1500, "250": 250, "0": 0} {
		if err := cfg.Set("politeness_delay_ms", value, "flag --delay"); err != nil || cfg.PolitenessDelayMS != want {
			t.Errorf("--delay %s: %d ms, %v; want %d ms", value, cfg.PolitenessDelayMS, err, want)
		}
	}
	err := cfg.Set("politeness_delay_ms", "abc", "flag --delay")
	if want := `--delay (politeness_delay_ms): want a duration such as 1.5s or 250ms (or a whole number of milliseconds), got "abc"`; err == nil || err.Error() != want {
		t.Errorf("--delay abc: got %v, want %s", err, want)
	}
}

func TestConfig_Validate(t *testing.T) {
	for _, tc := range []struct {
		key, value, want string
	}{
		{"max_depth", "-1", "max_depth"},
		{"max_crawls_per_node", "-1", "max_crawls_per_node"}, // 0 is no cap (issue 27)
		{"concurrent_workers", "0", "concurrent_workers"},
		{"request_timeout_ms", "0", "request_timeout_ms"},
		{"seed_url", "ftp://x/", "seed_url"},
		{"exclude_hosts", "(", "exclude_hosts"},
		{"connect_to", "a:b", "connect_to"},
		{"user_agent", " ", "user_agent"},
		{"anchors_per_edge", "-1", "anchors_per_edge"},
		{"anchors_per_edge", "101", "anchors_per_edge"},
	} {
		// The error names the key and the source that set the bad value last.
		cfg := crawl.Defaults()
		for _, source := range []string{"environment WEAVER_X", "flag --x"} {
			if err := cfg.Set(tc.key, tc.value, source); err != nil {
				t.Fatalf("set %s: %v", tc.key, err)
			}
		}
		// A flag is named as the user typed it, then the key.
		want := `--x (` + tc.want + `): `
		if err := cfg.Validate(); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s=%q: got %v, want an error starting %s", tc.key, tc.value, err, want)
		}
	}
	cfg := crawl.Defaults()
	if err := cfg.Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	// A value assigned directly names its source through From, or none.
	cfg.ConcurrentWorkers = 0
	if err := cfg.Validate(); err == nil || !strings.HasPrefix(err.Error(), `config: key "concurrent_workers"`) {
		t.Errorf("direct assignment: %v", err)
	}
	cfg.From("concurrent_workers", "job request")
	if err := cfg.Validate(); err == nil || !strings.HasPrefix(err.Error(), `config: job request: key "concurrent_workers"`) {
		t.Errorf("after From: %v", err)
	}
}

func TestDefaultExclusions(t *testing.T) {
	cfg := crawl.Defaults()
	// The §5.3 list and x.com: the seven sites and their subdomains, and
	// a first label of ads or analytics.
	for host, want := range map[string]bool{
		"facebook.com": true, "www.facebook.com": true, "m.twitter.com": true, "instagram.com": true,
		"de.linkedin.com": true, "ssl.google-analytics.com": true, "stats.doubleclick.net": true,
		"ads.example.com": true, "analytics.example.org": true, "ads.co.uk": true,
		"www.analytics.co.uk": false, "cadsoftware.co.uk": false, "notfacebook.com": false,
		"facebook.com.evil.test": false, "example.com": false, "myads.example.com": false,
		"facebook.com:8080": true, "x.com": true, "mobile.x.com": true, "box.com": false, "xx.com": false, "x.com.example": false,
	} {
		got := false
		for _, re := range cfg.ExcludeHosts {
			if matched, _ := regexpMatch(re, host); matched {
				got = true
			}
		}
		if got != want {
			t.Errorf("%s: excluded %v, want %v", host, got, want)
		}
	}
}
