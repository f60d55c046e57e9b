package kv

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// wellFormedValues are encodings msgpack itself produces, covering every
// code family and each length-header width.
func wellFormedValues(t testing.TB) [][]byte {
	type inner struct {
		Key Bytes     `msgpack:"k"`
		At  time.Time `msgpack:"t"`
	}
	type outer struct {
		In   inner          `msgpack:"i"`
		List []int64        `msgpack:"l"`
		Map  map[string]int `msgpack:"m"`
	}
	vals := []any{
		nil, true, false, 0, 127, -1, -32, -33, 200, 70000, -70000, int64(1) << 40, uint64(1) << 63,
		float32(1.5), 2.25, "", strings.Repeat("s", 31), strings.Repeat("s", 32),
		strings.Repeat("s", 255), strings.Repeat("s", 256), strings.Repeat("s", 70000),
		[]byte{}, bytes.Repeat([]byte{1}, 255), bytes.Repeat([]byte{1}, 256), bytes.Repeat([]byte{1}, 70000),
		[]int{}, make([]int, 15), make([]int, 16), make([]int, 70000),
		map[string]int{}, map[string]int{"a": 1, "b": 2}, map[int]bool{},
		time.Unix(1, 0), time.Unix(1, 5), time.Date(2600, 1, 1, 0, 0, 0, 7, time.UTC),
		[]any{[]any{[]any{map[string]any{"x": []any{}}}}},
		outer{In: inner{Key: Bytes("0123456789ab"), At: time.Unix(1e9, 1)}, List: []int64{1, -1 << 40}, Map: map[string]int{"k": 1}},
	}
	big := make(map[int]int, 20)
	for i := range 20 {
		big[i] = i
	}
	vals = append(vals, big)
	var out [][]byte
	for _, v := range vals {
		b, err := msgpack.Marshal(v)
		if err != nil {
			t.Fatalf("Marshal(%T): %v", v, err)
		}
		out = append(out, b)
	}
	// Extensions of each fixed and variable size (the time ext above is -1).
	for _, n := range []int{1, 2, 4, 8, 16, 3, 255, 256, 70000} {
		var b []byte
		switch n {
		case 1, 2, 4, 8, 16:
			code := map[int]byte{1: 0xd4, 2: 0xd5, 4: 0xd6, 8: 0xd7, 16: 0xd8}[n]
			b = append([]byte{code, 5}, make([]byte, n)...)
		case 3, 255:
			b = append([]byte{0xc7, byte(n), 5}, make([]byte, n)...)
		case 256:
			b = append([]byte{0xc8, 1, 0, 5}, make([]byte, n)...)
		default:
			b = append([]byte{0xc9, 0, 1, 0x11, 0x70, 5}, make([]byte, n)...)
		}
		out = append(out, b)
	}
	return out
}

func TestWellFormed_AcceptsEncodingsRejectsPrefixes(t *testing.T) {
	for _, b := range wellFormedValues(t) {
		if err := wellFormed(b); err != nil {
			t.Errorf("wellFormed(% x…) = %v, want nil", b[:min(len(b), 12)], err)
		}
		if err := wellFormed(append(b[:len(b):len(b)], 0xc1, 0xc1)); err != nil {
			t.Errorf("with trailing bytes: wellFormed(% x…) = %v, want nil", b[:min(len(b), 12)], err)
		}
		// Every proper prefix is missing bytes of the value.
		step := 1
		if len(b) > 600 {
			step = 97
		}
		for k := 0; k < len(b); k += step {
			if wellFormed(b[:k]) == nil {
				t.Errorf("prefix %d of %d bytes (% x…) accepted", k, len(b), b[:min(len(b), 12)])
			}
		}
	}
}

func TestWellFormed_RejectsLies(t *testing.T) {
	nest := func(n int) []byte { return append(bytes.Repeat([]byte{0x91}, n), 0xc0) }
	if err := wellFormed(nest(maxNesting)); err != nil {
		t.Errorf("%d levels: %v", maxNesting, err)
	}
	for _, tt := range []struct {
		name string
		data []byte
		want error // nil: any error
	}{
		{"empty", nil, errTruncated},
		{"never-used code", []byte{0xc1}, nil},
		{"str32 claiming 2 GiB", []byte{0xdb, 0x7f, 0xff, 0xff, 0xff, 'a'}, nil},
		{"str8 one short", []byte{0xd9, 3, 'a', 'b'}, nil},
		{"bin32 claiming 4 GiB", []byte{0xc6, 0xff, 0xff, 0xff, 0xff, 0}, nil},
		{"ext32 claiming 4 GiB", []byte{0xc9, 0xff, 0xff, 0xff, 0xff, 0xff, 0}, nil},
		{"ext32 whose type byte is missing", []byte{0xc9, 0, 0, 0, 0}, nil},
		{"fixext16 short", []byte{0xd8, 5, 1, 2}, nil},
		{"array32 claiming 4 G elements", []byte{0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0, 0xc0}, nil},
		{"map32 claiming 4 G pairs", []byte{0xdf, 0xff, 0xff, 0xff, 0xff, 0xc0, 0xc0}, nil},
		{"fixarray of 15 with 3", []byte{0x9f, 1, 2, 3}, nil},
		{"outer array's elements counted", []byte{0x92, 0x92, 1, 2}, nil},
		{"map missing its last value", []byte{0x82, 1, 2, 3}, nil},
		{"array16 header cut", []byte{0xdc, 0}, errTruncated},
		{"uint64 cut", []byte{0xcf, 1, 2, 3}, nil},
		{"too deep", nest(maxNesting + 1), errNesting},
	} {
		err := wellFormed(tt.data)
		if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
			t.Errorf("%s: wellFormed(% x) = %v, want %v", tt.name, tt.data, err, tt.want)
		}
	}
}

// msgpack grows its pooled decoder's buffer towards whatever length a value
// claims and keeps it: before Decode checked lengths, 40 decodes of this
// 6-byte value allocated gigabytes and left ~700 MiB in use.
func TestDecode_DamagedLengthsAllocateLittle(t *testing.T) {
	bad := [][]byte{
		{0xdb, 0x7f, 0xff, 0xff, 0xff, 'a'},
		{0xc6, 0x7f, 0xff, 0xff, 0xff, 'a'},
		{0x81, 0xa1, 'h', 0xdb, 0x7f, 0xff, 0xff, 0xff, 'a'},
		{0x81, 0xa2, 'f', 's', 0xc9, 0x7f, 0xff, 0xff, 0xff, 0xff, 'a'},
	}
	type node struct {
		Host string    `msgpack:"h"`
		FS   time.Time `msgpack:"fs"`
		Key  Bytes     `msgpack:"k"`
	}
	var s string
	var n node
	_ = Decode([]byte{0xa3, 'a', 'b', 'c'}, &s)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 40 {
		for _, b := range bad {
			if Decode(b, &s) == nil {
				t.Fatalf("Decode(% x) into a string succeeded", b)
			}
			if Decode(b, &n) == nil {
				t.Fatalf("Decode(% x) into a struct succeeded", b)
			}
		}
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
		t.Errorf("320 damaged decodes allocated %d MiB, want < 4 MiB", got>>20)
	}
}

// FuzzWellFormed: wellFormed never panics, and never rejects a value
// msgpack reads (unless it nests deeper than weaver's records can).
func FuzzWellFormed(f *testing.F) {
	for _, b := range wellFormedValues(f) {
		if len(b) < 4096 {
			f.Add(b)
		}
	}
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		err := wellFormed(data)
		if err == nil || errors.Is(err, errNesting) {
			return
		}
		// msgpack's Skip walks the value as its decoders do, allocating at
		// most 1 MiB per claimed length on a fresh decoder (decoding into
		// an interface would allocate whatever an array header claims).
		if msgpack.NewDecoder(bytes.NewReader(data)).Skip() == nil {
			t.Fatalf("wellFormed(% x) = %v, but msgpack reads it", data, err)
		}
	})
}
