package crawl

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
)

// The kinds of TLS failure. A certificate failure (IsCertificate) is the
// host's verdict on itself: asking again gives the same answer, so it is
// not retried, and it says nothing of the network (it is never an outage:
// the host answered, with a certificate weaver does not accept).
const (
	// KindTLS is a handshake that failed without a certificate at fault:
	// a TLS alert, no protocol version or cipher in common, or a server
	// that does not speak TLS at all (an HTTP answer to https).
	KindTLS ErrorKind = "tls"
	// KindTLSExpired is a certificate past its NotAfter (or before its
	// NotBefore): often a clock, more often a renewal forgotten.
	KindTLSExpired ErrorKind = "tls_expired"
	// KindTLSWrongName is a certificate valid for other names than the
	// host asked for.
	KindTLSWrongName ErrorKind = "tls_wrong_name"
	// KindTLSSelfSigned is a certificate that signed itself and is not
	// among the trusted roots.
	KindTLSSelfSigned ErrorKind = "tls_self_signed"
	// KindTLSUnknownCA is a certificate issued by a CA weaver does not
	// trust: a private CA (give it with --ca-file) or a TLS proxy's.
	KindTLSUnknownCA ErrorKind = "tls_unknown_ca"
	// KindTLSCertificate is any other certificate refused: a bad
	// signature, a wrong key usage, a name constraint.
	KindTLSCertificate ErrorKind = "tls_certificate"
	// KindTLSTimeout is a handshake that did not finish in time: the TCP
	// connection was made, the server never completed TLS. It is a
	// timeout (retried, status timeout), told apart so that it can be
	// counted.
	KindTLSTimeout ErrorKind = "tls_timeout"
)

// IsTLS reports whether k is a TLS failure of any kind.
func (k ErrorKind) IsTLS() bool { return k == KindTLS || strings.HasPrefix(string(k), "tls_") }

// IsCertificate reports whether k is a certificate refused: the host's
// own fault, final for this crawl of it, and no sign of an outage.
func (k ErrorKind) IsCertificate() bool {
	switch k {
	case KindTLSExpired, KindTLSWrongName, KindTLSSelfSigned, KindTLSUnknownCA, KindTLSCertificate:
		return true
	}
	return false
}

// Classify names the kind of a failed request's error, as weaver records
// it (the node's status and last_error, metrics.log's errors_by_type).
// TLS failures get a kind per cause (KindTLSExpired, KindTLSWrongName,
// ...; see ErrorKind.IsCertificate); an error it cannot place is
// KindOther.
func Classify(err error) ErrorKind { return classify(err) }

// classifyTLS returns the TLS kind of err, or "" if err is no TLS failure.
func classifyTLS(err error) ErrorKind {
	var invalid x509.CertificateInvalidError
	var hostErr x509.HostnameError
	var unknown x509.UnknownAuthorityError
	var certErr *tls.CertificateVerificationError
	var recordErr tls.RecordHeaderError
	var alert tls.AlertError
	switch {
	case errors.As(err, &invalid):
		if invalid.Reason == x509.Expired {
			return KindTLSExpired
		}
		return KindTLSCertificate
	case errors.As(err, &hostErr):
		return KindTLSWrongName
	case errors.As(err, &unknown):
		if c := unknown.Cert; c != nil && bytes.Equal(c.RawIssuer, c.RawSubject) && c.CheckSignatureFrom(c) == nil {
			return KindTLSSelfSigned
		}
		return KindTLSUnknownCA
	case errors.As(err, &certErr):
		return KindTLSCertificate
	case strings.Contains(err.Error(), "TLS handshake timeout"):
		return KindTLSTimeout
	case errors.As(err, &recordErr), errors.As(err, &alert),
		strings.Contains(err.Error(), "tls: "), strings.Contains(err.Error(), "HTTP response to HTTPS client"):
		return KindTLS
	}
	return ""
}

// tlsAdvice is what to do about a TLS failure of kind k, for the line of
// a crawl that reached nothing.
func tlsAdvice(k ErrorKind) string {
	switch k {
	case KindTLSUnknownCA, KindTLSSelfSigned:
		return "a certificate from a CA weaver does not trust: give the CA with --ca-file (PEM)"
	case KindTLSExpired:
		return "an expired certificate: check the host's certificate, and this machine's clock"
	case KindTLSWrongName:
		return "a certificate for other names: check --connect-to and the host name"
	}
	return ""
}

// Advice returns what a user can do about failures of kind k ("" for
// none better than checking the network).
func Advice(k ErrorKind) string { return tlsAdvice(k) }

// LoadCAFile reads a PEM file of one or more CA certificates and returns
// the system's roots with them added. It returns an error naming the file
// when it cannot be read, holds no certificate, or holds a certificate
// that does not parse.
func LoadCAFile(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	n := 0
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: certificate %d: %v", path, n+1, err)
		}
		pool.AddCert(cert)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("%s holds no PEM certificate (-----BEGIN CERTIFICATE-----)", path)
	}
	return pool, nil
}

// insecureTLS makes conf accept what --insecure accepts: any certificate
// (checked after the answer, tlsProblem), TLS 1.0 and later, and the
// legacy cipher suites (RSA key exchange, 3DES, RC4...) besides the
// others.
func insecureTLS(conf *tls.Config) {
	conf.InsecureSkipVerify = true
	conf.MinVersion = tls.VersionTLS10
	conf.CipherSuites = nil
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		conf.CipherSuites = append(conf.CipherSuites, s.ID)
	}
}

// kindTLSLegacy is the problem of a connection whose certificate is good
// but whose TLS is below 1.2 or whose cipher suite is a legacy one.
const kindTLSLegacy ErrorKind = "tls_legacy"

// tlsProblem is what a verifying client would refuse of a connection
// --insecure accepted, to host: the certificate's fault, as a refusal's
// cause names it; else tls_legacy; else "".
func (c *Crawler) tlsProblem(cs *tls.ConnectionState, host string) string {
	if len(cs.PeerCertificates) == 0 {
		return string(KindTLSCertificate)
	}
	inter := x509.NewCertPool()
	for _, crt := range cs.PeerCertificates[1:] {
		inter.AddCert(crt)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{DNSName: host, Roots: c.roots, Intermediates: inter})
	if err != nil {
		if k := classifyTLS(err); k.IsCertificate() {
			return string(k)
		}
		return string(KindTLSCertificate)
	}
	if cs.Version < tls.VersionTLS12 {
		return string(kindTLSLegacy)
	}
	for _, s := range tls.InsecureCipherSuites() {
		if s.ID == cs.CipherSuite {
			return string(kindTLSLegacy)
		}
	}
	return ""
}
