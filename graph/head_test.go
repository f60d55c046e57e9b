package graph

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/kv"
)

// The head reader agrees with the full decoder on every node shape weaver
// writes, and gives up (never panics, never reads past the end) on
// anything cut short or damaged.
func TestDecodeHead_AgreesWithDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var str func(n int) string
	str = func(n int) string {
		if n > 64 { // a long string's bytes do not matter: a random 64 repeated
			return strings.Repeat(str(64), n/64+1)[:n]
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return string(b)
	}
	times := []time.Time{{}, time.Unix(1, 0), time.Unix(1700000000, 0), time.Unix(1700000000, 123456789),
		time.Unix(1<<35, 5), time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC), time.Now()}
	statuses := []Status{"", StatusDiscovered, StatusCrawled, StatusExcludedByLimit, StatusHTTPError, StatusOutOfScope, "something else"}
	for i := 0; i < 3000; i++ {
		n := Node{
			ID: rng.Uint64N(1 << uint(rng.IntN(64))), Host: str(1 + rng.IntN(40)), Domain: str(rng.IntN(20)),
			Scheme: []string{"", "http", "https", "gopher"}[rng.IntN(4)], Title: str(rng.IntN(300)),
			Description: str(rng.IntN(70000) * rng.IntN(2)), CrawlCount: rng.IntN(1 << uint(rng.IntN(40))),
			FailCount: rng.IntN(5), Status: statuses[rng.IntN(len(statuses))], HTTPStatus: rng.IntN(600),
			ContentType: str(rng.IntN(30)), Bytes: rng.Int64N(1 << 40), FetchMS: rng.Int64N(1 << 20),
			ContentHash: str(64 * rng.IntN(2)), Error: str(rng.IntN(100)), Depth: rng.IntN(1<<uint(rng.IntN(31))) - rng.IntN(2),
			FirstSeen: times[rng.IntN(len(times))], LastSeen: times[rng.IntN(len(times))], LastCrawl: times[rng.IntN(len(times))],
			Canonical: str(rng.IntN(80) * rng.IntN(2)), RobotsDirectives: str(rng.IntN(20) * rng.IntN(2)),
			MirrorOf: rng.Uint64N(1<<uint(rng.IntN(64))) * uint64(rng.IntN(2)), PagesFetched: rng.IntN(1 << uint(rng.IntN(20))),
		}
		switch rng.IntN(3) { // a domain that ends the host: written as an offset (schema 3)
		case 0:
			n.Domain = n.Host
		case 1:
			n.Host += "." + n.Domain
		}
		data, err := kv.Encode(&n)
		if err != nil {
			t.Fatal(err)
		}
		var full Node
		if err := DecodeNode(kv.U64(n.ID), data, &full); err != nil {
			t.Fatal(err)
		}
		if n.ID != 0 && !sameNodeFields(full, n) {
			t.Fatalf("node %d: decoded\n %+v\nwant\n %+v", i, full, n)
		}
		want := full.Head()
		got, host, ok := decodeHeadHost(data)
		if string(host) != full.Host {
			t.Fatalf("node %d: host %q, full decode %q", i, host, full.Host)
		}
		got.ID = full.ID
		if !ok || got.ID != want.ID || got.Scheme != want.Scheme || got.CrawlCount != want.CrawlCount ||
			got.Status != want.Status || got.Depth != want.Depth || !got.LastSeen.Equal(want.LastSeen) {
			t.Fatalf("node %d: head %+v (ok %v), full decode %+v", i, got, ok, want)
		}
		// Cuts every few bytes, but only every ~500 inside the middle of
		// a long record: that is inside the description's string, where
		// every cut is the same case (it cost 40 s under -race).
		for cut := 0; cut < len(data); cut += 1 + rng.IntN(7) {
			if cut > 2048 && cut < len(data)-2048 {
				cut += rng.IntN(1000)
			}
			if _, _, ok := decodeHeadHost(data[:cut]); ok {
				t.Fatalf("node %d cut to %d of %d bytes: head reader did not give up", i, cut, len(data))
			}
		}
		bad := append([]byte(nil), data...)
		bad[rng.IntN(len(bad))] ^= byte(1 + rng.IntN(255))
		decodeHeadHost(bad) // must not panic
	}
}

func BenchmarkNodeHead(b *testing.B) {
	n := Node{ID: 7, Host: "www.example.com", Domain: "example.com", Scheme: "https", Title: "A title of some length",
		Description: "A description that is a good deal longer than the title, as they are", CrawlCount: 1,
		Status: StatusCrawled, HTTPStatus: 200, ContentType: "text/html; charset=utf-8", Bytes: 34297, FetchMS: 3,
		ContentHash: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", Depth: 4,
		FirstSeen: time.Now(), LastSeen: time.Now(), LastCrawl: time.Now()}
	data, _ := kv.Encode(&n)
	b.Run("full", func(b *testing.B) {
		for b.Loop() {
			var m Node
			_ = kv.Decode(data, &m)
		}
	})
	b.Run("head", func(b *testing.B) {
		for b.Loop() {
			decodeHeadHost(data)
		}
	})
}

// sameNodeFields is a == b with times compared as instants.
func sameNodeFields(a, b Node) bool {
	for _, p := range [][2]*time.Time{{&a.FirstSeen, &b.FirstSeen}, {&a.LastSeen, &b.LastSeen}, {&a.LastCrawl, &b.LastCrawl},
		{&a.NextDue, &b.NextDue}, {&a.LastChange, &b.LastChange}} {
		if !p[0].Equal(*p[1]) {
			return false
		}
		*p[0], *p[1] = time.Time{}, time.Time{}
	}
	return a == b
}
