package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/kv"
)

func init() {
	register(&command{Name: "diff", Summary: "compare two stores: hosts and edges that appeared, vanished or changed", Run: runDiff})
}

// errDiffers is returned by diff --exit-code when the stores differ.
var errDiffers = errors.New("the stores differ")

func runDiff(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "diff", "weaver diff [--json] [--domains] [--exit-code] OLD.bolt NEW.bolt", `  weaver diff march.bolt april.bolt
  weaver diff march.bolt april.bolt --domains
  weaver diff march.bolt april.bolt --json | jq '.edges_added | length'`)
	asJSON := fs.Bool("json", false, "write the report as one JSON object")
	domains := fs.Bool("domains", false, "compare registrable domains instead of hosts")
	exitCode := fs.Bool("exit-code", false, "exit with 1 when the stores differ (as git diff --exit-code)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageHelpf("give two stores: OLD.bolt NEW.bolt")
	}
	before, err := openDiffStore(pos[0])
	if err != nil {
		return err
	}
	defer before.Close()
	after, err := openDiffStore(pos[1])
	if err != nil {
		return err
	}
	defer after.Close()
	ctx, cancel := withSignals(ctx, e)
	defer cancel()
	r, err := archive.Diff(ctx, before, after, archive.DiffOptions{Domains: *domains})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(e.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			return err
		}
	} else {
		writeDiff(e.Stdout, r)
	}
	if *exitCode && !r.Empty() {
		return errDiffers
	}
	return nil
}

// openDiffStore opens a store read-only; one locked by a running crawl is
// refused with a hint to compare a snapshot.
func openDiffStore(path string) (*kv.Store, error) {
	s, err := kv.Open(path, kv.Options{ReadOnly: true})
	if errors.Is(err, kv.ErrInUse) {
		return nil, inUseError(err, path, func(string) string {
			return fmt.Sprintf("compare a copy instead: weaver snapshot --db %s copy.bolt", path)
		})
	}
	if err != nil {
		return nil, storeError(err)
	}
	return s, nil
}

// writeDiff writes the report one change a line ("+ host h", "- edge a →
// b  weight 1", "~ edge a → b  weight 2 → 5 (+3)", "~ node h  status
// discovered → crawled", "~ node h  title "Old" → "New""), then a summary.
func writeDiff(w io.Writer, r *archive.Report) {
	kind := r.Level
	for _, h := range r.Added {
		fmt.Fprintf(w, "+ %s %s\n", kind, h)
	}
	for _, h := range r.Removed {
		fmt.Fprintf(w, "- %s %s\n", kind, h)
	}
	for _, c := range r.EdgesAdded {
		fmt.Fprintf(w, "+ edge %s → %s  weight %d\n", c.From, c.To, c.NewWeight)
	}
	for _, c := range r.EdgesRemoved {
		fmt.Fprintf(w, "- edge %s → %s  weight %d\n", c.From, c.To, c.OldWeight)
	}
	for _, c := range r.EdgesChanged {
		if c.OldWeight != c.NewWeight {
			fmt.Fprintf(w, "~ edge %s → %s  weight %d → %d (%+d)\n", c.From, c.To, c.OldWeight, c.NewWeight, c.Delta)
		}
		if c.OldNofollow != c.NewNofollow || c.OldRedirect != c.NewRedirect {
			fmt.Fprintf(w, "~ edge %s → %s  nofollow %d → %d, redirect %d → %d\n", c.From, c.To, c.OldNofollow, c.NewNofollow, c.OldRedirect, c.NewRedirect)
		}
	}
	for _, c := range r.NodesChanged {
		if c.OldStatus != c.NewStatus {
			fmt.Fprintf(w, "~ node %s  status %s → %s\n", c.Host, c.OldStatus, c.NewStatus)
		}
		if c.OldTitle != c.NewTitle {
			fmt.Fprintf(w, "~ node %s  title %s → %s\n", c.Host, strconv.Quote(c.OldTitle), strconv.Quote(c.NewTitle))
		}
		for _, f := range [][3]string{{"canonical", c.OldCanonical, c.NewCanonical}, {"robots", c.OldRobots, c.NewRobots},
			{"mirror of", c.OldMirrorOf, c.NewMirrorOf}} {
			if f[1] != f[2] {
				fmt.Fprintf(w, "~ node %s  %s %s → %s\n", c.Host, f[0], strconv.Quote(f[1]), strconv.Quote(f[2]))
			}
		}
	}
	if r.Empty() {
		fmt.Fprintf(w, "no differences (%s level)\n", kind)
		return
	}
	fmt.Fprintf(w, "%ss: %d added, %d removed; edges: %d added, %d removed, %d changed weight; nodes: %d changed\n",
		kind, len(r.Added), len(r.Removed), len(r.EdgesAdded), len(r.EdgesRemoved), len(r.EdgesChanged), len(r.NodesChanged))
}
