package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// maxNesting bounds how deeply arrays and maps may nest in a stored value.
// weaver's records nest two levels (a lease holds an entry); the bound keeps
// a damaged value from driving the decoder's recursion.
const maxNesting = 32

var (
	errTruncated = errors.New("value ends early")
	errNesting   = fmt.Errorf("arrays or maps nested deeper than %d", maxNesting)
)

// wellFormed reports whether b begins with one complete msgpack value whose
// every length fits in b: a string, binary or extension no longer than the
// bytes left, an array or map with no more elements than bytes left (each
// takes at least one), nesting at most maxNesting deep.
//
// Decode runs it first because msgpack trusts the lengths it reads: it
// grows its pooled decoder's buffer towards the claimed length before
// finding the data short, and keeps the grown buffer for the next call, so
// a damaged 6-byte value claiming 2 GiB grew the heap by hundreds of MiB
// per call. Once lengths are known to fit, no allocation exceeds len(b).
// The walk is iterative and allocates nothing.
func wellFormed(b []byte) error {
	var stack [maxNesting]uint64 // elements still to read in each open array or map
	depth := 0
	pending := uint64(0) // sum of stack[:depth]
	i := 0
	for {
		if i >= len(b) {
			return errTruncated
		}
		c := b[i]
		i++
		var size, elems uint64 // payload bytes to skip; child values to read
		var hdr int            // bytes of length header after the code
		switch {
		case c <= 0x7f, c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3:
			// fixint, nil, false, true
		case c&0xf0 == 0x80:
			elems = 2 * uint64(c&0x0f)
		case c&0xf0 == 0x90:
			elems = uint64(c & 0x0f)
		case c&0xe0 == 0xa0:
			size = uint64(c & 0x1f)
		case c == 0xc4, c == 0xd9: // bin8, str8
			hdr = 1
		case c == 0xc5, c == 0xda: // bin16, str16
			hdr = 2
		case c == 0xc6, c == 0xdb: // bin32, str32
			hdr = 4
		case c == 0xc7: // ext8: length, type, data
			hdr, size = 1, 1
		case c == 0xc8:
			hdr, size = 2, 1
		case c == 0xc9:
			hdr, size = 4, 1
		case c == 0xca:
			size = 4
		case c == 0xcb:
			size = 8
		case c >= 0xcc && c <= 0xcf: // uint 8..64
			size = 1 << (c - 0xcc)
		case c >= 0xd0 && c <= 0xd3: // int 8..64
			size = 1 << (c - 0xd0)
		case c >= 0xd4 && c <= 0xd8: // fixext 1..16, plus the type byte
			size = 1 + 1<<(c-0xd4)
		case c == 0xdc, c == 0xde: // array16, map16
			hdr = 2
		case c == 0xdd, c == 0xdf: // array32, map32
			hdr = 4
		default: // 0xc1 is never used
			return fmt.Errorf("invalid code 0x%02x at byte %d", c, i-1)
		}
		if hdr > 0 {
			if len(b)-i < hdr {
				return errTruncated
			}
			var n uint64
			switch hdr {
			case 1:
				n = uint64(b[i])
			case 2:
				n = uint64(binary.BigEndian.Uint16(b[i:]))
			case 4:
				n = uint64(binary.BigEndian.Uint32(b[i:]))
			}
			i += hdr
			switch c {
			case 0xdc, 0xdd:
				elems = n
			case 0xde, 0xdf:
				elems = 2 * n
			default:
				size += n
			}
		}
		left := uint64(len(b) - i)
		if size > left {
			return fmt.Errorf("length %d at byte %d exceeds the %d bytes left", size, i, left)
		}
		i += int(size)
		left -= size
		if elems > 0 {
			if depth == maxNesting {
				return fmt.Errorf("%w at byte %d", errNesting, i)
			}
			// Every open container has one element under way (the next
			// one's, or this one); the rest need at least a byte each.
			if pending-uint64(depth)+elems > left {
				return fmt.Errorf("%d elements at byte %d exceed the %d bytes left", elems, i, left)
			}
			stack[depth] = elems
			depth++
			pending += elems
			continue
		}
		// A value is complete: count it against the containers it ends.
		for {
			if depth == 0 {
				return nil
			}
			stack[depth-1]--
			pending--
			if stack[depth-1] > 0 {
				break
			}
			depth--
		}
	}
}
