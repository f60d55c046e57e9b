package crawl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/suggest"
)

// ConfigError names the key (and the source) of a bad configuration value.
type ConfigError struct {
	Source string // "config file", "environment WEAVER_MAX_DEPTH", "flag --max-depth"...
	Key    string
	Msg    string
}

func (e *ConfigError) Error() string {
	if e.Source == "" { // a default, or a value assigned directly
		return fmt.Sprintf("config: key %q: %s", e.Key, e.Msg)
	}
	if e.Key == "" {
		return fmt.Sprintf("config: %s: %s", e.Source, e.Msg)
	}
	if flag, ok := strings.CutPrefix(e.Source, "flag "); ok { // the flag as typed, then the key
		return fmt.Sprintf("%s (%s): %s", flag, e.Key, e.Msg)
	}
	return fmt.Sprintf("config: %s: key %q: %s", e.Source, e.Key, e.Msg)
}

// LoadJSON applies a JSON config document to c. Unknown keys, values of
// the wrong type and duplicate keys are errors naming the key.
func (c *Config) LoadJSON(data []byte, source string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return &ConfigError{Source: source, Msg: "not JSON: " + err.Error()}
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return &ConfigError{Source: source, Msg: "want a JSON object of keys"}
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return &ConfigError{Source: source, Msg: "not JSON: " + err.Error()}
		}
		key := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return &ConfigError{Source: source, Key: key, Msg: "not JSON: " + err.Error()}
		}
		if seen[key] {
			return &ConfigError{Source: source, Key: key, Msg: "given twice"}
		}
		seen[key] = true
		f, ok := c.field(key)
		if !ok {
			return &ConfigError{Source: source, Key: key, Msg: unknownKey(key)}
		}
		if err := setJSON(f, raw); err != nil {
			return &ConfigError{Source: source, Key: key, Msg: err.Error()}
		}
		c.From(key, source)
	}
	if _, err := dec.Token(); err != nil {
		return &ConfigError{Source: source, Msg: "not JSON: " + err.Error()}
	}
	if dec.More() {
		return &ConfigError{Source: source, Msg: "trailing data after the JSON object"}
	}
	return nil
}

// unknownKey says why key is no config key, with the nearest one: the key
// of a flag of that name (a config file takes keys: "workers" is
// concurrent_workers), else the key nearest by spelling, else the list.
func unknownKey(key string) string {
	norm := strings.ToLower(strings.ReplaceAll(strings.TrimLeft(key, "-"), "_", "-"))
	for _, s := range Table {
		if s.Flag != "" && s.Flag == norm {
			return fmt.Sprintf("unknown key: did you mean %q? (a config file takes config keys; --%s sets %s)", s.Key, s.Flag, s.Key)
		}
	}
	if near, ok := suggest.Closest(key, Keys()); ok {
		return fmt.Sprintf("unknown key: did you mean %q?", near)
	}
	return "unknown key (known: " + strings.Join(Keys(), ", ") + ")"
}

// wantDuration says what a *_ms key accepts.
const wantDuration = "a duration such as 1.5s or 250ms (or a whole number of milliseconds)"

func setJSON(f field, raw json.RawMessage) error {
	var err error
	isNumber := len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'))
	switch p := f.ptr.(type) {
	case *int:
		if strings.HasSuffix(f.Key, "_ms") {
			// A duration: milliseconds, or Go's syntax in a string ("1.5s").
			var text string
			if json.Unmarshal(raw, &text) == nil {
				d, err := time.ParseDuration(text)
				if err != nil {
					return fmt.Errorf("want %s, got %s", wantDuration, raw)
				}
				*p = int(d / time.Millisecond)
				return nil
			}
			if !isNumber {
				return fmt.Errorf("want %s, got %s", wantDuration, raw)
			}
		}
		var n json.Number
		if err = json.Unmarshal(raw, &n); err != nil || !isNumber {
			return fmt.Errorf("want a whole number, got %s", raw)
		}
		var v int64
		if v, err = strconv.ParseInt(n.String(), 10, 0); err != nil {
			return fmt.Errorf("want a whole number, got %s", raw)
		}
		*p = int(v)
	case *int64:
		var text string
		if f.Bytes && json.Unmarshal(raw, &text) == nil {
			if *p, err = ParseBytes(text); err != nil {
				return fmt.Errorf("want a size in bytes (512MB, 1GiB), got %s", raw)
			}
			return nil
		}
		var n json.Number
		if err = json.Unmarshal(raw, &n); err != nil || !isNumber {
			return fmt.Errorf("want a whole number, got %s", raw)
		}
		if *p, err = strconv.ParseInt(n.String(), 10, 64); err != nil {
			return fmt.Errorf("want a whole number, got %s", raw)
		}
	case *string:
		if err = json.Unmarshal(raw, p); err != nil {
			return fmt.Errorf("want a string, got %s", raw)
		}
	case *bool:
		if err = json.Unmarshal(raw, p); err != nil {
			return fmt.Errorf("want true or false, got %s", raw)
		}
	case *[]string:
		var list []string
		if err = json.Unmarshal(raw, &list); err != nil {
			return fmt.Errorf("want a list of strings, got %s", raw)
		}
		*p = list
	}
	return nil
}

// Set applies one value given as text (from the environment or a flag).
// Lists are comma-separated; durations for *_ms keys may be written as Go
// durations ("1.5s") or as milliseconds.
func (c *Config) Set(key, value, source string) error {
	if err := c.set(key, value, source); err != nil {
		return err
	}
	c.From(key, source)
	return nil
}

func (c *Config) set(key, value, source string) error {
	f, ok := c.field(key)
	if !ok {
		return &ConfigError{Source: source, Key: key, Msg: "unknown key"}
	}
	bad := func(want string) error {
		return &ConfigError{Source: source, Key: key, Msg: fmt.Sprintf("want %s, got %q", want, value)}
	}
	switch p := f.ptr.(type) {
	case *int:
		if strings.HasSuffix(key, "_ms") {
			if d, err := time.ParseDuration(value); err == nil {
				*p = int(d / time.Millisecond)
				return nil
			}
		}
		v, err := strconv.Atoi(strings.TrimSpace(value))
		if err != nil && strings.HasSuffix(key, "_ms") {
			return bad(wantDuration)
		}
		if err != nil {
			return bad("a whole number")
		}
		*p = v
	case *int64:
		if f.Bytes {
			v, err := ParseBytes(value)
			if err != nil {
				return bad("a size in bytes (512MB, 1GiB)")
			}
			*p = v
			return nil
		}
		v, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return bad("a whole number")
		}
		*p = v
	case *string:
		*p = value
	case *bool:
		v, err := strconv.ParseBool(strings.TrimSpace(value))
		if err != nil {
			return bad("true or false")
		}
		*p = v
	case *[]string:
		*p = nil
		for _, s := range strings.Split(value, ",") {
			if s = strings.TrimSpace(s); s != "" {
				*p = append(*p, s)
			}
		}
	}
	return nil
}
