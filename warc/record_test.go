package warc

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// viaGowarc is what gowarc's record builder writes for ex's two records.
func viaGowarc(t testing.TB, ex *Exchange, reqID, respID string, date time.Time, payload string) []byte {
	t.Helper()
	builders, err := gowarcRecords(ex, reqID, respID, date, payload)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, b := range builders {
		if err := marshalTo(&out, b); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes()
}

// direct is what exchangeRecords writes; ok as exchangeRecords says.
func direct(t testing.TB, ex *Exchange, reqID, respID string, date time.Time, payload string) ([]byte, bool) {
	t.Helper()
	req, resp, ok := exchangeRecords(ex, reqID, respID, date, payload)
	if !ok {
		return nil, false
	}
	var out, scratch bytes.Buffer
	for _, r := range []*record{&req, &resp} {
		if err := r.writeTo(&out, &scratch); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes(), true
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
			want := viaGowarc(t, &ex, reqID, respID, ex.Date, payload)
			got, ok := direct(t, &ex, reqID, respID, ex.Date, payload)
			if !ok {
				t.Fatal("exchangeRecords left a well-formed exchange to gowarc")
			}
			if !bytes.Equal(got, want) {
				t.Errorf("records differ from gowarc's:\n--- got\n%.2000s\n--- want\n%.2000s", got, want)
			}
		})
	}
}

// An HTTP header gowarc's builder reads differently is left to it.
func TestRecords_LeftToGowarc(t *testing.T) {
	for name, ex := range map[string]Exchange{
		"bare LF in the response header": {URL: "http://a.test/", Request: []byte("GET / HTTP/1.1\r\n\r\n"), Response: []byte("HTTP/1.1 200 OK\nX: y\r\n\r\nbody")},
		"request without its blank line": {URL: "http://a.test/", Request: []byte("GET / HTTP/1.1\r\n"), Response: []byte("HTTP/1.1 200 OK\r\n\r\nbody")},
		"request starting with a blank":  {URL: "http://a.test/", Request: []byte("\r\n\r\nGET"), Response: []byte("HTTP/1.1 200 OK\r\n\r\nbody")},
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, ok := exchangeRecords(&ex, "<urn:uuid:1>", "<urn:uuid:2>", time.Unix(1, 0), "sha1:X"); ok {
				t.Error("exchangeRecords wrote it")
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

// FuzzRecords_AsGowarc: whatever the exchange, exchangeRecords writes what
// gowarc's builder writes, or leaves it to the builder.
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
		got, ok := direct(t, &ex, "<urn:uuid:1>", "<urn:uuid:2>", ex.Date, payload)
		if !ok {
			return
		}
		if want := viaGowarc(t, &ex, "<urn:uuid:1>", "<urn:uuid:2>", ex.Date, payload); !bytes.Equal(got, want) {
			t.Errorf("records differ from gowarc's:\n--- got\n%q\n--- want\n%q", got, want)
		}
	})
}
