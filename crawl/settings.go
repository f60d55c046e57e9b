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

// SettingKeys are the config keys a store remembers: those that decide
// what a crawl fetches, how politely, and what it records. Left out, key
// by key:
//
//   - seed_url, seed_urls: the seeds are in the store already (nodes and
//     frontier); remembering them would make a bare resume re-queue them;
//   - db_path: the store is where the settings are;
//   - metrics_path, max_pages, progress_interval_ms, quiet, json_logs:
//     one run's output and budget, chosen again for each run;
//   - listen, token_file, metrics_public: one run's status API, and a
//     path to a secret;
//   - min_free_space: the free space of the machine's disks, chosen again
//     for each run (a resume may run elsewhere);
//   - cluster, shard, cluster_replicas, crawl_name: a shard's membership
//     is recorded by the cluster (meta cluster.crawl and cluster.shard, the
//     crawl's KV bucket), and the server URL may carry a password.
//
// Every other key is here, among them all that decide what a crawl
// produces: the WARC directory and file size (a resume keeps archiving
// where the crawl started to; weaver crawl stores warc_dir as an absolute
// path, so that a resume from another working directory finds it), the
// render mode and browser, scope and pages_per_host. A test checks that
// each key is either here or in notStored, so that a new key is decided
// on.
var SettingKeys = []string{
	"max_depth", "max_crawls_per_node", "max_subdomains_per_root", "max_outbound_links",
	"exclude_hosts", "ignore_robots", "allow_private_networks", "connect_to",
	"concurrent_workers", "request_timeout_ms", "retry_attempts", "retry_delay_ms",
	"politeness_delay_ms", "user_agent", "max_body_bytes", "robots_cache_ttl_ms",
	"pages_per_host", "scope", "render", "browser", "warc_dir", "warc_max_size", "ca_file", "dns_server",
	"revisit_after_ms", "revisit_max_ms", "anchors_per_edge",
}

// notStored are the config keys SettingKeys leaves out (see there why).
var notStored = []string{
	"seed_url", "seed_urls", "seeds_file", "db_path", "metrics_path", "max_pages", "progress_interval_ms",
	"quiet", "json_logs", "listen", "token_file", "metrics_public",
	"cluster", "shard", "cluster_replicas", "crawl_name",
	"max_duration_ms", // one run's budget, like max_pages
	"min_free_space",  // the machine's disks, chosen again for each run (a resume may be elsewhere)
}

// MachineKeys are the settings that name files of the machine a crawl
// runs on (where its WARC files go, which browser renders): stored for a
// resume on that machine, but not compared by weaver merge, and not
// written into the WARC files' warcinfo records.
var MachineKeys = []string{"warc_dir", "browser", "ca_file"}

// GraphKeys are the settings that shape the graph a crawl records: which
// hosts are queued and which links kept. Every shard of a cluster crawl
// must share them, and weaver merge warns when its inputs differ in them.
// (Changing this list changes what a cluster compares: the shards of a
// running cluster crawl must all run the same weaver.)
var GraphKeys = []string{"max_depth", "max_crawls_per_node", "max_subdomains_per_root", "max_outbound_links", "exclude_hosts", "ignore_robots", "pages_per_host", "scope", "render"}

// noLimitKeys are the keys whose 0 means no limit.
var noLimitKeys = []string{"max_depth", "max_subdomains_per_root", "max_outbound_links", "max_pages", "max_crawls_per_node", "max_duration_ms"}

// Settings are a crawl's remembered config values: key → JSON value.
type Settings map[string]json.RawMessage

// Settings returns c's values of SettingKeys.
func (c *Config) Settings() Settings {
	s := Settings{}
	for _, key := range SettingKeys {
		f, _ := c.field(key)
		data, err := json.Marshal(f.ptr)
		if err != nil {
			panic(fmt.Sprintf("crawl: setting %s: %v", key, err)) // fieldsOf has only plain types
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
	if v == "0" && slices.Contains(noLimitKeys, key) {
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
