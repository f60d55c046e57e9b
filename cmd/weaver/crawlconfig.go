package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/internal/crawlwarc"
	"github.com/weaver-crawler/weaver/kv"
)

// crawlFlags are the settings that weaver crawl has a flag for.
func crawlFlags() []crawl.Setting {
	var out []crawl.Setting
	for _, s := range crawl.Table {
		if s.Flag != "" {
			out = append(out, s)
		}
	}
	return out
}

// crawlFlagValues are weaver crawl's flags as given: the settings' (see
// crawl.Table) and the few of one run.
type crawlFlagValues struct {
	configPath  string
	sets        []flagValue         // the settings' flags, but lists', in the order given
	lists       map[string][]string // a list's flag values (--scope, --exclude-host...), in their order
	retryFailed retryFlag
	noWarc      bool
	force       bool     // --force: replace a metrics file of another store
	args        []string // the arguments: seed URLs
}

// flagValue is a value a flag gave a config key.
type flagValue struct{ key, value, source string }

// define defines weaver crawl's flags on fs: a flag for each setting of
// crawl.Table that has one (a list's repeatable), and --config,
// --retry-failed and --no-warc.
func (f *crawlFlagValues) define(fs *flag.FlagSet) {
	fs.StringVar(&f.configPath, "config", "", "JSON config `FILE` with any of the config keys (the README lists them)")
	f.lists = map[string][]string{}
	for _, s := range crawlFlags() {
		source := "flag --" + s.Flag
		switch s.Field(new(crawl.Config)).(type) {
		case *bool:
			fs.BoolFunc(s.Flag, s.Usage, func(v string) error {
				f.sets = append(f.sets, flagValue{s.Key, v, source})
				return nil
			})
		case *[]string:
			fs.Func(s.Flag, s.Usage, func(v string) error {
				f.lists[s.Key] = append(f.lists[s.Key], v)
				return nil
			})
		default:
			fs.Func(s.Flag, s.Usage, func(v string) error {
				if strings.HasSuffix(s.Key, "_ms") {
					if err := needUnit(v); err != nil {
						return err // --delay 1: neither 1 ms nor 1 s, but a mistake
					}
				}
				f.sets = append(f.sets, flagValue{s.Key, v, source})
				return nil
			})
		}
	}
	fs.Var(&f.retryFailed, "retry-failed", "put the hosts that failed back in the queue at their depth, fetched as new; `=CAUSES` only those of dns, connect, tls, http, other (comma-separated); for this run only")
	fs.BoolVar(&f.force, "force", false, "replace the metrics file even when it holds another store's metrics, or something else (without it, such a file is kept and this run's go beside the store)")
	fs.BoolFunc("no-warc", "stop writing WARC files: a resume of a crawl started with --warc archives no more, nor do the resumes after it", func(v string) error {
		if on, err := strconv.ParseBool(v); err != nil || !on {
			return err
		}
		f.noWarc = true
		f.sets = append(f.sets, flagValue{"warc_dir", "", "flag --no-warc"})
		return nil
	})
}

// gives reports whether a flag gave key a value other than "".
func (f *crawlFlagValues) gives(key string) bool {
	return slices.ContainsFunc(f.sets, func(s flagValue) bool { return s.key == key && s.value != "" })
}

// buildConfig makes the configuration from its sources, weakest first:
// defaults, the settings stored in the store (a resume), the config
// file, the environment, the flags. Made first without stored settings,
// it says where the store is.
func (f *crawlFlagValues) buildConfig(e *env, stored crawl.Settings, storePath string) (crawl.Config, error) {
	cfg := crawl.Defaults()
	if stored != nil {
		if err := cfg.Apply(stored, "settings stored in "+storePath); err != nil {
			return cfg, usageError{err: err}
		}
	}
	if f.configPath != "" {
		data, err := os.ReadFile(f.configPath)
		if err != nil {
			return cfg, usagef("config: %v", err)
		}
		if err := cfg.LoadJSON(data, "config file "+f.configPath); err != nil {
			return cfg, usageError{err: err}
		}
	}
	for _, key := range crawl.Keys() {
		name := "WEAVER_" + strings.ToUpper(key)
		if v := e.Getenv(name); v != "" {
			if err := cfg.Set(key, v, "environment "+name); err != nil {
				return cfg, usageError{err: err}
			}
		}
	}
	if err := f.apply(&cfg); err != nil {
		return cfg, err
	}
	// The paths are stored absolute, so that a resume from another
	// working directory finds them.
	if cfg.WarcDir != "" {
		abs, err := filepath.Abs(cfg.WarcDir)
		if err != nil {
			return cfg, usagef("warc_dir %s: %v", cfg.WarcDir, err)
		}
		cfg.WarcDir = abs
	}
	if strings.ContainsRune(cfg.Browser, filepath.Separator) {
		if abs, err := filepath.Abs(cfg.Browser); err == nil {
			cfg.Browser = abs
		}
	}
	if cfg.CAFile != "" {
		if abs, err := filepath.Abs(cfg.CAFile); err == nil {
			cfg.CAFile = abs
		}
	}
	if cfg.MetricsPath != "" && cfg.MetricsPath != "-" {
		if abs, err := filepath.Abs(cfg.MetricsPath); err == nil {
			cfg.MetricsPath = abs
		}
	}
	cfg.UncapRevisits(stored != nil && string(stored["revisit_after_ms"]) != "" && string(stored["revisit_after_ms"]) != "0")
	return cfg, nil
}

// apply sets the values the flags gave to cfg: a list's flag replaces
// the list, or adds to it (--exclude-host).
func (f *crawlFlagValues) apply(cfg *crawl.Config) error {
	for _, s := range f.sets {
		if err := cfg.Set(s.key, s.value, s.source); err != nil {
			return usageError{err: err}
		}
	}
	for _, s := range crawlFlags() {
		values := f.lists[s.Key]
		if len(values) == 0 {
			continue
		}
		list := s.Field(cfg).(*[]string)
		if !s.Adds {
			*list = values
		}
		for _, x := range values {
			// Added once: the same --exclude-host on every resume must
			// not grow the stored list.
			if s.Adds && !slices.Contains(*list, x) {
				*list = append(*list, x)
			}
		}
		cfg.From(s.Key, "flag --"+s.Flag)
	}
	return nil
}

// storedSettings returns the settings stored in the store at path, or nil
// when there is none, it holds none, or it cannot be read now: the open
// that follows reports what is wrong with it.
func storedSettings(path string) crawl.Settings {
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	// Unverified: the open that follows walks the file's pages, once.
	s, err := kv.Open(path, kv.Options{ReadOnly: true, Timeout: 100 * time.Millisecond, Unverified: true})
	if err != nil {
		return nil
	}
	defer s.Close()
	var set crawl.Settings
	err = s.View(func(tx *kv.Tx) error {
		set, _ = crawl.ReadSettings(tx) // a damaged record is replaced by this run's
		if _, ok := set["warc_dir"]; set != nil && !ok {
			// Settings of a weaver that did not store warc_dir: the
			// directory its --warc wrote to, if it did, is in the meta.
			if dir := tx.MetaString(crawlwarc.MetaDir); dir != "" {
				set["warc_dir"], _ = json.Marshal(dir)
			}
		}
		return nil
	})
	if err != nil {
		return nil // the open that follows reports what is wrong
	}
	return set
}

// checkStoredWarcDir refuses a resume that would archive into a stored
// warc_dir that is gone (deleted, or a disk not mounted): creating it
// afresh would split the crawl's WARC files without a word. A directory
// named by a flag, the environment or a config file is created.
func checkStoredWarcDir(cfg *crawl.Config) error {
	src := cfg.Source("warc_dir")
	if cfg.WarcDir == "" || !strings.HasPrefix(src, "settings stored in ") {
		return nil
	}
	fi, err := os.Stat(cfg.WarcDir)
	if err == nil && fi.IsDir() {
		return nil
	}
	why := "does not exist"
	if err == nil {
		why = "is not a directory"
	} else if !errors.Is(err, os.ErrNotExist) {
		why = err.Error()
	}
	return usagef("warc_dir %s (%s, where this crawl writes its WARC files) %s: restore it, give --warc DIR to write them elsewhere, or --no-warc to stop writing them",
		cfg.WarcDir, strings.TrimPrefix(src, "settings "), why)
}

// checkStoredMetrics refuses a resume whose stored metrics_path is in a
// directory that is gone (a store copied to another machine), in one line
// that says which flag to give, before anything is written.
func checkStoredMetrics(cfg *crawl.Config) error {
	src := cfg.Source("metrics_path")
	if cfg.MetricsPath == "" || cfg.MetricsPath == "-" || !strings.HasPrefix(src, "settings stored in ") {
		return nil
	}
	if fi, err := os.Stat(filepath.Dir(cfg.MetricsPath)); err == nil && fi.IsDir() {
		return nil
	}
	return usagef("metrics_path %s (%s, where this crawl writes its metrics) is in a directory that does not exist: give --metrics FILE",
		cfg.MetricsPath, strings.TrimPrefix(src, "settings "))
}

// checkStoredCAFile refuses a resume whose stored ca_file is gone, in one
// line that says which flag to give, before anything is written.
func checkStoredCAFile(cfg *crawl.Config) error {
	src := cfg.Source("ca_file")
	if cfg.CAFile == "" || !strings.HasPrefix(src, "settings stored in ") {
		return nil
	}
	if _, err := os.Stat(cfg.CAFile); err != nil {
		why := "does not exist"
		if !errors.Is(err, os.ErrNotExist) {
			why = err.Error()
		}
		return usagef("ca_file %s (%s, the CA this crawl trusts) %s: restore it, or give --ca-file FILE", cfg.CAFile, strings.TrimPrefix(src, "settings "), why)
	}
	return nil
}

// logSettings says how this run's settings differ from those the store
// held (old, read in the transaction that replaced them): one line per
// changed key, naming what changed it. crawled says the store held nodes:
// without settings, it was written by an older weaver.
func logSettings(logf func(level, msg string), cfg crawl.Config, old crawl.Settings, crawled bool) {
	if old == nil {
		if crawled {
			logf("INFO", "No settings stored (a store of an older weaver): this run's are stored for the next")
		}
		return
	}
	now := cfg.Settings()
	for _, key := range old.Diff(now, crawl.SettingKeys) {
		if _, ok := old[key]; !ok {
			continue // a key this weaver remembers and the store's did not
		}
		why := ""
		if src := cfg.Source(key); src != "" && !strings.HasPrefix(src, "settings stored in ") {
			why = ", by " + src
		}
		change := old.Text(key) + " → " + now.Text(key)
		a, aok := old.List(key)
		b, bok := now.List(key)
		if aok && bok {
			// A list (exclude_hosts, connect_to) says what was added and
			// removed: its values are long.
			var parts []string
			if add := missingFrom(b, a); len(add) > 0 {
				parts = append(parts, "added "+strings.Join(add, " "))
			}
			if del := missingFrom(a, b); len(del) > 0 {
				parts = append(parts, "removed "+strings.Join(del, " "))
			}
			if len(parts) > 0 {
				change = strings.Join(parts, ", ")
			}
		}
		logf("INFO", fmt.Sprintf("Setting %s: %s%s", key, change, why))
	}
}

// missingFrom returns the values of a that b lacks, in a's order.
func missingFrom(a, b []string) []string {
	var out []string
	for _, v := range a {
		if !slices.Contains(b, v) {
			out = append(out, v)
		}
	}
	return out
}

// retryFlag is --retry-failed: alone, every cause; =dns,connect those.
type retryFlag struct {
	causes crawl.FailCause
	set    bool
}

func (f *retryFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	return f.causes.String()
}

func (f *retryFlag) Set(v string) error {
	c, err := crawl.ParseFailCauses(v)
	if err != nil {
		return err
	}
	f.causes, f.set = c, true
	return nil
}

func (f *retryFlag) IsBoolFlag() bool { return true }
