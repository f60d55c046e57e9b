package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/graph"
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
	fromAt := fs.String("from", "", "with --to: compare one store with itself at two times: `TIME` (RFC 3339 or now)")
	toAt := fs.String("to", "", "with --from: the later `TIME` (RFC 3339 or now)")
	db := fs.String("db", "", "with --from and --to: the store `FILE` (or give it as the argument)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if *fromAt != "" || *toAt != "" {
		if *fromAt == "" || *toAt == "" {
			return usagef("--from and --to go together")
		}
		if *db != "" {
			pos = append([]string{*db}, pos...)
		}
		if len(pos) != 1 {
			return usageHelpf("with --from and --to, give one store: --db FILE")
		}
		t1, err := parseAt(*fromAt, time.Now)
		if err != nil {
			return usagef("--from: %v", err)
		}
		t2, err := parseAt(*toAt, time.Now)
		if err != nil {
			return usagef("--to: %v", err)
		}
		now := time.Now().UTC()
		for _, a := range []struct {
			flag string
			t    time.Time
		}{{"--from", t1}, {"--to", t2}} {
			if a.t.After(now) {
				return usagef("%s %s is in the future (now is %s): the store knows nothing of it yet", a.flag, a.t.Format(time.RFC3339), now.Format(time.RFC3339))
			}
		}
		if t1.After(t2) {
			return usagef("--from %s is later than --to %s: give the earlier time as --from", t1.Format(time.RFC3339), t2.Format(time.RFC3339))
		}
		return diffTimes(ctx, e, pos[0], t1, t2, *asJSON, *exitCode)
	}
	if len(pos) != 2 {
		return usageHelpf("give two stores: OLD.bolt NEW.bolt")
	}
	ctx, cancel := withSignals(ctx, e)
	defer cancel()
	before, err := openReading(ctx, pos[0], "")
	if err != nil {
		return err
	}
	defer before.Close()
	after, err := openReading(ctx, pos[1], "")
	if err != nil {
		return err
	}
	defer after.Close()
	r, err := archive.Diff(ctx, before.Store, after.Store, archive.DiffOptions{Domains: *domains})
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
		if c.OldFrame != c.NewFrame {
			fmt.Fprintf(w, "~ edge %s → %s  frame %d → %d\n", c.From, c.To, c.OldFrame, c.NewFrame)
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

// timeDiff is weaver diff --from --to's report: the edges of one store
// that appeared and disappeared between two times.
type timeDiff struct {
	From        time.Time      `json:"from"`
	To          time.Time      `json:"to"`
	Appeared    []timeDiffEdge `json:"edges_appeared"`
	Disappeared []timeDiffEdge `json:"edges_disappeared"`
}

type timeDiffEdge struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Weight uint64 `json:"weight"`
}

func diffTimes(ctx context.Context, e *env, path string, from, to time.Time, asJSON, exitCode bool) error {
	s, err := openReading(ctx, path, "")
	if err != nil {
		return err
	}
	defer s.Close()
	r := timeDiff{From: from, To: to, Appeared: []timeDiffEdge{}, Disappeared: []timeDiffEdge{}}
	err = s.View(func(tx *kv.Tx) error {
		app, dis, err := graph.DiffAt(tx, from, to)
		if err != nil {
			return err
		}
		hosts := map[uint64]string{}
		host := func(id uint64) string {
			if h, ok := hosts[id]; ok {
				return h
			}
			n, _, _ := graph.Get(tx, id)
			hosts[id] = n.Host
			return n.Host
		}
		for _, c := range app {
			r.Appeared = append(r.Appeared, timeDiffEdge{host(c.From), host(c.To), c.Weight})
		}
		for _, c := range dis {
			r.Disappeared = append(r.Disappeared, timeDiffEdge{host(c.From), host(c.To), c.Weight})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if asJSON {
		enc := json.NewEncoder(e.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(e.Stdout, "%s from %s to %s: %d edges appeared, %d disappeared\n", path,
			from.Format(time.RFC3339), to.Format(time.RFC3339), len(r.Appeared), len(r.Disappeared))
		for _, c := range r.Appeared {
			fmt.Fprintf(e.Stdout, "+ edge %s → %s  weight %d\n", c.From, c.To, c.Weight)
		}
		for _, c := range r.Disappeared {
			fmt.Fprintf(e.Stdout, "- edge %s → %s  weight %d\n", c.From, c.To, c.Weight)
		}
	}
	if exitCode && len(r.Appeared)+len(r.Disappeared) > 0 {
		return errDiffers
	}
	return nil
}
