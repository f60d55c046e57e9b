package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/export"
)

// htmlGraph is the node-link JSON inside a map page.
func htmlGraph(t *testing.T, page []byte) (nodes []map[string]any, edges []map[string]any) {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script id="weaver-graph" type="application/json">(.*?)</script>`).FindSubmatch(page)
	if m == nil {
		t.Fatal("no graph in the page")
	}
	var g struct {
		Nodes []map[string]any `json:"nodes"`
		Edges []map[string]any `json:"edges"`
	}
	if err := json.Unmarshal(m[1], &g); err != nil {
		t.Fatalf("the page's graph: %v", err)
	}
	return g.Nodes, g.Edges
}

// TestHTML: the map page holds the JSON export of the store, filters
// applied, whatever the titles hold, and loads nothing from elsewhere.
func TestHTML(t *testing.T) {
	s := smallStore(t)
	var buf bytes.Buffer
	st, err := export.HTML(context.Background(), &buf, s, fixedOptions())
	if err != nil {
		t.Fatal(err)
	}
	if st.Nodes != uint64(len(smallNodes)) || st.Edges != uint64(len(smallEdges)) {
		t.Errorf("stats %+v", st)
	}
	page := buf.Bytes()
	nodes, edges := htmlGraph(t, page)
	if len(nodes) != len(smallNodes) || len(edges) != len(smallEdges) {
		t.Errorf("the page holds %d nodes and %d edges, want %d and %d", len(nodes), len(edges), len(smallNodes), len(smallEdges))
	}
	titles := map[string]bool{}
	for _, n := range nodes {
		if s, ok := n["title"].(string); ok {
			titles[s] = true
		}
	}
	if !titles[`Tom & Jerry's <"Blog">`] {
		t.Errorf("titles %v: the one with <, \" and & did not come through", titles)
	}
	if !bytes.Contains(page, []byte("<title>weaver map: weaver.bolt</title>")) {
		t.Error("the page's title does not name the store")
	}
	for _, remote := range []string{`src="http`, `href="http`, `src="//`} {
		if bytes.Contains(page, []byte(remote)) {
			t.Errorf("the page loads %s...", remote)
		}
	}

	opt := fixedOptions()
	opt.MinWeight = 3
	buf.Reset()
	if _, err := export.HTML(context.Background(), &buf, s, opt); err != nil {
		t.Fatal(err)
	}
	if _, edges := htmlGraph(t, buf.Bytes()); len(edges) != 3 {
		t.Errorf("min weight 3: %d edges, want 3", len(edges))
	}
}

// TestHTML_WriteFile: --html goes through WriteFile like the other text
// formats: built beside the target, refused over an existing file.
func TestHTML_WriteFile(t *testing.T) {
	s := smallStore(t)
	path := filepath.Join(t.TempDir(), "map.html")
	if _, err := export.WriteFile(context.Background(), s, path, export.FormatHTML, fixedOptions()); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(page), "<!DOCTYPE html>") || !strings.HasSuffix(strings.TrimSpace(string(page)), "</html>") {
		t.Error("map.html is not a whole page")
	}
	if err := export.CheckTarget(s, s.Path(), export.FormatHTML, true); err == nil {
		t.Error("an html export over the store was allowed")
	}
	if err := export.CheckTarget(s, path, export.FormatHTML, false); !errors.Is(err, export.ErrExists) {
		t.Errorf("an html export over the previous one without Force: got %v, want ErrExists", err)
	}
}

// TestHTML_Cancelled: a cancelled export returns the context's error.
func TestHTML_Cancelled(t *testing.T) {
	s := paStore(t, 30_000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := export.HTML(ctx, &bytes.Buffer{}, s, fixedOptions()); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("cancelled: %v", err)
	}
}
