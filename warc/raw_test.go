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
