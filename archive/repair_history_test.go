package archive_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// histories reads every host's crawls from the store at path (a repair
// keeps node ids).
func histories(t *testing.T, path string) map[string][]graph.Crawl {
	t.Helper()
	s, err := kv.Open(path, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := map[string][]graph.Crawl{}
	err = s.View(func(tx *kv.Tx) error {
		return graph.ForEachNode(tx, func(n *graph.Node) error {
			return graph.ForEachCrawl(tx, n.ID, func(c *graph.Crawl) error {
				cr := *c
				cr.Links = slices.Clone(c.Links)
				out[n.Host] = append(out[n.Host], cr)
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRepair_History loses a leaf page of sealed history segments and
// damages a host's open segment: the repaired store passes weaver check,
// each drop is named, every host keeps the crawls that were readable (in
// order, no crawl invented), and the hosts the damage did not reach read
// exactly as before.
func TestRepair_History(t *testing.T) {
	dir := t.TempDir()
	pristine := build(t, filepath.Join(dir, "pristine.bolt"), func(b *builder) {
		for m := range 30 {
			for i := range 200 {
				links := map[string]uint64{fmt.Sprintf("h%d.test", (i+1)%200): 1, fmt.Sprintf("h%d.test", (i+7)%200): uint64(1 + m/10)}
				b.crawl(fmt.Sprintf("h%d.test", i), 100*m+i%100, m%10 == 0, links)
			}
		}
	})
	src := filepath.Join(dir, "damaged.bolt")
	copyFile(t, pristine, src)
	_, leaves := storetest.LeafPages(t, pristine, kv.BucketHistory)
	_, open := storetest.LeafPages(t, pristine, kv.BucketRecent)
	if len(leaves) < 3 || len(open) < 1 {
		t.Fatalf("%d history and %d recent leaves: too small for the test", len(leaves), len(open))
	}
	storetest.Patch(t, src, leaves[1].Offset+10, []byte{0xff, 0xff}) // element count 65535: the page is lost
	_, _, v := storetest.LeafElement(t, pristine, open[0], 2)
	storetest.Patch(t, src, v, []byte{0x80, 0x80}) // an open segment's chain fields cut short
	out := filepath.Join(dir, "out.bolt")
	res, drops, err := repair(t, src, out)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, d := range drops {
		lines = append(lines, d.String())
	}
	all := strings.Join(lines, "\n")
	if res.LostPages != 1 || !strings.Contains(all, fmt.Sprintf("history: page %d", leaves[1].Page)) ||
		res.ByBucket["recent"] != 1 {
		t.Errorf("%d pages lost, drops:\n%s\nwant history's page %d and one recent record", res.LostPages, all, leaves[1].Page)
	}
	got, want := histories(t, out), histories(t, pristine)
	reached := 0
	for host, w := range want {
		g := got[host]
		if len(g) == len(w) {
			for i := range w {
				if !g[i].At.Equal(w[i].At) || g[i].Changed != w[i].Changed || !graph.SameLinks(g[i].Links, w[i].Links) {
					t.Errorf("%s crawl %d: %+v, want %+v", host, i, g[i], w[i])
				}
			}
			continue
		}
		reached++
		i := 0
		for _, c := range g { // in order, each one of the pristine store's
			for i < len(w) && !w[i].At.Equal(c.At) {
				i++
			}
			if i == len(w) || c.Changed != w[i].Changed {
				t.Errorf("%s: crawl at %s is not one of the pristine store's, in order", host, c.At)
				break
			}
		}
	}
	// The lost page's segments are of as many hosts at most, and the
	// damaged open segment's host loses its latest crawls.
	if reached < 2 || reached > leaves[1].Count+1 {
		t.Errorf("%d hosts lost crawls, want those of the lost page's %d segments and the damaged open segment's", reached, leaves[1].Count)
	}
	if len(got) != len(want) {
		t.Errorf("%d hosts with history, want %d", len(got), len(want))
	}
}
