package cluster

import (
	"bytes"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/kv"
)

func TestLinkCodec(t *testing.T) {
	for _, l := range []crawl.Link{{Host: "www.example.com", Scheme: "https", Depth: 3}, {Host: "a.b", Scheme: "http"},
		{Host: "xn--bcher-kva.example", Scheme: "http", Depth: 1 << 20},
		{Host: "www.example.com", Scheme: "https", First: "https://www.example.com/en/?a=1", Depth: 2},
		{Host: "a.b", Scheme: "http", First: "http://a.b/x", SeedRedirects: 3}, {Host: "a.b", Scheme: "https", SeedRedirects: 1}} {
		got, err := decodeLink(encodeLink(l))
		if err != nil || got != l {
			t.Errorf("%+v: decoded %+v, %v", l, got, err)
		}
	}
	if n := len(encodeLink(crawl.Link{Host: "www.example.com", Scheme: "https", Depth: 3})); n != 17 {
		t.Errorf("www.example.com at depth 3: %d bytes, want 17", n)
	}
	for _, bad := range [][]byte{nil, {}, {0x80}, {3}, {3, 'x', 'a'}, {0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 'h', 'a'},
		{3, 'S', 'a'}, {3, 'H', 'a', 0}, {3, 'H', 0, 'x'}, {3, 'H', 'a', 0, 0x80}} {
		if _, err := decodeLink(bad); err == nil {
			t.Errorf("decodeLink(%x) accepted", bad)
		}
	}
}

func TestMsgID(t *testing.T) {
	id := msgID("0123456789abcdef", 2, 77)
	key, ok := parseMsgID("0123456789abcdef", id)
	if !ok || !bytes.Equal(key, append(kv.U32(2), kv.U64(77)...)) {
		t.Fatalf("parseMsgID(%q) = %x, %v", id, key, ok)
	}
	for _, bad := range []string{"", "other.2.77", "0123456789abcdef.2", "0123456789abcdef.x.1", "0123456789abcdef.1.-1"} {
		if _, ok := parseMsgID("0123456789abcdef", bad); ok {
			t.Errorf("parseMsgID(%q) accepted", bad)
		}
	}
}

func TestCrawlName(t *testing.T) {
	a, err := CrawlName([]string{"https://Example.com", "http://b.example/x"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := CrawlName([]string{"http://b.example/x", "https://example.com/", "https://example.com"})
	c, _ := CrawlName([]string{"https://example.com"})
	if a != b || a == c || len(a) != 16 {
		t.Errorf("names %q %q %q: want the first two equal, the third different", a, b, c)
	}
}

func TestRedact(t *testing.T) {
	got := Redact("nats://weaver:s3cret@a:4222, nats://b:4222")
	if strings.Contains(got, "s3cret") || !strings.Contains(got, "nats://weaver:xxxxx@a:4222") || !strings.Contains(got, "nats://b:4222") {
		t.Errorf("Redact: %q", got)
	}
}
