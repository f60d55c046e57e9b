package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/kv"
)

func init() {
	register(&command{Name: "merge", Summary: "join stores by host into a new one (weights summed, frontiers joined)", Run: runMerge})
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
	inputs, err := parseInterleaved(fs, args)
	if err != nil {
		return err
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
	res, err := archive.Merge(ctx, out, inputs, archive.MergeOptions{Force: *force, Verify: *verify})
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
	w := reportWriter(e, out)
	for _, in := range res.Inputs {
		fmt.Fprintf(w, "  %s: %s, %s, %d queued, %s\n", in.Path, count(in.Nodes, "node", ""), count(in.Edges, "edge", ""), in.Queued, count(in.Leases, "lease", ""))
	}
	fmt.Fprintf(w, "merged %s into %s: %s, %s (total weight %d), %d queued, %s in %s\n",
		count(len(res.Inputs), "store", ""), out, count(res.Out.Nodes, "node", ""), count(res.Out.Edges, "edge", ""), res.Out.Weight, res.Out.Queued, humanBytes(res.Out.Bytes),
		time.Since(start).Round(time.Millisecond))
	return nil
}
