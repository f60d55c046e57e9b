package e2e_test

import (
	"path/filepath"
	"testing"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

// TestScheme_Other: a host whose first connection is refused on its
// link's scheme is tried on the other (issue 53): http:// with port 80
// closed and 443 answering is crawled over https, and the reverse; the
// node records the scheme that answered. A host that sent HSTS is never
// asked over http.
func TestScheme_Other(t *testing.T) {
	t.Parallel()
	page := func(title string, hdr map[string]string) fakeweb.Script {
		return fakeweb.Script{Pages: map[string]fakeweb.Answer{"/": {Header: hdr, Body: "<title>" + title + `</title><a href="http://linked.test/">l</a>`}}}
	}
	w := fakeweb.New(fakeweb.Config{Hosts: 1, Scripts: map[string]fakeweb.Script{
		"only-https.test": page("Only HTTPS", nil),
		"only-http.test":  page("Only HTTP", nil),
		"hsts.test":       page("HSTS", map[string]string{"Strict-Transport-Security": "max-age=31536000"}),
	}})
	plain := startWeb(t, w)
	tlsSrv, trust := webMode{"https", true}.start(t, w)
	hstsSrv, err := w.StartTLS("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := closedPort(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "s.bolt")
	args := append([]string{"crawl", "--db", db, "--metrics", db + ".metrics", "--delay", "0", "--quiet", "--retry-delay", "10ms",
		// --insecure: hsts.test's server has a CA of its own, which --ca-file (trust) is not.
		"--max-depth", "0", "--allow-private-networks", "--insecure",
		"--connect-to", "only-https.test:80:" + closed, "--connect-to", "only-https.test:443:" + tlsSrv.Addr(),
		"--connect-to", "only-http.test:443:" + closed, "--connect-to", "only-http.test:80:" + plain.Addr(),
		"--connect-to", "hsts.test:443:" + hstsSrv.Addr(), "--connect-to", "hsts.test:80:" + plain.Addr()}, trust...)
	seeds := []string{"http://only-https.test/", "https://only-http.test/", "https://hsts.test/"}
	if r := weaver(t, dir, append(args, seeds...)...); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	ns := nodes(t, db)
	for host, scheme := range map[string]string{"only-https.test": "https", "only-http.test": "http", "hsts.test": "https"} {
		n := ns[host]
		if n.Status != graph.StatusCrawled || n.Scheme != scheme || edges(t, db)[[2]string{host, "linked.test"}] != 1 {
			t.Errorf("%s: %s over %q (%s), want crawled over %s with its link", host, n.Status, n.Scheme, n.Error, scheme)
		}
	}
	if !ns["hsts.test"].HSTS {
		t.Error("hsts.test: its Strict-Transport-Security not recorded")
	}
	// hsts.test's https goes away: it is not asked over http.
	hstsSrv.Close()
	before := 0
	for _, q := range w.Requests() {
		if q.Host == "hsts.test" && !q.TLS {
			before++
		}
	}
	if r := weaver(t, dir, append(args, "https://hsts.test/")...); r.code != 0 && r.code != 1 {
		t.Fatalf("second crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	after := 0
	for _, q := range w.Requests() {
		if q.Host == "hsts.test" && !q.TLS {
			after++
		}
	}
	if after != before {
		t.Errorf("hsts.test asked over http %d times after it sent HSTS", after-before)
	}
	if n := nodes(t, db)["hsts.test"]; n.FailCount == 0 || n.Scheme != "https" {
		t.Errorf("hsts.test with https gone: fail_count %d, scheme %q (%s), want a failure over https", n.FailCount, n.Scheme, n.Error)
	}
}
