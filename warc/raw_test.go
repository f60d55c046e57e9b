package warc_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/warc"
)

// readEach reads path with Next, or with NextRaw and Parse, and returns a
// line per record (offsets, fields, HTTP status, payload) and one for the
// error that stopped it: both ways must give the same lines.
func readEach(t *testing.T, path string, raw bool) []string {
	t.Helper()
	r, err := warc.NewReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []string
	for {
		var rec *warc.Record
		if raw {
			var x *warc.Raw
			if x, err = r.NextRaw(); err == nil {
				rec, err = x.Parse()
			}
		} else {
			rec, err = r.Next()
		}
		if err != nil {
			var de *warc.DamageError
			if errors.As(err, &de) {
				return append(out, fmt.Sprintf("damage at %d", de.Offset))
			}
			return append(out, "end: "+err.Error())
		}
		status, _ := rec.HTTPStatus()
		var payload []byte
		if p, err := rec.Payload(); err == nil {
			payload, _ = io.ReadAll(p)
		}
		out = append(out, fmt.Sprintf("%d-%d %s %s %s %s %q %d %d %.8x", rec.Offset, rec.End, rec.Version, rec.Type, rec.TargetURI,
			rec.Date, rec.ContentType, rec.Length, status, sha256.Sum256(payload)))
		if raw {
			rec.Close()
		}
	}
}

// TestReader_NextRawAsNext: NextRaw and Parse read what Next reads, record
// by record, damage included: whole files, truncated, a flipped byte, an
// uncompressed .warc (cut or not), garbage between members and plain
// records after gzip members.
func TestReader_NextRawAsNext(t *testing.T) {
	dir := t.TempDir()
	w := openWriter(t, dir, warc.Options{Prefix: "r"})
	var offs []int64
	for i := range 6 {
		got, err := w.WriteExchange(context.Background(), exchange(fmt.Sprintf("http://h%d.test/", i), strings.Repeat("<p>hello</p>", 50*i+1)))
		if err != nil {
			t.Fatal(err)
		}
		offs = append(offs, got.Offset)
	}
	w.Close()
	names, _ := filepath.Glob(filepath.Join(dir, "r-*.warc.gz"))
	data, _ := os.ReadFile(names[0])
	zr, _ := gzip.NewReader(bytes.NewReader(data))
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"whole.warc.gz":     data,
		"truncated.warc.gz": data[:offs[2]+40],
		"flipped.warc.gz":   flip(data, offs[2]+30),
		"cut-tail.warc.gz":  data[:len(data)-3],
		"garbage.warc.gz":   append(append(append([]byte(nil), data[:offs[3]]...), "garbage"...), data[offs[3]:]...),
		"plain-after.warc":  append(append([]byte(nil), data[:offs[3]]...), plain...),
		"plain.warc":        plain,
		"plain-cut.warc":    plain[:len(plain)-100],
		"empty.warc.gz":     {},
		// Records without an HTTP message (a WAT's), which Parse reads
		// without gowarc's checks of the spec.
		"wat.warc.wat.gz":        members(watRecords...),
		"wat-short.warc.wat.gz":  members(watRecords[0], record("metadata", "http://s.test/", "application/json", "Content-Length: 99\r\n", `{"a":1}`, "\r\n\r\n"), watRecords[1]),
		"wat-end.warc.wat.gz":    members(watRecords[0], record("metadata", "http://e.test/", "application/json", "", `{"a":1}`, "\r\n")),
		"wat-end-lf.warc.wat.gz": members(watRecords[0], record("metadata", "http://e.test/", "application/json", "", `{"a":1}`, "\n")),
		"wat-plain.warc.wat":     []byte(strings.Join(watRecords, "")),
	}
	for name, content := range cases {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		want, got := readEach(t, path, false), readEach(t, path, true)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: NextRaw and Parse read\n%s\nNext read\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if name == "whole.warc.gz" && len(want) != 14 {
			t.Errorf("%s: %d lines, want 13 records and the end", name, len(want))
		}
	}
}

// watRecords are records of the kinds a WAT holds, with quirks: an
// angle-bracketed target URI, the type in lower case, no Content-Length, a
// resource, an empty block, a field the type does not allow.
var watRecords = []string{
	record("warcinfo", "", "application/warc-fields", "", "software: test\r\n", "\r\n\r\n"),
	record("metadata", "http://a.test/", "application/json", "", `{"Envelope":{"WARC-Header-Metadata":{"WARC-Type":"response"}}}`, "\r\n\r\n"),
	record("metadata", "<http://b.test/x>", "application/json", "", `{"x":"y"}`, "\r\n\r\n"),
	strings.Replace(record("metadata", "http://c.test/", "application/json", "", `{}`, "\r\n\r\n"), "WARC-Type: metadata", "warc-type: METADATA", 1),
	strings.Replace(record("metadata", "http://d.test/", "application/json", "", `{}`, "\r\n\r\n"), "Content-Length: 2\r\n", "", 1),
	record("resource", "http://e.test/r", "text/plain", "", "some text", "\r\n\r\n"),
	record("metadata", "http://f.test/", "application/json", "", "", "\r\n\r\n"),
	record("metadata", "http://g.test/", "application/json", "WARC-IP-Address: 192.0.2.1\r\nWARC-Date: not a date\r\n", `[1]`, "\r\n\r\n"),
}

// record is a WARC/1.1 record of type typ with the block and what ends it;
// extra are more header lines (a Content-Length among them replaces the
// block's).
func record(typ, uri, ctype, extra, block, end string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "WARC/1.1\r\nWARC-Type: %s\r\nWARC-Record-ID: <urn:uuid:%08d-0000-4000-8000-000000000000>\r\nWARC-Date: 2024-02-20T10:00:00Z\r\n", typ, len(uri)+len(block))
	if uri != "" {
		fmt.Fprintf(&b, "WARC-Target-URI: %s\r\n", uri)
	}
	fmt.Fprintf(&b, "Content-Type: %s\r\n", ctype)
	if !strings.Contains(extra, "Content-Length") {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(block))
	}
	b.WriteString(extra + "\r\n" + block + end)
	return b.String()
}

// members gzips each record as a member of its own.
func members(recs ...string) []byte {
	var buf bytes.Buffer
	for _, r := range recs {
		zw := gzip.NewWriter(&buf)
		zw.Write([]byte(r))
		zw.Close()
	}
	return buf.Bytes()
}
