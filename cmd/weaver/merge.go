package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/kv"
)

func init() {
	register(&command{Name: "merge", Summary: "join stores by host into a new one (weights summed, frontiers joined)", Run: runMerge})
}

// settingsDiff names the settings in which the stores at paths (their
// settings sets, nil for none stored) differ, with each value and the
// stores that hold it: "max_outbound_links 3 (a.bolt), 10 (b.bolt)". It is
// "" when they agree. Stores without settings are not compared, nor are
// the settings that name files of the machine (crawl.MachineKeys: where
// each wrote its WARC files, which browser it ran).
func settingsDiff(paths []string, sets []crawl.Settings) string {
	var first crawl.Settings
	var keys []string
	compared := slices.DeleteFunc(slices.Clone(crawl.SettingKeys), func(k string) bool { return slices.Contains(crawl.MachineKeys, k) })
	for _, s := range sets {
		switch {
		case s == nil:
		case first == nil:
			first = s
		default:
			for _, k := range first.Diff(s, compared) {
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
	}
	var parts []string
	for _, k := range crawl.SettingKeys { // in their order, not discovery's
		if !slices.Contains(keys, k) {
			continue
		}
		var values []string
		holders := map[string][]string{}
		for i, s := range sets {
			if s == nil {
				continue
			}
			v := s.Text(k)
			if _, ok := s[k]; !ok {
				v = "unset"
			}
			if holders[v] == nil {
				values = append(values, v)
			}
			holders[v] = append(holders[v], paths[i])
		}
		for j, v := range values {
			values[j] = fmt.Sprintf("%s (%s)", v, strings.Join(holders[v], ", "))
		}
		parts = append(parts, k+" "+strings.Join(values, ", "))
	}
	return strings.Join(parts, "; ")
}

func runMerge(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "merge", "weaver merge -o OUT.bolt [--force] A.bolt B.bolt ...", `  weaver merge -o all.bolt pi.bolt laptop.bolt
  weaver merge -o all.bolt --force part-*.bolt && weaver crawl --db all.bolt
  weaver snapshot --db live.bolt now.bolt && weaver merge -o all.bolt now.bolt other.bolt`)
	var out string
	fs.StringVar(&out, "o", "", "the merged store `FILE` to write (required)")
	fs.StringVar(&out, "out", "", "same as -o `FILE`")
	force := fs.Bool("force", false, "replace the output if it exists (never an input)")
	verify := fs.Bool("verify", true, "check the output (as weaver check does) before it is renamed into place")
	sortMiB := fs.Int("sort-memory", 256, "`MIB` mebibytes of edges sorted in memory (64 bytes an edge); more are written to sorted run files beside the output")
	inputs, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if *sortMiB <= 0 {
		return usagef("--sort-memory must be positive")
	}
	if out == "" {
		return usageHelpf("give the output file with -o")
	}
	if len(inputs) == 0 {
		return usageHelpf("give the stores to merge")
	}
	ctx, cancel := withSignals(ctx, e)
	defer cancel()
	start := time.Now()
	// The merged store keeps the settings of the first input that holds
	// any, as it keeps the first input's node ids: weaver crawl --db OUT
	// resumes with them. A store that cannot be read here is reported by
	// Merge.
	sets := make([]crawl.Settings, len(inputs))
	var keep crawl.Settings
	keepFrom := ""
	for i, in := range inputs {
		if sets[i] = storedSettings(in); keep == nil && sets[i] != nil {
			keep, keepFrom = sets[i], in
		}
	}
	opt := archive.MergeOptions{Force: *force, Verify: *verify, SortMemory: *sortMiB << 20}
	if keep != nil {
		data, err := json.Marshal(keep)
		if err != nil {
			return err
		}
		opt.Meta = map[string]string{crawl.MetaSettings: string(data)}
	}
	res, err := archive.Merge(ctx, out, inputs, opt)
	if errors.Is(err, kv.ErrInUse) {
		for _, in := range inputs {
			if strings.HasPrefix(err.Error(), in+" ") {
				return inUseError(err, in, snapshotFirst(in, "merge", "weaver merge -o "+out+" copy.bolt …"))
			}
		}
	}
	if err != nil {
		return archiveError(err)
	}
	if diff := settingsDiff(inputs, sets); diff != "" {
		fmt.Fprintf(e.Stderr, "weaver merge: warning: the stores were crawled under different settings: %s; %s keeps %s's, which weaver crawl resumes with\n", diff, out, keepFrom)
	}
	w := reportWriter(e, out)
	for _, in := range res.Inputs {
		fmt.Fprintf(w, "  %s: %s, %s, %d queued, %s\n", in.Path, count(in.Nodes, "node", ""), count(in.Edges, "edge", ""), in.Queued, count(in.Leases, "lease", ""))
	}
	fmt.Fprintf(w, "merged %s into %s: %s, %s (total weight %d), %d queued, %s in %s\n",
		count(len(res.Inputs), "store", ""), out, count(res.Out.Nodes, "node", ""), count(res.Out.Edges, "edge", ""), res.Out.Weight, res.Out.Queued, humanBytes(res.Out.Bytes),
		time.Since(start).Round(time.Millisecond))
	return nil
}
