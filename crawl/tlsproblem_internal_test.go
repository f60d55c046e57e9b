package crawl

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"testing"
	"time"
)

// TestTLSProblem_LongChain: a chain of 100 certificates, each signed by
// the next and none by a root weaver trusts, is one problem
// (tls_unknown_ca or tls_certificate), found in bounded work.
func TestTLSProblem_LongChain(t *testing.T) {
	now := time.Now()
	var chain []*x509.Certificate
	var parent *x509.Certificate
	var parentKey *ecdsa.PrivateKey
	// Built from the top: certificate 99 signs itself, each below is
	// signed by the one above, the leaf (0) names the host.
	certs := make([]*x509.Certificate, 100)
	for i := 99; i >= 0; i-- {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(int64(i + 1)), Subject: pkix.Name{CommonName: "level " + string(rune('a'+i%26))},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
			BasicConstraintsValid: true, IsCA: i > 0, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		}
		if i == 0 {
			tmpl.DNSNames = []string{"chain.test"}
		}
		signer, issuer := key, tmpl
		if parent != nil {
			signer, issuer = parentKey, parent
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, issuer, &key.PublicKey, signer)
		if err != nil {
			t.Fatal(err)
		}
		crt, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		certs[i], parent, parentKey = crt, crt, key
	}
	chain = append(chain, certs...)
	var c Crawler
	got := c.tlsProblem(&tls.ConnectionState{PeerCertificates: chain, Version: tls.VersionTLS13}, "chain.test")
	if got != string(KindTLSUnknownCA) && got != string(KindTLSCertificate) {
		t.Errorf("a chain of 100 to an unknown root: %q, want tls_unknown_ca or tls_certificate", got)
	}
}
