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
	var open containers
	i := 0
	for {
		if i >= len(b) {
			return errTruncated
		}
		c := b[i]
		h, err := headOf(c, i)
		if err != nil {
			return err
		}
		i++
		if h.hdr > 0 {
			if i, err = h.length(b, i, c); err != nil {
				return err
			}
		}
		left := uint64(len(b) - i)
		if h.size > left {
			return fmt.Errorf("length %d at byte %d exceeds the %d bytes left", h.size, i, left)
		}
		i += int(h.size)
		left -= h.size
		if h.elems > 0 {
			if err := open.push(h.elems, left, i); err != nil {
				return err
			}
			continue
		}
		if open.complete() {
			return nil
		}
	}
}

// head is what a value's code says of it.
type head struct {
	size, elems uint64 // payload bytes to skip; child values to read
	hdr         int    // bytes of length header after the code
}

// headOf returns what code c, at byte at, says of its value, before its
// length header is read.
func headOf(c byte, at int) (h head, err error) {
	switch {
	case c <= 0x7f, c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3:
		// fixint, nil, false, true
	case c&0xf0 == 0x80:
		h.elems = 2 * uint64(c&0x0f)
	case c&0xf0 == 0x90:
		h.elems = uint64(c & 0x0f)
	case c&0xe0 == 0xa0:
		h.size = uint64(c & 0x1f)
	case c == 0xc4, c == 0xd9: // bin8, str8
		h.hdr = 1
	case c == 0xc5, c == 0xda: // bin16, str16
		h.hdr = 2
	case c == 0xc6, c == 0xdb: // bin32, str32
		h.hdr = 4
	case c == 0xc7: // ext8: length, type, data
		h.hdr, h.size = 1, 1
	case c == 0xc8:
		h.hdr, h.size = 2, 1
	case c == 0xc9:
		h.hdr, h.size = 4, 1
	case c == 0xca:
		h.size = 4
	case c == 0xcb:
		h.size = 8
	case c >= 0xcc && c <= 0xcf: // uint 8..64
		h.size = 1 << (c - 0xcc)
	case c >= 0xd0 && c <= 0xd3: // int 8..64
		h.size = 1 << (c - 0xd0)
	case c >= 0xd4 && c <= 0xd8: // fixext 1..16, plus the type byte
		h.size = 1 + 1<<(c-0xd4)
	case c == 0xdc, c == 0xde: // array16, map16
		h.hdr = 2
	case c == 0xdd, c == 0xdf: // array32, map32
		h.hdr = 4
	default: // 0xc1 is never used
		return h, fmt.Errorf("invalid code 0x%02x at byte %d", c, at)
	}
	return h, nil
}

// length reads the length header of code c's value at b[i:] into h (the
// elements of an array or map, the payload bytes of the rest) and returns
// where the header ends.
func (h *head) length(b []byte, i int, c byte) (int, error) {
	if len(b)-i < h.hdr {
		return i, errTruncated
	}
	var n uint64
	switch h.hdr {
	case 1:
		n = uint64(b[i])
	case 2:
		n = uint64(binary.BigEndian.Uint16(b[i:]))
	case 4:
		n = uint64(binary.BigEndian.Uint32(b[i:]))
	}
	switch c {
	case 0xdc, 0xdd:
		h.elems = n
	case 0xde, 0xdf:
		h.elems = 2 * n
	default:
		h.size += n
	}
	return i + h.hdr, nil
}

// containers are the arrays and maps open around the value being read.
type containers struct {
	stack   [maxNesting]uint64 // elements still to read in each
	depth   int
	pending uint64 // sum of stack[:depth]
}

// push opens a container of elems elements at byte at, left bytes before
// the end.
func (o *containers) push(elems, left uint64, at int) error {
	if o.depth == maxNesting {
		return fmt.Errorf("%w at byte %d", errNesting, at)
	}
	// Every open container has one element under way (the next one's, or
	// this one); the rest need at least a byte each.
	if o.pending-uint64(o.depth)+elems > left {
		return fmt.Errorf("%d elements at byte %d exceed the %d bytes left", elems, at, left)
	}
	o.stack[o.depth] = elems
	o.depth++
	o.pending += elems
	return nil
}

// complete counts a value that is complete against the containers it
// ends, and reports whether it was the outermost value.
func (o *containers) complete() bool {
	for {
		if o.depth == 0 {
			return true
		}
		o.stack[o.depth-1]--
		o.pending--
		if o.stack[o.depth-1] > 0 {
			return false
		}
		o.depth--
	}
}
