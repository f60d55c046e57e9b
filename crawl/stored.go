package crawl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/weaver-crawler/weaver/kv"
)

// MetaSettings is the meta record that holds the settings of the crawl
// that writes a store (Settings, as a JSON object of config keys), so that
// a resume crawls by the same rules.
const MetaSettings = "crawl.settings"

// Settings are a crawl's remembered config values: key → JSON value.
type Settings map[string]json.RawMessage

// Settings returns c's values of SettingKeys.
func (c *Config) Settings() Settings {
	s := Settings{}
	for _, key := range SettingKeys {
		f, _ := c.field(key)
		data, err := json.Marshal(f.ptr)
		if err != nil {
			panic(fmt.Sprintf("crawl: setting %s: %v", key, err)) // Table has only plain types
		}
		s[key] = data
	}
	return s
}

// Apply sets c's keys to the values of s, naming source (e.g. "settings
// stored in weaver.bolt") as where they came from. Keys this weaver does
// not know, or no longer remembers, are ignored: a store written by
// another version still resumes. A value of the wrong type is a
// *ConfigError naming the key.
func (c *Config) Apply(s Settings, source string) error {
	for _, key := range slices.Sorted(maps.Keys(s)) {
		if !slices.Contains(SettingKeys, key) {
			continue
		}
		f, _ := c.field(key)
		if err := setJSON(f, s[key]); err != nil {
			return &ConfigError{Source: source, Key: key, Msg: err.Error()}
		}
		c.From(key, source)
	}
	return nil
}

// Source returns what set key last ("flag --max-depth", "config file
// crawl.json", ...), or "" for a default.
func (c *Config) Source(key string) string { return c.from[key] }

// Text returns the value of key in s as Show writes it ("" when s lacks
// key).
func (s Settings) Text(key string) string {
	raw, ok := s[key]
	if !ok {
		return ""
	}
	var c Config
	f, ok := c.field(key)
	if !ok || setJSON(f, raw) != nil {
		return string(raw)
	}
	return Show(key, &c)
}

// Show returns c's value of key for people: 0 of a limit is "0 (no
// limit)", an empty list or string "(none)" (ca_file "" read as a value
// beside exclude_hosts (none)).
func Show(key string, c *Config) string {
	v, _ := c.Get(key)
	f, _ := c.field(key)
	switch p := f.ptr.(type) {
	case *[]string:
		if len(*p) == 0 {
			return "(none)"
		}
		return strings.Join(*p, " ")
	case *string:
		if v == "" && key == "warc_dir" {
			return "(none)" // no WARC written
		}
		if v == "" && key == "browser" {
			return "(default)" // chromium or google-chrome on PATH
		}
		if v == "" {
			return "(none)"
		}
	}
	if v == "0" && key == "warc_max_size" {
		return "0 (1 GB)"
	}
	if v == "0" && f.NoLimit {
		return "0 (no limit)"
	}
	return v
}

// List returns the value of key in s when it is a list of strings.
func (s Settings) List(key string) ([]string, bool) {
	var l []string
	if raw, ok := s[key]; !ok || json.Unmarshal(raw, &l) != nil || (l == nil && string(raw) != "null") {
		return nil, false
	}
	return l, true
}

// Diff returns the keys among keys whose values differ in s and t, in the
// order of keys. A key only one of them holds differs.
func (s Settings) Diff(t Settings, keys []string) []string {
	var out []string
	for _, k := range keys {
		a, aok := s[k]
		b, bok := t[k]
		if aok != bok || !jsonEqual(a, b) {
			out = append(out, k)
		}
	}
	return out
}

func jsonEqual(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// ReadSettings returns the settings stored in tx's store, or nil when it
// holds none (a store of a weaver older than the record, or one no crawl
// has started on). It returns an error for a record that is not a JSON
// object.
func ReadSettings(tx *kv.Tx) (Settings, error) {
	v := tx.MetaString(MetaSettings)
	if v == "" {
		return nil, nil
	}
	var s Settings
	if err := json.Unmarshal([]byte(v), &s); err != nil || s == nil {
		return nil, fmt.Errorf("crawl: meta %s: not a JSON object of settings: %v", MetaSettings, err)
	}
	return s, nil
}

// PutSettings records s as the settings of tx's store.
func PutSettings(tx *kv.Tx, s Settings) error {
	data, err := json.Marshal(s) // a map: keys sorted, so the record is stable
	if err != nil {
		return err
	}
	return tx.SetMetaString(MetaSettings, string(data))
}
