package export_test

import (
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/weaver-crawler/weaver/export"
)

// TestPalette_SameAsTheMap: the exports colour community k as the map
// page does (PALETTE in ui/src/colours.js), so that the DOT picture, the
// GEXF file and the map agree on every community's colour.
func TestPalette_SameAsTheMap(t *testing.T) {
	src, err := os.ReadFile("../ui/src/colours.js")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)export const PALETTE = \[(.*?)\]`).FindSubmatch(src)
	if m == nil {
		t.Fatal("ui/src/colours.js: no PALETTE")
	}
	want := regexp.MustCompile(`#[0-9a-f]{6}`).FindAllString(string(m[1]), -1)
	if len(want) != len(export.Palette) {
		t.Fatalf("the map has %d colours, the exports %d", len(want), len(export.Palette))
	}
	for i, c := range export.Palette {
		if got := fmt.Sprintf("#%02x%02x%02x", c[0], c[1], c[2]); got != want[i] {
			t.Errorf("community %d: the exports' %s, the map's %s", i, got, want[i])
		}
	}
}
