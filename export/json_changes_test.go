package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// TestJSON_Changes: a host's change count and last change (issue 27) are
// on its JSON node, as changes and last_change, which the map page rings
// (export --html); a host that never changed has neither.
func TestJSON_Changes(t *testing.T) {
	s := newStore(t)
	changed := t0.Add(90 * time.Minute)
	err := s.Update(func(tx *kv.Tx) error {
		for i, h := range []string{"steady.example", "busy.example"} {
			n, _, err := graph.Ensure(tx, h, "https", t0)
			if err != nil {
				return err
			}
			n.Status, n.CrawlCount = graph.StatusCrawled, 3
			if i == 1 {
				n.Changes, n.LastChange = 2, changed
			}
			if err := graph.Put(tx, &n); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := export.JSON(context.Background(), &b, s, fixedOptions()); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Nodes []map[string]any `json:"nodes"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Nodes) != 2 {
		t.Fatalf("%d nodes, want 2", len(got.Nodes))
	}
	for _, n := range got.Nodes {
		switch n["host"] {
		case "busy.example":
			if n["changes"] != 2.0 || n["last_change"] != changed.UTC().Format(time.RFC3339) {
				t.Errorf("busy.example: changes %v, last_change %v; want 2, %s", n["changes"], n["last_change"], changed.UTC().Format(time.RFC3339))
			}
		default:
			if _, ok := n["changes"]; ok {
				t.Errorf("%v: changes %v, want none", n["host"], n["changes"])
			}
			if _, ok := n["last_change"]; ok {
				t.Errorf("%v: last_change %v, want none", n["host"], n["last_change"])
			}
		}
	}
}
