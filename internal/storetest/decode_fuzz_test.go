package storetest_test

import (
	"runtime/metrics"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// FuzzDecodeRecords decodes arbitrary bytes as every record type the store
// holds: a damaged value must give an error, never a panic or a huge
// allocation. Seeds are real encodings of each type.
func FuzzDecodeRecords(f *testing.F) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, v := range []any{
		&graph.Node{ID: 7, Host: "blog.example.co.uk", Domain: "example.co.uk", Title: "T", Status: graph.StatusCrawled, FirstSeen: t0},
		&graph.Node{ID: 8, Host: "www.example.com", Domain: "example.com", Status: graph.StatusDiscovered, FirstSeen: t0, LastSeen: t0},
		&graph.Edge{Weight: 3, FirstSeen: t0, LastSeen: t0},
		&graph.Edge{Weight: 3, FirstSeen: t0, LastSeen: t0.Add(time.Hour)},
		&frontier.Entry{NodeID: 9, Host: "a.test", URL: "http://a.test/", Depth: 2},
		&frontier.Entry{NodeID: 9, Host: "a.test", URL: "https://a.test/", Depth: 2},
		&frontier.Entry{NodeID: 9, Host: "a.test", URL: "http://a.test/page", Depth: 2},
		&frontier.Lease{Entry: frontier.Entry{NodeID: 9, Host: "a.test"}, Key: []byte("0123456789ab"), Since: t0},
	} {
		b, err := kv.Encode(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff}) // array32 claiming 4 G elements
	f.Add([]byte{0xdb, 0xff, 0xff, 0xff, 0xff}) // str32 claiming 4 GiB
	allocs := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		metrics.Read(allocs)
		before := allocs[0].Value.Uint64()
		var n graph.Node
		_ = kv.Decode(data, &n)
		_ = graph.DecodeNode(kv.U64(7), data, &n)
		var e graph.Edge
		_ = kv.Decode(data, &e)
		var en frontier.Entry
		_ = kv.Decode(data, &en)
		var l frontier.Lease
		_ = kv.Decode(data, &l)
		// Five decodes of at most a MiB each beyond the data (msgpack's
		// read chunk); a decoder buffer that grows from value to value
		// goes past it within a few inputs.
		metrics.Read(allocs)
		if got, limit := allocs[0].Value.Uint64()-before, uint64(6<<20+16*len(data)); got > limit {
			t.Fatalf("decoding %d bytes allocated %d bytes (limit %d)", len(data), got, limit)
		}
	})
}
