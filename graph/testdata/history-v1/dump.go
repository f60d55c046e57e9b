//go:build ignore

package main

// A copy of dumpHistory in graph/history_v1_test.go, as it was when
// gen.go ran.

import (
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// DUMP-START
func dumpHistory(tx *kv.Tx) (map[string]any, error) {
	times := []time.Duration{0, 500 * time.Millisecond, time.Second, 2600 * time.Millisecond, 3 * time.Second,
		5500 * time.Millisecond, 7500 * time.Millisecond, 20 * time.Second, time.Hour}
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	type link struct{ To, Weight, Nofollow, Redirect uint64 }
	type crawl struct {
		At                   string
		Changed, NotModified bool
		Links                []link
	}
	conv := func(c *graph.Crawl) crawl {
		out := crawl{At: c.At.Format(time.RFC3339Nano), Changed: c.Changed, NotModified: c.NotModified, Links: []link{}}
		for _, l := range c.Links {
			out.Links = append(out.Links, link(l))
		}
		return out
	}
	out := map[string]any{"has_history": graph.HasHistory(tx)}
	nodes := map[string]any{}
	err := graph.ForEachNode(tx, func(n *graph.Node) error {
		node := map[string]any{"has_crawls": graph.HasCrawls(tx, n.ID)}
		var all []crawl
		if err := graph.ForEachCrawl(tx, n.ID, func(c *graph.Crawl) error { all = append(all, conv(c)); return nil }); err != nil {
			return err
		}
		node["crawls"] = all
		ts, changed, nm, err := graph.CrawlTimes(tx, n.ID)
		if err != nil {
			return err
		}
		var tstr []string
		for _, t := range ts {
			tstr = append(tstr, t.Format(time.RFC3339Nano))
		}
		node["times"], node["changed"], node["not_modified"] = tstr, changed, nm
		var at []any
		for _, d := range times {
			t := t0.Add(d)
			if d == 0 {
				t = time.Time{}
			}
			c, ok, err := graph.CrawlAt(tx, n.ID, t)
			if err != nil {
				return err
			}
			h, err := graph.NodeHistoryAt(tx, n.ID, t0.Add(d))
			if err != nil {
				return err
			}
			e := map[string]any{"ok": ok, "history": h}
			if ok {
				e["crawl"] = conv(&c)
			}
			at = append(at, e)
		}
		node["at"] = at
		iv, first, err := graph.EdgeIntervals(tx, n.ID)
		if err != nil {
			return err
		}
		node["intervals"], node["first"] = iv, first
		nodes[n.Host] = node
		return nil
	})
	if err != nil {
		return nil, err
	}
	out["nodes"] = nodes
	var edges []any
	for _, d := range times[1:] {
		var es []graph.Edge
		if err := graph.EdgesAt(tx, t0.Add(d), func(e *graph.Edge) error { es = append(es, *e); return nil }); err != nil {
			return nil, err
		}
		edges = append(edges, es)
	}
	out["edges_at"] = edges
	app, dis, err := graph.DiffAt(tx, t0.Add(2*time.Second), t0.Add(time.Hour))
	if err != nil {
		return nil, err
	}
	out["diff"] = map[string]any{"appeared": app, "disappeared": dis}
	return out, nil
}

// DUMP-END
