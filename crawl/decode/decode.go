// Package decode undoes a response's Content-Encoding, for the crawl and
// for weaver import alike, so that a page reads the same whether it was
// fetched or archived: gzip, deflate (zlib or raw), br and zstd, stacked
// in any order a header lists them.
package decode

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// ErrContentEncoding wraps a body whose Content-Encoding cannot be
// undone: a coding this package does not know, or bytes that are not
// what the header says.
var ErrContentEncoding = errors.New("content encoding")

// Identity reports whether a Content-Encoding header asks for nothing
// to be undone.
func Identity(codings string) bool {
	c := strings.TrimSpace(codings)
	return c == "" || strings.EqualFold(c, "identity")
}

// Reader returns r decoded from codings, a Content-Encoding header's
// value, undone in the reverse of the order it lists them. An error
// reading the returned reader that the decoding gave wraps
// ErrContentEncoding, and so does Reader's own for a coding it does not
// know or a header that does not parse; an error of r itself (a
// connection cut short) is returned as it is, unless connErr is nil.
// connErr reports whether an error is r's own; nil: none is.
func Reader(codings string, r io.Reader, connErr func(error) bool) (io.Reader, error) {
	if Identity(codings) {
		return r, nil
	}
	list := strings.Split(codings, ",")
	for i := len(list) - 1; i >= 0; i-- {
		name := strings.ToLower(strings.TrimSpace(list[i]))
		d, err := decoder(name, r)
		if err != nil {
			return nil, fmt.Errorf("%w %s: %w", ErrContentEncoding, name, err)
		}
		r = Named(d, name, connErr)
	}
	return r, nil
}

// decoder returns a reader undoing coding name over r.
func decoder(name string, r io.Reader) (io.Reader, error) {
	switch name {
	case "identity", "":
		return r, nil
	case "gzip", "x-gzip":
		return gzip.NewReader(r)
	case "deflate":
		// RFC 9110 says zlib; some servers send raw deflate.
		br := bufio.NewReader(r)
		if head, err := br.Peek(2); err == nil && isZlib(head) {
			return zlib.NewReader(br)
		}
		return flate.NewReader(br), nil
	case "br":
		return brotli.NewReader(r), nil
	case "zstd":
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(8<<20))
		if err != nil {
			return nil, err
		}
		return d.IOReadCloser(), nil
	}
	return nil, errors.New("not supported")
}

// isZlib reports whether head starts a zlib stream (RFC 1950: deflate,
// a window of at most 32 KiB, a check that divides by 31).
func isZlib(head []byte) bool {
	return head[0]&0x0f == 8 && head[0]>>4 <= 7 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0
}

// Named wraps r, a decoder of coding name, so that its read errors other
// than io.EOF and those connErr reports (nil: none) wrap
// ErrContentEncoding.
func Named(r io.Reader, name string, connErr func(error) bool) io.Reader {
	return named{r, name, connErr}
}

type named struct {
	r       io.Reader
	name    string
	connErr func(error) bool
}

func (e named) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && (e.connErr == nil || !e.connErr(err)) && !errors.Is(err, ErrContentEncoding) {
		err = fmt.Errorf("%w %s: %w", ErrContentEncoding, e.name, err)
	}
	return n, err
}
