package warc

import (
	"bytes"
	"crypto/sha1"
	"encoding/base32"
	"io"
	"strconv"
	"time"

	gowarc "github.com/nlnwa/gowarc/v3"
)

// The request, response and revisit records of an exchange are written
// here, not by gowarc's record builder: the builder copies the block into
// a buffer, parses it, validates every field and hashes the block three
// times over (issue 28: 1.7 of the 10.8 CPU-seconds --warc added to a
// crawl of 10,000 30 KB pages). What is written is byte for byte what the
// builder writes for the same exchange (TestRecords_AsGowarc): its field
// order, WARC-Type first, then the fields in the order added, then
// Content-Length, WARC-Block-Digest and, for an HTTP request or response
// block, WARC-Payload-Digest. An exchange whose HTTP header the builder
// would read differently (a bare LF) goes through the builder.

// field is one WARC named field, written as given.
type field struct{ name, value string }

// record is one WARC/1.1 record of an exchange.
type record struct {
	typ    gowarc.RecordType
	fields []field
	block  []byte
	// payload is the digest of the block's HTTP payload (what follows
	// its header): "" for a revisit record, which has none.
	payload string
}

var typeNames = map[gowarc.RecordType]string{
	gowarc.Request:  "request",
	gowarc.Response: "response",
	gowarc.Revisit:  "revisit",
}

// digest is the "sha1:BASE32" form of b's SHA-1, gowarc's default.
func digest(b []byte) string {
	sum := sha1.Sum(b)
	return "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
}

// warcTime is gowarc's form of a WARC 1.1 date.
func warcTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// writeTo writes r to w: header, block and the record's end. scratch
// holds the header while it is assembled.
func (r *record) writeTo(w io.Writer, scratch *bytes.Buffer) error {
	scratch.Reset()
	scratch.WriteString("WARC/1.1\r\nWARC-Type: ")
	scratch.WriteString(typeNames[r.typ])
	scratch.WriteString("\r\n")
	put := func(name, value string) {
		scratch.WriteString(name)
		scratch.WriteString(": ")
		scratch.WriteString(value)
		scratch.WriteString("\r\n")
	}
	for _, f := range r.fields {
		put(f.name, f.value)
	}
	put(gowarc.ContentLength, strconv.Itoa(len(r.block)))
	put(gowarc.WarcBlockDigest, digest(r.block))
	if r.payload != "" {
		put(gowarc.WarcPayloadDigest, r.payload)
	}
	scratch.WriteString("\r\n")
	if _, err := w.Write(scratch.Bytes()); err != nil {
		return err
	}
	if _, err := w.Write(r.block); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\r\n\r\n")
	return err
}

// httpHeaderEnd is where b's HTTP header ends (after its blank line) when
// gowarc's builder would find the same end: every line of the header
// ends in CRLF and the first is not empty. ok is false otherwise.
func httpHeaderEnd(b []byte) (end int, ok bool) {
	i := bytes.Index(b, []byte("\r\n\r\n"))
	if i <= 0 || bytes.HasPrefix(b, []byte("\r\n")) {
		return 0, false
	}
	head := b[:i+2]
	if bytes.Count(head, []byte("\n")) != bytes.Count(head, []byte("\r\n")) {
		return 0, false
	}
	return i + 4, true
}

// exchangeRecords are ex's request record and its response (or revisit)
// record, with the given record ids and date; payload is the response's
// payload digest. direct says writeTo writes them as gowarc's builder
// would; when it is false (an HTTP header the builder reads otherwise: see
// httpHeaderEnd), they go through the builder. ex.Response is known to
// hold a blank line.
func exchangeRecords(ex *Exchange, reqID, respID string, date time.Time, payload string) (req, resp record, direct bool) {
	reqEnd, reqOK := httpHeaderEnd(ex.Request)
	_, respOK := httpHeaderEnd(ex.Response)
	var tls []field
	for _, p := range ex.Protocols {
		if p != "" {
			tls = append(tls, field{fieldProtocol, oneLine(p)})
		}
	}
	if ex.CipherSuite != "" {
		tls = append(tls, field{fieldCipherSuite, oneLine(ex.CipherSuite)})
	}
	d := warcTime(date)

	req = record{typ: gowarc.Request, block: ex.Request}
	if reqOK {
		req.payload = digest(ex.Request[reqEnd:])
	}
	req.fields = exchangeFields(make([]field, 0, 6+len(tls)), ex, reqID, respID, d, "request", tls)

	resp.fields = make([]field, 0, 13+len(tls))
	if o := ex.Revisit; o != nil {
		head := bytes.Index(ex.Response, []byte("\r\n\r\n")) + 4
		resp.typ, resp.block = gowarc.Revisit, ex.Response[:head]
		profile := gowarc.ProfileIdenticalPayloadDigestV1_1
		if o.NotModified {
			profile = gowarc.ProfileServerNotModifiedV1_1
		}
		resp.fields = append(resp.fields,
			field{gowarc.WarcProfile, profile},
			field{gowarc.WarcRefersToTargetURI, o.URL},
			field{gowarc.WarcRefersToDate, warcTime(o.Date)})
		if o.RecordID != "" {
			resp.fields = append(resp.fields, field{gowarc.WarcRefersTo, o.RecordID})
		}
		if !o.NotModified {
			resp.fields = append(resp.fields, field{gowarc.WarcPayloadDigest, payload})
		}
	} else {
		resp.typ, resp.block, resp.payload = gowarc.Response, ex.Response, payload
	}
	resp.fields = exchangeFields(resp.fields, ex, respID, reqID, d, "response", tls)
	if ex.Truncated {
		resp.fields = append(resp.fields, field{gowarc.WarcTruncated, "length"})
	}
	return req, resp, reqOK && respOK
}

// write writes r to dst: itself when direct (see exchangeRecords), else
// through gowarc's builder.
func (r *record) write(dst io.Writer, direct bool, scratch *bytes.Buffer) error {
	if direct {
		return r.writeTo(dst, scratch)
	}
	b, err := r.builder()
	if err != nil {
		return err
	}
	return marshalTo(dst, b)
}

// builder is r as a gowarc record builder, which computes Content-Length
// and the digests itself.
func (r *record) builder() (gowarc.WarcRecordBuilder, error) {
	b := newBuilder(r.typ)
	for _, f := range r.fields {
		b.AddWarcHeader(f.name, f.value)
	}
	if _, err := b.Write(r.block); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// exchangeFields appends to fs the fields an exchange's request and
// response records share, in gowarc's order: the record's id, the date,
// the target, the other record's id, the content type (msgtype "request"
// or "response"), the peer's address and the TLS fields.
func exchangeFields(fs []field, ex *Exchange, id, other, date, msgtype string, tls []field) []field {
	fs = append(fs,
		field{gowarc.WarcRecordID, id},
		field{gowarc.WarcDate, date},
		field{gowarc.WarcTargetURI, ex.URL},
		field{gowarc.WarcConcurrentTo, other},
		field{gowarc.ContentType, "application/http;msgtype=" + msgtype})
	if ex.RemoteIP != "" {
		fs = append(fs, field{gowarc.WarcIPAddress, ex.RemoteIP})
	}
	return append(fs, tls...)
}
