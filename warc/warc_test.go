package warc_test

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/internal/tooltest"
	"github.com/weaver-crawler/weaver/warc"
)

// exchange is a small GET of url answered with body.
func exchange(url, body string) warc.Exchange {
	return warc.Exchange{
		URL:      url,
		Request:  []byte("GET / HTTP/1.1\r\nHost: example.com\r\nUser-Agent: weaver\r\n\r\n"),
		Response: []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s", len(body), body)),
		RemoteIP: "192.0.2.1",
		Date:     time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC),
	}
}

func openWriter(t testing.TB, dir string, opts warc.Options) *warc.Writer {
	t.Helper()
	opts.Dir = dir
	w, rec, err := warc.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec) != 0 {
		t.Fatalf("recovered %v in a fresh directory", rec)
	}
	return w
}

// readAll returns the records of path as "type uri" lines, and the error
// that stopped the read (nil at a clean end).
func readAll(t testing.TB, path string) ([]string, error) {
	t.Helper()
	r, err := warc.NewReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []string
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec.Type+" "+rec.TargetURI)
	}
}

func TestWriter_RoundTrip(t *testing.T) {
	dir := t.TempDir()
	w := openWriter(t, dir, warc.Options{Prefix: "test", Settings: map[string]string{"max_depth": "5"}, Robots: "obey"})
	ctx := context.Background()
	first, err := w.WriteExchange(ctx, exchange("http://example.com/", "<a href=http://b.test/>b</a>"))
	if err != nil {
		t.Fatal(err)
	}
	ex := exchange("http://example.com/", "<a href=http://b.test/>b</a>")
	ex.Revisit = &warc.Original{URL: "http://example.com/", Date: ex.Date.Add(-time.Hour), RecordID: first.ResponseID}
	second, err := w.WriteExchange(ctx, ex)
	if err != nil {
		t.Fatal(err)
	}
	if first.PayloadDigest != second.PayloadDigest || !strings.HasPrefix(first.PayloadDigest, "sha1:") {
		t.Errorf("payload digests %q, %q", first.PayloadDigest, second.PayloadDigest)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if s := w.Stats(); s.Files != 1 || s.Records != 5 {
		t.Errorf("stats %+v", s)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "test-*-00000.warc.gz"))
	if len(names) != 1 {
		t.Fatalf("files: %v", names)
	}
	got, err := readAll(t, names[0])
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"warcinfo ", "request http://example.com/", "response http://example.com/", "request http://example.com/", "revisit http://example.com/"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("records:\ngot  %q\nwant %q", got, want)
	}
}

// TestWriter_Sample writes a sample file to $WARC_SAMPLE_DIR, for trying
// other readers by hand.
func TestWriter_Sample(t *testing.T) {
	dir := os.Getenv("WARC_SAMPLE_DIR")
	if dir == "" {
		t.Skip("WARC_SAMPLE_DIR not set")
	}
	w := openWriter(t, dir, warc.Options{Prefix: "sample"})
	for i := range 3 {
		ex := exchange(fmt.Sprintf("http://h%d.test/", i), strings.Repeat("<p>x</p>", i*100))
		ex.Truncated = i == 2
		if i == 1 {
			ex.Revisit = &warc.Original{URL: "http://h0.test/", Date: ex.Date}
		}
		if _, err := w.WriteExchange(context.Background(), ex); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestWriter_Rotates(t *testing.T) {
	dir := t.TempDir()
	w := openWriter(t, dir, warc.Options{Prefix: "rot", MaxSize: 4 << 10})
	for i := range 20 {
		// Incompressible enough that a few exchanges fill 4 KiB.
		body := fmt.Sprintf("%x", []byte(strings.Repeat(fmt.Sprint(i*7919), 60)))
		if _, err := w.WriteExchange(context.Background(), exchange(fmt.Sprintf("http://h%d.test/", i), body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "rot-*.warc.gz"))
	if s := w.Stats(); len(names) < 2 || int64(len(names)) != s.Files {
		t.Fatalf("files %v, stats %+v", names, s)
	}
	total := 0
	for i, n := range names {
		if !strings.HasSuffix(n, fmt.Sprintf("-%05d.warc.gz", i)) {
			t.Errorf("file %d is %s", i, n)
		}
		got, err := readAll(t, n)
		if err != nil || len(got) == 0 || got[0] != "warcinfo " {
			t.Errorf("%s: %q, %v", n, got, err)
		}
		total += len(got) - 1
		if fi, _ := os.Stat(n); fi.Size() > 4<<10 {
			t.Errorf("%s: %d bytes, more than MaxSize", n, fi.Size())
		}
	}
	if total != 40 {
		t.Errorf("%d records besides warcinfo, want 40", total)
	}
}

// TestOpen_CutsTornRecord leaves a file open with half a record at its
// end, as a SIGKILL mid-write does: Open cuts it, says so, and the next
// file gets the next serial.
func TestOpen_CutsTornRecord(t *testing.T) {
	dir := t.TempDir()
	w := openWriter(t, dir, warc.Options{Prefix: "k"})
	var last warc.Written
	for i := range 3 {
		var err error
		if last, err = w.WriteExchange(context.Background(), exchange(fmt.Sprintf("http://h%d.test/", i), "hello")); err != nil {
			t.Fatal(err)
		}
	}
	// No Close: the process "dies". Tear the last exchange's response.
	open := filepath.Join(dir, last.File+".open")
	fi, err := os.Stat(open)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(open, fi.Size()-10); err != nil {
		t.Fatal(err)
	}
	w2, rec, err := warc.Open(warc.Options{Dir: dir, Prefix: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec) != 1 || rec[0].Records != 6 || rec[0].Cut == 0 || rec[0].Removed {
		t.Fatalf("recovered %+v", rec)
	}
	got, err := readAll(t, filepath.Join(dir, last.File))
	if err != nil || len(got) != 6 {
		t.Errorf("after the cut: %q, %v", got, err)
	}
	if _, err := w2.WriteExchange(context.Background(), exchange("http://next.test/", "x")); err != nil {
		t.Fatal(err)
	}
	w2.Close()
	if names, _ := filepath.Glob(filepath.Join(dir, "k-*-00001.warc.gz")); len(names) != 1 {
		t.Errorf("the next file is not serial 1: %v", names)
	}
}

// TestReader_Damage: a truncated file and a flipped byte each give the
// whole records before the damage, then a DamageError at its offset.
func TestReader_Damage(t *testing.T) {
	dir := t.TempDir()
	w := openWriter(t, dir, warc.Options{Prefix: "d"})
	var offs []int64
	for i := range 4 {
		got, err := w.WriteExchange(context.Background(), exchange(fmt.Sprintf("http://h%d.test/", i), strings.Repeat("<p>hello</p>", 50)))
		if err != nil {
			t.Fatal(err)
		}
		offs = append(offs, got.Offset)
	}
	w.Close()
	names, _ := filepath.Glob(filepath.Join(dir, "d-*.warc.gz"))
	data, _ := os.ReadFile(names[0])
	for name, damaged := range map[string][]byte{
		"truncated": data[:offs[2]+40],
		"flipped":   flip(data, offs[2]+30),
	} {
		path := filepath.Join(dir, name+".warc.gz")
		os.WriteFile(path, damaged, 0o644)
		got, err := readAll(t, path)
		var de *warc.DamageError
		if !errors.As(err, &de) || de.Offset != offs[2] || len(got) != 5 {
			t.Errorf("%s: %d records, %v; want 5 and damage at %d", name, len(got), err, offs[2])
		}
	}
}

func flip(data []byte, at int64) []byte {
	out := append([]byte(nil), data...)
	out[at] ^= 0xff
	return out
}

// TestReader_DamageUncompressed: a .warc (no gzip) cut inside a record's
// block gives the records before it and the damage at that record.
func TestReader_DamageUncompressed(t *testing.T) {
	dir := t.TempDir()
	w := openWriter(t, dir, warc.Options{Prefix: "u"})
	for i := range 3 {
		if _, err := w.WriteExchange(context.Background(), exchange(fmt.Sprintf("http://h%d.test/", i), strings.Repeat("<p>hello</p>", 50))); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	names, _ := filepath.Glob(filepath.Join(dir, "u-*.warc.gz"))
	f, _ := os.Open(names[0])
	zr, err := gzip.NewReader(f) // multistream: the records, concatenated
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "plain.warc")
	os.WriteFile(path, plain, 0o644)
	r, _ := warc.NewReader(path, 0)
	var offs []int64
	for {
		rec, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("whole .warc: %v", err)
			}
			break
		}
		offs = append(offs, rec.Offset)
	}
	r.Close()
	if len(offs) != 7 {
		t.Fatalf("%d records in the whole .warc, want 7", len(offs))
	}
	os.WriteFile(path, plain[:offs[6]+300], 0o644)
	got, err := readAll(t, path)
	var de *warc.DamageError
	if !errors.As(err, &de) || de.Offset != offs[6] || len(got) != 6 {
		t.Errorf("cut .warc: %d records, %v; want 6 and damage at %d", len(got), err, offs[6])
	}
}

// TestFromHTTP records a real net/http exchange: the answer's headers and
// (decoded) body, the request's line and headers.
func TestFromHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html")
		rw.Header().Set("Server", "test")
		// No Content-Length, flushed early: sent chunked.
		rw.Write([]byte("<title>chunked</title>"))
		rw.(http.Flusher).Flush()
		rw.Write([]byte("<a href=http://b.test/>b</a>"))
	}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/page?q=1", nil)
	req.Header.Set("User-Agent", "weaver-test")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	ex := warc.FromHTTP(req, resp, body, false, "127.0.0.1", time.Now())
	for _, want := range []string{"GET /page?q=1 HTTP/1.1\r\nHost: 127.0.0.1:", "User-Agent: weaver-test\r\n"} {
		if !strings.Contains(string(ex.Request), want) {
			t.Errorf("request lacks %q:\n%s", want, ex.Request)
		}
	}
	if !strings.HasPrefix(string(ex.Response), "HTTP/1.1 200 OK\r\n") || strings.Contains(string(ex.Response), "Transfer-Encoding") ||
		!strings.HasSuffix(string(ex.Response), "\r\n\r\n<title>chunked</title><a href=http://b.test/>b</a>") {
		t.Errorf("response:\n%q", ex.Response)
	}
	w := openWriter(t, t.TempDir(), warc.Options{})
	if _, err := w.WriteExchange(context.Background(), ex); err != nil {
		t.Fatal(err)
	}
	w.Close()
}

// TestFromHTTP_Protocols records exchanges over plain HTTP/1.1, HTTP/1.1
// over TLS and HTTP/2 over TLS: the messages are HTTP/1.1 whatever was
// spoken, and both records name the protocols and the cipher suite in
// WARC-Protocol and WARC-Cipher-Suite, spelled as WARC 1.1 spells them.
func TestFromHTTP_Protocols(t *testing.T) {
	for _, tc := range []struct {
		name      string
		tls, h2   bool
		protocols []string
	}{
		{"http", false, false, []string{"http/1.1"}},
		{"https", true, false, []string{"http/1.1", "tls/1.3"}},
		{"h2", true, true, []string{"h2", "tls/1.3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				rw.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(rw, "<p>%s</p>", r.Proto)
			}))
			srv.EnableHTTP2 = tc.h2
			if tc.tls {
				srv.StartTLS()
			} else {
				srv.Start()
			}
			defer srv.Close()
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if tc.h2 != (resp.ProtoMajor == 2) {
				t.Fatalf("the exchange was %s", resp.Proto)
			}
			ex := warc.FromHTTP(req, resp, body, false, "127.0.0.1", time.Now())
			if !strings.HasPrefix(string(ex.Response), "HTTP/1.1 200 OK\r\n") {
				t.Errorf("status line of a %s answer: %q", resp.Proto, strings.SplitN(string(ex.Response), "\r\n", 2)[0])
			}
			if fmt.Sprint(ex.Protocols) != fmt.Sprint(tc.protocols) {
				t.Errorf("protocols %q, want %q", ex.Protocols, tc.protocols)
			}
			if tc.tls != strings.HasPrefix(ex.CipherSuite, "TLS_") {
				t.Errorf("cipher suite %q", ex.CipherSuite)
			}
			dir := t.TempDir()
			w := openWriter(t, dir, warc.Options{})
			if _, err := w.WriteExchange(context.Background(), ex); err != nil {
				t.Fatal(err)
			}
			w.Close()
			text := rawText(t, dir)
			fields := ""
			for _, p := range tc.protocols {
				fields += "WARC-Protocol: " + p + "\r\n"
			}
			if tc.tls {
				fields += "WARC-Cipher-Suite: " + ex.CipherSuite + "\r\n"
			}
			for _, typ := range []string{"request", "response"} {
				rec := recordText(text, typ)
				if !strings.Contains(rec, "WARC-Target-URI: "+srv.URL+"/\r\n") || !strings.Contains(rec, fields) {
					t.Errorf("%s record lacks %q:\n%s", typ, fields, rec)
				}
				if !tc.tls && strings.Contains(rec, "Cipher") {
					t.Errorf("%s record of plain HTTP names a cipher:\n%s", typ, rec)
				}
			}
			// weaver's reader finds the fields and the status.
			r, err := warc.NewReader(mustGlob(t, dir), 0)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for {
				rec, err := r.Next()
				if err != nil {
					t.Fatal(err)
				}
				if rec.Type == "response" {
					if code, ok := rec.HTTPStatus(); !ok || code != 200 || rec.Header("warc-protocol") != tc.protocols[0] {
						t.Errorf("read back: status %d %v, WARC-Protocol %q", code, ok, rec.Header("warc-protocol"))
					}
					break
				}
			}
		})
	}
}

// TestWriter_ProtocolFields: fields are written as given, one line each,
// on revisits too; an exchange without them has none.
func TestWriter_ProtocolFields(t *testing.T) {
	dir := t.TempDir()
	w := openWriter(t, dir, warc.Options{})
	ex := exchange("https://example.com/", "x")
	ex.Protocols = []string{"h2", "tls/1.3\r\nWARC-Type: forged"}
	ex.CipherSuite = "TLS_CHACHA20_POLY1305_SHA256"
	ex.Revisit = &warc.Original{URL: ex.URL, Date: ex.Date}
	if _, err := w.WriteExchange(context.Background(), ex); err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteExchange(context.Background(), exchange("http://example.com/", "y")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	text := rawText(t, dir)
	rec := recordText(text, "revisit")
	if !strings.Contains(rec, "WARC-Protocol: h2\r\nWARC-Protocol: tls/1.3  WARC-Type: forged\r\nWARC-Cipher-Suite: TLS_CHACHA20_POLY1305_SHA256\r\n") {
		t.Errorf("revisit record:\n%s", rec)
	}
	if n := strings.Count(text, "WARC-Protocol:"); n != 4 {
		t.Errorf("%d WARC-Protocol fields, want 4 (2 on each record of the first exchange)", n)
	}
}

// rawText is the decompressed text of the one WARC file in dir.
func rawText(t *testing.T, dir string) string {
	t.Helper()
	return string(tooltest.Gunzip(t, mustGlob(t, dir)))
}

// recordText is the header of the first record of type typ in text.
func recordText(text, typ string) string {
	i := strings.Index(text, "WARC-Type: "+typ+"\r\n")
	if i < 0 {
		return ""
	}
	start := strings.LastIndex(text[:i], "WARC/1.1\r\n")
	end := strings.Index(text[i:], "\r\n\r\n")
	return text[start : i+end]
}

func mustGlob(t *testing.T, dir string) string {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if len(names) != 1 {
		t.Fatalf("files in %s: %v", dir, names)
	}
	return names[0]
}
