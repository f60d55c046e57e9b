//go:build ignore

// gen writes history-v1.bolt, a store whose crawl history is in the
// layout of schema 1 (one record per crawl in the crawls bucket, keyed by
// node and time), and history-v1.json, what graph's readers made of it.
// It was run once, at commit 4d7fb53 (the last weaver writing schema 1),
// from the repository's root:
//
//	go run ./graph/testdata/history-v1/gen.go ./graph/testdata/history-v1/dump.go graph/testdata
//	gzip -9 -n graph/testdata/history-v1.bolt
//
// It builds only at that commit: the schema-1 writer it calls is gone since.
// The JSON is what dumpHistory (dump.go, a copy of graph/history_v1_test.go's)
// made of the store: weaver must read the file the same ever after.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s*float64(time.Second)) + 123) }

func main() {
	dir := os.Args[1]
	path := filepath.Join(dir, "history-v1.bolt")
	os.Remove(path)
	s, err := kv.Open(path, kv.Options{NoSync: true, Now: func() time.Time { return t0 }})
	must(err)
	ids := map[string]uint64{}
	must(s.Update(func(tx *kv.Tx) error {
		for _, h := range []string{"a.test", "b.test", "c.test", "d.test", "e.test", "f.test"} {
			n, _, err := graph.Ensure(tx, h, "http", t0)
			must(err)
			ids[h] = n.ID
		}
		return nil
	}))
	type l = map[string][3]uint64 // target → weight, nofollow, redirect
	crawl := func(host string, when float64, notModified bool, links l) {
		must(s.Update(func(tx *kv.Tx) error {
			from := ids[host]
			var ls []graph.Link
			for to, w := range links {
				ls = append(ls, graph.Link{To: ids[to], Weight: w[0], Nofollow: w[1], Redirect: w[2]})
				must(graph.AddEdgeFacts(tx, from, ids[to], w[0], w[1], w[2], at(when)))
			}
			graph.SortLinks(ls)
			prev, ok, err := graph.LatestCrawl(tx, from)
			must(err)
			var pp *graph.Crawl
			if ok {
				pp = &prev
			}
			changed := ok && !notModified && !graph.SameLinks(prev.Links, ls)
			must(graph.PutCrawl(tx, from, graph.Crawl{At: at(when), Changed: changed, NotModified: notModified, Links: ls}, pp))
			n, _, err := graph.Get(tx, from)
			must(err)
			n.CrawlCount++
			n.Status, n.LastCrawl, n.LastSeen = graph.StatusCrawled, at(when), at(when)
			return graph.Put(tx, &n)
		}))
	}
	ab := l{"b.test": {1, 0, 0}, "c.test": {2, 1, 0}}
	crawl("a.test", 1, false, ab)
	crawl("f.test", 1, false, l{"a.test": {2, 0, 0}, "b.test": {3, 1, 2}})
	crawl("c.test", 1.5, false, l{})
	crawl("a.test", 2, false, ab)
	crawl("b.test", 2.5, false, l{"a.test": {1, 0, 0}})
	crawl("a.test", 3, false, l{"d.test": {300, 0, 1}})
	crawl("b.test", 3.5, false, l{"a.test": {1, 0, 0}})
	crawl("a.test", 4, false, l{"b.test": {1, 0, 0}})
	crawl("a.test", 5, true, l{"b.test": {1, 0, 0}})
	crawl("a.test", 6, false, l{"b.test": {1, 0, 0}})
	crawl("c.test", 7, false, l{"a.test": {1, 0, 0}, "e.test": {4, 0, 0}})
	for i := range 30 {
		crawl("e.test", 8+float64(i), i%7 == 3, l{"f.test": {1, 0, 0}})
	}
	crawl("e.test", 40, false, l{"f.test": {1, 0, 0}, "a.test": {1, 0, 0}})
	must(s.Close())
	ro, err := kv.Open(path, kv.Options{ReadOnly: true})
	must(err)
	defer ro.Close()
	var out any
	must(ro.View(func(tx *kv.Tx) error {
		var err error
		out, err = dumpHistory(tx)
		return err
	}))
	b, err := json.MarshalIndent(out, "", " ")
	must(err)
	must(os.WriteFile(filepath.Join(dir, "history-v1.json"), append(b, '\n'), 0o644))
	fmt.Println("wrote", path)
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
