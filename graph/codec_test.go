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

// TestNodeCodec_ReadsReflection: the records of stores of schema 1 and 2,
// which msgpack's reflection wrote from Node's tags, read the same
// (kv.Decode, and DecodeNode, which keeps their id).
func TestNodeCodec_ReadsReflection(t *testing.T) {
	for _, l := range codecNodes() {
		old, err := msgpack.Marshal(&l)
		if err != nil {
			t.Fatal(err)
		}
		var back, keyed graph.Node
		if err := kv.Decode(old, &back); err != nil {
			t.Fatalf("node %d: decode: %v", l.ID, err)
		}
		if err := graph.DecodeNode(kv.U64(l.ID+1), old, &keyed); err != nil {
			t.Fatalf("node %d: DecodeNode: %v", l.ID, err)
		}
		want := l.node()
		if !sameNode(back, want) {
			t.Errorf("node %d: decoded\n %+v\nwant\n %+v", l.ID, back, want)
		}
		if l.ID != 0 && !sameNode(keyed, want) {
			t.Errorf("node %d: DecodeNode gave\n %+v\nwant\n %+v (the record's own id)", l.ID, keyed, want)
		}
	}
}

// TestNodeCodec_Compact: what the codec writes since schema 3 reads back
// as the node it was (its id from its key), holds no id, and tells a node
// only ever linked to in 51 bytes fewer than reflection's record (which
// keys older stores never hold make sure is not misread: see codec.go).
func TestNodeCodec_Compact(t *testing.T) {
	nodes := codecNodes()
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 891, time.UTC)
	nodes = append(nodes,
		legacyNode{ID: 11, Host: "www.robin-12491.com", Domain: "robin-12491.com", Scheme: "http", Status: "discovered",
			Depth: 4, FirstSeen: t0, LastSeen: t0},
		legacyNode{ID: 12, Host: "host.test:8080", Domain: "host.test", Status: "timeout"},        // a domain that does not end the host
		legacyNode{ID: 13, Host: "xample.test", Domain: "ample.test", Status: "fetch_error"},      // ends it, but not at a label
		legacyNode{ID: 14, Host: "other.test", Status: "not_a_status", FirstSeen: t0},             // a status "s" has no number for
		legacyNode{ID: 15, Host: "seen.test", LastSeen: t0, Status: "excluded_by_limit"},          // last seen only
		legacyNode{ID: 16, Host: "c.test", FirstSeen: t0, LastSeen: t0.Add(1), Status: "crawled"}, // times a nanosecond apart
	)
	for _, l := range nodes {
		if l.ID == 0 {
			continue
		}
		n := l.node()
		got, err := kv.Encode(&n)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(got, []byte("\xa2id")) {
			t.Errorf("node %d: the record holds its id: % x", l.ID, got)
		}
		var back graph.Node
		if err := graph.DecodeNode(kv.U64(l.ID), got, &back); err != nil {
			t.Fatalf("node %d: DecodeNode: %v (% x)", l.ID, err, got)
		}
		if !sameNode(back, n) {
			t.Errorf("node %d: decoded\n %+v\nwant\n %+v", l.ID, back, n)
		}
		if l.ID == 11 {
			old, _ := msgpack.Marshal(&l)
			if d := len(old) - len(got); d != 51 {
				t.Errorf("a node only linked to: %d bytes, reflection's %d: %d fewer, want 51", len(got), len(old), d)
			}
		}
	}
	// A number "s" does not know, or a domain offset outside the host, is
	// a damaged record.
	for _, bad := range [][]byte{
		{0x82, 0xa1, 'h', 0xa1, 'x', 0xa1, 's', 0x7f},
		{0x82, 0xa1, 'h', 0xa1, 'x', 0xa1, 'd', 0x05},
	} {
		var n graph.Node
		if err := graph.DecodeNode(kv.U64(1), bad, &n); err == nil {
			t.Errorf("% x: decoded as %+v, want an error", bad, n)
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
