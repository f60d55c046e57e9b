package graph_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// legacyNode is Node as msgpack's reflection encoded it before Node had a
// codec of its own: stores written then must read the same, and new
// records must be the same bytes.
type legacyNode struct {
	ID          uint64    `msgpack:"id"`
	Host        string    `msgpack:"h"`
	Domain      string    `msgpack:"d,omitempty"`
	Scheme      string    `msgpack:"sc,omitempty"`
	Title       string    `msgpack:"t,omitempty"`
	Description string    `msgpack:"ds,omitempty"`
	CrawlCount  int       `msgpack:"cc,omitempty"`
	FailCount   int       `msgpack:"fc,omitempty"`
	Status      string    `msgpack:"st,omitempty"`
	HTTPStatus  int       `msgpack:"hs,omitempty"`
	ContentType string    `msgpack:"ct,omitempty"`
	Server      string    `msgpack:"sv,omitempty"`
	Bytes       int64     `msgpack:"b,omitempty"`
	FetchMS     int64     `msgpack:"ms,omitempty"`
	ContentHash string    `msgpack:"ch,omitempty"`
	Error       string    `msgpack:"e,omitempty"`
	Depth       int       `msgpack:"dp,omitempty"`
	FirstSeen   time.Time `msgpack:"fs,omitempty"`
	LastSeen    time.Time `msgpack:"ls,omitempty"`
	LastCrawl   time.Time `msgpack:"lc,omitempty"`
	// Fields added with issue 20: stores written before them decode with
	// zero values (the first records of codecNodes have none).
	Canonical        string `msgpack:"cn,omitempty"`
	RobotsDirectives string `msgpack:"rd,omitempty"`
	MirrorOf         uint64 `msgpack:"mo,omitempty"`
	PagesFetched     int    `msgpack:"pf,omitempty"`
}

func (l legacyNode) node() graph.Node {
	return graph.Node{ID: l.ID, Host: l.Host, Domain: l.Domain, Scheme: l.Scheme, Title: l.Title, Description: l.Description,
		CrawlCount: l.CrawlCount, FailCount: l.FailCount, Status: graph.Status(l.Status), HTTPStatus: l.HTTPStatus,
		ContentType: l.ContentType, Server: l.Server, Bytes: l.Bytes, FetchMS: l.FetchMS, ContentHash: l.ContentHash,
		Error: l.Error, Depth: l.Depth, FirstSeen: l.FirstSeen, LastSeen: l.LastSeen, LastCrawl: l.LastCrawl,
		Canonical: l.Canonical, RobotsDirectives: l.RobotsDirectives, MirrorOf: l.MirrorOf, PagesFetched: l.PagesFetched}
}

func codecNodes() []legacyNode {
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 891, time.UTC)
	return []legacyNode{
		{},
		{ID: 1, Host: "a.test"},
		{ID: 1 << 40, Host: "xn--bcher-kva.example", Domain: "xn--bcher-kva.example", Scheme: "https", Status: "discovered",
			Depth: 3, FirstSeen: t0, LastSeen: t0},
		{ID: 77, Host: "blog.example.co.uk", Domain: "example.co.uk", Scheme: "http", Title: "Ünïcode \"title\"",
			Description: string(bytes.Repeat([]byte("d"), 300)), CrawlCount: 2, FailCount: 1, Status: "crawled",
			HTTPStatus: 200, ContentType: "text/html; charset=utf-8", Server: "nginx", Bytes: 1 << 20, FetchMS: 70000,
			ContentHash: "ab12", Error: "x", Depth: 1, FirstSeen: t0, LastSeen: t0.Add(time.Hour),
			LastCrawl: time.Unix(1, 0)},
		{ID: 5, Host: "neg.test", CrawlCount: -1, HTTPStatus: -300, Bytes: -1 << 40, Depth: -2},
		{ID: 9, Host: "mirror.example", Status: "crawled", ContentHash: "ab12", FirstSeen: t0,
			Canonical: "https://www.example.com/", RobotsDirectives: "noindex,nofollow", MirrorOf: 3, PagesFetched: 7},
		{ID: 10, Host: "big.example", MirrorOf: 1 << 40, PagesFetched: 1 << 20, Status: "out_of_scope"},
	}
}

// TestNodeCodec_SameBytesAsReflection: Node's own codec writes exactly
// what msgpack's reflection wrote, and each reads the other's records.
func TestNodeCodec_SameBytesAsReflection(t *testing.T) {
	for _, l := range codecNodes() {
		old, err := msgpack.Marshal(&l)
		if err != nil {
			t.Fatal(err)
		}
		n := l.node()
		got, err := kv.Encode(&n)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, old) {
			t.Errorf("node %d:\n codec   % x\n reflect % x", l.ID, got, old)
		}
		var back graph.Node
		if err := kv.Decode(old, &back); err != nil {
			t.Fatalf("node %d: decode: %v", l.ID, err)
		}
		var lback legacyNode
		if err := msgpack.Unmarshal(got, &lback); err != nil {
			t.Fatal(err)
		}
		if want := lback.node(); !sameNode(back, want) {
			t.Errorf("node %d: decoded\n %+v\nwant\n %+v", l.ID, back, want)
		}
	}
}

func sameNode(a, b graph.Node) bool {
	ta := [...]time.Time{a.FirstSeen, a.LastSeen, a.LastCrawl}
	tb := [...]time.Time{b.FirstSeen, b.LastSeen, b.LastCrawl}
	for i := range ta {
		if !ta[i].Equal(tb[i]) {
			return false
		}
	}
	a.FirstSeen, a.LastSeen, a.LastCrawl = time.Time{}, time.Time{}, time.Time{}
	b.FirstSeen, b.LastSeen, b.LastCrawl = time.Time{}, time.Time{}, time.Time{}
	return a == b
}

// BenchmarkNodeCodec encodes and decodes a crawled node, as every page's
// commit does for its own node and each of its link targets.
func BenchmarkNodeCodec(b *testing.B) {
	n := codecNodes()[3].node()
	b.ReportAllocs()
	for b.Loop() {
		data, err := kv.Encode(&n)
		if err != nil {
			b.Fatal(err)
		}
		var back graph.Node
		if err := kv.Decode(data, &back); err != nil {
			b.Fatal(err)
		}
	}
}
