package warc

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net/http"
	"time"
)

// FromHTTP builds the Exchange of a request made with net/http and its
// answer, of which the caller read body (cut at its cap when truncated).
// net/http does not show the bytes on the wire, so they are written back
// from what it parsed: the request line, Host and the request's headers
// (those the transport adds itself, such as Accept-Encoding, are not
// known here: set them on the request to have them recorded); the status
// line and the response's headers, without Transfer-Encoding, since body
// is already decoded from it. A body the transport decompressed
// (resp.Uncompressed) is recorded decompressed, as its headers then say.
// remoteIP is the peer's address (from httptrace's GotConn), "" if unknown.
//
// The messages are written in HTTP/1.1 form whatever the protocol spoke
// (an HTTP/2 answer's status line is "HTTP/1.1 200 OK", not "HTTP/2.0",
// which readers of WARC files reject); the protocol is in Protocols
// ("h2", "http/1.1", "http/1.0"), followed over TLS by the TLS version
// ("tls/1.3"), with the cipher suite in CipherSuite: the WARC-Protocol
// and WARC-Cipher-Suite fields of both records.
func FromHTTP(req *http.Request, resp *http.Response, body []byte, truncated bool, remoteIP string, sent time.Time) Exchange {
	var rq bytes.Buffer
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	fmt.Fprintf(&rq, "%s %s HTTP/1.1\r\nHost: %s\r\n", req.Method, req.URL.RequestURI(), host)
	req.Header.Write(&rq)
	rq.WriteString("\r\n")

	var rs bytes.Buffer
	rs.Grow(len(body) + 512)
	line, protocols, cipher := protocols(resp)
	fmt.Fprintf(&rs, "%s %s\r\n", line, statusText(resp))
	h := resp.Header.Clone()
	h.Del("Transfer-Encoding")
	h.Write(&rs)
	rs.WriteString("\r\n")
	rs.Write(body)
	return Exchange{URL: req.URL.String(), Request: rq.Bytes(), Response: rs.Bytes(), RemoteIP: remoteIP, Date: sent, Truncated: truncated,
		Protocols: protocols, CipherSuite: cipher}
}

// protocols returns the HTTP version of resp's status line as recorded
// (HTTP/1.0 for an HTTP/1.0 answer, else HTTP/1.1), the WARC-Protocol
// values of the exchange and its TLS cipher suite ("" without TLS).
func protocols(resp *http.Response) (line string, protocols []string, cipher string) {
	line = "HTTP/1.1"
	switch {
	case resp.ProtoMajor == 1 && resp.ProtoMinor == 0:
		line = "HTTP/1.0"
		protocols = append(protocols, "http/1.0")
	case resp.ProtoMajor == 1:
		protocols = append(protocols, "http/1.1")
	case resp.ProtoMajor > 1: // ALPN's names: h2, h3
		protocols = append(protocols, fmt.Sprintf("h%d", resp.ProtoMajor))
	}
	if resp.TLS != nil {
		if v := tlsVersion(resp.TLS.Version); v != "" {
			protocols = append(protocols, v)
		}
		if resp.TLS.CipherSuite != 0 {
			cipher = tls.CipherSuiteName(resp.TLS.CipherSuite)
		}
	}
	return line, protocols, cipher
}

// tlsVersion names a TLS version as WARC-Protocol does ("tls/1.3"); ""
// for one it does not know.
func tlsVersion(v uint16) string {
	switch v {
	case tls.VersionTLS13:
		return "tls/1.3"
	case tls.VersionTLS12:
		return "tls/1.2"
	case tls.VersionTLS11:
		return "tls/1.1"
	case tls.VersionTLS10:
		return "tls/1.0"
	}
	return ""
}

// statusText is "200 OK" from resp.Status, or from the code when Status
// is empty.
func statusText(resp *http.Response) string {
	if resp.Status != "" {
		return resp.Status
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
}
