package fakeweb_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

func mustStartTLS(tb testing.TB, w *fakeweb.Web) *fakeweb.Server {
	tb.Helper()
	srv, err := w.StartTLS("127.0.0.1:0")
	if err != nil {
		tb.Fatalf("StartTLS: %v", err)
	}
	tb.Cleanup(func() {
		if err := srv.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return srv
}

// TestStartTLS_HTTPSAndRedirects: the seed over https answers with HTTP/2
// and a certificate from the server's CA; the same port over plain HTTP
// redirects to https on the same host and path; both are in the request
// log with their protocol.
func TestStartTLS_HTTPSAndRedirects(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 20, Seed: 3})
	srv := mustStartTLS(t, w)
	c := client(t, srv)
	seedHost := w.Hosts()[0]
	status, _, body := get(t, c, "https://"+seedHost+"/")
	if status != http.StatusOK || parse(t, body).title != w.Title(seedHost) {
		t.Fatalf("GET https seed: status %d, title %q", status, parse(t, body).title)
	}
	// Plain HTTP: one redirect, not followed, to the https URL.
	noFollow := srv.Client()
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	t.Cleanup(noFollow.CloseIdleConnections)
	resp, err := noFollow.Get("http://" + strings.ToUpper(w.Hosts()[1]) + ":80/about?x=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got, want := resp.Header.Get("Location"), "https://"+w.Hosts()[1]+"/about?x=1"; resp.StatusCode != http.StatusMovedPermanently || got != want {
		t.Errorf("plain GET: %d Location %q, want 301 %q", resp.StatusCode, got, want)
	}
	reqs := w.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests: got %d, want 2: %+v", len(reqs), reqs)
	}
	if r := reqs[0]; !r.TLS || r.Proto != "HTTP/2.0" || r.Host != seedHost {
		t.Errorf("https request logged as %+v, want TLS HTTP/2.0 to %s", r, seedHost)
	}
	if r := reqs[1]; r.TLS || r.Proto != "HTTP/1.1" || r.Status != http.StatusMovedPermanently {
		t.Errorf("plain request logged as %+v, want a plain HTTP/1.1 301", r)
	}
}

// TestStartTLS_CertFaults: each fault fails the way a client checking
// certificates sees it; a stalled handshake holds until the client gives
// up, and Close ends it.
func TestStartTLS_CertFaults(t *testing.T) {
	faults := map[string]fakeweb.CertFault{
		"expired.test": fakeweb.CertExpired, "wrong.test": fakeweb.CertWrongName,
		"self.test": fakeweb.CertSelfSigned, "unknown.test": fakeweb.CertUnknownCA,
		"stall.test": fakeweb.HandshakeStall,
	}
	w := fakeweb.New(fakeweb.Config{Hosts: 10, CertFaults: faults})
	srv := mustStartTLS(t, w)
	c := client(t, srv)
	c.Transport.(*http.Transport).TLSHandshakeTimeout = 300 * time.Millisecond
	check := func(host string, ok func(error) bool) {
		t.Helper()
		_, err := c.Get("https://" + host + "/")
		if err == nil || !ok(err) {
			t.Errorf("%s: got %v", host, err)
		}
	}
	var invalid x509.CertificateInvalidError
	var hostErr x509.HostnameError
	var unknown x509.UnknownAuthorityError
	check("expired.test", func(err error) bool { return errors.As(err, &invalid) && invalid.Reason == x509.Expired })
	check("wrong.test", func(err error) bool { return errors.As(err, &hostErr) })
	check("self.test", func(err error) bool {
		return errors.As(err, &unknown) && unknown.Cert != nil && unknown.Cert.Subject.CommonName == "self.test" && unknown.Cert.Issuer.CommonName == "self.test"
	})
	check("unknown.test", func(err error) bool {
		return errors.As(err, &unknown) && unknown.Cert != nil && unknown.Cert.Issuer.CommonName == "fakeweb unknown CA"
	})
	start := time.Now()
	check("stall.test", func(err error) bool { return strings.Contains(err.Error(), "TLS handshake timeout") })
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("stalled handshake took %v to time out", d)
	}
	// A stall that the client does not end is ended by Close.
	conn, err := srv.DialContext(context.Background(), "tcp", "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tc := tls.Client(conn, &tls.Config{ServerName: "stall.test", InsecureSkipVerify: true})
	done := make(chan error, 1)
	go func() { done <- tc.Handshake() }()
	select {
	case err := <-done:
		t.Fatalf("stalled handshake ended by itself: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close left a stalled handshake hanging")
	}
	// The ground truth counts a faulty host of the web as failed.
	w2 := fakeweb.New(fakeweb.Config{Hosts: 30, Seed: 1})
	victim := w2.Hosts()[0]
	w3 := fakeweb.New(fakeweb.Config{Hosts: 30, Seed: 1, CertFaults: map[string]fakeweb.CertFault{victim: fakeweb.CertExpired}})
	if n2, n3 := len(w2.ExpectedEdges(10, fakeweb.DefaultExcluded)), len(w3.ExpectedEdges(10, fakeweb.DefaultExcluded)); n2 == 0 || n3 != 0 {
		t.Errorf("expected edges with the seed's certificate expired: %d (without: %d), want 0", n3, n2)
	}
}
