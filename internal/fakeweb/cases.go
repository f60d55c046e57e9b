package fakeweb

import (
	"bytes"
	"compress/zlib"
	"sort"
	"strconv"
	"strings"
)

// RedirectCases are scripted hosts (Config.Scripts) that answer as the
// real web's redirects do: to another host, to a path robots.txt
// disallows, to an excluded host, apex to www, to a host that refuses, by
// a meta refresh, by a robots.txt that redirects to a CDN or in a loop, by
// a cookie wall, and the bad kinds of Location; and a body cut short. Each
// is a seed of its own: RedirectSeeds lists them. The comment on each
// host says what a polite, exact crawler records (issue 50).
func RedirectCases() map[string]Script {
	page := func(title string, links ...string) Answer { return Answer{Body: casePage(title, "", links...)} }
	moved := func(status int, to string) Answer { return Answer{Status: status, Location: to} }
	robots := func(body string) *Answer { return &Answer{Type: "text/plain; charset=utf-8", Body: body} }
	disallowAll := robots("User-agent: *\nDisallow: /\n")
	plain := robots("User-agent: *\nDisallow: /private/\n")
	cases := map[string]Script{
		// src.test → noentry.test, whose robots.txt disallows /: an edge
		// (redirect 1); noentry.test robots_disallowed, its page never
		// asked, leak.test never discovered.
		"src.test":     {Robots: plain, Pages: map[string]Answer{"/": moved(301, "http://noentry.test/")}},
		"noentry.test": {Robots: disallowAll, Pages: map[string]Answer{"*": page("No entry", "http://leak.test/")}},
		// samehost.test / → /private/, which its robots.txt disallows:
		// robots_disallowed, /private/ never asked.
		"samehost.test": {Robots: plain, Pages: map[string]Answer{
			"/": moved(301, "/private/"), "/private/": page("Private", "http://leak.test/")}},
		// tofb.test → www.facebook.com, excluded: no request there, no edge.
		"tofb.test": {Robots: plain, Pages: map[string]Answer{"/": moved(302, "http://www.facebook.com/")}},
		// apex.test → www.apex.test (its robots.txt too, as real sites
		// do): an edge (redirect 1); www.apex.test's page asked once.
		"apex.test": {Robots: &Answer{Status: 301, Location: "http://www.apex.test/robots.txt"},
			Pages: map[string]Answer{"*": moved(301, "http://www.apex.test/")}},
		"www.apex.test": {Robots: plain, Pages: map[string]Answer{"/": page("Apex", "http://target.test/")}},
		// to403.test → www.waf403.test, which answers 403: to403.test
		// crawled (HTTP 301) with an edge (redirect 1) to www.waf403.test,
		// whose node is http_error 403.
		"to403.test":      {Robots: plain, Pages: map[string]Answer{"/": moved(301, "http://www.waf403.test/")}},
		"www.waf403.test": {Robots: plain, Pages: map[string]Answer{"/": {Status: 403, Type: "text/plain; charset=utf-8", Body: "Forbidden\n"}}},
		// refresh.test: a meta refresh to target.test and a link to
		// linked.test: two edges, target.test's with redirect 1.
		"refresh.test": {Robots: plain, Pages: map[string]Answer{"/": {Body: casePage("Moved",
			`<meta http-equiv="refresh" content="0; url=http://target.test/">`, "http://linked.test/")}}},
		// refresh2.test: a refresh after 5 s to a quoted URL, upper case
		// URL=: an edge to target2.test, whose first page is /landing
		// (landed.test is linked from it, not from target2.test's /).
		"refresh2.test": {Robots: plain, Pages: map[string]Answer{"/": {Body: casePage("Soon",
			`<META HTTP-EQUIV="Refresh" CONTENT=" 5 ,URL='http://target2.test/landing'">`)}}},
		"target2.test": {Robots: plain, Pages: map[string]Answer{
			"/landing": page("Landing", "http://landed.test/"), "/": page("Target 2")}},
		// reload.test: refreshes with no URL and to itself: no link.
		"reload.test": {Robots: plain, Pages: map[string]Answer{"/": {Body: casePage("Reload",
			`<meta http-equiv="refresh" content="30"><meta http-equiv="refresh" content="30; url=/">`)}}},
		// refreshsame.test / refreshes to /en/ of the same host, which is
		// followed: both pages' links count (enlinked.test and linked.test).
		"refreshsame.test": {Robots: plain, Pages: map[string]Answer{
			"/":    {Body: casePage("Choose", `<meta http-equiv="refresh" content="0;url=/en/">`, "http://linked.test/")},
			"/en/": page("English", "http://enlinked.test/")}},
		// robotscdn.test's robots.txt redirects to a CDN outside the
		// scope (\.test$): followed, no edge, the home page crawled
		// (target.test linked); the CDN's rules are the host's.
		"robotscdn.test": {Robots: &Answer{Status: 301, Location: "http://cdn.other.example/robots/robotscdn.txt"},
			Pages: map[string]Answer{"/": page("CDN robots", "http://target.test/")}},
		"cdn.other.example": {Pages: map[string]Answer{"/robots/robotscdn.txt": *robots("User-agent: *\nDisallow: /private/\n")}},
		// robotsloop.test's robots.txt redirects to itself: after five
		// hops it is unavailable, which allows: crawled.
		"robotsloop.test": {Robots: &Answer{Status: 302, Location: "/robots.txt"},
			Pages: map[string]Answer{"/": page("Robots loop", "http://target.test/")}},
		// robotschain.test's robots.txt takes five redirects to rules that
		// disallow /: they are followed (RFC 9309 asks for five), so the
		// host is robots_disallowed.
		"robotschain.test": {Robots: &Answer{Status: 301, Location: "/r/1"}, Pages: map[string]Answer{
			"/r/1": moved(301, "/r/2"), "/r/2": moved(301, "/r/3"), "/r/3": moved(301, "/r/4"),
			"/r/4": moved(301, "/r/5"), "/r/5": *disallowAll, "/": page("Chained robots", "http://leak.test/")}},
		// cookie.test sets a cookie and redirects to itself until it comes
		// back: crawled, target.test linked.
		"cookie.test": {Robots: plain, Pages: map[string]Answer{"/": {Cookie: "consent=yes",
			Body: casePage("Welcome back", "", "http://target.test/"),
			Else: &Answer{Status: 302, Location: "/", SetCookie: "consent=yes; Path=/"}}}},
		// cut.test promises 5,000 bytes and closes after 300: a failure,
		// no edge, cutlink.test never discovered.
		"cut.test": {Robots: plain, Pages: map[string]Answer{"/": {CutAt: 300,
			Body: padTo(casePage("Cut", "", "http://cutlink.test/"), 5000)}}},
		// loopa.test ↔ loopb.test: two redirect edges, both crawled.
		"loopa.test": {Robots: plain, Pages: map[string]Answer{"/": moved(301, "http://loopb.test/")}},
		"loopb.test": {Robots: plain, Pages: map[string]Answer{"/": moved(301, "http://loopa.test/")}},
		// sameloop.test / → /a → /: fetch_error, cause redirects.
		"sameloop.test": {Robots: plain, Pages: map[string]Answer{"/": moved(302, "/a"), "/a": moved(302, "/")}},
		// emptyloc.test: a 301 whose Location is empty: crawled (HTTP
		// 301), no link.
		"emptyloc.test": {Robots: plain, Pages: map[string]Answer{"/": moved(301, " ")}},
		// relloc.test / → "other", a relative Location: /other is its page
		// (target.test linked).
		"relloc.test": {Robots: plain, Pages: map[string]Answer{"/": moved(302, "other"), "/other": page("Other", "http://target.test/")}},
		// idnloc.test → http://пример.test/: an edge to xn--e1afmkfd.test,
		// crawled.
		"idnloc.test":       {Robots: plain, Pages: map[string]Answer{"/": moved(301, "http://пример.test/")}},
		"xn--e1afmkfd.test": {Robots: plain, Pages: map[string]Answer{"/": page("Пример")}},
		// ftploc.test → ftp://files.test/: crawled (HTTP 301), no link.
		"ftploc.test": {Robots: plain, Pages: map[string]Answer{"/": moved(301, "ftp://files.test/")}},
		// privloc.test → http://10.9.9.9/: an edge; 10.9.9.9 refused
		// without a request.
		"privloc.test": {Robots: plain, Pages: map[string]Answer{"/": moved(301, "http://10.9.9.9/")}},
		// badgzip.test: Content-Encoding gzip that is not gzip: a failure,
		// no edge.
		"badgzip.test": {Robots: plain, Pages: map[string]Answer{"/": {Header: map[string]string{"Content-Encoding": "gzip"},
			Body: casePage("Not gzip", "", "http://cutlink.test/")}}},
		// deflate.test sends its page deflated (zlib), unasked: read as
		// a browser reads it, target.test linked.
		"deflate.test": {Robots: plain, Pages: map[string]Answer{"/": {Header: map[string]string{"Content-Encoding": "deflate"},
			Body: deflated(casePage("Deflated", "", "http://target.test/"))}}},
		"target.test": {Robots: plain, Pages: map[string]Answer{"/": page("Target")}},
		// pages.test links to two of its own pages: /go redirects to
		// target3.test, /about links to aboutlinked.test. With
		// --pages-per-host 3 the redirect ends /go only: both edges.
		"pages.test": {Robots: plain, Pages: map[string]Answer{"/": page("Pages", "/go", "/about"),
			"/go": moved(301, "http://target3.test/"), "/about": page("About", "http://aboutlinked.test/")}},
		"target3.test": {Robots: plain, Pages: map[string]Answer{"/": page("Target 3")}},
	}
	chain := map[string]Answer{"/": moved(302, "/hop/1")}
	for k := 1; k < 50; k++ {
		chain["/hop/"+strconv.Itoa(k)] = moved(302, "/hop/"+strconv.Itoa(k+1))
	}
	chain["/hop/50"] = page("End of the chain", "http://leak.test/")
	// chain50.test: 50 redirects within the host: fetch_error, cause
	// redirects, after the hop limit.
	cases["chain50.test"] = Script{Robots: plain, Pages: chain}
	// xhop1.test → xhop2.test → … → xhop8.test, a page: seven redirect
	// edges. A seed's redirect is a seed, for five hops: xhop2 to xhop6
	// are at depth 0, xhop7 at 1, xhop8 at 2.
	for k := 1; k < 8; k++ {
		cases["xhop"+strconv.Itoa(k)+".test"] = Script{Robots: plain, Pages: map[string]Answer{"/": moved(301, "http://xhop"+strconv.Itoa(k+1)+".test/")}}
	}
	cases["xhop8.test"] = Script{Robots: plain, Pages: map[string]Answer{"/": page("End of the hops")}}
	return cases
}

// RedirectSeeds are the seed URLs of RedirectCases, one per case, in
// name order.
func RedirectSeeds() []string {
	var out []string
	for _, h := range []string{"src.test", "samehost.test", "tofb.test", "apex.test", "to403.test", "refresh.test",
		"refresh2.test", "reload.test", "refreshsame.test", "robotscdn.test", "robotsloop.test", "robotschain.test",
		"cookie.test", "cut.test", "loopa.test", "sameloop.test", "emptyloc.test", "relloc.test", "idnloc.test",
		"ftploc.test", "privloc.test", "badgzip.test", "chain50.test", "pages.test", "deflate.test", "xhop1.test"} {
		out = append(out, "http://"+h+"/")
	}
	sort.Strings(out)
	return out
}

// casePage is a small HTML page titled title, with head markup (a meta
// refresh) and links to each of links.
func casePage(title, head string, links ...string) string {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>" + title + "</title>\n" + head + "\n</head>\n<body>\n<h1>" + title + "</h1>\n")
	for _, l := range links {
		b.WriteString("<p><a href=\"" + l + "\">" + l + "</a></p>\n")
	}
	b.WriteString("</body>\n</html>\n")
	return b.String()
}

// deflated is s in zlib's format (Content-Encoding: deflate).
func deflated(s string) string {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	_, _ = w.Write([]byte(s)) // into memory: no error
	_ = w.Close()
	return b.String()
}

// padTo pads an HTML page with a comment to n bytes.
func padTo(s string, n int) string {
	if len(s)+7 >= n {
		return s
	}
	return s + "<!--" + strings.Repeat("x", n-len(s)-7) + "-->"
}
