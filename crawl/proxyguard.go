package crawl

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/proxy"
)

// The private-network guard through proxies (issue 53). A proxied
// request connects only to the proxy, so the dial-time check of the
// address never sees the target: a crawl through HTTP_PROXY would reach
// the intranet the proxy reaches. Without --allow-private-networks:
//
//   - a plain http request through an http(s) proxy goes to the proxy
//     only once weaver has resolved its host and found no forbidden
//     address (a name that does not resolve here goes on: a corporate
//     proxy resolves names itself; the proxy resolving a name again, to
//     another address, is the gap docs/crawling.md names);
//   - an https request through an http(s) proxy, and any request through
//     a SOCKS5 proxy, is tunnelled by weaver's own dialer: CONNECT (or
//     SOCKS5's connect) names the address weaver checked, while the TLS
//     handshake's SNI and the Host header keep the name. A name that does
//     not resolve here is sent by name.
//
// A literal address in a forbidden range is refused before any request
// by the crawl's start (forbiddenHost), as without a proxy.

// tunnels remembers which dial addresses (host:port) the transport's
// Proxy sent to weaver's dialer to be tunnelled, and through which
// proxy: Proxy sees the request, the dialer only its address. Two
// generations bound it, whatever the number of hosts: a dial follows its
// request's Proxy call at once, long before two rotations.
type tunnels struct {
	mu        sync.Mutex
	cur, prev map[string]*url.URL
}

// maxTunnels is a generation's size.
const maxTunnels = 4096

func (t *tunnels) set(addr string, p *url.URL) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == nil || len(t.cur) >= maxTunnels {
		t.prev, t.cur = t.cur, make(map[string]*url.URL)
	}
	t.cur[addr] = p
}

func (t *tunnels) get(addr string) *url.URL {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p, ok := t.cur[addr]; ok {
		return p
	}
	return t.prev[addr]
}

// localDNSTimeout bounds the guard's own lookup of a proxied name, and
// localDNSPause is how long names go to the proxy unresolved after one
// timed out.
const (
	localDNSTimeout = 2 * time.Second
	localDNSPause   = time.Minute
)

// dialAddr is the address the transport dials for u: its host, lower
// case, and its port or the scheme's.
func dialAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// proxyFor is the transport's Proxy with the guard: p is the user's rule
// (HTTP_PROXY and the others). It returns the proxy for a request the
// proxy may be given as it is, nil for a direct request or one weaver's
// dialer tunnels, and an ErrRefusedAddress error for a request whose
// host resolves to a forbidden address.
func (d *dialer) proxyFor(p func(*url.URL) (*url.URL, error)) func(*http.Request) (*url.URL, error) {
	return func(r *http.Request) (*url.URL, error) {
		u, err := p(r.URL)
		if err != nil || u == nil {
			return u, err
		}
		if d.allowPrivate {
			d.noteProxy(u)
			return u, nil
		}
		if r.URL.Scheme == "https" || isSOCKS(u) {
			d.tunnel.set(dialAddr(r.URL), u)
			return nil, nil
		}
		if _, err := d.checked(r.Context(), r.URL.Hostname()); err != nil {
			return nil, err
		}
		d.noteProxy(u)
		return u, nil
	}
}

func isSOCKS(u *url.URL) bool { return u.Scheme == "socks5" || u.Scheme == "socks5h" }

// checked resolves host, as weaver would to connect to it, and returns
// the first of its addresses that is not forbidden; an ErrRefusedAddress
// error when every one is (or host is such a literal); the zero address
// and no error when host does not resolve here, for the proxy to
// resolve.
func (d *dialer) checked(ctx context.Context, host string) (netip.Addr, error) {
	h := strings.Trim(host, "[]")
	if ip, err := netip.ParseAddr(h); err == nil {
		if forbidden(ip) {
			return netip.Addr{}, fmt.Errorf("%w: %s", ErrRefusedAddress, ip)
		}
		return ip, nil
	}
	if until := d.noLocalDNS.Load(); until != 0 && time.Now().UnixNano() < until {
		return netip.Addr{}, nil // this machine resolves nothing now: the proxy's to resolve
	}
	// The lookup is the cache's, and runs to its own end; the guard
	// waits for it localDNSTimeout at most. A machine that reaches the web
	// only through its proxy may have no resolver that answers: asking it
	// for every request would cost each the resolver's timeout.
	type answer struct {
		ips []netip.Addr
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		ips, err := d.dns.lookup(context.WithoutCancel(ctx), h)
		ch <- answer{ips, err}
	}()
	timer := time.NewTimer(localDNSTimeout)
	defer timer.Stop()
	var a answer
	select {
	case a = <-ch:
	case <-timer.C:
		d.noLocalDNS.Store(time.Now().Add(localDNSPause).UnixNano())
		return netip.Addr{}, nil
	case <-ctx.Done():
		return netip.Addr{}, ctx.Err()
	}
	var dnsErr *net.DNSError
	if errors.As(a.err, &dnsErr) && dnsErr.IsTimeout {
		d.noLocalDNS.Store(time.Now().Add(localDNSPause).UnixNano())
	}
	ips := a.ips
	if a.err != nil || len(ips) == 0 {
		return netip.Addr{}, nil // the proxy's to resolve
	}
	for _, ip := range ips {
		if !forbidden(ip) {
			return ip.Unmap(), nil
		}
	}
	return netip.Addr{}, fmt.Errorf("%w: %s is %s", ErrRefusedAddress, h, ips[0].Unmap())
}

// dialTunnel connects to addr (host:port) through proxy p: the address
// guard's check first, then CONNECT (an http or https proxy) or SOCKS5's
// connect to the address it checked, by name only when the name does not
// resolve here.
func (d *dialer) dialTunnel(ctx context.Context, network, addr string, p *url.URL) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ip, err := d.checked(ctx, host)
	if err != nil {
		return nil, err
	}
	target := addr
	if ip.IsValid() {
		target = net.JoinHostPort(ip.String(), port)
	}
	var plain net.Dialer
	plain.Timeout = d.net.Timeout
	addrOfProxy := proxyAddr(p)
	if isSOCKS(p) {
		var auth *proxy.Auth
		if p.User != nil {
			pw, _ := p.User.Password()
			auth = &proxy.Auth{User: p.User.Username(), Password: pw}
		}
		sd, err := proxy.SOCKS5("tcp", addrOfProxy, auth, &plain)
		if err != nil {
			return nil, &proxyError{err}
		}
		c, err := sd.(proxy.ContextDialer).DialContext(ctx, network, target)
		if err != nil {
			return nil, &proxyError{err}
		}
		return c, nil
	}
	conn, err := plain.DialContext(ctx, "tcp", addrOfProxy)
	if err != nil {
		return nil, &proxyError{err}
	}
	if p.Scheme == "https" {
		tc := tls.Client(conn, &tls.Config{ServerName: p.Hostname(), MinVersion: tls.VersionTLS12})
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, err
		}
		conn = tc
	}
	if err := connect(ctx, conn, target, p); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// connect asks the proxy on conn for a tunnel to target, as
// net/http's transport does (RFC 9110 §9.3.6).
func connect(ctx context.Context, conn net.Conn, target string, p *url.URL) error {
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: target}, Host: target, Header: http.Header{}}
	if p.User != nil {
		pw, _ := p.User.Password()
		req.Header.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(p.User.Username()+":"+pw)))
	}
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
		defer conn.SetDeadline(time.Time{})
	}
	if err := req.Write(conn); err != nil {
		return err
	}
	// The proxy says nothing after its answer until the client speaks
	// (TLS's ClientHello first), so the reader holds nothing of the
	// tunnel's: net/http's transport reads a CONNECT's answer so too.
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: %s to %s", errProxyRefused, resp.Status, target)
	}
	return nil
}

// proxyError is a failure to reach or use a proxy: the proxy's, not the
// target host's (viaProxy).
type proxyError struct{ err error }

func (e *proxyError) Error() string { return "proxyconnect: " + e.err.Error() }
func (e *proxyError) Unwrap() error { return e.err }

// viaProxy reports whether err is a proxy's failure: weaver's tunnel's,
// or net/http's ("proxyconnect", an error of no type).
func viaProxy(err error) bool {
	var pe *proxyError
	return errors.As(err, &pe) || strings.Contains(err.Error(), "proxyconnect")
}

// errProxyRefused is a proxy's refusal of a tunnel.
var errProxyRefused = errors.New("the proxy refused the tunnel")
