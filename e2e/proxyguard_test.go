package e2e_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

// testProxy is a forward proxy on 127.0.0.1 that records what it is
// asked: a plain request (absolute form) is passed to the fake web's
// plain server, a CONNECT tunnelled to its TLS server, whatever the
// request names, so that no test connects anywhere else.
type testProxy struct {
	ln         net.Listener
	plain, tls string // the fake web's addresses
	mu         sync.Mutex
	asked      []string // "GET http://host/path" or "CONNECT host:port"
}

func startProxy(t *testing.T, plain, tlsAddr string) *testProxy {
	p := &testProxy{plain: plain, tls: tlsAddr}
	p.ln = serveConns(t, p.serve)
	return p
}

// serveConns serves each connection to a listener on 127.0.0.1 with
// serve, until the test ends.
func serveConns(t *testing.T, serve func(net.Conn)) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return ln
}

func (p *testProxy) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br) // one request a connection: the answer closes it
	if err != nil {
		return
	}
	p.mu.Lock()
	if req.Method == http.MethodConnect {
		p.asked = append(p.asked, "CONNECT "+req.Host)
	} else {
		p.asked = append(p.asked, req.Method+" "+req.URL.String())
	}
	p.mu.Unlock()
	if req.Method == http.MethodConnect {
		up, err := net.Dial("tcp", p.tls)
		if err != nil {
			return
		}
		defer up.Close()
		io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		go io.Copy(up, br)
		io.Copy(c, up)
		return
	}
	up, err := net.Dial("tcp", p.plain)
	if err != nil {
		return
	}
	defer up.Close()
	req.Close = true
	if req.WriteProxy(up) == nil {
		resp, err := http.ReadResponse(bufio.NewReader(up), req)
		if err == nil {
			resp.Close = true
			resp.Write(c)
			resp.Body.Close()
		}
	}
}

func (p *testProxy) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.asked)
}

// TestProxy_PrivateNetworkGuard: through HTTP_PROXY and HTTPS_PROXY the
// guard holds (issue 53): a name that resolves to a private or loopback
// address, a literal one, and a redirect to one, are refused before the
// proxy hears of them; a name that resolves to a public address goes to
// the proxy (plain http) or through a tunnel CONNECT names by the address
// weaver checked, SNI and Host keeping the name (https); a name that does
// not resolve here goes to the proxy by name.
func TestProxy_PrivateNetworkGuard(t *testing.T) {
	t.Parallel()
	page := func(body string) fakeweb.Script {
		return fakeweb.Script{Pages: map[string]fakeweb.Answer{"/": {Body: body}}}
	}
	w := fakeweb.New(fakeweb.Config{Hosts: 1, Scripts: map[string]fakeweb.Script{
		"intranet.test":      page(`<title>secret wiki</title><a href="http://leak.test/">x</a>`),
		"private-tls.test":   page(`<title>secret</title>`),
		"public.test":        page(`<title>Public</title><a href="http://loop.test/">loop</a> <a href="http://jump.test/">jump</a>`),
		"loop.test":          page(`<title>loopback</title>`),
		"jump.test":          {Pages: map[string]fakeweb.Answer{"/": {Status: 301, Location: "http://10.9.9.9/admin"}}},
		"unresolved.invalid": page(`<title>Resolved by the proxy</title>`),
		"secure.test":        page(`<title>Secure</title>`),
	}})
	plain := startWeb(t, w)
	tlsSrv, trust := webMode{"https", true}.start(t, w)
	proxy := startProxy(t, plain.Addr(), tlsSrv.Addr())
	dns := startDNS(t, 60)
	dns.setAddr("intranet.test", [4]byte{10, 9, 9, 9})
	dns.setAddr("private-tls.test", [4]byte{192, 168, 1, 1})
	dns.setAddr("public.test", [4]byte{93, 184, 215, 1}) // a public address, never dialled: the proxy answers
	dns.setAddr("jump.test", [4]byte{93, 184, 215, 2})
	dns.setAddr("secure.test", [4]byte{93, 184, 215, 3})
	// loop.test: 127.0.0.1, the server's default.
	dir := t.TempDir()
	db := filepath.Join(dir, "p.bolt")
	cmd := exec.Command(weaverBin, "crawl", "--db", db, "--metrics", db+".metrics", "--delay", "0", "--quiet",
		"--retry-delay", "10ms", "--max-depth", "1", "--dns-server", dns.addr(), trust[0], trust[1],
		"http://intranet.test/", "http://10.9.9.9/", "http://public.test/", "http://unresolved.invalid/",
		"https://secure.test/", "https://private-tls.test/")
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "HTTP_PROXY=http://"+proxy.ln.Addr().String(), "HTTPS_PROXY=http://"+proxy.ln.Addr().String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("crawl: %v\n%s", err, out)
	}
	asked := proxy.requests()
	for _, q := range asked {
		for _, bad := range []string{"intranet.test", "10.9.9.9", "loop.test", "private-tls.test", "192.168.1.1"} {
			if strings.Contains(q, bad) {
				t.Errorf("the proxy was asked %q: the guard let %s through", q, bad)
			}
		}
	}
	has := func(want string) bool { return slices.Contains(asked, want) }
	if !has("CONNECT 93.184.215.3:443") || has("CONNECT secure.test:443") {
		t.Errorf("proxy asked %q: want CONNECT by the address weaver checked (93.184.215.3:443), not by name", asked)
	}
	if !has("GET http://public.test/") || !has("GET http://unresolved.invalid/") {
		t.Errorf("proxy asked %q: want the public name and the one that does not resolve here", asked)
	}
	ns := nodes(t, db)
	for host, want := range map[string]graph.Status{
		"intranet.test": graph.StatusRefused, "10.9.9.9": graph.StatusRefused, "loop.test": graph.StatusRefused,
		"private-tls.test": graph.StatusRefused, "public.test": graph.StatusCrawled, "unresolved.invalid": graph.StatusCrawled,
		"secure.test": graph.StatusCrawled, "jump.test": graph.StatusCrawled,
	} {
		if n := ns[host]; n.Status != want {
			t.Errorf("%s: status %q (%s), want %q", host, n.Status, n.Error, want)
		}
	}
	if n := ns["secure.test"]; n.Title != "Secure" {
		t.Errorf("secure.test: title %q through the tunnel, want Secure (SNI and Host by name)", n.Title)
	}
	if n := ns["intranet.test"]; n.Title != "" {
		t.Errorf("intranet.test: title %q stored", n.Title)
	}
	var tlsHosts []string
	for _, q := range w.Requests() {
		if q.TLS {
			tlsHosts = append(tlsHosts, q.Host)
		}
	}
	if !slices.Contains(tlsHosts, "secure.test") {
		t.Errorf("the TLS server saw hosts %v, want secure.test (the name kept for Host and SNI)", tlsHosts)
	}
}

// TestHeaders_UpTo256KiB: an answer with 100 KB of headers (real sites
// send 80 KB of Set-Cookie) is crawled; one with 300 KB fails the host with
// the cause headers_too_large, in metrics.log and on its node.
func TestHeaders_UpTo256KiB(t *testing.T) {
	t.Parallel()
	cookies := func(n int) map[string]string {
		h := map[string]string{}
		for i := range n {
			h[fmt.Sprintf("X-Cookie-%d", i)] = strings.Repeat("c", 1024)
		}
		return h
	}
	w := fakeweb.New(fakeweb.Config{Hosts: 1, Scripts: map[string]fakeweb.Script{
		"cookies.test": {Pages: map[string]fakeweb.Answer{"/": {Header: cookies(100), Body: `<title>Cookies</title><a href="http://next.test/">n</a>`}}},
		"huge.test":    {Pages: map[string]fakeweb.Answer{"/": {Header: cookies(300), Body: `<title>Huge</title>`}}},
	}})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "h.bolt")
	r := weaver(t, dir, append(crawlArgs(srv, db, "--max-depth", "0"), "http://cookies.test/", "http://huge.test/")...)
	if r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	ns := nodes(t, db)
	if n := ns["cookies.test"]; n.Status != graph.StatusCrawled || n.Title != "Cookies" {
		t.Errorf("cookies.test (100 KB of headers): %s %q (%s), want crawled", n.Status, n.Title, n.Error)
	}
	if n := ns["huge.test"]; n.Status != graph.StatusFetchError || !strings.HasPrefix(n.Error, "headers_too_large") {
		t.Errorf("huge.test (300 KB of headers): %s, error %q, want fetch_error headers_too_large", n.Status, n.Error)
	}
	if m := metrics(t, db+".metrics"); m.ErrorsByType["headers_too_large"] != 1 {
		t.Errorf("metrics.log errors_by_type %v, want headers_too_large 1", m.ErrorsByType)
	}
}

// socksProxy is a SOCKS5 proxy (RFC 1928, no authentication) on
// 127.0.0.1 that records the targets it is asked to connect to and
// connects every one of them to the fake web: port 443 to its TLS
// server, any other to its plain one.
type socksProxy struct {
	ln         net.Listener
	plain, tls string
	mu         sync.Mutex
	targets    []string
}

func startSOCKS(t *testing.T, plain, tlsAddr string) *socksProxy {
	p := &socksProxy{plain: plain, tls: tlsAddr}
	p.ln = serveConns(t, p.serve)
	return p
}

func (p *socksProxy) serve(c net.Conn) {
	defer c.Close()
	var head [2]byte
	if _, err := io.ReadFull(c, head[:]); err != nil || head[0] != 5 {
		return
	}
	methods := make([]byte, head[1])
	if _, err := io.ReadFull(c, methods); err != nil {
		return
	}
	c.Write([]byte{5, 0}) // no authentication
	var req [4]byte
	if _, err := io.ReadFull(c, req[:]); err != nil || req[1] != 1 {
		return
	}
	var host string
	switch req[3] {
	case 1:
		var a [4]byte
		io.ReadFull(c, a[:])
		host = netip.AddrFrom4(a).String()
	case 3:
		var n [1]byte
		io.ReadFull(c, n[:])
		name := make([]byte, n[0])
		io.ReadFull(c, name)
		host = string(name)
	case 4:
		var a [16]byte
		io.ReadFull(c, a[:])
		host = netip.AddrFrom16(a).String()
	default:
		return
	}
	var port [2]byte
	if _, err := io.ReadFull(c, port[:]); err != nil {
		return
	}
	target := net.JoinHostPort(host, strconv.Itoa(int(port[0])<<8|int(port[1])))
	p.mu.Lock()
	p.targets = append(p.targets, target)
	p.mu.Unlock()
	to := p.plain
	if port[0] == 443>>8 && port[1] == 443&0xff {
		to = p.tls
	}
	up, err := net.Dial("tcp", to)
	if err != nil {
		c.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0})
		return
	}
	defer up.Close()
	c.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0})
	go io.Copy(up, c)
	io.Copy(c, up)
}

// TestProxy_SOCKS5Guard: through a SOCKS5 proxy every request is
// tunnelled by weaver to the address it checked, plain http too; a name
// that resolves to a private address is never asked for.
func TestProxy_SOCKS5Guard(t *testing.T) {
	t.Parallel()
	page := func(title string) fakeweb.Script {
		return fakeweb.Script{Pages: map[string]fakeweb.Answer{"/": {Body: "<title>" + title + "</title>"}}}
	}
	w := fakeweb.New(fakeweb.Config{Hosts: 1, Scripts: map[string]fakeweb.Script{
		"public.test": page("Public"), "secure.test": page("Secure"), "intranet.test": page("secret"),
	}})
	plain := startWeb(t, w)
	tlsSrv, trust := webMode{"https", true}.start(t, w)
	socks := startSOCKS(t, plain.Addr(), tlsSrv.Addr())
	dns := startDNS(t, 60)
	dns.setAddr("public.test", [4]byte{93, 184, 215, 1}) // public addresses, never dialled: the proxy answers
	dns.setAddr("secure.test", [4]byte{93, 184, 215, 3})
	dns.setAddr("intranet.test", [4]byte{10, 9, 9, 9})
	dir := t.TempDir()
	db := filepath.Join(dir, "s.bolt")
	cmd := exec.Command(weaverBin, "crawl", "--db", db, "--metrics", db+".metrics", "--delay", "0", "--quiet",
		"--retry-delay", "10ms", "--max-depth", "0", "--dns-server", dns.addr(), trust[0], trust[1],
		"http://public.test/", "https://secure.test/", "http://intranet.test/")
	cmd.Dir = dir
	proxyURL := "socks5://" + socks.ln.Addr().String()
	cmd.Env = append(cleanEnv(), "HTTP_PROXY="+proxyURL, "HTTPS_PROXY="+proxyURL)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("crawl: %v\n%s", err, out)
	}
	socks.mu.Lock()
	targets := slices.Clone(socks.targets)
	socks.mu.Unlock()
	if !slices.Contains(targets, "93.184.215.1:80") || !slices.Contains(targets, "93.184.215.3:443") {
		t.Errorf("SOCKS5 targets %v: want the addresses weaver checked", targets)
	}
	for _, tg := range targets {
		if strings.Contains(tg, ".test") || strings.HasPrefix(tg, "10.") {
			t.Errorf("SOCKS5 target %s: a name, or a private address", tg)
		}
	}
	ns := nodes(t, db)
	for host, want := range map[string]string{"public.test": "Public", "secure.test": "Secure"} {
		if n := ns[host]; n.Status != graph.StatusCrawled || n.Title != want {
			t.Errorf("%s through SOCKS5: %s %q (%s)", host, n.Status, n.Title, n.Error)
		}
	}
	if n := ns["intranet.test"]; n.Status != graph.StatusRefused {
		t.Errorf("intranet.test through SOCKS5: %s (%s), want refused", n.Status, n.Error)
	}
}

// TestProxy_NoLocalResolver: on a machine whose resolver never answers
// (it reaches the web only through its proxy), the guard's lookups time
// out once and then leave the names to the proxy: the crawl is whole.
func TestProxy_NoLocalResolver(t *testing.T) {
	t.Parallel()
	scripts := map[string]fakeweb.Script{}
	var seeds []string
	for i := range 12 {
		h := fmt.Sprintf("host%d.test", i)
		scripts[h] = fakeweb.Script{Pages: map[string]fakeweb.Answer{"/": {Body: "<title>" + h + "</title>"}}}
		seeds = append(seeds, "http://"+h+"/")
	}
	w := fakeweb.New(fakeweb.Config{Hosts: 1, Scripts: scripts})
	plain := startWeb(t, w)
	proxy := startProxy(t, plain.Addr(), plain.Addr())
	dns := startDNS(t, 60)
	dns.setMode(dnsDrop)
	dir := t.TempDir()
	db := filepath.Join(dir, "n.bolt")
	cmd := exec.Command(weaverBin, append([]string{"crawl", "--db", db, "--metrics", db + ".metrics", "--delay", "0", "--quiet",
		"--retry-delay", "10ms", "--retries", "0", "--timeout", "5s", "--max-depth", "0", "--dns-server", dns.addr()}, seeds...)...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "HTTP_PROXY=http://"+proxy.ln.Addr().String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("crawl: %v\n%s", err, out)
	}
	ns := nodes(t, db)
	for i := range 12 {
		h := fmt.Sprintf("host%d.test", i)
		if n := ns[h]; n.Status != graph.StatusCrawled || n.Title != h {
			t.Errorf("%s: %s (%s), want crawled through the proxy", h, n.Status, n.Error)
		}
	}
}
