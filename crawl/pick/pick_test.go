package pick_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/crawl/pick"
)

func TestSelector(t *testing.T) {
	x, err := pick.NewExcluder(append(append([]string(nil), pick.DefaultExcludeHosts...), `^cdn\.`))
	if err != nil {
		t.Fatal(err)
	}
	links := []string{
		"http://a.test/self", "https://B.test/", "http://b.test:80/again", "http://www.facebook.com/x",
		"http://ads.c.test/", "http://cdn.d.test/", "https://e.test:8443/", "http://f.test/", "http://g.test/",
	}
	for _, c := range []struct {
		max  int
		want string
	}{
		{0, "b.test/https e.test:8443/https f.test/http g.test/http"},
		{2, "b.test/https e.test:8443/https"},
	} {
		var s pick.Selector
		s.Reset("a.test", c.max, x)
		stopped := 0
		for _, l := range links {
			u, _ := url.Parse(l)
			if !s.Add(u) {
				stopped++
				break
			}
		}
		var got []string
		for _, p := range s.Picked() {
			got = append(got, p.Host+"/"+p.Scheme)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("max %d: got %q, want %q", c.max, strings.Join(got, " "), c.want)
		}
		if (c.max > 0) != (stopped == 1) {
			t.Errorf("max %d: Add said stop %d times", c.max, stopped)
		}
	}
}
