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
	"runtime"
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
	sameAsNext(t, dir, cases, 13)
}

// sameAsNext writes each case's file in dir and checks that NextRaw and
// Parse read it as Next does; whole.warc.gz must have records records.
func sameAsNext(t *testing.T, dir string, cases map[string][]byte, records int) {
	t.Helper()
	for name, content := range cases {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		want, got := readEach(t, path, false), readEach(t, path, true)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: NextRaw and Parse read\n%s\nNext read\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if name == "whole.warc.gz" && len(want) != records+1 {
			t.Errorf("%s: %d lines, want %d records and the end:\n%s", name, len(want), records, strings.Join(want, "\n"))
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

// TestReader_NextRawLargeMember: a gzip member that inflates to more than
// NextRaw keeps in memory (a big download, or a few MB of gzip that
// inflate to GBs) is read as Next reads it, through gowarc's temporary
// file, and the members after it by NextRaw again: the same records and
// damage as Next, whole, cut or damaged inside the large member or after
// it, and far less memory held than the member's size (inflated whole, it
// cost twice its size: 2.7 GB of memory for a 2.7 MB file of one 600 MB
// record).
func TestReader_NextRawLargeMember(t *testing.T) {
	dir := t.TempDir()
	w := openWriter(t, dir, warc.Options{Prefix: "l"})
	const large = 32 << 20
	var offs []int64
	for i, body := range []string{"<p>small</p>", strings.Repeat(" ", large) + "<a href=http://x.test/>x</a>", "<p>after</p>", "<p>last</p>"} {
		got, err := w.WriteExchange(context.Background(), exchange(fmt.Sprintf("http://h%d.test/", i), body))
		if err != nil {
			t.Fatal(err)
		}
		offs = append(offs, got.Offset)
	}
	w.Close()
	names, _ := filepath.Glob(filepath.Join(dir, "l-*.warc.gz"))
	data, err := os.ReadFile(names[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > large/50 {
		t.Fatalf("the test's file is %d bytes: its large member should compress well", len(data))
	}
	cases := map[string][]byte{
		"whole.warc.gz":       data,
		"cut-large.warc.gz":   data[:offs[1]+(offs[2]-offs[1])/2],
		"flipped-after.gz":    flip(data, offs[3]+30),
		"flipped-large.gz":    flip(data, offs[1]+(offs[2]-offs[1])/2),
		"large-first.warc.gz": data[offs[1]:],
	}
	sameAsNext(t, dir, cases, 9)

	// What the reader holds once it has read each record, its payload
	// left unread: what gowarc keeps in memory, not the member's size.
	r, err := warc.NewReader(filepath.Join(dir, "whole.warc.gz"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var most uint64
	n := 0
	for {
		x, err := r.NextRaw()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		most = max(most, ms.HeapAlloc)
		rec, err := x.Parse()
		if err != nil {
			t.Fatal(err)
		}
		if rec != x.Parsed() {
			rec.Close()
		}
		n++
	}
	if n != 9 {
		t.Errorf("read %d records, want 9", n)
	}
	t.Logf("reading a file with a member of %d MiB: at most %d MiB of heap", large>>20, most>>20)
	if most > large/2 {
		t.Errorf("reading a file with a member of %d MiB held %d MiB of heap", large>>20, most>>20)
	}
}
