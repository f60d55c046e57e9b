package graph

import (
	"fmt"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// Node's own msgpack codec writes the same bytes as msgpack's reflection
// did from Node's field tags (a map in field order, empty fields left out),
// so stores written before it read the same; it is about three times
// faster, and every page commit decodes and encodes a node per link.

// fields calls str, num and tm for each non-empty field of n in field
// order, with its msgpack key; id and h are always written.
// Integers are written as reflection wrote them: int fields compact,
// int64 fields (wide) and the id in 9 bytes.
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
	opt("d", n.Domain)
	opt("sc", n.Scheme)
	opt("t", n.Title)
	opt("ds", n.Description)
	optNum("cc", int64(n.CrawlCount), false)
	optNum("fc", int64(n.FailCount), false)
	opt("st", string(n.Status))
	optNum("hs", int64(n.HTTPStatus), false)
	opt("ct", n.ContentType)
	opt("sv", n.Server)
	optNum("b", n.Bytes, true)
	optNum("ms", n.FetchMS, true)
	opt("ch", n.ContentHash)
	opt("e", n.Error)
	optNum("dp", int64(n.Depth), false)
	optTime("fs", n.FirstSeen)
	optTime("ls", n.LastSeen)
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
}

// EncodeMsgpack writes n as a map of its non-empty fields.
func (n *Node) EncodeMsgpack(enc *msgpack.Encoder) error {
	count := 1 // id
	n.fields(func(string, string) { count++ }, func(string, int64, bool) { count++ }, func(string, time.Time) { count++ },
		func(string, uint64) { count++ })
	if err := enc.EncodeMapLen(count); err != nil {
		return err
	}
	if err := enc.EncodeString("id"); err != nil {
		return err
	}
	err := enc.EncodeUint64(n.ID)
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
// reflection from the same tags); it skips keys it does not know.
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
		n.Domain, err = dec.DecodeString()
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
	default:
		err = dec.Skip()
	}
	return err
}
