package crawl_test

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/crawl"
)

// TestClassify_ServerClosedBeforeAnswer: a server that closes a fresh
// connection before answering (as one going away does with what it has
// just accepted) is a reset, whichever error net/http reports it with —
// "http: server closed idle connection" when its EOF came before the
// request was sent, which wraps nothing — not a failure of kind other
// (charged at once, never held by the outage rule).
func TestClassify_ServerClosedBeforeAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	closed := make(chan struct{})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close() // a FIN, no answer
			closed <- struct{}{}
		}
	}()
	// The dial returns once the server has closed the connection, so that
	// its EOF is there before the request is written.
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			<-closed
		}
		return c, err
	}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	idle := 0
	for range 20 {
		resp, err := client.Get("http://" + ln.Addr().String() + "/")
		if err == nil {
			resp.Body.Close()
			t.Fatal("an answer from a server that closes every connection")
		}
		if strings.Contains(err.Error(), "server closed idle connection") {
			idle++
		}
		if k := crawl.Classify(err); k != crawl.KindReset {
			t.Errorf("%v: kind %s, want %s", err, k, crawl.KindReset)
		}
	}
	t.Logf("%d of 20 errors were net/http's \"server closed idle connection\"", idle)
	if idle == 0 {
		t.Skip("net/http never reported the connection closed idle: the case is not exercised")
	}
}

// TestClassify_ClosedBeforeWrite: the other side of the race above. When
// net/http's reader sees the server's FIN first, it closes the connection,
// and the request's write fails with "use of closed network connection":
// the server closed before answering, a reset, not "other".
func TestClassify_ClosedBeforeWrite(t *testing.T) {
	err := &url.Error{Op: "Get", URL: "http://127.0.0.1:1/", Err: &net.OpError{Op: "write", Net: "tcp", Err: net.ErrClosed}}
	if k := crawl.Classify(err); k != crawl.KindReset {
		t.Errorf("%v: kind %s, want %s", err, k, crawl.KindReset)
	}
	// A read on a connection closed here (weaver's own cancel) is not it.
	read := &url.Error{Op: "Get", URL: "http://127.0.0.1:1/", Err: &net.OpError{Op: "read", Net: "tcp", Err: net.ErrClosed}}
	if k := crawl.Classify(read); k == crawl.KindReset {
		t.Errorf("%v: kind %s, want not %s", read, k, crawl.KindReset)
	}
}
