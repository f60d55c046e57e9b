package fakeweb_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

func TestServer_ConnectTo(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 50, Seed: 4})
	srv := mustStart(t, w)
	c := client(t, srv)
	if got, want := srv.ConnectTo(), "::"+srv.Addr(); got != want {
		t.Errorf("ConnectTo: got %s, want %s", got, want)
	}
	if !strings.HasPrefix(srv.Addr(), "127.0.0.1:") || srv.URL() != "http://"+srv.Addr() {
		t.Errorf("Addr %s, URL %s", srv.Addr(), srv.URL())
	}

	status, h, body := get(t, c, w.Seed())
	if status != http.StatusOK {
		t.Fatalf("GET seed: status %d", status)
	}
	if got, want := h.Get("Content-Type"), "text/html; charset=utf-8"; got != want {
		t.Errorf("Content-Type: got %q, want %q", got, want)
	}
	if got, want := parse(t, body).title, w.Title(w.Hosts()[0]); got != want {
		t.Errorf("title: got %q, want %q", got, want)
	}

	status, _, body = get(t, c, "http://no-such-host.test/")
	if status != http.StatusNotFound || !strings.Contains(string(body), "no such host") {
		t.Errorf("unknown host: got %d %q, want 404 saying no such host", status, body)
	}

	host := w.Hosts()[1]
	status, _, body = get(t, c, "http://"+strings.ToUpper(host)+":8080/robots.txt")
	if status != http.StatusOK || !strings.Contains(string(body), "Disallow: /private/") {
		t.Errorf("robots.txt: got %d %q", status, body)
	}
	status, _, _ = get(t, c, "http://"+host+"/about")
	if status != http.StatusOK {
		t.Errorf("/about: status %d, want 200", status)
	}
	status, _, _ = get(t, c, "http://"+host+"/no/such/page")
	if status != http.StatusNotFound {
		t.Errorf("/no/such/page: status %d, want 404", status)
	}

	if got, want := w.RequestCount(host), 3; got != want {
		t.Errorf("RequestCount(%s): got %d, want %d", host, got, want)
	}
	reqs := w.Requests()
	if got, want := len(reqs), 5; got != want {
		t.Fatalf("Requests: got %d, want %d", got, want)
	}
	last := reqs[len(reqs)-1]
	if last.Host != host || last.Path != "/no/such/page" || last.Status != http.StatusNotFound || last.At.IsZero() {
		t.Errorf("last request: got %+v", last)
	}
	if reqs[2].Host != host || reqs[2].Path != "/robots.txt" {
		t.Errorf("request 2: got %+v, want host %s (lower-cased, no port) and /robots.txt", reqs[2], host)
	}
	w.Reset()
	if len(w.Requests()) != 0 || w.RequestCount(host) != 0 {
		t.Errorf("after Reset: %d requests", len(w.Requests()))
	}
}

func TestServer_Proxy(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 20, Seed: 4})
	srv := mustStart(t, w)
	proxy, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{Proxy: http.ProxyURL(proxy)}
	defer tr.CloseIdleConnections()
	host := w.Hosts()[5]
	status, _, body := get(t, &http.Client{Transport: tr}, "http://"+host+"/?q=1")
	if status != http.StatusOK || parse(t, body).title != w.Title(host) {
		t.Errorf("through proxy: status %d, title %q", status, parse(t, body).title)
	}
	if reqs := w.Requests(); len(reqs) != 1 || reqs[0].Host != host || reqs[0].Path != "/?q=1" {
		t.Errorf("Requests: got %+v", reqs)
	}
}

func TestServer_AbsoluteFormWithoutHostHeader(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 20, Seed: 4})
	srv := mustStart(t, w)
	conn, err := net.DialTimeout("tcp", srv.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	host := w.Hosts()[2]
	if _, err := io.WriteString(conn, "GET http://"+host+"/robots.txt HTTP/1.1\r\nHost: other.test\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("absolute-form: status %d, want 200 (routed by the URI's host)", resp.StatusCode)
	}
}

func TestServer_Latency(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 5, Latency: 300 * time.Millisecond})
	srv := mustStart(t, w)
	c := client(t, srv)
	start := time.Now()
	get(t, c, w.Seed())
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("latency: answered in %v, want at least 300ms", d)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.Seed(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := c.Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("cancelled request: got a response")
	} else if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled request: got %v, want deadline exceeded", err)
	}
}

func TestServer_Concurrent(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 100, Seed: 6})
	srv := mustStart(t, w)
	c := client(t, srv)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Go(func() {
			for i := g; i < 100; i += 8 {
				if status, _, _ := get(t, c, "http://"+w.Hosts()[i]+"/"); status != http.StatusOK {
					t.Errorf("host %d: status %d", i, status)
				}
			}
		})
	}
	wg.Wait()
	if got, want := len(w.Requests()), 100; got != want {
		t.Errorf("Requests: got %d, want %d", got, want)
	}
}

func TestServer_HeadAndMethods(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 5})
	srv := mustStart(t, w)
	c := client(t, srv)
	resp, err := c.Head(w.Seed())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ContentLength < 10_000 {
		t.Errorf("HEAD: status %d, length %d", resp.StatusCode, resp.ContentLength)
	}
	resp, err = c.Post(w.Seed(), "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: status %d, want 405", resp.StatusCode)
	}
}

func TestServer_Close(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 5})
	srv, err := w.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := net.DialTimeout("tcp", srv.Addr(), time.Second); err == nil {
		t.Errorf("dial after Close: connected")
	}
	if _, err := w.Start("256.0.0.1:0"); err == nil {
		t.Errorf("Start on a bad address: no error")
	}
}

// TestExpectedEdges_MatchCrawl crawls the web through a real listener the way
// the crawler does (robots.txt, home page, x/net/html, first <base href>) and
// checks the edges it records against ExpectedEdges.
func TestExpectedEdges_MatchCrawl(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 12, RobotsDisallowEvery: 7})
	srv := mustStart(t, w)
	c := client(t, srv)
	const maxOut = 10
	got := map[[2]string]int{}
	seed := w.Hosts()[0]
	seen := map[string]bool{seed: true}
	for queue := []string{seed}; len(queue) > 0; queue = queue[1:] {
		host := queue[0]
		status, _, robots := get(t, c, "http://"+host+"/robots.txt")
		if status == http.StatusOK && strings.Contains(string(robots), "User-agent: weaver\nDisallow: /\n") {
			continue
		}
		status, _, body := get(t, c, "http://"+host+"/")
		if status != http.StatusOK {
			continue
		}
		p := parse(t, body)
		for _, dst := range fakeweb.SelectHosts(host, escapeAll([]string{p.base})[0], escapeAll(p.hrefs), maxOut, fakeweb.DefaultExcluded) {
			got[[2]string{host, dst}] = 1
			if !seen[dst] {
				seen[dst] = true
				queue = append(queue, dst)
			}
		}
	}
	want := w.ExpectedEdges(maxOut, fakeweb.DefaultExcluded)
	if !maps.Equal(got, want) {
		t.Errorf("crawl recorded %d edges, ExpectedEdges %d", len(got), len(want))
		for e := range want {
			if _, ok := got[e]; !ok {
				t.Errorf("missing %v", e)
			}
		}
		for e := range got {
			if _, ok := want[e]; !ok {
				t.Errorf("unexpected %v", e)
			}
		}
	}
	if len(seen) != 300 {
		t.Errorf("crawl reached %d hosts, want 300", len(seen))
	}
}
