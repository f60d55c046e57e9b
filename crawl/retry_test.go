package crawl_test

import (
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/crawl"
)

func TestParseFailCauses(t *testing.T) {
	for _, c := range []struct {
		in   string
		want crawl.FailCause
	}{
		{"", crawl.AllCauses}, {"true", crawl.AllCauses}, {"ALL", crawl.AllCauses}, {"false", 0},
		{"dns", crawl.CauseDNS}, {"dns,connect", crawl.CauseDNS | crawl.CauseConnect},
		{" TLS , http ", crawl.CauseTLS | crawl.CauseHTTP}, {"other,other", crawl.CauseOther},
	} {
		got, err := crawl.ParseFailCauses(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseFailCauses(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"dnss", "dns,", ",", "dns;connect", "timeout"} {
		if _, err := crawl.ParseFailCauses(bad); err == nil || !strings.Contains(err.Error(), "unknown cause") {
			t.Errorf("ParseFailCauses(%q): %v, want an unknown cause error", bad, err)
		}
	}
	if s := crawl.AllCauses.String(); s != "dns,connect,tls,http,other" {
		t.Errorf("AllCauses.String() = %q", s)
	}
	if s := (crawl.CauseHTTP | crawl.CauseDNS).String(); s != "dns,http" {
		t.Errorf("String() = %q, want dns,http", s)
	}
}
