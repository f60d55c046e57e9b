package crawl_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/crawl"
)

// defaultsRegexp is DefaultExcludeHosts as one alternation, the way the
// excluder compiled them before it learnt to check them without one.
var defaultsRegexp = regexp.MustCompile("(?:" + strings.Join(crawl.DefaultExcludeHosts, ")|(?:") + ")")

func TestExcluder_DefaultsMatchRegexp(t *testing.T) {
	excluded, err := crawl.Excluder(crawl.DefaultExcludeHosts)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{
		"facebook.com", "www.facebook.com", "a.b.facebook.com", "facebook.com:8080", "facebook.com:",
		"facebook.com:x", "notfacebook.com", "facebook.com.evil.org", ".facebook.com", "a..facebook.com",
		"ads.example.com", "ads", "adsx.example.com", "analytics.example.org", "www.ads.example.com",
		"doubleclick.net", "x.doubleclick.net:443", "google-analytics.com", "www.example.com", "example.com:80",
		"[::1]:8080", "127.0.0.1", "twitter.com.", "x.com", "api.x.com", "fox.com", "x.co", "linkedin.com:99999", "instagram.com:0", "x.facebook.com:12:34",
	} {
		if got, want := excluded(h), defaultsRegexp.MatchString(h); got != want {
			t.Errorf("excluded(%q): got %v, want %v (the regexp)", h, got, want)
		}
	}
}

func TestExcluder_DefaultsAndMore(t *testing.T) {
	excluded, err := crawl.Excluder(append(append([]string(nil), crawl.DefaultExcludeHosts...), `^cdn\.`))
	if err != nil {
		t.Fatal(err)
	}
	for h, want := range map[string]bool{"www.facebook.com": true, "cdn.example.com": true, "www.example.com": false} {
		if got := excluded(h); got != want {
			t.Errorf("excluded(%q): got %v, want %v", h, got, want)
		}
	}
}

func FuzzExcluder_DefaultsMatchRegexp(f *testing.F) {
	excluded, err := crawl.Excluder(crawl.DefaultExcludeHosts)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"www.facebook.com", "ads.x", "a..facebook.com:80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		if got, want := excluded(h), defaultsRegexp.MatchString(h); got != want {
			t.Errorf("excluded(%q): got %v, want %v (the regexp)", h, got, want)
		}
	})
}

func BenchmarkExcluder_Defaults(b *testing.B) {
	hosts := []string{"www.alder-17.com", "blog.birch-203.co.uk", "ash-5.org", "www.facebook.com", "ads.cedar-9.net"}
	excluded, _ := crawl.Excluder(crawl.DefaultExcludeHosts)
	b.Run("regexp", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			defaultsRegexp.MatchString(hosts[i%len(hosts)])
		}
	})
	b.Run("excluder", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			excluded(hosts[i%len(hosts)])
		}
	})
}
