package crawl

import (
	"io"
	"net/http"

	"github.com/weaver-crawler/weaver/crawl/decode"
)

// ErrContentEncoding wraps a body whose Content-Encoding weaver cannot
// undo: one it does not know, or bytes that are not what the header says.
// The page is then a failure (KindEncoding), never read as it came.
var ErrContentEncoding = decode.ErrContentEncoding

// decodeBody returns resp's body decoded from its Content-Encoding
// (package decode). A gzip body net/http already decoded (it asked for
// gzip itself) is read as it is; weaver asks for nothing else, but
// servers send deflate, br or zstd unasked. A decoded body's headers then
// say what net/http's do of one it decoded: no Content-Encoding, no
// Content-Length (the archive records the body decoded). A read error of
// the returned reader that comes from the decoding wraps
// ErrContentEncoding; a body cut short stays the connection's error.
func decodeBody(resp *http.Response) (io.Reader, error) {
	if resp.Uncompressed {
		return decode.Named(resp.Body, "gzip", connectionError), nil
	}
	enc := resp.Header.Get("Content-Encoding")
	if decode.Identity(enc) {
		return resp.Body, nil
	}
	r, err := decode.Reader(enc, resp.Body, connectionError)
	if err != nil {
		return nil, err
	}
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("Content-Length")
	resp.ContentLength, resp.Uncompressed = -1, true
	return r, nil
}

// connectionError reports whether err comes from the connection rather
// than from the bytes: a reset, a timeout, a body cut short.
func connectionError(err error) bool {
	switch classify(err) {
	case KindReset, KindTimeout, KindConnect:
		return true
	}
	return false
}
