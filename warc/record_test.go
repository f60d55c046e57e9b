package warc

import (
	"bytes"
	"strings"
	"testing"
	"time"

	gowarc "github.com/nlnwa/gowarc/v3"
)

// viaGowarc is what the writer wrote for ex's two records before it wrote
// them itself: gowarc's record builders, given the fields one by one. It is
// the oracle of the tests below, kept as it was.
func viaGowarc(ex *Exchange, reqID, respID string, date time.Time, payload string) ([]byte, error) {
	addTLSFields := func(b gowarc.WarcRecordBuilder) {
		for _, p := range ex.Protocols {
			if p != "" {
				b.AddWarcHeader(fieldProtocol, oneLine(p))
			}
		}
		if ex.CipherSuite != "" {
			b.AddWarcHeader(fieldCipherSuite, oneLine(ex.CipherSuite))
		}
	}
	hdrEnd := bytes.Index(ex.Response, []byte("\r\n\r\n"))
	req := newBuilder(gowarc.Request)
	req.AddWarcHeader(gowarc.WarcRecordID, reqID)
	req.AddWarcHeaderTime(gowarc.WarcDate, date)
	req.AddWarcHeader(gowarc.WarcTargetURI, ex.URL)
	req.AddWarcHeader(gowarc.WarcConcurrentTo, respID)
	req.AddWarcHeader(gowarc.ContentType, "application/http;msgtype=request")
	if ex.RemoteIP != "" {
		req.AddWarcHeader(gowarc.WarcIPAddress, ex.RemoteIP)
	}
	addTLSFields(req)
	req.Write(ex.Request)
	var resp gowarc.WarcRecordBuilder
	if ex.Revisit != nil {
		resp = newBuilder(gowarc.Revisit)
		if ex.Revisit.NotModified {
			resp.AddWarcHeader(gowarc.WarcProfile, gowarc.ProfileServerNotModifiedV1_1)
		} else {
			resp.AddWarcHeader(gowarc.WarcProfile, gowarc.ProfileIdenticalPayloadDigestV1_1)
		}
		resp.AddWarcHeader(gowarc.WarcRefersToTargetURI, ex.Revisit.URL)
		resp.AddWarcHeaderTime(gowarc.WarcRefersToDate, ex.Revisit.Date)
		if ex.Revisit.RecordID != "" {
			resp.AddWarcHeader(gowarc.WarcRefersTo, ex.Revisit.RecordID)
		}
		if !ex.Revisit.NotModified {
			resp.AddWarcHeader(gowarc.WarcPayloadDigest, payload)
		}
		resp.Write(ex.Response[:hdrEnd+4])
	} else {
		resp = newBuilder(gowarc.Response)
		resp.Write(ex.Response)
	}
	resp.AddWarcHeader(gowarc.WarcRecordID, respID)
	resp.AddWarcHeaderTime(gowarc.WarcDate, date)
	resp.AddWarcHeader(gowarc.WarcTargetURI, ex.URL)
	resp.AddWarcHeader(gowarc.WarcConcurrentTo, reqID)
	resp.AddWarcHeader(gowarc.ContentType, "application/http;msgtype=response")
	if ex.RemoteIP != "" {
		resp.AddWarcHeader(gowarc.WarcIPAddress, ex.RemoteIP)
	}
	addTLSFields(resp)
	if ex.Truncated {
		resp.AddWarcHeader(gowarc.WarcTruncated, "length")
	}
	var out bytes.Buffer
	for _, b := range []gowarc.WarcRecordBuilder{req, resp} {
		if err := marshalTo(&out, b); err != nil {
			return nil, err
		}
	}
	return out.Bytes(), nil
}

// written is what the writer writes for ex's two records, uncompressed,
// and whether it wrote them itself (exchangeRecords' direct) rather than
// through gowarc's builder.
func written(ex *Exchange, reqID, respID string, date time.Time, payload string) ([]byte, bool, error) {
	req, resp, direct := exchangeRecords(ex, reqID, respID, date, payload)
	var out, scratch bytes.Buffer
	for _, r := range []*record{&req, &resp} {
		if err := r.write(&out, direct, &scratch); err != nil {
			return nil, direct, err
		}
	}
	return out.Bytes(), direct, nil
}

func payloadOf(resp []byte) string {
	i := bytes.Index(resp, []byte("\r\n\r\n"))
	return digest(resp[i+4:])
}

func TestRecords_AsGowarc(t *testing.T) {
	const (
		reqID  = "<urn:uuid:a58efb38-7d95-4670-9104-6830dd833899>"
		respID = "<urn:uuid:a1cb8c57-53f1-4ed3-a772-82bf73e8f7aa>"
	)
	page := "<html><body>" + strings.Repeat(`<a href="http://b.test/">b</a> `, 2000) + "</body></html>"
	get := "GET / HTTP/1.1\r\nHost: a.test\r\nUser-Agent: weaver\r\n\r\n"
	ok := "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"
	paris := time.FixedZone("CET", 3600)
	cases := map[string]Exchange{
		"plain": {URL: "http://a.test/", Request: []byte(get), Response: []byte(ok + page), RemoteIP: "127.0.0.1",
			Date: time.Date(2026, 11, 26, 6, 10, 21, 443998041, time.UTC), Protocols: []string{"http/1.1"}},
		"no ip, whole second, another zone": {URL: "http://a.test/x?q=%C3%A9", Request: []byte(get), Response: []byte(ok + "hi"),
			Date: time.Date(2026, 1, 2, 3, 4, 5, 0, paris)},
		"tls": {URL: "https://a.test/", Request: []byte(get), Response: []byte(ok + page), RemoteIP: "::1",
			Date: time.Unix(1, 5), Protocols: []string{"h2", "", "tls/1.3\r\nX: y"}, CipherSuite: "TLS_AES_128_GCM_SHA256"},
		"truncated":   {URL: "http://a.test/", Request: []byte(get), Response: []byte(ok + page[:100]), Truncated: true, Date: time.Unix(2, 0)},
		"empty body":  {URL: "http://a.test/", Request: []byte(get), Response: []byte("HTTP/1.1 204 No Content\r\n\r\n"), Date: time.Unix(3, 0)},
		"a post body": {URL: "http://a.test/f", Request: []byte("POST /f HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\n\r\na=b"), Response: []byte(ok + "x"), Date: time.Unix(4, 0)},
		"revisit": {URL: "http://a.test/", Request: []byte(get), Response: []byte(ok + page), RemoteIP: "10.0.0.1", Date: time.Unix(5, 0),
			Revisit: &Original{URL: "http://a.test/", Date: time.Date(2025, 5, 6, 7, 8, 9, 10, time.UTC), RecordID: "<urn:uuid:0d9b3c6e-2b5c-4d0e-9a43-3a3b1c2d4e5f>"}},
		"revisit without record id": {URL: "http://a.test/", Request: []byte(get), Response: []byte(ok + page), Date: time.Unix(6, 0),
			Revisit: &Original{URL: "http://a.test/old", Date: time.Unix(7, 0)}},
		"not modified": {URL: "http://a.test/", Request: []byte(get), Response: []byte("HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n"), Date: time.Unix(8, 0),
			Protocols: []string{"http/1.1", "tls/1.2"}, CipherSuite: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
			Revisit: &Original{URL: "http://a.test/", Date: time.Unix(9, 0), NotModified: true}},
		"a body with blank lines": {URL: "http://a.test/", Request: []byte(get), Response: []byte(ok + "\r\n\r\n\n\nend\r\n"), Date: time.Unix(10, 0)},
	}
	for name, ex := range cases {
		t.Run(name, func(t *testing.T) {
			payload := payloadOf(ex.Response)
			want, err := viaGowarc(&ex, reqID, respID, ex.Date, payload)
			if err != nil {
				t.Fatal(err)
			}
			got, direct, err := written(&ex, reqID, respID, ex.Date, payload)
			if err != nil {
				t.Fatal(err)
			}
			if !direct {
				t.Fatal("exchangeRecords left a well-formed exchange to gowarc")
			}
			if !bytes.Equal(got, want) {
				t.Errorf("records differ from gowarc's:\n--- got\n%.2000s\n--- want\n%.2000s", got, want)
			}
		})
	}
}

// An HTTP header gowarc's builder reads differently is left to it, and
// what it writes is what it wrote before.
func TestRecords_LeftToGowarc(t *testing.T) {
	for name, ex := range map[string]Exchange{
		"bare LF in the response header": {URL: "http://a.test/", Request: []byte("GET / HTTP/1.1\r\n\r\n"), Response: []byte("HTTP/1.1 200 OK\nX: y\r\n\r\nbody")},
		"request without its blank line": {URL: "http://a.test/", Request: []byte("GET / HTTP/1.1\r\n"), Response: []byte("HTTP/1.1 200 OK\r\n\r\nbody")},
		"request starting with a blank":  {URL: "http://a.test/", Request: []byte("\r\n\r\nGET"), Response: []byte("HTTP/1.1 200 OK\r\n\r\nbody")},
	} {
		t.Run(name, func(t *testing.T) {
			date := time.Unix(1, 0)
			got, direct, err := written(&ex, "<urn:uuid:1>", "<urn:uuid:2>", date, "sha1:X")
			if err != nil {
				t.Fatal(err)
			}
			if direct {
				t.Error("exchangeRecords wrote it")
			}
			want, err := viaGowarc(&ex, "<urn:uuid:1>", "<urn:uuid:2>", date, "sha1:X")
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("records differ from what gowarc's builder wrote before:\n--- got\n%q\n--- want\n%q", got, want)
			}
			// And the writer still records it, through gowarc.
			w, _, err := Open(Options{Dir: t.TempDir(), NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if _, err := w.WriteExchange(t.Context(), ex); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// FuzzRecords_AsGowarc: whatever the exchange, the writer writes what
// gowarc's builder wrote, itself or through the builder.
func FuzzRecords_AsGowarc(f *testing.F) {
	f.Add([]byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n"), []byte("HTTP/1.1 200 OK\r\nA: b\r\n\r\n<a href=x>"), false)
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"), []byte("HTTP/1.1 304 OK\r\n\r\n"), true)
	f.Add([]byte("G\r\n\r\n\r\n"), []byte("HTTP/1.1 200\r\nX:\r\r\n\r\n\r"), false)
	f.Fuzz(func(t *testing.T, req, resp []byte, revisit bool) {
		if !bytes.HasPrefix(resp, []byte("HTTP/")) || !bytes.Contains(resp, []byte("\r\n\r\n")) {
			return // build refuses these before either writer sees them
		}
		ex := Exchange{URL: "http://a.test/", Request: req, Response: resp, RemoteIP: "127.0.0.1", Date: time.Unix(1, 2)}
		if revisit {
			ex.Revisit = &Original{URL: "http://a.test/", Date: time.Unix(0, 0)}
		}
		payload := payloadOf(resp)
		got, _, err := written(&ex, "<urn:uuid:1>", "<urn:uuid:2>", ex.Date, payload)
		want, werr := viaGowarc(&ex, "<urn:uuid:1>", "<urn:uuid:2>", ex.Date, payload)
		switch {
		case (err == nil) != (werr == nil):
			t.Errorf("the writer's error %v, gowarc's builder's before %v", err, werr)
		case err == nil && !bytes.Equal(got, want):
			t.Errorf("records differ from gowarc's:\n--- got\n%q\n--- want\n%q", got, want)
		}
	})
}
