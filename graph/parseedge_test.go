package graph

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/kv"
)

// TestParseEdge_AsDecode: the direct decoding of an edge value gives what
// kv.Decode gives, for every value appendEdge writes (numbers at each
// width and sign) and for every damaged or unusual value it accepts; what
// it declines goes to kv.Decode.
func TestParseEdge_AsDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 1))
	nums := []uint64{0, 1, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, math.MaxUint32, math.MaxUint32 + 1, math.MaxInt64, math.MaxUint64}
	num := func() uint64 {
		if r.IntN(2) == 0 {
			return nums[r.IntN(len(nums))]
		}
		return r.Uint64() >> r.IntN(64)
	}
	tm := func() time.Time {
		switch r.IntN(4) {
		case 0:
			return time.Time{}
		case 1:
			return time.Unix(0, -int64(num()>>1)).UTC() // before 1970: negative forms
		}
		return time.Unix(0, int64(num()>>1)).UTC()
	}
	check := func(v []byte) {
		t.Helper()
		var fast, slow Edge
		ok := parseEdge(v, &fast)
		err := kv.Decode(v, &slow)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("%x: parsed as %+v, kv.Decode fails: %v", v, fast, err)
		}
		if fast != slow {
			t.Fatalf("%x: parsed %+v, kv.Decode %+v", v, fast, slow)
		}
	}
	parsed := 0
	for range 20000 {
		e := Edge{Weight: num(), FirstSeen: tm(), LastSeen: tm()}
		if r.IntN(3) == 0 {
			e.Nofollow, e.Redirect = num(), num()
		}
		v := appendEdge(nil, &e)
		var got Edge
		if !parseEdge(v, &got) {
			t.Fatalf("%+v: its own encoding %x not parsed", e, v)
		}
		parsed++
		check(v)
		// The same value damaged: a byte changed, cut short, one more.
		w := append([]byte(nil), v...)
		w[r.IntN(len(w))] = byte(r.Uint32())
		check(w)
		check(v[:r.IntN(len(v))])
		check(append(append([]byte(nil), v...), byte(r.Uint32())))
	}
	for range 20000 {
		b := make([]byte, r.IntN(30))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		if len(b) > 0 && r.IntN(2) == 0 {
			b[0] = 0x93
		}
		check(b)
	}
	if parsed == 0 {
		t.Fatal("nothing parsed")
	}
}
