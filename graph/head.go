package graph

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/weaver-crawler/weaver/kv"
)

// Head is the part of a node that a link to it needs: whether and how to
// queue it. A page commit looks up a node per link; reading only these
// fields skips decoding (and allocating) titles, descriptions and hashes.
type Head struct {
	ID         uint64
	Scheme     string // how it was first found: its home page's scheme
	CrawlCount int
	Status     Status
	Depth      int
	LastSeen   time.Time
}

// Head returns n's head.
func (n *Node) Head() Head {
	return Head{ID: n.ID, Scheme: n.Scheme, CrawlCount: n.CrawlCount, Status: n.Status, Depth: n.Depth, LastSeen: n.LastSeen}
}

// GetHead returns the head of the node with id. It reads the stored bytes
// directly when they are in the form weaver writes, and falls back to a
// full decode otherwise, so it accepts whatever Get accepts.
func GetHead(tx *kv.Tx, id uint64) (Head, bool, error) { return getHead(tx, id, "") }

// GetHeadOf is GetHead for the node of host: ok is false when no node has
// id or when it is another host's. A caller that remembers hosts' ids by
// a hash of their names learns so that it remembered wrong.
func GetHeadOf(tx *kv.Tx, id uint64, host string) (Head, bool, error) { return getHead(tx, id, host) }

// getHead is GetHeadOf, for any host when host is "" (no node's is).
func getHead(tx *kv.Tx, id uint64, host string) (Head, bool, error) {
	data := tx.GetRaw(kv.BucketNodes, kv.U64(id))
	if data == nil {
		return Head{}, false, nil
	}
	if h, name, ok := decodeHeadHost(data); ok {
		if host != "" && string(name) != host {
			return Head{}, false, nil
		}
		h.ID = id
		return h, true, nil
	}
	n, ok, err := Get(tx, id)
	if err != nil || !ok || (host != "" && n.Host != host) {
		return Head{}, false, err
	}
	return n.Head(), true, nil
}

// EnsureHeadAt is EnsureAt for a caller that needs only the node's head.
func EnsureHeadAt(tx *kv.Tx, host, scheme string, depth int, now time.Time) (Head, bool, error) {
	if id, ok := Lookup(tx, host); ok {
		h, ok, err := GetHead(tx, id)
		if err == nil && !ok {
			err = errMissing(host, id)
		}
		return h, false, err
	}
	n, created, err := create(tx, host, scheme, depth, now) // not found just now
	return n.Head(), created, err
}

// headReader walks the msgpack map Node.EncodeMsgpack writes. Any byte it
// does not expect makes it give up (ok false); it never reads past b.
type headReader struct {
	b  []byte
	i  int
	ok bool
}

func (r *headReader) byte() byte {
	if r.i >= len(r.b) {
		r.ok = false
		return 0
	}
	c := r.b[r.i]
	r.i++
	return c
}

func (r *headReader) next(n int) []byte {
	if n < 0 || r.i+n > len(r.b) || r.i+n < r.i {
		r.ok = false
		return nil
	}
	s := r.b[r.i : r.i+n]
	r.i += n
	return s
}

// uint reads a msgpack unsigned integer (positive fixint, uint 8–64).
func (r *headReader) uint() uint64 {
	switch c := r.byte(); {
	case c <= 0x7f:
		return uint64(c)
	case c == 0xcc:
		return uint64(r.byte())
	case c == 0xcd:
		if b := r.next(2); b != nil {
			return uint64(binary.BigEndian.Uint16(b))
		}
	case c == 0xce:
		if b := r.next(4); b != nil {
			return uint64(binary.BigEndian.Uint32(b))
		}
	case c == 0xcf:
		if b := r.next(8); b != nil {
			return binary.BigEndian.Uint64(b)
		}
	default:
		r.ok = false
	}
	return 0
}

// int reads any msgpack integer (an unsigned one above the int64 range
// wraps, as msgpack's DecodeInt64 does).
func (r *headReader) int() int64 {
	if r.i < len(r.b) {
		if c := r.b[r.i]; c <= 0x7f || (c >= 0xcc && c <= 0xcf) {
			return int64(r.uint())
		}
	}
	c := r.byte()
	switch {
	case c >= 0xe0:
		return int64(int8(c))
	case c == 0xd0:
		return int64(int8(r.byte()))
	case c == 0xd1:
		if b := r.next(2); b != nil {
			return int64(int16(binary.BigEndian.Uint16(b)))
		}
	case c == 0xd2:
		if b := r.next(4); b != nil {
			return int64(int32(binary.BigEndian.Uint32(b)))
		}
	case c == 0xd3:
		if b := r.next(8); b != nil {
			return int64(binary.BigEndian.Uint64(b))
		}
	default:
		r.ok = false
	}
	return 0
}

// str reads a msgpack string's bytes (valid while b is).
func (r *headReader) str() []byte {
	c := r.byte()
	n := -1
	switch {
	case c&0xe0 == 0xa0:
		n = int(c & 0x1f)
	case c == 0xd9:
		n = int(r.byte())
	case c == 0xda:
		if b := r.next(2); b != nil {
			n = int(binary.BigEndian.Uint16(b))
		}
	case c == 0xdb:
		if b := r.next(4); b != nil {
			n = int(binary.BigEndian.Uint32(b))
		}
	}
	if n < 0 {
		r.ok = false
		return nil
	}
	return r.next(n)
}

// time reads msgpack's timestamp extension (type -1) in its three sizes.
func (r *headReader) time() time.Time {
	var sec, nsec int64
	switch c := r.byte(); c {
	case 0xd6: // fixext 4: seconds
		b := r.next(5)
		if b == nil || b[0] != 0xff {
			r.ok = false
			return time.Time{}
		}
		sec = int64(binary.BigEndian.Uint32(b[1:]))
	case 0xd7: // fixext 8: 30-bit nanoseconds, 34-bit seconds
		b := r.next(9)
		if b == nil || b[0] != 0xff {
			r.ok = false
			return time.Time{}
		}
		v := binary.BigEndian.Uint64(b[1:])
		nsec, sec = int64(v>>34), int64(v&(1<<34-1))
	case 0xc7: // ext 8 of 12 bytes: nanoseconds, then 64-bit seconds
		b := r.next(14)
		if b == nil || b[0] != 12 || b[1] != 0xff {
			r.ok = false
			return time.Time{}
		}
		nsec, sec = int64(binary.BigEndian.Uint32(b[2:])), int64(binary.BigEndian.Uint64(b[6:]))
	default:
		r.ok = false
		return time.Time{}
	}
	return time.Unix(sec, nsec).UTC()
}

// skip passes over one scalar value: nil, bool, integer, float, string,
// binary or extension. Arrays and maps make the reader give up.
func (r *headReader) skip() {
	c := r.byte()
	switch {
	case c <= 0x7f, c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3:
	case c&0xe0 == 0xa0:
		r.next(int(c & 0x1f))
	case c == 0xc4, c == 0xd9:
		r.next(int(r.byte()))
	case c == 0xc5, c == 0xda:
		if b := r.next(2); b != nil {
			r.next(int(binary.BigEndian.Uint16(b)))
		}
	case c == 0xc6, c == 0xdb:
		if b := r.next(4); b != nil {
			r.next(int(binary.BigEndian.Uint32(b)))
		}
	case c == 0xc7:
		r.next(1 + int(r.byte()))
	case c == 0xca:
		r.next(4)
	case c == 0xcb:
		r.next(8)
	case c >= 0xcc && c <= 0xcf:
		r.next(1 << (c - 0xcc))
	case c >= 0xd0 && c <= 0xd3:
		r.next(1 << (c - 0xd0))
	case c >= 0xd4 && c <= 0xd8:
		r.next(1 + 1<<(c-0xd4))
	default:
		r.ok = false
	}
}

// decodeHeadHost reads a node's head and host (valid while b is) from its
// stored bytes, or reports false when they are not in the form it knows
// (the caller then decodes fully).
func decodeHeadHost(b []byte) (Head, []byte, bool) {
	r := headReader{b: b, ok: true}
	var n int
	switch c := r.byte(); {
	case c&0xf0 == 0x80:
		n = int(c & 0x0f)
	case c == 0xde:
		if h := r.next(2); h != nil {
			n = int(binary.BigEndian.Uint16(h))
		}
	default:
		return Head{}, nil, false
	}
	var h Head
	var host []byte
	for range n {
		if !r.ok {
			return Head{}, nil, false
		}
		k := r.str()
		switch string(k) { // no allocation: a switch on string(bytes)
		case "h":
			host = r.str()
		case "sc":
			h.Scheme = intern(r.str())
		case "cc":
			h.CrawlCount = int(r.int())
		case "st":
			h.Status = Status(intern(r.str()))
		case "s":
			if h.Status = statusOf(r.int()); h.Status == "" {
				return Head{}, nil, false // DecodeMsgpack says why
			}
		case "dp":
			h.Depth = int(r.int())
		case "ls", "fl":
			h.LastSeen = r.time()
		default:
			r.skip()
		}
	}
	if !r.ok || r.i != len(b) {
		return Head{}, nil, false
	}
	return h, host, true
}

// intern returns the constant for the schemes and statuses weaver writes,
// so that reading them allocates nothing.
func intern(b []byte) string {
	switch string(b) {
	case "http":
		return "http"
	case "https":
		return "https"
	case string(StatusDiscovered):
		return string(StatusDiscovered)
	case string(StatusCrawled):
		return string(StatusCrawled)
	case string(StatusExcludedByLimit):
		return string(StatusExcludedByLimit)
	case string(StatusOutOfScope):
		return string(StatusOutOfScope)
	}
	return string(b)
}

func errMissing(host string, id uint64) error {
	return fmt.Errorf("graph: host %q points at missing node %d: %w", host, id, ErrInconsistent)
}
