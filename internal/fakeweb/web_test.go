package fakeweb_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"html"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/publicsuffix"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

func TestNew_Deterministic(t *testing.T) {
	a := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 7})
	b := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 7})
	c := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 8})
	if got, want := b.Hosts(), a.Hosts(); !slices.Equal(got, want) {
		t.Fatalf("same seed: hosts differ")
	}
	if slices.Equal(a.Hosts(), c.Hosts()) {
		t.Fatalf("different seeds: identical hosts")
	}
	if a.Seed() != b.Seed() || a.Seed() == c.Seed() {
		t.Errorf("seeds: got %s, %s, %s", a.Seed(), b.Seed(), c.Seed())
	}
	samePages := 0
	for i, h := range a.Hosts() {
		for _, path := range []string{"/", "/robots.txt"} {
			pa := serve(a, "http://"+h+path).Body.Bytes()
			pb := serve(b, "http://"+h+path).Body.Bytes()
			if !bytes.Equal(pa, pb) {
				t.Fatalf("same seed: %s%s differs", h, path)
			}
		}
		ch := c.Hosts()[i]
		if bytes.Equal(serve(a, "http://"+h+"/").Body.Bytes(), serve(c, "http://"+ch+"/").Body.Bytes()) {
			samePages++
		}
	}
	if samePages > 0 {
		t.Errorf("different seeds: %d identical home pages", samePages)
	}
	if !maps.Equal(a.ExpectedEdges(10, fakeweb.DefaultExcluded), b.ExpectedEdges(10, fakeweb.DefaultExcluded)) {
		t.Errorf("same seed: expected edges differ")
	}
}

// TestNew_Unchanged: New serves the same web as it always did: tests
// and benchmarks elsewhere count on its hosts and links, and a new kind
// of web (Topics) must leave it as it is.
func TestNew_Unchanged(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 1})
	h := sha256.New()
	for _, host := range w.Hosts() {
		h.Write([]byte(host + "\n"))
		h.Write(serve(w, "http://"+host+"/").Body.Bytes())
		h.Write(serve(w, "http://"+host+"/robots.txt").Body.Bytes())
	}
	const want = "689af95f0651165d21b1db19f9a2c145cb3144fa324b8daf4fd38c2dd9d24f2f"
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("the hosts, home pages and robots.txt of 300 hosts from seed 1: sha256 %s, want %s", got, want)
	}
}

var hostRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$`)

func TestNew_HostNames(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 2000, Seed: 1})
	hosts := w.Hosts()
	if got, want := len(hosts), 2000; got != want {
		t.Fatalf("hosts: got %d, want %d", got, want)
	}
	if !strings.HasPrefix(hosts[0], "www.") || !strings.HasSuffix(hosts[0], ".com") {
		t.Errorf("host 0: got %s, want www.<name>.com", hosts[0])
	}
	if got, want := w.Seed(), "http://"+hosts[0]+"/"; got != want {
		t.Errorf("Seed: got %s, want %s", got, want)
	}
	seen := map[string]bool{}
	perDomain := map[string]int{}
	multiLabel, apex, sub := 0, 0, 0
	for _, h := range hosts {
		if !hostRE.MatchString(h) {
			t.Errorf("host %q: not a lower-case DNS name", h)
		}
		if seen[h] {
			t.Errorf("host %q: duplicate", h)
		}
		seen[h] = true
		if fakeweb.DefaultExcluded(h) {
			t.Errorf("host %q: excluded by default", h)
		}
		reg, err := publicsuffix.EffectiveTLDPlusOne(h)
		if err != nil {
			t.Fatalf("EffectiveTLDPlusOne(%s): %v", h, err)
		}
		perDomain[reg]++
		if strings.Count(reg, ".") > 1 {
			multiLabel++
		}
		if reg == h {
			apex++
		} else {
			sub++
		}
	}
	for reg, n := range perDomain {
		if n > 3 {
			t.Errorf("domain %s: %d hosts, want at most 3", reg, n)
		}
	}
	if multiLabel == 0 || apex == 0 || sub == 0 || len(perDomain) == len(hosts) {
		t.Errorf("variety: multi-label suffixes %d, apex hosts %d, subdomains %d, domains %d of %d hosts",
			multiLabel, apex, sub, len(perDomain), len(hosts))
	}
}

func TestNew_ReachableFromSeed(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 1000, Seed: 3})
	edges := w.ExpectedEdges(10, fakeweb.DefaultExcluded)
	reached := map[string]bool{w.Hosts()[0]: true}
	for e := range edges {
		reached[e[1]] = true
	}
	for _, h := range w.Hosts() {
		if !reached[h] {
			t.Errorf("host %s: not reachable from the seed with max_outbound_links 10", h)
		}
	}
}

func TestNew_PowerLaw(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 1000, Seed: 5})
	in := map[string]int{}
	for e := range w.ExpectedEdges(0, fakeweb.DefaultExcluded) {
		in[e[1]]++
	}
	degrees := slices.Sorted(maps.Values(in))
	top, median := degrees[len(degrees)-1], degrees[len(degrees)/2]
	if top < 20*median {
		t.Errorf("in-degree: top %d, median %d; want a heavy tail (top >= 20 x median)", top, median)
	}
}

func TestNew_PageSize(t *testing.T) {
	for _, tc := range []struct {
		pageBytes int
		want      int
	}{{0, 30_000}, {10_000, 10_000}} {
		w := fakeweb.New(fakeweb.Config{Hosts: 200, Seed: 2, PageBytes: tc.pageBytes})
		for _, h := range w.Hosts() {
			rec := serve(w, "http://"+h+"/")
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: status %d", h, rec.Code)
			}
			n := rec.Body.Len()
			if n < tc.want*7/10 || n > tc.want*13/10 {
				t.Errorf("%s: page of %d bytes, want %d ± 30%%", h, n, tc.want)
			}
			if !utf8.Valid(rec.Body.Bytes()) {
				t.Errorf("%s: page is not valid UTF-8", h)
			}
		}
	}
}

func TestLinks_MatchParsedPage(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 11})
	var bases, uppercase, ports, entities, nonASCIITitles int
	for _, h := range w.Hosts() {
		body := serve(w, "http://"+h+"/").Body.Bytes()
		p := parse(t, body)
		raw := w.Links(h)
		decoded := make([]string, len(raw))
		for k, r := range raw {
			decoded[k] = html.UnescapeString(r)
			if strings.Contains(r, "&amp;") {
				entities++
			}
			if strings.HasPrefix(r, "HTTP://") {
				uppercase++
			}
			if strings.Contains(r, ":80/") {
				ports++
			}
		}
		if !slices.Equal(p.hrefs, decoded) {
			t.Fatalf("%s: parsed hrefs differ from Links:\n got %q\nwant %q", h, p.hrefs, decoded)
		}
		if got, want := p.title, w.Title(h); got != want {
			t.Errorf("%s: parsed title %q, Title %q", h, got, want)
		}
		if got, want := p.desc, w.Description(h); got != want {
			t.Errorf("%s: parsed description %q, Description %q", h, got, want)
		}
		if p.base != "" {
			bases++
		}
		if !isASCII(w.Title(h)) {
			nonASCIITitles++
		}
		for _, r := range raw {
			if !bytes.Contains(body, []byte(r)) {
				t.Errorf("%s: href %q not in the markup as written", h, r)
			}
		}
	}
	if bases == 0 || uppercase == 0 || ports == 0 || entities == 0 || nonASCIITitles == 0 {
		t.Errorf("variety: <base> %d, upper-case %d, :80 %d, &amp; %d, non-ASCII titles %d",
			bases, uppercase, ports, entities, nonASCIITitles)
	}
}

func isASCII(s string) bool {
	for _, c := range []byte(s) {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

func TestLinks_UnknownHost(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 10})
	if got := w.Links("nowhere.test"); got != nil {
		t.Errorf("Links(unknown): got %q, want nil", got)
	}
	if got := w.Title("nowhere.test"); got != "" {
		t.Errorf("Title(unknown): got %q, want empty", got)
	}
	h := w.Hosts()[3]
	if got, want := w.Links(strings.ToUpper(h)+":80"), w.Links(h); !slices.Equal(got, want) {
		t.Errorf("Links(upper-case with port): got %d links, want %d", len(got), len(want))
	}
}

func TestExpectedEdges_Loop3(t *testing.T) {
	w := fakeweb.Loop3()
	if got, want := w.Seed(), "http://a.test/"; got != want {
		t.Errorf("Seed: got %s, want %s", got, want)
	}
	want := map[[2]string]int{{"a.test", "b.test"}: 1, {"b.test", "c.test"}: 1, {"c.test", "a.test"}: 1}
	if got := w.ExpectedEdges(10, fakeweb.DefaultExcluded); !maps.Equal(got, want) {
		t.Errorf("ExpectedEdges: got %v, want %v", got, want)
	}
	if got := w.ExpectedEdges(0, nil); !maps.Equal(got, want) {
		t.Errorf("ExpectedEdges(unlimited, none excluded): got %v, want %v", got, want)
	}
	if got, want := w.Links("b.test"), []string{"/about", "http://c.test/"}; !slices.Equal(got, want) {
		t.Errorf("Links(b.test): got %q, want %q", got, want)
	}
}

func TestExpectedEdges_Endpoints(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 1000, Seed: 9})
	hosts := map[string]bool{}
	for _, h := range w.Hosts() {
		hosts[h] = true
	}
	edges := w.ExpectedEdges(10, fakeweb.DefaultExcluded)
	if len(edges) == 0 {
		t.Fatal("ExpectedEdges: empty")
	}
	out := map[string]int{}
	for e, weight := range edges {
		if !hosts[e[0]] || !hosts[e[1]] {
			t.Errorf("edge %v: endpoint not in Hosts", e)
		}
		if e[0] == e[1] || weight != 1 {
			t.Errorf("edge %v: weight %d", e, weight)
		}
		out[e[0]]++
	}
	for h, n := range out {
		if n > 10 {
			t.Errorf("host %s: %d out-edges, want at most 10", h, n)
		}
	}
	// Robots-disallowed hosts are reached but not crawled.
	disallowed := w.Hosts()[49]
	if !strings.Contains(serve(w, "http://"+disallowed+"/robots.txt").Body.String(), "User-agent: weaver\nDisallow: /\n") {
		t.Fatalf("host 49: robots.txt does not disallow weaver")
	}
	if out[disallowed] != 0 {
		t.Errorf("host 49 (disallowed): %d out-edges, want 0", out[disallowed])
	}
	if len(w.ExpectedEdges(3, fakeweb.DefaultExcluded)) >= len(edges) {
		t.Errorf("max_outbound_links 3 records no fewer edges than 10")
	}
}

func TestSelectHosts(t *testing.T) {
	tests := []struct {
		name  string
		base  string
		hrefs []string
		max   int
		want  []string
	}{
		{"upper case and default port", "", []string{"HTTP://WWW.Alder-17.com:80/x"}, 10, []string{"www.alder-17.com"}},
		{"https default port", "", []string{"https://b.test:443/"}, 10, []string{"b.test"}},
		{"other port kept", "", []string{"http://b.test:8080/"}, 10, []string{"b.test:8080"}},
		{"same host dropped", "", []string{"/about", "post/1", "HTTP://A.TEST:80/x", "//a.test/y", "#top", ""}, 10, nil},
		{"protocol-relative", "", []string{"//b.test/p"}, 10, []string{"b.test"}},
		{"padded and entity", "", []string{" http://b.test/?a=1&amp;b=2 "}, 10, []string{"b.test"}},
		{"other schemes and malformed", "", []string{"mailto:x@b.test", "javascript:void(0)", "ftp://b.test/", "http://[broken/", "http://exa mple.com/", "http://"}, 10, nil},
		{"excluded", "", []string{"https://www.facebook.com/x", "http://ads.b.test/", "http://analytics.c.test/", "http://ads-1.test/"}, 10, []string{"ads-1.test"}},
		{"dedup and cut", "", []string{"http://b.test/", "http://B.test/2", "http://c.test/", "http://d.test/"}, 2, []string{"b.test", "c.test"}},
		{"base to another host", "http://b.test/", []string{"/about", "http://c.test/"}, 10, []string{"b.test", "c.test"}},
		{"base path", "/blog/", []string{"post/1", "http://c.test/"}, 10, []string{"c.test"}},
		{"private addresses", "", []string{"http://10.0.0.1/", "http://127.0.0.1:1/", "http://[::1]/"}, 10, []string{"10.0.0.1", "127.0.0.1:1", "[::1]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := fakeweb.SelectHosts("a.test", tc.base, tc.hrefs, tc.max, fakeweb.DefaultExcluded)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDefaultExcluded(t *testing.T) {
	tests := []struct {
		host string
		want bool
	}{
		{"facebook.com", true},
		{"www.facebook.com", true},
		{"m.facebook.com:443", true},
		{"notfacebook.com", false},
		{"facebook.com.evil.test", false},
		{"twitter.com", true},
		{"www.instagram.com", true},
		{"www.linkedin.com", true},
		{"www.google-analytics.com", true},
		{"ad.doubleclick.net", true},
		{"ads.example.com", true},
		{"ADS.Example.com", true},
		{"analytics.example.com", true},
		{"ads-12.com", false},
		{"www.ads.example.com", false},
		{"analytics-3.org", false},
	}
	for _, tc := range tests {
		if got := fakeweb.DefaultExcluded(tc.host); got != tc.want {
			t.Errorf("DefaultExcluded(%q): got %v, want %v", tc.host, got, tc.want)
		}
	}
}

func TestRobots_Kinds(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 100})
	hosts := w.Hosts()
	for _, tc := range []struct {
		host   int
		status int
		want   string
	}{
		{0, http.StatusOK, "User-agent: *\nDisallow: /private/\n"},
		{12, http.StatusOK, "Crawl-delay: 1\n"},
		{49, http.StatusOK, "User-agent: weaver\nDisallow: /\n"},
		{5, http.StatusNotFound, ""},
		{2, http.StatusOK, "Sitemap: http://" + hosts[2] + "/sitemap.xml"},
	} {
		rec := serve(w, "http://"+hosts[tc.host]+"/robots.txt")
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("host %d: got %d %q, want %d containing %q", tc.host, rec.Code, rec.Body.String(), tc.status, tc.want)
		}
	}
	none := fakeweb.New(fakeweb.Config{Hosts: 100, RobotsDisallowEvery: -1, CrawlDelayEvery: -1})
	for _, h := range none.Hosts() {
		body := serve(none, "http://"+h+"/robots.txt").Body.String()
		if strings.Contains(body, "weaver") || strings.Contains(body, "Crawl-delay") {
			t.Errorf("%s: robots.txt %q with both options off", h, body)
		}
	}
}

func TestNew_Tiny(t *testing.T) {
	one := fakeweb.New(fakeweb.Config{Hosts: 1})
	if got := one.ExpectedEdges(10, fakeweb.DefaultExcluded); len(got) != 0 {
		t.Errorf("one host: edges %v", got)
	}
	two := fakeweb.New(fakeweb.Config{Hosts: 2})
	h := two.Hosts()
	want := [2]string{h[0], h[1]}
	if got := two.ExpectedEdges(10, fakeweb.DefaultExcluded); got[want] != 1 {
		t.Errorf("two hosts: edges %v, want %v", got, want)
	}
}
