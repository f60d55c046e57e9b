package warc

import (
	"bytes"
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
	proto := resp.Proto
	if proto == "" {
		proto = "HTTP/1.1"
	}
	fmt.Fprintf(&rs, "%s %s\r\n", proto, statusText(resp))
	h := resp.Header.Clone()
	h.Del("Transfer-Encoding")
	h.Write(&rs)
	rs.WriteString("\r\n")
	rs.Write(body)
	return Exchange{URL: req.URL.String(), Request: rq.Bytes(), Response: rs.Bytes(), RemoteIP: remoteIP, Date: sent, Truncated: truncated}
}

// statusText is "200 OK" from resp.Status, or from the code when Status
// is empty.
func statusText(resp *http.Response) string {
	if resp.Status != "" {
		return resp.Status
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
}
