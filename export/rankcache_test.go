package export_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// TestRankCache: exports given one RankCache rank the graph once for the
// same graph and filters, write what exports without it write, and rank
// again when the filters or the graph change; the Common Crawl format,
// which carries no ranks, computes none.
func TestRankCache(t *testing.T) {
	ctx := context.Background()
	s := paStore(t, 300)
	base := fixedOptions()
	base.NoLayout = true
	text := func(f export.Format, opt export.Options) []byte {
		t.Helper()
		var buf bytes.Buffer
		if _, err := export.Write(ctx, &buf, s, f, opt); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	cache := &export.RankCache{}
	cached := base
	cached.Ranks = cache
	check := func(what string, computed int, opt, cachedOpt export.Options) {
		t.Helper()
		for _, f := range []export.Format{export.FormatJSON, export.FormatGraphML} {
			if want, got := text(f, opt), text(f, cachedOpt); !bytes.Equal(got, want) {
				t.Errorf("%s: %s with the cache differs from %s without it", what, f, f)
			}
		}
		if _, err := export.WriteFile(ctx, s, filepath.Join(t.TempDir(), "g.sqlite"), export.FormatSQLite, cachedOpt); err != nil {
			t.Fatal(err)
		}
		if _, err := export.CSV(ctx, s, filepath.Join(t.TempDir(), "g"), cachedOpt); err != nil {
			t.Fatal(err)
		}
		if got := cache.Computed(); got != computed {
			t.Errorf("%s: ranks computed %d times, want %d", what, got, computed)
		}
	}
	check("four files", 1, base, cached)

	// A new link: the graph changed, the ranks are computed again.
	err := s.Update(func(tx *kv.Tx) error {
		from, _ := graph.Lookup(tx, "h1.d1.example")
		to, _ := graph.Lookup(tx, "h2.d2.example")
		return graph.AddEdge(tx, from, to, 7, t0)
	})
	if err != nil {
		t.Fatal(err)
	}
	check("after a change", 2, base, cached)

	top, cachedTop := base, cached
	top.Top, cachedTop.Top = 20, 20
	check("the top 20", 3, top, cachedTop)
	check("the top 20 again", 3, top, cachedTop)

	if _, err := export.CCHostGraph(ctx, s, filepath.Join(t.TempDir(), "cc"), cached); err != nil {
		t.Fatal(err)
	}
	if got := cache.Computed(); got != 3 {
		t.Errorf("the Common Crawl format computed ranks: %d times, want 3", got)
	}
}
