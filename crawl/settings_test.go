package crawl_test

import (
	"slices"
	"testing"

	"github.com/weaver-crawler/weaver/crawl"
)

// TestSettings_EveryKeyDecided fails when a config key is added without
// deciding whether a store remembers it (crawl.SettingKeys) or not.
func TestSettings_EveryKeyDecided(t *testing.T) {
	for _, key := range crawl.Keys() {
		if !slices.Contains(crawl.SettingKeys, key) && !slices.Contains(crawl.NotStored, key) {
			t.Errorf("config key %s is neither in SettingKeys nor in notStored: decide whether a store remembers it", key)
		}
		if slices.Contains(crawl.SettingKeys, key) && slices.Contains(crawl.NotStored, key) {
			t.Errorf("config key %s is both stored and not", key)
		}
	}
	for _, key := range crawl.GraphKeys {
		if !slices.Contains(crawl.SettingKeys, key) {
			t.Errorf("graph key %s is not stored", key)
		}
	}
}

func TestSettings_ApplyRoundTrip(t *testing.T) {
	a := crawl.Defaults()
	a.MaxDepth, a.MaxOutboundLinks, a.ConnectTo = 0, 3, []string{"::127.0.0.1:8080"}
	a.MaxPages = 30 // a budget: not stored
	b := crawl.Defaults()
	if err := b.Apply(a.Settings(), "store"); err != nil {
		t.Fatal(err)
	}
	if d := a.Settings().Diff(b.Settings(), crawl.SettingKeys); len(d) != 0 {
		t.Errorf("after Apply, differ in %v", d)
	}
	if b.MaxPages != 0 {
		t.Errorf("max_pages %d applied from settings, want the default", b.MaxPages)
	}
	if got, want := b.Settings().Text("max_depth"), "0 (no limit)"; got != want {
		t.Errorf("Text(max_depth) = %q, want %q", got, want)
	}
	if got := b.Source("max_outbound_links"); got != "store" {
		t.Errorf("Source = %q, want store", got)
	}
	// A key of a newer weaver, or one no longer stored, is ignored.
	if err := b.Apply(crawl.Settings{"max_pages": []byte("5"), "future_key": []byte(`"x"`)}, "store"); err != nil || b.MaxPages != 0 {
		t.Errorf("Apply of unknown keys: %v, max_pages %d", err, b.MaxPages)
	}
	if err := b.Apply(crawl.Settings{"max_depth": []byte(`"deep"`)}, "store"); err == nil {
		t.Error("Apply of a string max_depth: no error")
	}
}
