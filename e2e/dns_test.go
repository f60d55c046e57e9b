package e2e_test

import (
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

// dnsServer is a DNS server on 127.0.0.1 for the test, over UDP and TCP
// on one port: every name is 127.0.0.1 (A, time to live ttl; AAAA: no
// address), or the addresses setAddrs gave it, but those under .invalid,
// which do not exist. It counts the questions per name. It can stop
// answering (setMode): dropping every question, as a dead resolver does,
// or answering SERVFAIL; it counts the questions it did not answer. A
// name can have its own trouble (setRule): SERVFAIL for its first
// questions, no answer, or a truncated UDP answer (the whole one over
// TCP). It counts the questions that asked for 4,096-byte answers
// (EDNS0) and those that did not.
type dnsServer struct {
	conn     net.PacketConn
	tcp      net.Listener
	ttl      uint32
	mu       sync.Mutex
	asks     map[string]int
	tcpAsks  map[string]int
	addrs    map[string][][4]byte // names answered with other addresses than 127.0.0.1
	rules    map[string]dnsRule
	mode     atomic.Int32 // dnsAnswer, dnsDrop or dnsServFail
	unserved atomic.Int64 // questions dropped or answered SERVFAIL
	edns     atomic.Int64 // questions with an EDNS0 OPT of 4,096 bytes
	noEDNS   atomic.Int64 // questions without
}

// dnsRule is one name's trouble.
type dnsRule struct {
	servFail  int  // answer SERVFAIL to the first servFail questions (-1: all)
	drop      bool // never answer
	truncated bool // over UDP, an empty answer with TC set
	garbage   bool // answer bytes that are no DNS message
}

// The DNS server's modes.
const (
	dnsAnswer int32 = iota
	dnsDrop
	dnsServFail
	dnsNXDomain // no name exists: what a proxied crawl's names are to a machine that cannot resolve them
)

func (d *dnsServer) setMode(m int32) { d.mode.Store(m) }

// setAddr makes the server answer name with the IPv4 address a.
func (d *dnsServer) setAddr(name string, a [4]byte) { d.setAddrs(name, a) }

// setAddrs makes the server answer name with the IPv4 addresses as, in
// that order.
func (d *dnsServer) setAddrs(name string, as ...[4]byte) {
	d.mu.Lock()
	d.addrs[name] = as
	d.mu.Unlock()
}

func (d *dnsServer) setRule(name string, r dnsRule) {
	d.mu.Lock()
	d.rules[name] = r
	d.mu.Unlock()
}

func startDNS(t *testing.T, ttl uint32) *dnsServer {
	t.Helper()
	// UDP and TCP on one port: a port free for UDP may be taken for TCP.
	var pc net.PacketConn
	var ln net.Listener
	var err error
	for try := 0; ; try++ {
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if ln, err = net.Listen("tcp", pc.LocalAddr().String()); err == nil {
			break
		}
		pc.Close()
		if try == 20 {
			t.Fatalf("no port free for both UDP and TCP: %v", err)
		}
	}
	d := &dnsServer{conn: pc, tcp: ln, ttl: ttl, asks: map[string]int{}, tcpAsks: map[string]int{},
		addrs: map[string][][4]byte{}, rules: map[string]dnsRule{}}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if out := d.answer(buf[:n], false); out != nil {
				_, _ = pc.WriteTo(out, from)
			}
		}
	}()
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var n [2]byte
				if _, err := io.ReadFull(c, n[:]); err != nil {
					return
				}
				q := make([]byte, binary.BigEndian.Uint16(n[:]))
				if _, err := io.ReadFull(c, q); err != nil {
					return
				}
				if out := d.answer(q, true); out != nil {
					c.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(out))), out...))
				}
			}()
		}
	}()
	t.Cleanup(func() { pc.Close(); ln.Close(); wg.Wait() })
	return d
}

// answer returns the answer to question q, nil for none.
func (d *dnsServer) answer(q []byte, tcp bool) []byte {
	var msg dnsmessage.Message
	if msg.Unpack(q) != nil || len(msg.Questions) != 1 {
		return nil
	}
	edns := false
	for _, a := range msg.Additionals {
		if a.Header.Type == dnsmessage.TypeOPT && a.Header.Class == 4096 {
			edns = true
		}
	}
	if edns {
		d.edns.Add(1)
	} else {
		d.noEDNS.Add(1)
	}
	msg.Additionals = nil
	question := msg.Questions[0]
	name := strings.TrimSuffix(strings.ToLower(question.Name.String()), ".")
	d.mu.Lock()
	d.asks[name]++
	if tcp {
		d.tcpAsks[name]++
	}
	asked := d.asks[name]
	as, ok := d.addrs[name]
	rule := d.rules[name]
	d.mu.Unlock()
	if !ok {
		as = [][4]byte{{127, 0, 0, 1}}
	}
	mode := d.mode.Load()
	if mode == dnsDrop || mode == dnsServFail {
		d.unserved.Add(1)
	}
	if mode == dnsDrop || rule.drop {
		return nil
	}
	if rule.garbage {
		return []byte("\x00\x01garbage, not a DNS message")
	}
	msg.Response, msg.Authoritative = true, true
	switch {
	case mode == dnsServFail, rule.servFail < 0, asked <= rule.servFail:
		msg.RCode = dnsmessage.RCodeServerFailure
	case mode == dnsNXDomain, strings.HasSuffix(name, ".invalid"):
		msg.RCode = dnsmessage.RCodeNameError
	case rule.truncated && !tcp:
		msg.Truncated = true
	case question.Type == dnsmessage.TypeA:
		for _, a := range as {
			msg.Answers = append(msg.Answers, dnsmessage.Resource{
				Header: dnsmessage.ResourceHeader{Name: question.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: d.ttl},
				Body:   &dnsmessage.AResource{A: a},
			})
		}
	}
	out, err := msg.Pack()
	if err != nil {
		return nil
	}
	return out
}

func (d *dnsServer) addr() string { return d.conn.LocalAddr().String() }

func (d *dnsServer) count(name string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.asks[name]
}

func (d *dnsServer) tcpCount(name string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.tcpAsks[name]
}

// TestDNS_ResolverFailures: --dns-server as a resolver should be used
// (issue 53): every question asks for 4,096-byte answers (EDNS0); a
// truncated answer is asked again over TCP; SERVFAIL and a server that
// does not answer are the resolver's failures, retried, counted as
// dns_servfail and dns_timeout; NXDOMAIN is final, asked once.
func TestDNS_ResolverFailures(t *testing.T) {
	t.Parallel()
	page := func(title string) fakeweb.Script {
		return fakeweb.Script{Pages: map[string]fakeweb.Answer{"/": {Body: "<title>" + title + "</title>"}}}
	}
	w := fakeweb.New(fakeweb.Config{Hosts: 1, Scripts: map[string]fakeweb.Script{
		"big.test": page("Big"), "flaky.test": page("Flaky"), "servfail.test": page("x"), "silent.test": page("x"),
		"garbage.test": page("x"),
	}})
	srv := startWeb(t, w)
	dns := startDNS(t, 300)
	dns.setRule("big.test", dnsRule{truncated: true})
	dns.setRule("flaky.test", dnsRule{servFail: 2}) // its first A and AAAA questions
	dns.setRule("servfail.test", dnsRule{servFail: -1})
	dns.setRule("silent.test", dnsRule{drop: true})
	dns.setRule("garbage.test", dnsRule{garbage: true})
	dir := t.TempDir()
	db := filepath.Join(dir, "d.bolt")
	port := strings.Split(srv.Addr(), ":")[1]
	r := weaver(t, dir, "crawl", "--db", db, "--metrics", db+".metrics", "--dns-server", dns.addr(),
		"--connect-to", ":::"+port, "--allow-private-networks", "--delay", "0", "--quiet", "--retry-delay", "10ms",
		"--retries", "2", "--timeout", "2s",
		"http://big.test/", "http://flaky.test/", "http://servfail.test/", "http://silent.test/", "http://nowhere.invalid/",
		"http://garbage.test/")
	if r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	ns := nodes(t, db)
	for host, want := range map[string]string{"big.test": "Big", "flaky.test": "Flaky"} {
		if n := ns[host]; n.Status != graph.StatusCrawled || n.Title != want {
			t.Errorf("%s: %s %q (%s), want crawled", host, n.Status, n.Title, n.Error)
		}
	}
	if dns.tcpCount("big.test") == 0 {
		t.Error("big.test's truncated answer was not asked again over TCP")
	}
	for host, cause := range map[string]string{"servfail.test": "dns_servfail", "silent.test": "dns_timeout", "nowhere.invalid": "dns",
		"garbage.test": "dns_servfail"} {
		if n := ns[host]; n.Status != graph.StatusDNSError || !strings.HasPrefix(n.Error, cause+":") {
			t.Errorf("%s: %s, error %q, want dns_error with the cause %s", host, n.Status, n.Error, cause)
		}
	}
	if n := dns.count("servfail.test"); n < 2*3 {
		t.Errorf("servfail.test asked %d times: SERVFAIL is retried (3 attempts, A and AAAA)", n)
	}
	if n := dns.count("nowhere.invalid"); n != 2 {
		t.Errorf("nowhere.invalid asked %d times: NXDOMAIN is final (one A and one AAAA question)", n)
	}
	m := metrics(t, db+".metrics")
	if m.ErrorsByType["dns_servfail"] != 2 || m.ErrorsByType["dns_timeout"] != 1 || m.ErrorsByType["dns"] != 1 {
		t.Errorf("metrics.log errors_by_type %v, want dns_servfail twice (SERVFAIL, garbage), dns_timeout and dns once", m.ErrorsByType)
	}
	if dns.noEDNS.Load() != 0 || dns.edns.Load() == 0 {
		t.Errorf("%d questions without EDNS0 (4,096 bytes), %d with", dns.noEDNS.Load(), dns.edns.Load())
	}
}

// deadListener holds ip:port with a listener whose accept queue is full:
// a connection to it hangs (the kernel drops the SYN), as one to a dead
// address does.
func deadListener(t *testing.T, ip [4]byte, port int) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: ip, Port: port}); err != nil {
		t.Fatalf("bind %v:%d: %v", ip, port, err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort(netip.AddrFrom4(ip).String(), strconv.Itoa(port))
	for range 4 {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			break
		}
		t.Cleanup(func() { c.Close() })
	}
	c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
	if ne, ok := err.(net.Error); err == nil || !ok || !ne.Timeout() {
		if c != nil {
			c.Close()
		}
		t.Fatalf("a connection to the full listener at %s: %v, want a timeout", addr, err)
	}
}

// TestDNS_DeadAddresses: a name whose addresses are [dead, live] or
// [dead, dead, live] is crawled at the first attempt, within a timeout a
// sequential dial spends on its first dead address (RFC 8305: a new
// attempt 250 ms after the last).
func TestDNS_DeadAddresses(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 1, Scripts: map[string]fakeweb.Script{
		"two.test":   {Pages: map[string]fakeweb.Answer{"/": {Body: "<title>Two</title>"}}},
		"three.test": {Pages: map[string]fakeweb.Answer{"/": {Body: "<title>Three</title>"}}},
	}})
	srv := startWeb(t, w)
	_, portStr, _ := net.SplitHostPort(srv.Addr())
	port, _ := strconv.Atoi(portStr)
	deadListener(t, [4]byte{127, 0, 0, 2}, port)
	deadListener(t, [4]byte{127, 0, 0, 3}, port)
	dns := startDNS(t, 300)
	dns.setAddrs("two.test", [4]byte{127, 0, 0, 2}, [4]byte{127, 0, 0, 1})
	dns.setAddrs("three.test", [4]byte{127, 0, 0, 2}, [4]byte{127, 0, 0, 3}, [4]byte{127, 0, 0, 1})
	dir := t.TempDir()
	db := filepath.Join(dir, "e.bolt")
	r := weaver(t, dir, "crawl", "--db", db, "--metrics", db+".metrics", "--dns-server", dns.addr(), "--allow-private-networks",
		"--delay", "0", "--quiet", "--retries", "0", "--timeout", "2s", "--ignore-robots",
		"http://two.test:"+portStr+"/", "http://three.test:"+portStr+"/")
	if r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	ns := nodes(t, db)
	for host, title := range map[string]string{"two.test:" + portStr: "Two", "three.test:" + portStr: "Three"} {
		if n := ns[host]; n.Status != graph.StatusCrawled || n.Title != title {
			t.Errorf("%s: %s %q (%s), want crawled at the first attempt", host, n.Status, n.Title, n.Error)
		}
	}
}
