package crawl

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Seeds is a list of seed URLs that is read as a stream, as many times as
// needed: Prepare reads it once to check every seed before it writes
// anything, then again to queue them a batch to a transaction, so a
// million seeds from a file are never all in memory. A Seeds calls yield
// with each seed in order and returns the first error yield returns
// (which it may wrap with where the seed came from, "seeds.txt:12: "),
// or its own.
type Seeds func(yield func(seed string) error) error

// SeedList is the Seeds of a list held in memory.
func SeedList(seeds []string) Seeds {
	return func(yield func(string) error) error {
		for _, s := range seeds {
			if err := yield(s); err != nil {
				return err
			}
		}
		return nil
	}
}

// seedRules is what a seed must pass beyond being an http(s) URL: the
// exclude_hosts and scope of the crawl.
type seedRules struct {
	exclude *excluder
	scope   *regexp.Regexp // nil: every host
	scopes  []string       // scope's patterns, for the error
}

// check checks seed s and returns its entry.
func (r seedRules) check(s string) (seed, error) {
	host, scheme, fetch, err := seedEntry(s)
	if err != nil {
		return seed{}, err
	}
	if r.exclude.excluded(host) {
		return seed{}, fmt.Errorf("%w: seed %q: host %s is excluded by exclude_hosts", ErrSeed, s, host)
	}
	if r.scope != nil && !r.scope.MatchString(host) {
		return seed{}, fmt.Errorf("%w: seed %q: host %s is outside scope (--scope %s)", ErrSeed, s, host, strings.Join(r.scopes, " --scope "))
	}
	return seed{host, scheme, fetch}, nil
}

// urls reads seeds and maps each seed's host to the URL fetched for it.
func (r seedRules) urls(seeds Seeds) (map[string]string, error) {
	out := map[string]string{}
	err := seeds(func(raw string) error {
		s, err := r.check(raw)
		if err != nil {
			return err
		}
		out[s.host] = s.fetch
		return nil
	})
	return out, err
}

// checkAll checks every seed of seeds and counts them.
func (r seedRules) checkAll(seeds Seeds) (n int, err error) {
	err = seeds(func(s string) error {
		if _, err := r.check(s); err != nil {
			return err
		}
		n++
		return nil
	})
	return n, err
}

// compileScope joins the scope patterns into one regular expression
// (nil for none).
func compileScope(scope []string) (*regexp.Regexp, error) {
	if len(scope) == 0 {
		return nil, nil
	}
	parts := make([]string, len(scope))
	for i, p := range scope {
		parts[i] = "(?:" + p + ")"
	}
	re, err := regexp.Compile(strings.Join(parts, "|"))
	if err != nil {
		return nil, &ConfigError{Source: "config", Key: "scope", Msg: err.Error()}
	}
	return re, nil
}

// CheckSeeds checks every seed as Prepare will (an http(s) URL with a
// host, not excluded by exclude_hosts, inside scope), so that a command
// can refuse a long list before it creates anything. It returns how many
// seeds there are, or the first bad one's error (wrapping ErrSeed), a
// *ConfigError for a bad exclude_hosts or scope, or the error seeds
// returned.
func CheckSeeds(cfg Config, seeds Seeds) (int, error) {
	x, err := newExcluder(cfg.ExcludeHosts)
	if err != nil {
		return 0, &ConfigError{Source: "config", Key: "exclude_hosts", Msg: err.Error()}
	}
	scope, err := compileScope(cfg.Scope)
	if err != nil {
		return 0, err
	}
	return seedRules{x, scope, cfg.Scope}.checkAll(seeds)
}

// errStopSeeds stops a Seeds early: the reason is kept by the caller.
var errStopSeeds = errors.New("crawl: seeds stopped")
