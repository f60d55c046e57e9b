package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/tooltest"
)

// TestReading_Encodings crawls pages in the web's encodings (made by
// Python's codecs: UTF-16 by BOM and by header, Shift_JIS, EUC-JP,
// ISO-2022-JP, GB18030, GBK, EUC-KR, windows-1251, KOI8-R, ISO-8859-2
// and -7, and an undeclared windows-1252) and imports the crawl's WARC
// files: each page's title is what its author wrote, its IDN link is an
// edge to that host, and the link after it is not lost, in both stores.
func TestReading_Encodings(t *testing.T) {
	t.Parallel()
	pages := tooltest.EncodedPages(t)
	scripts := map[string]fakeweb.Script{}
	var seeds []string
	for _, p := range pages {
		h := "enc-" + p.Name + ".test"
		scripts[h] = fakeweb.Script{Pages: map[string]fakeweb.Answer{"/": {Type: p.Header, Body: string(p.Body)}}}
		seeds = append(seeds, "http://"+h+"/")
	}
	w := fakeweb.New(fakeweb.Config{Hosts: 1, Scripts: scripts})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "enc.bolt")
	warcs := filepath.Join(dir, "warcs")
	if r := weaver(t, dir, append(crawlArgs(srv, db, "--max-depth", "1", "--warc", warcs), seeds...)...); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	imported := filepath.Join(dir, "imported.bolt")
	if r := weaver(t, dir, "import", "--db", imported, "--quiet", warcs); r.code != 0 {
		t.Fatalf("import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, store := range []string{db, imported} {
		got, es := nodes(t, store), edges(t, store)
		for _, p := range pages {
			h := "enc-" + p.Name + ".test"
			n := got[h]
			if n.Title != p.Title {
				t.Errorf("%s: %s: title %q, want %q", filepath.Base(store), h, n.Title, p.Title)
			}
			for _, to := range []string{p.Host, "after.test"} {
				if es[[2]string{h, to}] != 1 {
					t.Errorf("%s: no edge %s → %s", filepath.Base(store), h, to)
				}
			}
		}
		for h, n := range got {
			if !utf8.ValidString(n.Title) || !utf8.ValidString(n.Description) || !utf8.ValidString(h) {
				t.Errorf("%s: %q: text not UTF-8: %q %q", filepath.Base(store), h, n.Title, n.Description)
			}
		}
	}
}

// TestReading_DefaultExclusions: x.com, twitter's name since 2023, is
// excluded by default with its subdomains, as twitter.com is.
func TestReading_DefaultExclusions(t *testing.T) {
	t.Parallel()
	body := `<a href="https://x.com/weaver">x</a> <a href="https://mobile.x.com/i">m</a>
		<a href="https://twitter.com/weaver">t</a> <a href="http://box.com/">box</a> <a href="http://ok.test/">ok</a>`
	_, w, got := onePage(t, "social.test", body, "1")
	if got != "box.com ok.test" {
		t.Errorf("social.test links %q, want box.com and ok.test only", got)
	}
	for _, q := range w.Requests() {
		if strings.HasSuffix(q.Host, "x.com") && q.Host != "box.com" {
			t.Errorf("%s %s asked: an excluded host", q.Host, q.Path)
		}
	}
}

// TestReading_Noscript: weaver runs no script, so a <noscript> is markup
// and its links are edges, as a browser with scripting off reads them;
// with --render always the browser ran the scripts, and the rendered page
// (its noscript text) decides.
func TestReading_Noscript(t *testing.T) {
	t.Parallel()
	body := `<html><head><noscript><a href="http://inhead.test/">h</a></noscript></head>
		<body><noscript><p><a href="http://inbody.test/">b</a></p></noscript><a href="http://after.test/">a</a></body></html>`
	w := fakeweb.New(fakeweb.Config{Hosts: 1, Scripts: map[string]fakeweb.Script{
		"noscript.test": {Pages: map[string]fakeweb.Answer{"/": {Body: body}}},
	}})
	srv := startWeb(t, w)
	dir := t.TempDir()
	targets := func(db string, extra ...string) string {
		t.Helper()
		args := append(crawlArgs(srv, db, append([]string{"--max-depth", "1"}, extra...)...), "http://noscript.test/")
		if r := weaver(t, dir, args...); r.code != 0 {
			t.Fatalf("crawl %v: exit %d\n%s%s", extra, r.code, r.stdout, r.stderr)
		}
		var got []string
		for e := range edges(t, db) {
			if e[0] == "noscript.test" {
				got = append(got, e[1])
			}
		}
		slices.Sort(got)
		return strings.Join(got, " ")
	}
	if got, want := targets(filepath.Join(dir, "plain.bolt")), "after.test inbody.test inhead.test"; got != want {
		t.Errorf("without --render: links to %q, want %q", got, want)
	}
	browser := chromiumPath(t)
	if got, want := targets(filepath.Join(dir, "rendered.bolt"), "--render", "always", "--browser", browser), "after.test"; got != want {
		t.Errorf("--render always: links to %q, want %q", got, want)
	}
}

// TestReading_ImportAsCrawl: an import of a crawl's WARC files records what
// the crawl recorded: robots directives (meta and X-Robots-Tag: noindex
// keeps the title out, nofollow the links), the type of an answer with no
// Content-Type sniffed from its body (HTML only when it starts as HTML), a
// non-HTML answer without links. A response whose HTTP headers do not
// parse is counted, not taken as a page; a file whose records end in one
// CRLF is read whole, with a warning.
func TestReading_ImportAsCrawl(t *testing.T) {
	t.Parallel()
	links := `<a href="http://one.test/">1</a> <a href="http://two.test/">2</a>`
	scripts := map[string]fakeweb.Script{
		"meta.test":     {Pages: map[string]fakeweb.Answer{"/": {Body: `<meta name="robots" content="noindex, nofollow"><title>Hidden</title>` + links}}},
		"header.test":   {Pages: map[string]fakeweb.Answer{"/": {Body: `<title>Shown</title>` + links, Header: map[string]string{"X-Robots-Tag": "nofollow"}}}},
		"other.test":    {Pages: map[string]fakeweb.Answer{"/": {Body: `<title>Other bot</title>` + links, Header: map[string]string{"X-Robots-Tag": "otherbot: nofollow"}}}},
		"sniffhtm.test": {Pages: map[string]fakeweb.Answer{"/": {Type: fakeweb.NoType, Body: "\n <html><title>Sniffed</title>" + links}}},
		"snifftxt.test": {Pages: map[string]fakeweb.Answer{"/": {Type: fakeweb.NoType, Body: "plain text " + links}}},
		"png.test":      {Pages: map[string]fakeweb.Answer{"/": {Type: "image/png", Body: "\x89PNG\r\n\x1a\n" + links}}},
	}
	w := fakeweb.New(fakeweb.Config{Hosts: 1, Scripts: scripts})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db, warcs := filepath.Join(dir, "crawl.bolt"), filepath.Join(dir, "warcs")
	var seeds []string
	for h := range scripts {
		seeds = append(seeds, "http://"+h+"/")
	}
	slices.Sort(seeds)
	if r := weaver(t, dir, append(crawlArgs(srv, db, "--max-depth", "1", "--warc", warcs), seeds...)...); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	imported := filepath.Join(dir, "imported.bolt")
	if r := weaver(t, dir, "import", "--db", imported, "--quiet", warcs); r.code != 0 {
		t.Fatalf("import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := map[string]struct {
		links      bool
		title      string
		directives string
		ctype      string
	}{
		"meta.test":     {false, "", "noindex,nofollow", "text/html; charset=utf-8"},
		"header.test":   {false, "Shown", "nofollow", "text/html; charset=utf-8"},
		"other.test":    {true, "Other bot", "", "text/html; charset=utf-8"},
		"sniffhtm.test": {true, "Sniffed", "", "text/html; charset=utf-8"},
		"snifftxt.test": {false, "", "", "text/plain; charset=utf-8"},
		"png.test":      {false, "", "", "image/png"},
	}
	for _, store := range []string{db, imported} {
		got, es := nodes(t, store), edges(t, store)
		for h, wn := range want {
			n := got[h]
			hasLinks := es[[2]string{h, "one.test"}] > 0 && es[[2]string{h, "two.test"}] > 0
			if hasLinks != wn.links || n.Title != wn.title || n.RobotsDirectives != wn.directives || n.ContentType != wn.ctype {
				t.Errorf("%s: %s: links %v, title %q, directives %q, type %q; want %v, %q, %q, %q", filepath.Base(store), h,
					hasLinks, n.Title, n.RobotsDirectives, n.ContentType, wn.links, wn.title, wn.directives, wn.ctype)
			}
		}
	}

	// Headers that do not parse (pywb's Content-Length: -1), and records
	// ending in one CRLF.
	http := "HTTP/1.1 200 OK\r\nContent-Type: image/svg+xml\r\nContent-Length: -1\r\n\r\n<svg><a href=\"http://three.test/\">x</a></svg>"
	rec := "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://svg.test/\r\nWARC-Date: 2020-01-01T00:00:00Z\r\n" +
		"WARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-000000000001>\r\nContent-Type: application/http; msgtype=response\r\n" +
		fmt.Sprintf("Content-Length: %d\r\n\r\n%s\r\n\r\n", len(http), http)
	bad := filepath.Join(dir, "bad-headers.warc")
	if err := os.WriteFile(bad, []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	r := weaver(t, dir, "import", "--db", filepath.Join(dir, "bad.bolt"), "--quiet", bad)
	if r.code != 0 || !strings.Contains(r.stdout, "1 non-HTML (1 with headers that do not parse)") || !strings.Contains(r.stdout, "0 pages") {
		t.Errorf("a response whose headers do not parse: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	parseMe, err := filepath.Abs(filepath.Join("..", "..", "shared", "data", "realweb", "warc", "node-warc-parseMe.warc"))
	if err != nil {
		t.Fatal(err)
	}
	r = weaver(t, dir, "import", "--db", filepath.Join(dir, "parseme.bolt"), "--quiet", parseMe)
	if r.code != 0 || !strings.Contains(r.stdout, "0 damaged): 30 records") || !strings.Contains(r.stderr+r.stdout, "end in one CRLF where WARC puts two") {
		t.Errorf("node-warc-parseMe.warc (30 records for warcio): exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestReading_NonceRevisits: a page whose bytes change at every answer
// (a CSRF token, a timestamp) but whose links, title and description do
// not is unchanged to a revisit: its interval grows as a page that never
// changes does, and it is fetched as often, within one; a page whose
// links change is fetched at the shortest interval, as before.
func TestReading_NonceRevisits(t *testing.T) {
	t.Parallel()
	page := func(body string) fakeweb.Answer {
		return fakeweb.Answer{Nonce: true, Body: `<title>T</title><meta name="description" content="D">` + body}
	}
	w := fakeweb.New(fakeweb.Config{Hosts: 1, Scripts: map[string]fakeweb.Script{
		"static.test": {Pages: map[string]fakeweb.Answer{"/": page(`<a href="http://a.test/">a</a> <a href="http://b.test/">b</a>`)}},
		"nonce.test": {Pages: map[string]fakeweb.Answer{"/": page(`<input type=hidden name=csrf value="{nonce}">
			<a href="http://a.test/?t={nonce}">a</a> <p>Served {nonce}</p> <a href="http://b.test/">b</a>`)}},
		"links.test": {Pages: map[string]fakeweb.Answer{"/": page(`<a href="http://a.test/">a</a> <a href="http://n{nonce}.test/">new</a>`)}},
	}})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "n.bolt")
	args := append(crawlArgs(srv, db, "--max-depth", "0", "--revisit", "200ms", "--revisit-max", "3200ms", "--max-duration", "5s"),
		"http://static.test/", "http://nonce.test/", "http://links.test/")
	if r := weaver(t, dir, args...); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	fetches := map[string]int{}
	for _, q := range w.Requests() {
		if q.Path == "/" {
			fetches[q.Host]++
		}
	}
	if d := fetches["nonce.test"] - fetches["static.test"]; d < -1 || d > 1 {
		t.Errorf("fetches: nonce.test %d, static.test %d: a page changing in its nonce only is not unchanged", fetches["nonce.test"], fetches["static.test"])
	}
	if fetches["static.test"] < 3 || fetches["links.test"] < 3*fetches["static.test"] {
		t.Errorf("fetches %v: the page whose links change is not revisited more often (or the static one not revisited)", fetches)
	}
	ns := nodes(t, db)
	if n := ns["nonce.test"]; n.Changes != 0 || n.CrawlCount != fetches["nonce.test"] {
		t.Errorf("nonce.test: %d changes in %d crawls (%d fetches): want none", n.Changes, n.CrawlCount, fetches["nonce.test"])
	}
	if n := ns["links.test"]; n.Changes < n.CrawlCount-2 {
		t.Errorf("links.test: %d changes in %d crawls: its links changed every time", n.Changes, n.CrawlCount)
	}
	r := weaver(t, dir, "show", "--db", db, "nonce.test")
	if r.code != 0 || !strings.Contains(r.stdout, "unchanged") {
		t.Errorf("show nonce.test: exit %d, its crawls not unchanged:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestReading_URLStandard: hrefs net/url reads otherwise than the URL
// Standard (every browser) are the links a browser follows.
func TestReading_URLStandard(t *testing.T) {
	t.Parallel()
	body := `<a href="https:theodi.test/nodes/leeds">odi</a> <a href="http:\\back.test\">back</a>
		<a href="/\slash.test/x">slash</a> <a href="http://ex%41mple.test/">pct</a> <a href="http:///three.test">three</a>
		<a href="http://a%2fb.test/">forbidden</a> <a href="http:same">relative</a>`
	db, _, got := onePage(t, "hrefs.test", body, "0")
	if want := "back.test example.test slash.test theodi.test three.test"; got != want {
		t.Errorf("hrefs.test links %q, want %s", got, want)
	}
	if n := nodes(t, db)["theodi.test"]; n.Scheme != "https" {
		t.Errorf("theodi.test: scheme %q, want https (https:theodi.test)", n.Scheme)
	}
}

// onePage crawls host, whose home page is body, to --max-depth depth,
// and returns the store, the web and the hosts the page links, sorted,
// one space between them.
func onePage(t *testing.T, host, body, depth string) (db string, w *fakeweb.Web, targets string) {
	t.Helper()
	w = fakeweb.New(fakeweb.Config{Hosts: 1, Scripts: map[string]fakeweb.Script{
		host: {Pages: map[string]fakeweb.Answer{"/": {Body: body}}},
	}})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db = filepath.Join(dir, "p.bolt")
	if r := weaver(t, dir, append(crawlArgs(srv, db, "--max-depth", depth), "http://"+host+"/")...); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var got []string
	for e := range edges(t, db) {
		if e[0] == host {
			got = append(got, e[1])
		}
	}
	slices.Sort(got)
	return db, w, strings.Join(got, " ")
}
