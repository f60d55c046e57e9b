package robots_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/weaver-crawler/weaver/crawl/robots"
)

const ua = "weaver/0.1 (+https://github.com/example/weaver)"

func readTestdata(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestRules_FromResponse_Status(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /private/\n")
	tests := []struct {
		name     string
		rules    *robots.Rules
		kind     robots.Kind
		home     bool // allowed: http://example.com/
		private  bool // allowed: http://example.com/private/x
		wantCode int
	}{
		{"200 with rules", robots.FromResponse(200, body), robots.Parsed, true, false, 200},
		{"204 empty body", robots.FromResponse(204, nil), robots.Parsed, true, true, 204},
		{"206 partial", robots.FromResponse(206, body), robots.Parsed, true, false, 206},
		{"301 redirects given up", robots.FromResponse(301, body), robots.AllowAll, true, true, 301},
		{"400", robots.FromResponse(400, nil), robots.AllowAll, true, true, 400},
		{"401", robots.FromResponse(401, nil), robots.AllowAll, true, true, 401},
		{"403", robots.FromResponse(403, body), robots.AllowAll, true, true, 403},
		{"404", robots.FromResponse(404, body), robots.AllowAll, true, true, 404},
		{"410", robots.FromResponse(410, nil), robots.AllowAll, true, true, 410},
		{"429 is a request to slow down", robots.FromResponse(429, nil), robots.DisallowAll, false, false, 429},
		{"500", robots.FromResponse(500, body), robots.DisallowAll, false, false, 500},
		{"503", robots.FromResponse(503, nil), robots.DisallowAll, false, false, 503},
		{"599", robots.FromResponse(599, nil), robots.DisallowAll, false, false, 599},
		{"100 is not a fetch outcome", robots.FromResponse(100, body), robots.DisallowAll, false, false, 100},
		{"0", robots.FromResponse(0, body), robots.DisallowAll, false, false, 0},
		{"Unreachable", robots.Unreachable(), robots.DisallowAll, false, false, 0},
		{"zero Rules", &robots.Rules{}, robots.DisallowAll, false, false, 0},
		{"nil Rules", nil, robots.DisallowAll, false, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.rules.Kind(); got != tt.kind {
				t.Errorf("Kind() = %v, want %v", got, tt.kind)
			}
			if got := tt.rules.Status(); got != tt.wantCode {
				t.Errorf("Status() = %d, want %d", got, tt.wantCode)
			}
			if got := tt.rules.Allowed(ua, "http://example.com/"); got != tt.home {
				t.Errorf("Allowed(home) = %v, want %v", got, tt.home)
			}
			if got := tt.rules.Allowed(ua, "http://example.com/private/x"); got != tt.private {
				t.Errorf("Allowed(private) = %v, want %v", got, tt.private)
			}
		})
	}
}

func TestRules_Allowed(t *testing.T) {
	google := readTestdata(t, "google.txt")
	delay := readTestdata(t, "crawl_delay.txt")
	typos := readTestdata(t, "typos_bom.txt")
	tests := []struct {
		name string
		body []byte
		ua   string
		url  string
		want bool
	}{
		{"global disallow", google, ua, "https://www.google.com/search?q=x", false},
		{"longer allow wins", google, ua, "https://www.google.com/search/about/x", true},
		{"wildcard and $", google, ua, "https://www.google.com/?hl=en&gws_rd=ssl", true},
		{"wildcard without $", google, ua, "https://www.google.com/?hl=en&gws_rd=ssl&x", false},
		{"home", google, ua, "https://www.google.com/", true},
		{"other group ignored", google, "Twitterbot/1.0", "https://www.google.com/search?q=x", true},
		{"full UA matches product token", delay, ua, "https://example.com/private/a", false},
		{"bare token", delay, "weaver", "https://example.com/private/a", false},
		{"token case-insensitive", delay, "WEAVER/2", "https://example.com/private/a", false},
		{"allow inside disallowed dir", delay, ua, "https://example.com/private/public-page.html", true},
		{"own group replaces *", delay, ua, "https://example.com/cgi-bin/x", true},
		{"* applies to others", delay, "otherbot", "https://example.com/cgi-bin/x", false},
		{"invalid token gets *", delay, "weaver2/1.0", "https://example.com/cgi-bin/x", false},
		{"$ anchors pdf", delay, "otherbot", "https://example.com/a/b.pdf", false},
		{"$ anchors pdf, query", delay, "otherbot", "https://example.com/a/b.pdf?x", true},
		{"shared group", delay, "AhrefsBot/7.0", "https://example.com/", false},
		{"percent-encoding normalised", []byte("User-agent: *\nDisallow: /caf%C3%A9\n"), ua, "https://example.com/café", false},
		{"raw UTF-8 pattern", []byte("User-agent: *\nDisallow: /café\n"), ua, "https://example.com/caf%c3%a9", false},
		{"BOM and typos", typos, ua, "https://example.com/", false},
		{"colonless typo for *", typos, "otherbot", "https://example.com/tmp/x", false},
		{"html body allows all", readTestdata(t, "html_instead.txt"), ua, "https://example.com/x", true},
		{"empty body allows all", nil, ua, "https://example.com/x", true},
		{"unparseable URL", google, ua, "http://[::1", false},
		{"empty UA gets *", google, "", "https://www.google.com/search", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := robots.FromResponse(200, tt.body).Allowed(tt.ua, tt.url); got != tt.want {
				t.Errorf("Allowed(%q, %q) = %v, want %v", tt.ua, tt.url, got, tt.want)
			}
		})
	}
}

func TestProductToken(t *testing.T) {
	tests := []struct{ ua, want string }{
		{"weaver", "weaver"},
		{"weaver/0.1 (+https://github.com/example/weaver)", "weaver"},
		{"Weaver-Bot_X/1", "Weaver-Bot_X"},
		{"weaver2/1.0", ""},
		{"weaver (+https://example.com)", ""},
		{"Foo Bar", ""},
		{"", ""},
		{"/1.0", ""},
		{"*", ""},
		{"Mozilla/5.0 (compatible; weaver/0.1)", "Mozilla"},
	}
	for _, tt := range tests {
		if got := robots.ProductToken(tt.ua); got != tt.want {
			t.Errorf("ProductToken(%q) = %q, want %q", tt.ua, got, tt.want)
		}
	}
}

func TestRules_CrawlDelay(t *testing.T) {
	delay := readTestdata(t, "crawl_delay.txt")
	tests := []struct {
		name string
		body string
		ua   string
		want time.Duration
	}{
		{"own group, decimal", string(delay), ua, 500 * time.Millisecond},
		{"other named group", string(delay), "Yandex/3", 10 * time.Second},
		{"falls back to *", string(delay), "otherbot", 5 * time.Second},
		{"named group without delay does not fall back", string(delay), "AhrefsBot/7.0", 0},
		{"invalid token gets *", string(delay), "MJ12bot", 5 * time.Second},
		{"none at all", "User-agent: *\nDisallow: /x\n", ua, 0},
		{"space before colon", "User-Agent: *\nCrawl-delay : 60\n", ua, 60 * time.Second},
		{"capped", "User-agent: *\nCrawl-delay: 3600\n", ua, robots.MaxCrawlDelay},
		{"leading dot", "User-agent: *\nCrawl-delay: .25\n", ua, 250 * time.Millisecond},
		{"trailing dot", "User-agent: *\nCrawl-delay: 2.\n", ua, 2 * time.Second},
		{"zero", "User-agent: *\nCrawl-delay: 0\n", ua, 0},
		{"first valid wins", "User-agent: *\nCrawl-delay: abc\nCrawl-delay: 3\nCrawl-delay: 7\n", ua, 3 * time.Second},
		{"negative ignored", "User-agent: *\nCrawl-delay: -5\n", ua, 0},
		{"units ignored", "User-agent: *\nCrawl-delay: 10s\n", ua, 0},
		{"exponent ignored", "User-agent: *\nCrawl-delay: 1e3\n", ua, 0},
		{"inf ignored", "User-agent: *\nCrawl-delay: inf\n", ua, 0},
		{"two dots ignored", "User-agent: *\nCrawl-delay: 1.2.3\n", ua, 0},
		{"comment stripped", "User-agent: *\nCrawl-delay: 4 # be nice\n", ua, 4 * time.Second},
		{"case-insensitive key and agent", "USER-AGENT: WEAVER\nCRAWL-DELAY: 2\n", ua, 2 * time.Second},
		{"delay line ends the agent list", "User-agent: other\nCrawl-delay: 9\nUser-agent: weaver\nDisallow: /x\n", ua, 0},
		{"agents sharing a group", "User-agent: other\nUser-agent: weaver\nCrawl-delay: 9\n", ua, 9 * time.Second},
		{"rule ends the group", "User-agent: other\nDisallow: /\nCrawl-delay: 9\nUser-agent: weaver\nDisallow: /x\n", ua, 0},
		{"specific group beats * even later", "User-agent: *\nCrawl-delay: 1\n\nUser-agent: weaver\nCrawl-delay: 2\n", ua, 2 * time.Second},
		{"merged specific groups, first wins", "User-agent: weaver\nDisallow: /a\n\nUser-agent: weaver\nCrawl-delay: 3\n", ua, 3 * time.Second},
		{"delay outside any group ignored", "Crawl-delay: 8\nUser-agent: *\nDisallow: /\n", ua, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := robots.FromResponse(200, []byte(tt.body)).CrawlDelay(tt.ua); got != tt.want {
				t.Errorf("CrawlDelay(%q) = %v, want %v", tt.ua, got, tt.want)
			}
		})
	}
	for _, r := range []*robots.Rules{robots.FromResponse(404, nil), robots.Unreachable(), nil} {
		if got := r.CrawlDelay(ua); got != 0 {
			t.Errorf("CrawlDelay on %v rules = %v, want 0", r.Kind(), got)
		}
	}
}

func TestRules_CrawlDelay_InvalidTokenGroups(t *testing.T) {
	// "weaver2" is not a product token, so it gets the "*" group.
	r := robots.FromResponse(200, []byte("User-agent: *\nCrawl-delay: 1\n\nUser-agent: weaver\nCrawl-delay: 2\nDisallow: /\n"))
	if got, want := r.CrawlDelay("weaver2"), time.Second; got != want {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestRules_BodyCap(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("User-agent: *\nDisallow: /early\n")
	for b.Len() < robots.MaxBodyBytes-20 {
		b.WriteString("# padding padding padding padding\n")
	}
	// This line straddles the cap: only "Disallow: /" would be read if the
	// cap cut it, which would block the whole site.
	b.WriteString("Disallow: /straddling-the-limit\n")
	b.WriteString("Disallow: /late\n")
	r := robots.FromResponse(200, b.Bytes())
	tests := []struct {
		url  string
		want bool
	}{
		{"http://example.com/early", false},
		{"http://example.com/", true},
		{"http://example.com/late", true},
		{"http://example.com/straddling-the-limit", true},
	}
	for _, tt := range tests {
		if got := r.Allowed(ua, tt.url); got != tt.want {
			t.Errorf("Allowed(%q) = %v, want %v", tt.url, got, tt.want)
		}
	}
	enc, err := r.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if len(enc) > robots.MaxBodyBytes+16 {
		t.Errorf("encoded %d bytes, want at most the cap plus a header", len(enc))
	}
}

func TestRules_HugeBinaryBody(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	body := make([]byte, 10<<20)
	for i := range body {
		body[i] = byte(rng.Uint32())
	}
	// Make some lines look like directives, so that the matcher works.
	copy(body[1000:], "\nUser-agent: *\nDisallow: /x\n")
	start := time.Now()
	r := robots.FromResponse(200, body)
	allowed := r.Allowed(ua, "http://example.com/some/long/path/to/a/page.html?with=query")
	blocked := r.Allowed(ua, "http://example.com/x")
	delay := r.CrawlDelay(ua)
	if el := time.Since(start); el > slowdown*time.Second {
		t.Errorf("10 MB binary body took %v, want well under %v", el, slowdown*time.Second)
	}
	if !allowed || blocked || delay != 0 {
		t.Errorf("got Allowed(page)=%v Allowed(/x)=%v CrawlDelay=%v, want true false 0", allowed, blocked, delay)
	}
}

func TestRules_MarshalBinary(t *testing.T) {
	rules := []*robots.Rules{
		robots.FromResponse(200, readTestdata(t, "crawl_delay.txt")),
		robots.FromResponse(200, nil),
		robots.FromResponse(404, []byte("ignored")),
		robots.FromResponse(503, nil),
		robots.Unreachable(),
	}
	for _, r := range rules {
		enc, err := r.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var got robots.Rules
		if err := got.UnmarshalBinary(enc); err != nil {
			t.Fatalf("%v: UnmarshalBinary: %v", r.Kind(), err)
		}
		if got.Kind() != r.Kind() || got.Status() != r.Status() {
			t.Errorf("round trip: got %v/%d, want %v/%d", got.Kind(), got.Status(), r.Kind(), r.Status())
		}
		for _, u := range []string{"http://example.com/", "http://example.com/private/a", "http://example.com/cgi-bin/"} {
			if a, b := got.Allowed(ua, u), r.Allowed(ua, u); a != b {
				t.Errorf("%v: Allowed(%q) = %v after round trip, want %v", r.Kind(), u, a, b)
			}
		}
		if a, b := got.CrawlDelay(ua), r.CrawlDelay(ua); a != b {
			t.Errorf("%v: CrawlDelay = %v after round trip, want %v", r.Kind(), a, b)
		}
	}
}

func TestRules_Msgpack(t *testing.T) {
	// The store caches Rules inside msgpack-encoded values.
	type entry struct {
		Rules   *robots.Rules `msgpack:"r"`
		Fetched time.Time     `msgpack:"f"`
	}
	in := entry{Rules: robots.FromResponse(200, readTestdata(t, "crawl_delay.txt")), Fetched: time.Unix(1700000000, 0).UTC()}
	b, err := msgpack.Marshal(&in)
	if err != nil {
		t.Fatal(err)
	}
	var out entry
	if err := msgpack.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Rules.Kind() != robots.Parsed || out.Rules.CrawlDelay(ua) != 500*time.Millisecond ||
		out.Rules.Allowed(ua, "http://example.com/private/a") {
		t.Errorf("msgpack round trip lost the rules: kind %v", out.Rules.Kind())
	}
}

func TestRules_UnmarshalBinary_Errors(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, robots.ErrShortData},
		{"short", []byte{1, 1}, robots.ErrShortData},
		{"version", []byte{9, 1, 200, 1}, robots.ErrVersion},
		{"kind zero", []byte{1, 0, 0}, robots.ErrKind},
		{"kind unknown", []byte{1, 7, 0}, robots.ErrKind},
		{"status truncated", []byte{1, 1, 0x80}, robots.ErrShortData},
		{"status out of range", []byte{1, 1, 0xff, 0x7f}, robots.ErrShortData},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := robots.FromResponse(404, nil)
			err := r.UnmarshalBinary(tt.data)
			if !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
			if r.Kind() != robots.AllowAll {
				t.Errorf("failed UnmarshalBinary changed the rules to %v", r.Kind())
			}
		})
	}
}

func TestKind_String(t *testing.T) {
	for k, want := range map[robots.Kind]string{robots.Parsed: "parsed", robots.AllowAll: "allow-all", robots.DisallowAll: "disallow-all", 0: "invalid"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}

func FuzzRobots(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds in testdata: %v", err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, ua, "http://example.com/private/a?b=c")
		f.Add(b, "otherbot", "https://example.com/cgi-bin/x.pdf")
	}
	f.Add([]byte("User-agent: *\nDisallow: /*$*$**\nAllow: /\xff\n"), "*", "http://x/%zz")
	f.Fuzz(func(t *testing.T, body []byte, agent, rawURL string) {
		r := robots.FromResponse(200, body)
		a := r.Allowed(agent, rawURL)
		d := r.CrawlDelay(agent)
		if d < 0 || d > robots.MaxCrawlDelay {
			t.Errorf("CrawlDelay = %v, outside [0, %v]", d, robots.MaxCrawlDelay)
		}
		enc, err := r.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var back robots.Rules
		if err := back.UnmarshalBinary(enc); err != nil {
			t.Fatalf("UnmarshalBinary(MarshalBinary()): %v", err)
		}
		if back.Allowed(agent, rawURL) != a {
			t.Errorf("Allowed differs after round trip")
		}
		ref := robots.Unprepared(body)
		if got := ref.Allowed(agent, rawURL); got != a {
			t.Errorf("Allowed = %v, but %v without key lower-casing", a, got)
		}
		if got := ref.CrawlDelay(agent); got != d {
			t.Errorf("CrawlDelay = %v, but %v without key lower-casing", d, got)
		}
		if n := robots.Recovered(); n != 0 {
			t.Fatalf("grobotstxt panicked %d times (recovered)", n)
		}
	})
}

func BenchmarkAllowed(b *testing.B) {
	for _, name := range []string{"google.txt", "crawl_delay.txt"} {
		r := robots.FromResponse(200, readTestdata(b, name))
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r.Allowed(ua, "https://www.example.com/")
			}
		})
	}
}

func BenchmarkCrawlDelay(b *testing.B) {
	r := robots.FromResponse(200, readTestdata(b, "crawl_delay.txt"))
	b.ReportAllocs()
	for b.Loop() {
		r.CrawlDelay(ua)
	}
}
