package decode_test

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"

	"github.com/weaver-crawler/weaver/crawl/decode"
)

const page = "<!DOCTYPE html><title>Coded</title><a href=\"http://other.test/\">other</a>"

// encode codes b with name, by the codings' reference writers.
func encode(t *testing.T, name string, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.WriteCloser
	switch name {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "deflate":
		w = zlib.NewWriter(&buf)
	case "rawdeflate":
		w, _ = flate.NewWriter(&buf, flate.BestSpeed)
	case "br":
		w = brotli.NewWriter(&buf)
	case "zstd":
		zw, err := zstd.NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		w = zw
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReader_Codings: each coding a server sends, alone or stacked, reads
// back the page.
func TestReader_Codings(t *testing.T) {
	for _, tc := range []struct {
		header string
		body   func(t *testing.T) []byte
	}{
		{"", func(*testing.T) []byte { return []byte(page) }},
		{"identity", func(*testing.T) []byte { return []byte(page) }},
		{"gzip", func(t *testing.T) []byte { return encode(t, "gzip", []byte(page)) }},
		{"X-Gzip", func(t *testing.T) []byte { return encode(t, "gzip", []byte(page)) }},
		{"deflate", func(t *testing.T) []byte { return encode(t, "deflate", []byte(page)) }},
		{"deflate", func(t *testing.T) []byte { return encode(t, "rawdeflate", []byte(page)) }},
		{"br", func(t *testing.T) []byte { return encode(t, "br", []byte(page)) }},
		{"zstd", func(t *testing.T) []byte { return encode(t, "zstd", []byte(page)) }},
		{"gzip, br", func(t *testing.T) []byte { return encode(t, "br", encode(t, "gzip", []byte(page))) }},
	} {
		r, err := decode.Reader(tc.header, bytes.NewReader(tc.body(t)), nil)
		if err != nil {
			t.Errorf("%q: %v", tc.header, err)
			continue
		}
		got, err := io.ReadAll(r)
		if err != nil || string(got) != page {
			t.Errorf("%q: read %q, %v", tc.header, got, err)
		}
	}
}

// TestReader_Bad: a coding weaver does not know, or bytes that are not
// the coding the header says, are ErrContentEncoding, at once or when
// read; an error of the connection under the decoder stays itself.
func TestReader_Bad(t *testing.T) {
	for _, tc := range []struct{ header, body string }{
		{"compress", page},
		{"gzip", page},
		{"deflate", page},
		{"br", page},
		{"zstd", page},
	} {
		r, err := decode.Reader(tc.header, strings.NewReader(tc.body), nil)
		if err == nil {
			_, err = io.ReadAll(r)
		}
		if !errors.Is(err, decode.ErrContentEncoding) {
			t.Errorf("%q over a plain page: %v, want ErrContentEncoding", tc.header, err)
		}
	}
	cut := encode(t, "gzip", bytes.Repeat([]byte(page), 100))
	errCut := errors.New("connection reset")
	r, err := decode.Reader("gzip", io.MultiReader(bytes.NewReader(cut[:len(cut)/2]), errReader{errCut}), func(err error) bool { return errors.Is(err, errCut) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(r); !errors.Is(err, errCut) || errors.Is(err, decode.ErrContentEncoding) {
		t.Errorf("a gzip body cut by the connection: %v, want the connection's error", err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
