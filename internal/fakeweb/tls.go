package fakeweb

import (
	"bufio"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// CertFault is a TLS misbehaviour of a host served by StartTLS, keyed by
// the name the client asks for (SNI) in Config.CertFaults: the name need
// not be a host of the web.
type CertFault uint8

// The certificate faults.
const (
	CertOK CertFault = iota
	// CertExpired serves a certificate from the web's CA that expired
	// yesterday.
	CertExpired
	// CertWrongName serves a certificate from the web's CA for
	// wrong.<name> only.
	CertWrongName
	// CertSelfSigned serves a certificate that signed itself.
	CertSelfSigned
	// CertUnknownCA serves a certificate from a CA the web does not
	// publish (Server.CAPEM does not hold it).
	CertUnknownCA
	// HandshakeStall accepts the connection and the ClientHello, then
	// never answers it: the handshake stalls until the client gives up.
	HandshakeStall
	// LegacyTLS speaks only TLS 1.0 with RSA key exchange
	// (TLS_RSA_WITH_AES_128_CBC_SHA), a good certificate from the web's
	// CA on an RSA key: an old server's.
	LegacyTLS
)

// String names the fault.
func (f CertFault) String() string {
	switch f {
	case CertOK:
		return "ok"
	case CertExpired:
		return "expired"
	case CertWrongName:
		return "wrong-name"
	case CertSelfSigned:
		return "self-signed"
	case CertUnknownCA:
		return "unknown-ca"
	case HandshakeStall:
		return "handshake-stall"
	case LegacyTLS:
		return "legacy-tls"
	}
	return fmt.Sprintf("CertFault(%d)", uint8(f))
}

// certAuthority is a CA made for one server: its certificate and key.
type certAuthority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

var serial struct {
	sync.Mutex
	n int64
}

func nextSerial() *big.Int {
	serial.Lock()
	defer serial.Unlock()
	serial.n++
	return big.NewInt(time.Now().UnixNano() + serial.n)
}

// newCA makes a CA valid from an hour ago for a week.
func newCA(name string) (*certAuthority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          nextSerial(),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"fakeweb"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &certAuthority{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// leaf makes a certificate for names, valid from notBefore to notAfter,
// signed by ca (nil: by itself).
func leaf(ca *certAuthority, names []string, notBefore, notAfter time.Time) (*tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return leafOf(ca, names, notBefore, notAfter, key, &key.PublicKey)
}

// leafOf is leaf with the key given: RSA key exchange needs an RSA key.
func leafOf(ca *certAuthority, names []string, notBefore, notAfter time.Time, key crypto.Signer, pub any) (*tls.Certificate, error) {
	tmpl := &x509.Certificate{
		SerialNumber: nextSerial(),
		Subject:      pkix.Name{CommonName: names[0]},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	parent, signer := tmpl, crypto.Signer(key)
	if _, ok := key.(*rsa.PrivateKey); ok {
		tmpl.KeyUsage |= x509.KeyUsageKeyEncipherment // RSA key exchange encrypts to it
	}
	if ca != nil {
		parent, signer = ca.cert, ca.key
	} else {
		tmpl.BasicConstraintsValid, tmpl.IsCA = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		return nil, err
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// certs makes and keeps the certificates of a TLS server, one per name
// and fault.
type certs struct {
	ca, other *certAuthority
	faults    map[string]CertFault
	stop      <-chan struct{} // closed when the server closes: stalled handshakes end

	mu    sync.Mutex // guards cache
	cache map[string]*tls.Certificate
}

// get answers a ClientHello: the certificate for its server name, made
// the first time it is asked for.
func (c *certs) get(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	name := strings.ToLower(strings.TrimSuffix(hello.ServerName, "."))
	if name == "" {
		name = "localhost" // an IP literal sends no SNI
		if h, _, err := net.SplitHostPort(hello.Conn.LocalAddr().String()); err == nil {
			name = h
		}
	}
	f := c.faults[name]
	if f == HandshakeStall {
		select {
		case <-hello.Context().Done():
		case <-c.stop:
		}
		return nil, errors.New("fakeweb: stalled handshake ended")
	}
	key := name + "\x00" + f.String()
	c.mu.Lock()
	defer c.mu.Unlock()
	if crt := c.cache[key]; crt != nil {
		return crt, nil
	}
	now := time.Now()
	from, to := now.Add(-time.Hour), now.Add(7*24*time.Hour)
	var crt *tls.Certificate
	var err error
	switch f {
	case CertExpired:
		crt, err = leaf(c.ca, []string{name}, now.Add(-30*24*time.Hour), now.Add(-24*time.Hour))
	case CertWrongName:
		crt, err = leaf(c.ca, []string{"wrong." + name}, from, to)
	case CertSelfSigned:
		crt, err = leaf(nil, []string{name}, from, to)
	case CertUnknownCA:
		crt, err = leaf(c.other, []string{name}, from, to)
	case LegacyTLS:
		var key *rsa.PrivateKey
		if key, err = rsa.GenerateKey(rand.Reader, 2048); err == nil {
			crt, err = leafOf(c.ca, []string{name}, from, to, key, &key.PublicKey)
		}
	default:
		crt, err = leaf(c.ca, []string{name}, from, to)
	}
	if err != nil {
		return nil, err
	}
	c.cache[key] = crt
	return crt, nil
}

// StartTLS serves the web on addr (such as "127.0.0.1:0") over HTTPS, with
// a CA made for this server (Server.CAPEM) and a certificate made for each
// name a client asks for; HTTP/2 is offered (ALPN h2, then http/1.1). The
// same port speaks plain HTTP too, as a host's port 80 would: every plain
// request is redirected (301) to the same host and path over https, and
// recorded with its status (Request.TLS false). Config.CertFaults gives
// names broken certificates or a stalled handshake. Links in the web's
// pages stay http://, so a crawl meets both: a seed given as https, every
// other host reached through its redirect. It returns an error if it cannot
// listen.
func (w *Web) StartTLS(addr string) (*Server, error) {
	return startTLS(w, http.HandlerFunc(w.redirectToHTTPS), w.cfg.CertFaults, addr)
}

// StartTLS serves the living web on addr over HTTPS as Web.StartTLS does
// (the same port answers plain HTTP with a redirect to https), without
// certificate faults.
func (l *Living) StartTLS(addr string) (*Server, error) {
	return startTLS(l, http.HandlerFunc(redirectHTTPS), nil, addr)
}

// startTLS serves h on addr over HTTPS, plain on the same port, with
// the certificates faults give.
func startTLS(h, plain http.Handler, faults map[string]CertFault, addr string) (*Server, error) {
	ca, err := newCA("fakeweb test CA")
	if err != nil {
		return nil, fmt.Errorf("fakeweb: start: %w", err)
	}
	other, err := newCA("fakeweb unknown CA")
	if err != nil {
		return nil, fmt.Errorf("fakeweb: start: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fakeweb: start: %w", err)
	}
	stop := make(chan struct{})
	cs := &certs{ca: ca, other: other, faults: faults, stop: stop, cache: map[string]*tls.Certificate{}}
	tlsLn := newChanListener(ln.Addr())
	plainLn := newChanListener(ln.Addr())
	s := &Server{
		ln:   ln,
		srv:  httpServer(h),
		done: make(chan struct{}),
		ca:   ca.pem,
		stop: stop,
	}
	s.srv.TLSConfig = &tls.Config{GetCertificate: cs.get, NextProtos: []string{"h2", "http/1.1"},
		GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			if faults[strings.ToLower(strings.TrimSuffix(hello.ServerName, "."))] != LegacyTLS {
				return nil, nil
			}
			return &tls.Config{GetCertificate: cs.get, NextProtos: []string{"http/1.1"},
				MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS10,
				CipherSuites: []uint16{tls.TLS_RSA_WITH_AES_128_CBC_SHA}}, nil
		}}
	s.plain = httpServer(plain)
	var wg sync.WaitGroup
	wg.Add(3)
	errs := make([]error, 3)
	go func() {
		defer wg.Done()
		defer tlsLn.Close()
		defer plainLn.Close()
		errs[0] = split(ln, tlsLn, plainLn, stop)
	}()
	go func() {
		defer wg.Done()
		errs[1] = s.srv.ServeTLS(tlsLn, "", "")
	}()
	go func() {
		defer wg.Done()
		errs[2] = s.plain.Serve(plainLn)
	}()
	go func() {
		wg.Wait()
		for _, err := range errs {
			if err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
				s.serveErr = errors.Join(s.serveErr, err)
			}
		}
		close(s.done)
	}()
	return s, nil
}

// redirectToHTTPS answers a plain-HTTP request of StartTLS's port, and
// records it.
func (w *Web) redirectToHTTPS(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	w.reqs = append(w.reqs, Request{Host: normalizeHost(r.Host), Path: r.URL.RequestURI(), At: time.Now(), Status: http.StatusMovedPermanently, Proto: r.Proto})
	w.mu.Unlock()
	redirectHTTPS(rw, r)
}

// redirectHTTPS redirects a plain-HTTP request to the same host and path
// over https.
func redirectHTTPS(rw http.ResponseWriter, r *http.Request) {
	rw.Header().Set("Server", "fakeweb")
	http.Redirect(rw, r, "https://"+normalizeHost(r.Host)+r.URL.RequestURI(), http.StatusMovedPermanently)
}

// split hands each connection of ln to tlsLn when its first byte opens a
// TLS handshake, else to plainLn, until ln fails or stop closes.
func split(ln net.Listener, tlsLn, plainLn *chanListener, stop <-chan struct{}) error {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			br := bufio.NewReader(conn)
			b, err := br.Peek(1)
			_ = conn.SetReadDeadline(time.Time{})
			if err != nil {
				conn.Close()
				return
			}
			to := plainLn
			if b[0] == 0x16 { // a TLS handshake record
				to = tlsLn
			}
			select {
			case to.ch <- &peekedConn{Conn: conn, r: br}:
			case <-stop:
				conn.Close()
			}
		}()
	}
}

// peekedConn is a connection whose first bytes were read into r.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// chanListener is a listener fed by split.
type chanListener struct {
	addr net.Addr
	ch   chan net.Conn
	once sync.Once
	done chan struct{}
}

func newChanListener(addr net.Addr) *chanListener {
	return &chanListener{addr: addr, ch: make(chan net.Conn), done: make(chan struct{})}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }

// CAPEM returns the PEM certificate of the CA that signs the hosts'
// certificates of a server from StartTLS (nil for Start's).
func (s *Server) CAPEM() []byte { return s.ca }

// WriteCA writes CAPEM to ca.pem in dir and returns its path, for a
// client's --ca-file.
func (s *Server) WriteCA(dir string) (string, error) {
	if s.ca == nil {
		return "", errors.New("fakeweb: write CA: the server does not speak TLS")
	}
	path := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(path, s.ca, 0o644); err != nil {
		return "", fmt.Errorf("fakeweb: write CA: %w", err)
	}
	return path, nil
}

// tlsClientConfig trusts the server's CA (nil for a plain server).
func (s *Server) tlsClientConfig() *tls.Config {
	if s.ca == nil {
		return nil
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.ca)
	return &tls.Config{RootCAs: pool}
}
