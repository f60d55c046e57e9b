package suggest_test

import (
	"testing"

	"github.com/weaver-crawler/weaver/suggest"
)

func TestSuggest_Closest(t *testing.T) {
	names := []string{"max-depth", "max-pages", "workers", "delay", "db", "timeout", "retry-delay", "crawl", "check"}
	for _, tc := range []struct{ typo, want string }{
		{"max-dept", "max-depth"},
		{"max-dpeth", "max-depth"}, // a transposition is one edit
		{"wokers", "workers"},
		{"dealy", "delay"},
		{"crwal", "crawl"},
		{"timout", "timeout"},
		{"max-dep", "max-depth"}, // a unique prefix
		{"max", ""},              // the prefix of two
		{"xyz", ""},
		{"dbb", "db"},
		{"depth", ""}, // too far from everything
	} {
		got, ok := suggest.Closest(tc.typo, names)
		if !ok {
			got = ""
		}
		if got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.typo, got, tc.want)
		}
	}
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"ab", "ba", 1}, {"kitten", "sitting", 3}, {"ca", "abc", 3}, {"héllo", "hello", 1}} {
		if got := suggest.Distance(tc.a, tc.b); got != tc.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}
