package render_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/crawl/extract"
	"github.com/weaver-crawler/weaver/crawl/robots"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/tooltest"
	"github.com/weaver-crawler/weaver/render"
)

// userAgent is the crawler's User-Agent in the tests; its robots.txt
// product token is "weaver".
const userAgent = crawl.DefaultUserAgent

// browserPath is the chromium to test with. It skips the test when there is
// none, and fails it under CI=true.
func browserPath(tb testing.TB) string {
	tb.Helper()
	p, err := render.FindBrowser("", os.Getenv)
	if err == nil {
		return p
	}
	tooltest.Missing(tb, "chromium is not installed (apt-get install chromium): %v", err)
	return ""
}

// site is a fake web served on loopback and the crawl's own transport to
// it: a --connect-to rule per host of the web, nothing else, so any other
// name (localhost) or address goes through the private-address refusal.
type site struct {
	web       *fakeweb.Web
	srv       *fakeweb.Server
	transport http.RoundTripper
}

func newSite(tb testing.TB, cfg fakeweb.Config) *site {
	tb.Helper()
	w := fakeweb.New(cfg)
	srv, err := w.Start("127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = srv.Close() })
	var rules []string
	for _, h := range w.Hosts() {
		rules = append(rules, h+"::"+srv.Addr())
	}
	tr, err := crawl.NewTransport(&crawl.Config{ConnectTo: rules, RequestTimeoutMS: 5000, ConcurrentWorkers: 2}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return &site{web: w, srv: srv, transport: tr}
}

// robotsPolicy is the Policy a crawl gives the pool: robots.txt of each
// request's host (fetched once, through the same transport, RFC 9309's
// reading of its status), and the User-Agent.
type robotsPolicy struct {
	tr http.RoundTripper

	mu    sync.Mutex // guards rules
	rules map[string]*robots.Rules
}

func (p *robotsPolicy) check(req *http.Request) error {
	key := req.URL.Scheme + "://" + req.URL.Host
	p.mu.Lock()
	r := p.rules[key]
	p.mu.Unlock()
	if r == nil {
		rr, _ := http.NewRequestWithContext(req.Context(), http.MethodGet, key+"/robots.txt", nil)
		rr.Header.Set("User-Agent", userAgent)
		resp, err := p.tr.RoundTrip(rr)
		if err != nil {
			r = robots.Unreachable()
		} else {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, robots.MaxBodyBytes))
			resp.Body.Close()
			r = robots.FromResponse(resp.StatusCode, body)
		}
		p.mu.Lock()
		if p.rules == nil {
			p.rules = map[string]*robots.Rules{}
		}
		p.rules[key] = r
		p.mu.Unlock()
	}
	if !r.Allowed(userAgent, req.URL.String()) {
		return fmt.Errorf("robots.txt disallows %s", req.URL)
	}
	req.Header.Set("User-Agent", userAgent)
	return nil
}

// newPool starts a pool of tabs on the site, closed by the test's cleanup.
func newPool(tb testing.TB, s *site, edit func(*render.Config)) *render.Pool {
	tb.Helper()
	pol := &robotsPolicy{tr: s.transport}
	cfg := render.Config{
		Browser:   browserPath(tb),
		Transport: s.transport,
		Policy:    pol.check,
		UserAgent: userAgent,
		Tabs:      1,
		Timeout:   10 * time.Second,
		Settle:    3 * time.Second,
		Logf:      tb.Logf,
	}
	if edit != nil {
		edit(&cfg)
	}
	p, err := render.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := p.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return p
}

// hostsOf selects hosts from a rendered page as a crawl does: extraction,
// then fakeweb.SelectHosts' rule (other hosts, in order, once).
func hostsOf(tb testing.TB, res render.Result) []string {
	tb.Helper()
	page, err := url.Parse(res.FinalURL)
	if err != nil {
		tb.Fatalf("FinalURL %q: %v", res.FinalURL, err)
	}
	seen := map[string]bool{page.Hostname(): true}
	var out []string
	_, err = extract.Page(strings.NewReader(string(res.HTML)), page, func(u *url.URL) bool {
		h := fakeweb.HostKey(u)
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
		return true
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// render renders the home page of host or fails the test.
func mustRender(tb testing.TB, p *render.Pool, host string) render.Result {
	tb.Helper()
	res, err := p.Render(context.Background(), "http://"+host+"/")
	if err != nil {
		tb.Fatalf("Render(%s): %v", host, err)
	}
	return res
}

// outsideSockets returns the remote addresses, other than loopback, of the
// TCP and UDP sockets that the processes pid and below hold.
func outsideSockets(pid int) []string {
	inodes := map[string]bool{}
	for _, p := range render.Descendants(pid) {
		dir := filepath.Join("/proc", strconv.Itoa(p), "fd")
		fds, _ := os.ReadDir(dir)
		for _, fd := range fds {
			l, err := os.Readlink(filepath.Join(dir, fd.Name()))
			if err == nil && strings.HasPrefix(l, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
			}
		}
	}
	var out []string
	for _, table := range []string{"tcp", "tcp6", "udp", "udp6"} {
		f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "net", table))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || !inodes[fields[9]] {
				continue
			}
			ip, port := procAddr(fields[2])
			if ip == nil || port == 0 || ip.IsUnspecified() || ip.IsLoopback() {
				continue
			}
			out = append(out, fmt.Sprintf("%s %s", table, net.JoinHostPort(ip.String(), strconv.Itoa(port))))
		}
		f.Close()
	}
	return out
}

// procAddr decodes a /proc/net address such as "0100007F:1F90": 32-bit
// words in host (little-endian) order, then the port.
func procAddr(s string) (net.IP, int) {
	hexIP, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return nil, 0
	}
	port, _ := strconv.ParseUint(hexPort, 16, 16)
	var ip net.IP
	for i := 0; i+8 <= len(hexIP); i += 8 {
		w, _ := strconv.ParseUint(hexIP[i:i+8], 16, 32)
		ip = append(ip, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
	}
	return ip, int(port)
}
