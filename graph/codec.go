package graph

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/weaver-crawler/weaver/kv"
)

// Node's own msgpack codec writes a map of the non-empty fields under
// their msgpack tags, in field order. Stores of schema 1 and 2 hold what
// msgpack's reflection wrote from those tags, which it reads the same.
// Since schema 3 (issue 43) it writes what can be told in fewer bytes in
// keys older stores never hold (docs/store.md):
//
//   - no "id": the node's id is its key (DecodeNode puts it back);
//   - "s", the status as a small number (statusCodes), for "st";
//   - "d" as the offset of the registrable domain in the host, an
//     integer, when the domain ends the host (older stores: a string);
//   - "fl", one time for first and last seen when they are equal (a node
//     only ever linked to), for "fs" and "ls".
//
// A node never crawled takes 51 bytes less. The codec is about three
// times faster than reflection, and every page commit decodes and
// encodes a node per link.

// statusCodes are the statuses "s" numbers, by their index: the order is
// part of the store's format (append only).
var statusCodes = [...]Status{StatusDiscovered, StatusCrawled, StatusRobotsDisallow, StatusDNSError, StatusHTTPError,
	StatusTimeout, StatusRefused, StatusExcludedByLimit, StatusFetchError, StatusOutOfScope}

// statusCode is st's number in statusCodes, or -1.
func statusCode(st Status) int64 {
	for i, s := range statusCodes {
		if s == st {
			return int64(i)
		}
	}
	return -1
}

// statusOf is the status of code c, "" for a number no weaver writes.
func statusOf(c int64) Status {
	if c < 0 || c >= int64(len(statusCodes)) {
		return ""
	}
	return statusCodes[c]
}

// domainOffset is where n's registrable domain starts in its host, or -1
// when the domain is not the host's end (a host with a port, say).
func (n *Node) domainOffset() int64 {
	if n.Domain == "" || !strings.HasSuffix(n.Host, n.Domain) {
		return -1
	}
	off := len(n.Host) - len(n.Domain)
	if off > 0 && n.Host[off-1] != '.' {
		return -1
	}
	return int64(off)
}

// DecodeNode decodes the node record v stored under key k: a record
// without an id (every one since schema 3) takes the key's.
func DecodeNode(k, v []byte, n *Node) error {
	if err := kv.Decode(v, n); err != nil {
		return err
	}
	if n.ID == 0 && len(k) == 8 {
		n.ID = binary.BigEndian.Uint64(k)
	}
	return nil
}

// fields calls str, num and tm for each non-empty field of n in field
// order, with its msgpack key; h is always written, id never (the key
// holds it).
// Integers are written as reflection wrote them: int fields compact,
// int64 fields (wide).
// The id-valued MirrorOf is written as reflection writes a uint64: in 9
// bytes, by u64.
func (n *Node) fields(str func(k, v string), num func(k string, v int64, wide bool), tm func(k string, v time.Time), u64 func(k string, v uint64)) {
	opt := func(k, v string) {
		if v != "" {
			str(k, v)
		}
	}
	optNum := func(k string, v int64, wide bool) {
		if v != 0 {
			num(k, v, wide)
		}
	}
	optTime := func(k string, v time.Time) {
		if !v.IsZero() {
			tm(k, v)
		}
	}
	str("h", n.Host)
	if off := n.domainOffset(); off >= 0 {
		num("d", off, false)
	} else {
		opt("d", n.Domain)
	}
	opt("sc", n.Scheme)
	opt("t", n.Title)
	opt("ds", n.Description)
	optNum("cc", int64(n.CrawlCount), false)
	optNum("fc", int64(n.FailCount), false)
	if c := statusCode(n.Status); c >= 0 {
		num("s", c, false)
	} else {
		opt("st", string(n.Status))
	}
	optNum("hs", int64(n.HTTPStatus), false)
	opt("ct", n.ContentType)
	opt("sv", n.Server)
	optNum("b", n.Bytes, true)
	optNum("ms", n.FetchMS, true)
	opt("ch", n.ContentHash)
	opt("e", n.Error)
	optNum("dp", int64(n.Depth), false)
	if !n.FirstSeen.IsZero() && n.FirstSeen.Equal(n.LastSeen) {
		tm("fl", n.FirstSeen)
	} else {
		optTime("fs", n.FirstSeen)
		optTime("ls", n.LastSeen)
	}
	optTime("lc", n.LastCrawl)
	opt("cn", n.Canonical)
	opt("rd", n.RobotsDirectives)
	if n.MirrorOf != 0 {
		u64("mo", n.MirrorOf)
	}
	optNum("pf", int64(n.PagesFetched), false)
	optNum("rm", n.RenderMS, true)
	opt("wa", n.Warc)
	optTime("nd", n.NextDue)
	optNum("iv", n.IntervalMS, true)
	optNum("cg", int64(n.Changes), false)
	optTime("lg", n.LastChange)
	optNum("nm", int64(n.NotModified), false)
	opt("et", n.ETag)
	opt("lm", n.LastModified)
	opt("rt", n.RedirectTo)
	optNum("sr", int64(n.SeedRedirects), false)
	opt("hm", n.Home)
	opt("tp", n.TLSProblem)
	if n.HSTS {
		num("hv", 1, false)
	}
}

// appendNode appends to b the bytes EncodeMsgpack (through msgpack's
// Marshal) writes for n, without msgpack's encoder: its writer, its
// interfaces and the two walks of the fields it takes were a third of a
// new host's record on the import's one writer (docs/performance.md,
// "Issue 54, sixth round"). TestAppendNode holds the two to the same bytes.
func appendNode(b []byte, n *Node) []byte {
	start := len(b)
	b = append(b, 0x80) // the map's header, its count set below
	count := 0
	n.fields(func(k, v string) {
		b = appendStr(appendStr(b, k), v)
		count++
	}, func(k string, v int64, wide bool) {
		b = appendStr(b, k)
		if wide {
			b = binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(v))
		} else {
			b = appendInt(b, v)
		}
		count++
	}, func(k string, v time.Time) {
		b = appendTime(appendStr(b, k), v)
		count++
	}, func(k string, v uint64) {
		b = binary.BigEndian.AppendUint64(append(appendStr(b, k), 0xcf), v)
		count++
	})
	switch {
	case count < 16:
		b[start] = 0x80 | byte(count)
	case count <= math.MaxUint16:
		b = append(b, 0, 0)
		copy(b[start+3:], b[start+1:len(b)-2])
		b[start] = 0xde
		binary.BigEndian.PutUint16(b[start+1:], uint16(count))
	}
	return b
}

// sizeHint is about the bytes of n's record: its longer strings and room
// for the rest, so that appendNode seldom grows its buffer.
func (n *Node) sizeHint() int {
	return 112 + len(n.Host) + len(n.Title) + len(n.Description) + len(n.ContentType) + len(n.Server) +
		len(n.ContentHash) + len(n.Error) + len(n.Canonical) + len(n.RobotsDirectives) + len(n.Warc) +
		len(n.ETag) + len(n.LastModified) + len(n.RedirectTo) + len(n.Home) + len(n.TLSProblem)
}

// appendStr appends s as msgpack's EncodeString writes it.
func appendStr(b []byte, s string) []byte {
	switch l := len(s); {
	case l < 32:
		b = append(b, 0xa0|byte(l))
	case l < 256:
		b = append(b, 0xd9, byte(l))
	case l <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, 0xda), uint16(l))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(l))
	}
	return append(b, s...)
}

// appendTime appends t as msgpack's EncodeTime writes it: the timestamp
// extension (-1) in 4, 8 or 12 bytes.
func appendTime(b []byte, t time.Time) []byte {
	secs := uint64(t.Unix())
	if secs>>34 == 0 {
		data := uint64(t.Nanosecond())<<34 | secs
		if data&0xffffffff00000000 == 0 {
			return binary.BigEndian.AppendUint32(append(b, 0xd6, 0xff), uint32(data))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xd7, 0xff), data)
	}
	b = binary.BigEndian.AppendUint32(append(b, 0xc7, 12, 0xff), uint32(t.Nanosecond()))
	return binary.BigEndian.AppendUint64(b, secs)
}

// EncodeMsgpack writes n as a map of its non-empty fields, without its
// id (see DecodeNode).
func (n *Node) EncodeMsgpack(enc *msgpack.Encoder) error {
	count := 0
	n.fields(func(string, string) { count++ }, func(string, int64, bool) { count++ }, func(string, time.Time) { count++ },
		func(string, uint64) { count++ })
	err := enc.EncodeMapLen(count)
	key := func(k string) bool {
		if err == nil {
			err = enc.EncodeString(k)
		}
		return err == nil
	}
	n.fields(func(k, v string) {
		if key(k) {
			err = enc.EncodeString(v)
		}
	}, func(k string, v int64, wide bool) {
		switch {
		case !key(k):
		case wide:
			err = enc.EncodeInt64(v)
		default:
			err = enc.EncodeInt(v)
		}
	}, func(k string, v time.Time) {
		if key(k) {
			err = enc.EncodeTime(v)
		}
	}, func(k string, v uint64) {
		if key(k) {
			err = enc.EncodeUint64(v)
		}
	})
	return err
}

// DecodeMsgpack reads a map written by EncodeMsgpack (or by msgpack's
// reflection from the same tags); it skips keys it does not know. The id
// of a record written since schema 3 is left 0: DecodeNode reads it from
// the key.
func (n *Node) DecodeMsgpack(dec *msgpack.Decoder) error {
	*n = Node{}
	count, err := dec.DecodeMapLen()
	if err != nil {
		return err
	}
	var kb [2]byte // every key is a fixstr of 1 or 2 bytes
	for range count {
		kl, err := decodeKey(dec, &kb)
		if err != nil {
			return fmt.Errorf("graph: node key: %w", err)
		}
		if err := n.decodeField(dec, string(kb[:kl])); err != nil { // on the stack: the key never escapes
			return fmt.Errorf("graph: node field %q: %w", string(kb[:kl]), err)
		}
	}
	return nil
}

// decodeKey reads a map key into kb and returns its length: 0 for a key
// weaver never writes (not a fixstr of 1 or 2 bytes), which it skips.
func decodeKey(dec *msgpack.Decoder, kb *[2]byte) (int, error) {
	c, err := dec.PeekCode()
	if err != nil {
		return 0, err
	}
	if c != 0xa1 && c != 0xa2 {
		return 0, dec.Skip()
	}
	kl, _ := dec.DecodeBytesLen() // the code was just peeked
	return kl, dec.ReadFull(kb[:kl])
}

// decodeField reads the value of n's field k (msgpack's tag), or skips
// the value of a key it does not know.
func (n *Node) decodeField(dec *msgpack.Decoder, k string) (err error) {
	var s string
	var i int64
	switch k {
	case "id":
		n.ID, err = dec.DecodeUint64()
	case "h":
		n.Host, err = dec.DecodeString()
	case "d":
		err = n.decodeDomain(dec)
	case "sc":
		n.Scheme, err = dec.DecodeString()
	case "t":
		n.Title, err = dec.DecodeString()
	case "ds":
		n.Description, err = dec.DecodeString()
	case "cc":
		i, err = dec.DecodeInt64()
		n.CrawlCount = int(i)
	case "fc":
		i, err = dec.DecodeInt64()
		n.FailCount = int(i)
	case "st":
		s, err = dec.DecodeString()
		n.Status = Status(s)
	case "s":
		i, err = dec.DecodeInt64()
		if n.Status = statusOf(i); err == nil && n.Status == "" {
			err = fmt.Errorf("status %d is not one weaver writes", i)
		}
	case "hs":
		i, err = dec.DecodeInt64()
		n.HTTPStatus = int(i)
	case "ct":
		n.ContentType, err = dec.DecodeString()
	case "sv":
		n.Server, err = dec.DecodeString()
	case "b":
		n.Bytes, err = dec.DecodeInt64()
	case "ms":
		n.FetchMS, err = dec.DecodeInt64()
	case "ch":
		n.ContentHash, err = dec.DecodeString()
	case "e":
		n.Error, err = dec.DecodeString()
	case "dp":
		i, err = dec.DecodeInt64()
		n.Depth = int(i)
	case "fs":
		n.FirstSeen, err = dec.DecodeTime()
	case "ls":
		n.LastSeen, err = dec.DecodeTime()
	case "fl":
		n.FirstSeen, err = dec.DecodeTime()
		n.LastSeen = n.FirstSeen
	case "lc":
		n.LastCrawl, err = dec.DecodeTime()
	case "cn":
		n.Canonical, err = dec.DecodeString()
	case "rd":
		n.RobotsDirectives, err = dec.DecodeString()
	case "mo":
		n.MirrorOf, err = dec.DecodeUint64()
	case "pf":
		i, err = dec.DecodeInt64()
		n.PagesFetched = int(i)
	case "rm":
		n.RenderMS, err = dec.DecodeInt64()
	case "wa":
		n.Warc, err = dec.DecodeString()
	case "nd":
		n.NextDue, err = dec.DecodeTime()
	case "iv":
		n.IntervalMS, err = dec.DecodeInt64()
	case "cg":
		i, err = dec.DecodeInt64()
		n.Changes = int(i)
	case "lg":
		n.LastChange, err = dec.DecodeTime()
	case "nm":
		i, err = dec.DecodeInt64()
		n.NotModified = int(i)
	case "et":
		n.ETag, err = dec.DecodeString()
	case "lm":
		n.LastModified, err = dec.DecodeString()
	case "rt":
		n.RedirectTo, err = dec.DecodeString()
	case "sr":
		i, err = dec.DecodeInt64()
		n.SeedRedirects = int(i)
	case "hm":
		n.Home, err = dec.DecodeString()
	case "tp":
		n.TLSProblem, err = dec.DecodeString()
	case "hv":
		i, err = dec.DecodeInt64()
		n.HSTS = i != 0
	default:
		err = dec.Skip()
	}
	return err
}

// decodeDomain reads "d": the domain itself (schema 1 and 2), or where it
// starts in the host, which comes first in every record.
func (n *Node) decodeDomain(dec *msgpack.Decoder) error {
	c, err := dec.PeekCode()
	if err != nil {
		return err
	}
	if msgpcode.IsString(c) {
		n.Domain, err = dec.DecodeString()
		return err
	}
	off, err := dec.DecodeInt64()
	if err != nil {
		return err
	}
	if n.Host == "" || off < 0 || off >= int64(len(n.Host)) {
		return fmt.Errorf("domain offset %d outside host %q", off, n.Host)
	}
	n.Domain = n.Host[off:]
	return nil
}
