package crawl

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/weaver-crawler/weaver/graph"
)

// ConnectTo is one curl-style --connect-to rule, HOST1:PORT1:HOST2:PORT2:
// a request for HOST1:PORT1 connects to HOST2:PORT2 instead. An empty
// HOST1 or PORT1 matches any; an empty HOST2 or PORT2 keeps the original.
type ConnectTo struct {
	FromHost, FromPort, ToHost, ToPort string
}

// ParseConnectTo parses a rule; IPv6 addresses go in brackets.
func ParseConnectTo(s string) (ConnectTo, error) {
	var parts []string
	rest := s
	for i := 0; i < 4; i++ {
		if strings.HasPrefix(rest, "[") {
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return ConnectTo{}, fmt.Errorf("connect-to %q: unclosed [", s)
			}
			parts = append(parts, strings.ToLower(rest[1:end]))
			rest = rest[end+1:]
		} else {
			j := strings.IndexByte(rest, ':')
			if j < 0 {
				j = len(rest)
			}
			parts = append(parts, strings.ToLower(rest[:j]))
			rest = rest[j:]
		}
		if i < 3 {
			if !strings.HasPrefix(rest, ":") {
				return ConnectTo{}, fmt.Errorf("connect-to %q: want HOST1:PORT1:HOST2:PORT2", s)
			}
			rest = rest[1:]
		}
	}
	if rest != "" {
		return ConnectTo{}, fmt.Errorf("connect-to %q: want HOST1:PORT1:HOST2:PORT2", s)
	}
	for _, p := range []string{parts[1], parts[3]} {
		if p != "" && !isPort(p) {
			return ConnectTo{}, fmt.Errorf("connect-to %q: bad port %q", s, p)
		}
	}
	return ConnectTo{FromHost: parts[0], FromPort: parts[1], ToHost: parts[2], ToPort: parts[3]}, nil
}

func isPort(p string) bool {
	if len(p) == 0 || len(p) > 5 {
		return false
	}
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n <= 65535
}

func (r ConnectTo) match(host, port string) bool {
	return (r.FromHost == "" || r.FromHost == host) && (r.FromPort == "" || r.FromPort == port)
}

// ErrRefusedAddress is returned for a connection to a loopback, private,
// link-local, multicast or unspecified address (unless allowed).
var ErrRefusedAddress = errors.New("private or local address")

// forbiddenHost reports whether host (as in a URL, maybe bracketed, no
// port) is an IP literal that must not be fetched.
func forbiddenHost(host string) bool {
	h := strings.Trim(host, "[]")
	if !graph.MayBeIP(h) {
		return false // a name: checked once resolved, at dial time
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && forbidden(ip)
}

// dialer connects requests: --connect-to rules first (the user asked for
// that address, so it is not checked), then the configured proxies, then
// a direct connection whose resolved address is checked at dial time —
// after DNS, so a name that resolves to a private address is refused too.
type dialer struct {
	rules        []ConnectTo
	allowPrivate bool
	net          net.Dialer
	dns          *resolver // the process's cache of names, shared by every transport of the same DNS server

	mu      sync.Mutex      // guards proxies
	proxies map[string]bool // host:port of proxies the transport was told to use
	tunnel  tunnels         // addresses this dialer tunnels through a proxy (proxyguard.go)
	// noLocalDNS: until when (Unix ns) proxied names go to the proxy
	// unresolved, the resolver having timed out (proxyguard.go).
	noLocalDNS atomic.Int64
}

func newDialer(rules []ConnectTo, allowPrivate bool, timeout time.Duration, dns *resolver) *dialer {
	d := &dialer{rules: rules, allowPrivate: allowPrivate, dns: dns, proxies: map[string]bool{}}
	d.net = net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.net.Control = func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err == nil && forbidden(ap.Addr()) {
				return fmt.Errorf("%w: %s", ErrRefusedAddress, ap.Addr())
			}
			return nil
		}
	}
	return d
}

func (d *dialer) noteProxy(u *url.URL) {
	if u == nil {
		return
	}
	d.mu.Lock()
	d.proxies[proxyAddr(u)] = true
	d.mu.Unlock()
}

// proxyAddr is the host:port a proxy URL is dialled at: its port, else
// its scheme's (443 for https, 1080 for SOCKS5, 80 for http).
func proxyAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "socks5": "1080", "socks5h": "1080"}[u.Scheme]
		if port == "" {
			port = "80"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// DialContext implements http.Transport's DialContext.
func (d *dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	host = strings.ToLower(host)
	d.mu.Lock()
	isProxy := d.proxies[addr]
	d.mu.Unlock()
	if isProxy { // the user's own proxy, wherever it is
		var plain net.Dialer
		plain.Timeout = d.net.Timeout
		return plain.DialContext(ctx, network, addr)
	}
	if p := d.tunnel.get(addr); p != nil {
		return d.dialTunnel(ctx, network, addr, p)
	}
	if !d.allowPrivate && forbiddenHost(host) {
		return nil, fmt.Errorf("%w: %s", ErrRefusedAddress, host)
	}
	for _, r := range d.rules {
		if r.match(host, port) {
			to, toPort := host, port
			if r.ToHost != "" {
				to = r.ToHost
			}
			if r.ToPort != "" {
				toPort = r.ToPort
			}
			var plain net.Dialer
			plain.Timeout = d.net.Timeout
			if _, err := netip.ParseAddr(to); err == nil || r.ToHost != "" {
				return plain.DialContext(ctx, network, net.JoinHostPort(to, toPort))
			}
			// Only the port changes: the name is still weaver's to resolve.
			return d.dialName(ctx, &plain, network, host, toPort)
		}
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return d.net.DialContext(ctx, network, addr)
	}
	return d.dialName(ctx, &d.net, network, host, port)
}

// dialName resolves host through the DNS cache and connects to its
// addresses with nd as RFC 8305 (Happy Eyeballs) does: interleaved by
// family, the first address's family first.
func (d *dialer) dialName(ctx context.Context, nd *net.Dialer, network, host, port string) (net.Conn, error) {
	ips, err := d.dns.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	var addrs []string
	for _, ip := range interleave(ips) {
		if (network == "tcp4" && !ip.Unmap().Is4()) || (network == "tcp6" && ip.Unmap().Is4()) {
			continue
		}
		addrs = append(addrs, net.JoinHostPort(ip.Unmap().String(), port))
	}
	if len(addrs) == 0 {
		return nil, &net.DNSError{Err: "no address for " + network, Name: host, IsNotFound: true}
	}
	return race(ctx, nd, network, addrs, attemptDelay)
}

// attemptDelay is RFC 8305's Connection Attempt Delay: a new attempt
// starts when the one before has not connected in this time.
const attemptDelay = 250 * time.Millisecond

// interleave orders addresses by family in turn, the first address's
// family first, each family in the order given (RFC 8305 §4).
func interleave(ips []netip.Addr) []netip.Addr {
	if len(ips) < 2 {
		return ips
	}
	first := ips[0].Unmap().Is4()
	var same, other []netip.Addr
	for _, ip := range ips {
		if ip.Unmap().Is4() == first {
			same = append(same, ip)
		} else {
			other = append(other, ip)
		}
	}
	out := make([]netip.Addr, 0, len(ips))
	for i := 0; i < len(same) || i < len(other); i++ {
		if i < len(same) {
			out = append(out, same[i])
		}
		if i < len(other) {
			out = append(out, other[i])
		}
	}
	return out
}

// race connects to addrs (host:port) as RFC 8305 §5 does: the first at
// once, the next when the one before failed or has not connected within
// delay; the first connection wins and the others are closed. A dead
// address costs at most delay, not the request's timeout. Every attempt
// goes through nd, and so through the guard's check of its address. It
// returns the first address's error when none connects.
func race(ctx context.Context, nd *net.Dialer, network string, addrs []string, delay time.Duration) (net.Conn, error) {
	if len(addrs) == 1 {
		return nd.DialContext(ctx, network, addrs[0])
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		conn net.Conn
		err  error
		i    int
	}
	results := make(chan result, len(addrs))
	started, pending := 0, 0
	start := func() {
		i := started
		started++
		pending++
		go func() {
			c, err := nd.DialContext(ctx, network, addrs[i])
			results <- result{c, err, i}
		}()
	}
	errs := make([]error, len(addrs))
	start()
	timer := time.NewTimer(delay)
	defer timer.Stop()
	for pending > 0 {
		select {
		case r := <-results:
			pending--
			if r.err == nil {
				go func(n int) { // the attempts still under way lose
					for range n {
						if l := <-results; l.conn != nil {
							l.conn.Close()
						}
					}
				}(pending)
				return r.conn, nil
			}
			errs[r.i] = r.err
			if started < len(addrs) && ctx.Err() == nil {
				start() // a failed attempt starts the next at once
				timer.Reset(delay)
			}
		case <-timer.C:
			if started < len(addrs) {
				start()
				timer.Reset(delay)
			}
		}
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return nil, ctx.Err()
}

// maxHeaderBytes bounds an answer's headers, as browsers do (Chromium
// accepts 256 KiB): a site's 80 KB of Set-Cookie is an answer; more is
// KindHeadersTooLarge.
const maxHeaderBytes = 256 << 10

// maxRedirects is the most redirects one fetch follows.
const maxRedirects = 5

// errTooManyRedirects ends a fetch that redirected more than maxRedirects times.
var errTooManyRedirects = errors.New("too many redirects")

// newClient builds the HTTP client every worker shares. It follows no
// redirect: each hop is a step of its own, through the politeness gate.
func newClient(cfg *Config, proxy func(*url.URL) (*url.URL, error)) (*http.Client, error) {
	var rules []ConnectTo
	for _, s := range cfg.ConnectTo {
		r, err := ParseConnectTo(s)
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	server := ""
	if cfg.DNSServer != "" {
		var err error
		if server, err = CheckDNSServer(cfg.DNSServer); err != nil {
			return nil, err
		}
	}
	d := newDialer(rules, cfg.AllowPrivateNetworks, cfg.timeout(), resolverFor(server))
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CAFile != "" {
		pool, err := LoadCAFile(cfg.CAFile)
		if err != nil {
			return nil, err
		}
		tlsConf.RootCAs = pool
	}
	if cfg.Insecure {
		insecureTLS(tlsConf)
	}
	tr := &http.Transport{
		DialContext:     d.DialContext,
		TLSClientConfig: tlsConf,
		// A crawl reuses a connection only from robots.txt to the page
		// of the same host, a politeness delay later: one idle
		// connection per open host at most (each costs ~50 KiB of
		// buffers), none kept for hosts never asked again.
		MaxIdleConns:        cfg.openHosts(),
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     30 * time.Second,
		// Shorter than the request's own deadline, so that a handshake
		// that stalls is told apart (KindTLSTimeout) from a slow answer.
		TLSHandshakeTimeout:    cfg.timeout() * 9 / 10,
		ResponseHeaderTimeout:  cfg.timeout(),
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: maxHeaderBytes,
		ForceAttemptHTTP2:      true,
	}
	if proxy != nil {
		tr.Proxy = d.proxyFor(proxy)
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}, nil
}

// probeClient returns client with a transport of its own that keeps no
// connection: each request dials (and resolves its name) afresh.
func probeClient(client *http.Client) *http.Client {
	pc := *client
	if tr, ok := client.Transport.(*http.Transport); ok {
		tr = tr.Clone()
		tr.DisableKeepAlives = true
		pc.Transport = tr
	}
	return &pc
}
