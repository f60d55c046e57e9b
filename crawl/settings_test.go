package crawl_test

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
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

// TestSettings_WhatACrawlProduces: every key that decides what a crawl
// produces is stored, so that a bare resume produces the same: the WARC
// files (a resume that forgot warc_dir fetched pages and archived none),
// the rendering, the scope, the pages per host.
func TestSettings_WhatACrawlProduces(t *testing.T) {
	for _, key := range []string{"warc_dir", "warc_max_size", "render", "browser", "scope", "pages_per_host", "exclude_hosts", "max_body_bytes", "user_agent"} {
		if !slices.Contains(crawl.SettingKeys, key) {
			t.Errorf("%s decides what a crawl produces, and is not stored", key)
		}
	}
	for _, key := range crawl.MachineKeys {
		if !slices.Contains(crawl.SettingKeys, key) {
			t.Errorf("machine key %s is not stored", key)
		}
		if slices.Contains(crawl.GraphKeys, key) {
			t.Errorf("machine key %s is a graph key: shards on other machines would differ in it", key)
		}
	}
	a := crawl.Defaults()
	a.WarcDir, a.WarcMaxSize, a.Render, a.Browser = "/data/warcs", 5000000, crawl.RenderAuto, "/opt/chrome/chrome"
	b := crawl.Defaults()
	if err := b.Apply(a.Settings(), "store"); err != nil {
		t.Fatal(err)
	}
	if b.WarcDir != a.WarcDir || b.WarcMaxSize != a.WarcMaxSize || b.Render != a.Render || b.Browser != a.Browser {
		t.Errorf("after Apply: warc_dir %q warc_max_size %d render %q browser %q", b.WarcDir, b.WarcMaxSize, b.Render, b.Browser)
	}
	// No WARC, and the browser found on PATH, read as such.
	d := crawl.Defaults()
	none := d.Settings()
	if got := none.Text("warc_dir"); got != "(none)" {
		t.Errorf("Text(warc_dir) of no WARC = %q, want (none)", got)
	}
	if got := none.Text("browser"); got != "(default)" {
		t.Errorf("Text(browser) of none given = %q, want (default)", got)
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

// TestSettings_Table: every setting's field is one of Config's kinds and
// its own (no two rows fill one field), and its Default is of the field's
// type.
func TestSettings_Table(t *testing.T) {
	var c crawl.Config
	seen := map[any]string{}
	for _, s := range crawl.Table {
		ptr := s.Field(&c)
		if other, ok := seen[ptr]; ok {
			t.Errorf("%s and %s fill the same field", other, s.Key)
		}
		seen[ptr] = s.Key
		var ok bool
		switch ptr.(type) {
		case *int:
			_, ok = s.Default.(int)
		case *int64:
			_, ok = s.Default.(int64)
		case *string:
			_, ok = s.Default.(string)
		case *bool:
			_, ok = s.Default.(bool)
		case *[]string:
			_, ok = s.Default.([]string)
		default:
			t.Errorf("%s: a field of type %T", s.Key, ptr)
			continue
		}
		if !ok && s.Default != nil {
			t.Errorf("%s: default %#v is not a %T", s.Key, s.Default, ptr)
		}
		if (s.Flag == "") != (s.Usage == "") || (s.Adds && s.Flag == "") {
			t.Errorf("%s: flag %q, usage %q, adds %t", s.Key, s.Flag, s.Usage, s.Adds)
		}
		if s.Bytes && fmt.Sprintf("%T", ptr) != "*int64" {
			t.Errorf("%s counts bytes in a %T", s.Key, ptr)
		}
	}
	if got := reflect.TypeFor[crawl.Config]().NumField() - 1; got != len(crawl.Table) { // but from
		t.Errorf("Config has %d settings' fields, Table %d rows", got, len(crawl.Table))
	}
}

// TestSettings_CrawlingDoc: docs/crawling.md names the settings a store
// remembers, exactly SettingKeys in their order.
func TestSettings_CrawlingDoc(t *testing.T) {
	data, err := os.ReadFile("../docs/crawling.md")
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := strings.Cut(string(data), "how politely and what\nis recorded — ")
	list, _, ok2 := strings.Cut(list, ". Not stored:")
	if !ok || !ok2 {
		t.Fatal("docs/crawling.md: no list of the settings a store remembers (is recorded — … . Not stored:)")
	}
	var got []string
	for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(list, -1) {
		got = append(got, m[1])
	}
	if !slices.Equal(got, crawl.SettingKeys) {
		t.Errorf("docs/crawling.md lists the stored settings\n%v\nwant crawl.SettingKeys\n%v", got, crawl.SettingKeys)
	}
}
