package graph_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/weaver-crawler/weaver/graph"
)

// TestAppendNode: graph.Put writes a node's record with appendNode, not
// msgpack's encoder; the bytes must be those msgpack.Marshal writes
// through Node.EncodeMsgpack, for every field of Node (set by reflection,
// so a field added later is covered), at the edges of each msgpack form.
func TestAppendNode(t *testing.T) {
	r := rand.New(rand.NewPCG(54, 6))
	strs := []string{"", "a", strings.Repeat("s", 31), strings.Repeat("s", 32), strings.Repeat("é", 127) + "x",
		strings.Repeat("s", 256), strings.Repeat("s", 65535), strings.Repeat("s", 65536), "crawled", "discovered", "no_such_status"}
	ints := []int64{0, 1, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1, math.MaxInt64,
		-1, -32, -33, -128, -129, -32768, -32769, math.MinInt32, math.MinInt32 - 1, math.MinInt64}
	times := []time.Time{{}, time.Unix(0, 0), time.Unix(1, 0), time.Unix(1, 1), time.Unix(-1, 5),
		time.Date(2026, 12, 3, 19, 0, 0, 0, time.UTC), time.Date(2026, 12, 3, 19, 0, 0, 999999999, time.UTC),
		time.Unix(1<<34-1, 0), time.Unix(1<<34, 0), time.Unix(1<<34, 7), time.Date(9999, 1, 1, 0, 0, 0, 1, time.UTC)}
	timeType := reflect.TypeOf(time.Time{})
	fill := func(n *graph.Node, p float64) {
		v := reflect.ValueOf(n).Elem()
		for i := range v.NumField() {
			f := v.Field(i)
			if !f.CanSet() || r.Float64() > p {
				continue
			}
			switch {
			case f.Type() == timeType:
				f.Set(reflect.ValueOf(times[r.IntN(len(times))]))
			case f.Kind() == reflect.String:
				f.SetString(strs[r.IntN(len(strs))])
			case f.Kind() == reflect.Bool:
				f.SetBool(r.IntN(2) == 1)
			case f.CanInt():
				x := ints[r.IntN(len(ints))]
				if f.OverflowInt(x) {
					x = int64(int32(x))
				}
				f.SetInt(x)
			case f.CanUint():
				f.SetUint(uint64(ints[r.IntN(len(ints))]))
			default:
				t.Fatalf("field %s of kind %s: teach the test its values", v.Type().Field(i).Name, f.Kind())
			}
		}
	}
	check := func(n *graph.Node) {
		t.Helper()
		want, err := msgpack.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		if got := graph.AppendNode([]byte("prefix"), n); !bytes.Equal(got[6:], want) || string(got[:6]) != "prefix" {
			t.Fatalf("node %+v:\nappendNode %x\nmsgpack    %x", *n, got, want)
		}
	}
	for _, l := range codecNodes() {
		n := l.node()
		check(&n)
	}
	for i := range 20000 {
		var n graph.Node
		fill(&n, []float64{0.05, 0.3, 0.7, 1}[i%4])
		if i%3 == 0 { // the forms only some values reach
			n.Domain = n.Host[min(len(n.Host), 1):] // a suffix: written as an offset
			n.LastSeen = n.FirstSeen
		}
		check(&n)
	}
}

// BenchmarkNodeEncode: a new host's record (graph.Put of a node just
// discovered) and a crawled one's, by appendNode into a buffer of the
// size graph.Put gives it, and by msgpack.Marshal.
func BenchmarkNodeEncode(b *testing.B) {
	t0 := time.Date(2026, 12, 3, 19, 0, 0, 0, time.UTC)
	nodes := map[string]graph.Node{
		"discovered": {ID: 98430, Host: "www.acacia-254661.com", Domain: "acacia-254661.com", Scheme: "https",
			Status: graph.StatusDiscovered, Depth: 1, FirstSeen: t0, LastSeen: t0},
		"crawled": {ID: 77, Host: "blog.example.co.uk", Domain: "example.co.uk", Scheme: "https", Title: "A title of a page",
			Description: strings.Repeat("d", 160), CrawlCount: 1, Status: graph.StatusCrawled, HTTPStatus: 200,
			ContentType: "text/html; charset=utf-8", Server: "nginx", Bytes: 31000, FetchMS: 120, ContentHash: strings.Repeat("ab", 16),
			FirstSeen: t0, LastSeen: t0.Add(time.Hour), LastCrawl: t0.Add(time.Hour), PagesFetched: 1},
	}
	for _, kind := range []string{"discovered", "crawled"} {
		n := nodes[kind]
		b.Run(kind+"/appendNode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = graph.AppendNode(make([]byte, 0, graph.SizeHint(&n)), &n) // as graph.Put does
			}
		})
		b.Run(kind+"/msgpack", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := msgpack.Marshal(&n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
