package crawl

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// DNS cache lifetimes: an answer is kept for its records' time to live
// (the system resolver does not tell it: dnsDefaultTTL), within
// [dnsMinTTL, dnsMaxTTL]; a name that does not exist is kept dnsFailTTL,
// so that a dead name asked by robots.txt, the page and the browser costs
// one lookup; a timeout or SERVFAIL is the resolver's, retried as other
// transient failures are, and not kept (dnsRetryTTL). A failure to get an answer (no
// answer, SERVFAIL: not NXDOMAIN) is the resolver's, not the name's: it is
// kept only until the resolver answers a question asked after it, so that
// a crawl resumed after a resolver outage does not find its names failed.
const (
	dnsDefaultTTL = 5 * time.Minute
	dnsMinTTL     = 5 * time.Second
	dnsMaxTTL     = time.Hour
	dnsFailTTL    = 30 * time.Second
	dnsRetryTTL   = 0       // a timeout or SERVFAIL: lookups under way share it, a retry asks again
	dnsMaxEntries = 100_000 // past this, expired entries are swept, then the oldest half dropped
)

// resolver resolves host names for the dialer, each name once per its time
// to live. Every transport of a process with the same DNS server shares
// one (resolverFor): the crawl's fetches, its robots.txt requests and the
// browser's requests (--render) ask the same cache.
type resolver struct {
	server string // host:port of the DNS server; "" means the system's resolver
	now    func() time.Time

	mu       sync.Mutex           // guards entries and answered
	entries  map[string]*dnsEntry // lower-case name → its answer, or the lookup under way
	answered time.Time            // when the latest lookup the server answered (addresses or NXDOMAIN) was asked
}

// dnsEntry is one name's answer; done is closed once addrs, err and
// expires are set.
type dnsEntry struct {
	done    chan struct{}
	addrs   []netip.Addr
	err     error
	expires time.Time
	asked   time.Time // when the lookup began
}

// stale reports whether a finished entry may not be used at now: expired,
// or a failure to get an answer with an answer to a later question since.
// It runs under r.mu.
func (r *resolver) stale(e *dnsEntry, now time.Time) bool {
	if now.After(e.expires) {
		return true
	}
	var dnsErr *net.DNSError
	return e.err != nil && !(errors.As(e.err, &dnsErr) && dnsErr.IsNotFound) && e.asked.Before(r.answered)
}

type freshKey struct{}

// withFreshDNS marks ctx's lookups as asking the server, not the cache
// (the answer is still cached): a probe of the network must test the
// resolver too.
func withFreshDNS(ctx context.Context) context.Context {
	return context.WithValue(ctx, freshKey{}, true)
}

var (
	resolversMu sync.Mutex               // guards resolvers
	resolvers   = map[string]*resolver{} // by server ("" the system's)
)

// resolverFor returns the process's resolver for server.
func resolverFor(server string) *resolver {
	resolversMu.Lock()
	defer resolversMu.Unlock()
	r := resolvers[server]
	if r == nil {
		r = &resolver{server: server, now: time.Now, entries: map[string]*dnsEntry{}}
		resolvers[server] = r
	}
	return r
}

// lookup returns host's addresses, from the cache while they are fresh.
// Concurrent lookups of one name wait for the same answer. A failure is a
// *net.DNSError (IsNotFound for a name that does not exist).
func (r *resolver) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	r.mu.Lock()
	e := r.entries[host]
	if e != nil {
		select {
		case <-e.done:
			if fresh, _ := ctx.Value(freshKey{}).(bool); fresh || r.stale(e, r.now()) {
				e = nil
			}
		default: // under way
		}
	}
	owner := e == nil
	if owner {
		if len(r.entries) >= dnsMaxEntries {
			r.sweep()
		}
		e = &dnsEntry{done: make(chan struct{}), asked: r.now()}
		r.entries[host] = e
	}
	r.mu.Unlock()
	if owner {
		// The lookup is the cache's, not this caller's: a caller that
		// gives up must not leave a canceled answer for the others.
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		addrs, ttl, err := r.resolve(lctx, host)
		cancel()
		var dnsErr *net.DNSError
		switch {
		case err == nil:
		case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
			ttl = dnsFailTTL
		default:
			ttl = dnsRetryTTL // the resolver's failure: a retry asks again
		}
		r.mu.Lock()
		if (err == nil || errors.As(err, &dnsErr) && dnsErr.IsNotFound) && !e.asked.Before(r.answered) {
			r.answered = e.asked
		}
		e.addrs, e.err, e.expires = addrs, err, r.now().Add(ttl)
		r.mu.Unlock()
		close(e.done)
	}
	select {
	case <-e.done:
		return e.addrs, e.err
	case <-ctx.Done():
		return nil, &net.DNSError{Err: ctx.Err().Error(), Name: host, IsTimeout: errors.Is(ctx.Err(), context.DeadlineExceeded)}
	}
}

// sweep drops expired entries and, if that is not enough, every answered
// one. It runs under r.mu.
func (r *resolver) sweep() {
	now := r.now()
	for k, e := range r.entries {
		select {
		case <-e.done:
			if r.stale(e, now) || len(r.entries) >= dnsMaxEntries/2 {
				delete(r.entries, k)
			}
		default:
		}
	}
}

// resolve asks the DNS server, or the system's resolver, for host's
// addresses and how long they may be kept.
func (r *resolver) resolve(ctx context.Context, host string) ([]netip.Addr, time.Duration, error) {
	if r.server == "" {
		addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, 0, err
		}
		return addrs, dnsDefaultTTL, nil
	}
	var (
		addrs []netip.Addr
		ttl   = dnsMaxTTL
		errs  []*net.DNSError
	)
	for _, qt := range []dnsmessage.Type{dnsmessage.TypeA, dnsmessage.TypeAAAA} {
		a, t, err := r.query(ctx, host, qt)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		addrs = append(addrs, a...)
		if len(a) > 0 {
			ttl = min(ttl, t)
		}
	}
	if len(addrs) > 0 {
		return addrs, max(ttl, dnsMinTTL), nil
	}
	if len(errs) > 0 {
		for _, e := range errs {
			if !e.IsNotFound {
				return nil, 0, e // a failure to ask says more than one answer's absence
			}
		}
		return nil, 0, errs[0]
	}
	return nil, 0, &net.DNSError{Err: "no such host", Name: host, Server: r.server, IsNotFound: true}
}

// query sends one question over UDP and reads the addresses of its answer
// (following the CNAME chain the server puts in the answer section).
func (r *resolver) query(ctx context.Context, host string, qt dnsmessage.Type) ([]netip.Addr, time.Duration, *net.DNSError) {
	fail := func(msg string, timeout bool) *net.DNSError {
		return &net.DNSError{Err: msg, Name: host, Server: r.server, IsTimeout: timeout, IsTemporary: true}
	}
	name, err := dnsmessage.NewName(host + ".")
	if err != nil {
		return nil, 0, &net.DNSError{Err: "no such host", Name: host, Server: r.server, IsNotFound: true}
	}
	id := uint16(rand.Uint32())
	msg := dnsmessage.Message{
		Header:    dnsmessage.Header{ID: id, RecursionDesired: true},
		Questions: []dnsmessage.Question{{Name: name, Type: qt, Class: dnsmessage.ClassINET}},
	}
	// EDNS0 (RFC 6891): answers of up to 4,096 bytes over UDP, as the
	// resolvers of today send them.
	var opt dnsmessage.ResourceHeader
	if err := opt.SetEDNS0(ednsSize, dnsmessage.RCodeSuccess, false); err != nil {
		return nil, 0, fail(err.Error(), false)
	}
	msg.Additionals = []dnsmessage.Resource{{Header: opt, Body: &dnsmessage.OPTResource{}}}
	q, err := msg.Pack()
	if err != nil {
		return nil, 0, fail(err.Error(), false)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "udp", r.server)
	if err != nil {
		return nil, 0, fail(err.Error(), false)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	buf := make([]byte, ednsSize)
	var resp dnsmessage.Message
	// Up to three sends, two seconds each, within the context's deadline.
	for try := 0; ; try++ {
		if _, err := conn.Write(q); err != nil {
			return nil, 0, fail(err.Error(), false)
		}
		_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		n, err := conn.Read(buf)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && try < 2 && ctx.Err() == nil {
			continue
		}
		if err != nil {
			return nil, 0, fail(err.Error(), errors.As(err, &ne) && ne.Timeout())
		}
		if resp.Unpack(buf[:n]) != nil || resp.ID != id || !resp.Response {
			if try >= 2 {
				return nil, 0, fail("the server's answers do not parse or are not the question's", false)
			}
			continue // not our answer: ask again (counts as a try)
		}
		break
	}
	if resp.Truncated {
		// Too long for UDP: the whole answer over TCP (RFC 7766).
		if err := r.queryTCP(ctx, q, id, &resp); err != nil {
			return nil, 0, fail(err.Error(), errors.Is(err, os.ErrDeadlineExceeded))
		}
	}
	switch resp.RCode {
	case dnsmessage.RCodeSuccess:
	case dnsmessage.RCodeNameError:
		return nil, 0, &net.DNSError{Err: "no such host", Name: host, Server: r.server, IsNotFound: true}
	default:
		return nil, 0, fail("server answered "+resp.RCode.String(), false)
	}
	want := name
	var addrs []netip.Addr
	ttl := dnsMaxTTL
	for _, a := range resp.Answers {
		if !strings.EqualFold(a.Header.Name.String(), want.String()) {
			continue
		}
		switch b := a.Body.(type) {
		case *dnsmessage.CNAMEResource:
			want = b.CNAME
		case *dnsmessage.AResource:
			addrs = append(addrs, netip.AddrFrom4(b.A))
		case *dnsmessage.AAAAResource:
			addrs = append(addrs, netip.AddrFrom16(b.AAAA))
		default:
			continue
		}
		ttl = min(ttl, time.Duration(a.Header.TTL)*time.Second)
	}
	return addrs, ttl, nil
}

// ednsSize is the UDP answer size weaver asks for (EDNS0) and reads.
const ednsSize = 4096

// queryTCP asks question q (of id) again over TCP, each message after its
// two-byte length, and reads the answer into resp.
func (r *resolver) queryTCP(ctx context.Context, q []byte, id uint16, resp *dnsmessage.Message) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", r.server)
	if err != nil {
		return err
	}
	defer conn.Close()
	dl, ok := ctx.Deadline()
	if !ok || time.Until(dl) > 4*time.Second {
		dl = time.Now().Add(4 * time.Second)
	}
	_ = conn.SetDeadline(dl)
	out := binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(q)), uint16(len(q)))
	if _, err := conn.Write(append(out, q...)); err != nil {
		return err
	}
	var n [2]byte
	if _, err := io.ReadFull(conn, n[:]); err != nil {
		return err
	}
	buf := make([]byte, binary.BigEndian.Uint16(n[:]))
	if _, err := io.ReadFull(conn, buf); err != nil {
		return err
	}
	if err := resp.Unpack(buf); err != nil {
		return err
	}
	if resp.ID != id || !resp.Response {
		return errors.New("the TCP answer is not the question's")
	}
	return nil
}

// CheckDNSServer returns the DNS server address s as host:port (port 53
// when s has none), or an error saying what is wrong with it.
func CheckDNSServer(s string) (string, error) {
	if _, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return net.JoinHostPort(strings.Trim(s, "[]"), "53"), nil
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" || !isPort(port) {
		return "", fmt.Errorf("%q is not a DNS server address: want IP or IP:PORT, e.g. 10.0.0.53 or 127.0.0.1:5353", s)
	}
	if _, err := netip.ParseAddr(host); err != nil {
		return "", fmt.Errorf("%q is not a DNS server address: the server must be an IP address, not a name", s)
	}
	return s, nil
}
