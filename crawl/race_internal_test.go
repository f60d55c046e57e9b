package crawl

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// deadAddr returns the address of a listener on 127.0.0.2 whose accept
// queue is full: a connection to it is never answered (the kernel drops
// the SYN), as a dead address's is.
func deadAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 2}}); err != nil {
		t.Fatalf("bind 127.0.0.2: %v", err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.2", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	// Fill the queue, never accepting.
	for range 4 {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			break // full: this one hung
		}
		t.Cleanup(func() { c.Close() })
	}
	c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
	if ne, ok := err.(net.Error); err == nil || !ok || !ne.Timeout() {
		if c != nil {
			c.Close()
		}
		t.Fatalf("a connection to the full listener: %v, want a timeout: no dead address to test with", err)
	}
	return addr
}

// TestRace_DeadAddresses: with two dead addresses before a live one, the
// connection is made (RFC 8305: a new attempt after 250 ms), within a
// deadline a sequential dial spends on the first dead address alone.
func TestRace_DeadAddresses(t *testing.T) {
	dead := deadAddr(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var nd net.Dialer
	conn, err := race(ctx, &nd, "tcp", []string{dead, dead, ln.Addr().String()}, attemptDelay)
	if err != nil {
		t.Fatalf("dead, dead, live: %v", err)
	}
	if got := conn.RemoteAddr().String(); got != ln.Addr().String() {
		t.Errorf("connected to %s, want the live %s", got, ln.Addr())
	}
	conn.Close()
	// Without a live address, the first address's failure is reported.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel2()
	if _, err := race(ctx2, &nd, "tcp", []string{dead, "127.0.0.1:1"}, attemptDelay); err == nil {
		t.Error("dead and closed: connected")
	}
}

// TestInterleave: addresses alternate by family, the first's first.
func TestInterleave(t *testing.T) {
	in := []netip.Addr{netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("2001:db8::2"),
		netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2"), netip.MustParseAddr("192.0.2.3")}
	want := []string{"2001:db8::1", "192.0.2.1", "2001:db8::2", "192.0.2.2", "192.0.2.3"}
	var got []string
	for _, ip := range interleave(in) {
		got = append(got, ip.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("interleave: %v, want %v", got, want)
	}
}
