package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/suggest"
)

// otherVariables are the WEAVER_ variables weaver reads that are not
// config keys. A new one must be added here, or every run that sets it
// warns that it is unknown (TestEnviron_KnownVariables checks the
// sources).
var otherVariables = []string{
	"WEAVER_TOKEN",             // serve, crawl --listen: the bearer token
	"WEAVER_BROWSER",           // crawl --render: the browser
	"WEAVER_CPUPROFILE",        // profiled
	"WEAVER_TRACE",             // profiled
	"WEAVER_BLOCKPROFILE",      // profiled
	"WEAVER_MUTEXPROFILE",      // profiled
	"WEAVER_MEMPROFILE",        // profiled
	"WEAVER_TEST_CLUSTER_KILL", // cluster crash tests: killHook
}

// envName is the environment variable of config key key.
func envName(key string) string { return "WEAVER_" + strings.ToUpper(key) }

// warnEnviron warns, one line each, about the WEAVER_ variables of the
// environment that weaver does not read: a misspelt key (WEAVER_MAX_DEPT)
// would otherwise be ignored without a word. Each names the variable it
// is closest to; a flag's name (WEAVER_DELAY) names that flag's key.
// The environment holds config keys only, as a config file does, so a
// flag's name is not taken as an alias: one name per setting, whose
// bare numbers mean what the key says (WEAVER_POLITENESS_DELAY_MS=1000).
func warnEnviron(e *env) {
	if e.Environ == nil {
		return
	}
	known := map[string]bool{}
	var names []string
	for _, key := range crawl.Keys() {
		known[envName(key)] = true
		names = append(names, envName(key))
	}
	for _, n := range otherVariables {
		known[n] = true
		names = append(names, n)
	}
	flagKey := map[string]string{} // WEAVER_DELAY → politeness_delay_ms
	for _, f := range crawlFlags {
		flagKey[envName(strings.ReplaceAll(f.flag, "-", "_"))] = f.key
	}
	for _, f := range crawlBoolFlags {
		flagKey[envName(strings.ReplaceAll(f.flag, "-", "_"))] = f.key
	}
	var unknown []string
	for _, kv := range e.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(strings.ToUpper(name), "WEAVER_") && !known[name] {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	for _, name := range unknown {
		up := strings.ToUpper(name)
		hint := ""
		switch key, isFlag := flagKey[up]; {
		case known[up]:
			hint = fmt.Sprintf(": did you mean %s?", up)
		case isFlag:
			flag := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(up, "WEAVER_"), "_", "-"))
			hint = fmt.Sprintf(": did you mean %s? (the environment takes config keys; --%s sets %s)", envName(key), flag, key)
		default:
			if near, ok := closestVariable(up, names); ok {
				hint = fmt.Sprintf(": did you mean %s?", near)
			} else {
				hint = " (weaver reads WEAVER_ and a config key in capitals, e.g. WEAVER_MAX_DEPTH)"
			}
		}
		fmt.Fprintf(e.Stderr, "weaver: warning: %s is not a weaver variable, ignored%s\n", name, hint)
	}
}

// closestVariable is closest on the names without their WEAVER_ prefix,
// so that the prefix does not make every name look near.
func closestVariable(name string, names []string) (string, bool) {
	bare := make([]string, len(names))
	for i, n := range names {
		bare[i] = strings.TrimPrefix(n, "WEAVER_")
	}
	near, ok := suggest.Closest(strings.TrimPrefix(name, "WEAVER_"), bare)
	if !ok {
		return "", false
	}
	return "WEAVER_" + near, true
}
