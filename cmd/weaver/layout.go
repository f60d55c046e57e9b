package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"time"

	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/layout"
)

func init() {
	register(&command{Name: "layout", Summary: "compute the hosts' communities and ForceAtlas2 positions and store them", Run: runLayout})
}

const layoutSynopsis = `weaver layout [--db FILE]

Finds the communities of the host graph (Louvain modularity, on the
undirected graph whose link weights are summed both ways) and lays it out
with ForceAtlas2 (Barnes-Hut), then stores both in the store, stamped with
the graph they were computed for. Every export then carries community, x
and y on its nodes without computing them; an export of a store whose
layout is missing or stale computes one in memory and leaves the store
as it is. The result depends on the graph alone: two runs agree.`

const layoutExamples = `  weaver layout                            # weaver.bolt
  weaver layout --db crawl.bolt && weaver export --db crawl.bolt --gexf crawl.gexf
  weaver export --dot | dot -Tsvg > graph.svg   # draws the stored layout`

func runLayout(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "layout", layoutSynopsis, layoutExamples)
	db := fs.String("db", "", "the bbolt store `FILE` (default $WEAVER_DB_PATH, else weaver.bolt)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("layout takes no arguments (got %q): name the store with --db", fs.Args())
	}
	path := dbPath(e, *db)
	if _, err := os.Stat(path); err != nil {
		return storeError(err)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	ctx, cancel := withSignals(ctx, e)
	defer cancel()
	s, err := kv.Open(path, kv.Options{})
	if errors.Is(err, kv.ErrInUse) {
		return usageError{err: fmt.Errorf("%w: weaver layout stores the layout in the store, which a running crawl holds: run it once the crawl ends (Ctrl-C stops it; 'weaver crawl --db %s' resumes it); meanwhile 'weaver export --html map.html' lays the graph out without storing it", err, path)}
	}
	if err != nil {
		return storeError(err)
	}
	defer s.Close()
	if err := memoryShort(s, "laying out the graph", layout.MemoryNeed); err != nil {
		return err
	}
	start := time.Now()
	// Read and compute in a read transaction; write in a short one, after
	// checking that the graph did not change meanwhile.
	var st *layout.Stored
	err = s.View(func(tx *kv.Tx) error {
		st, err = layout.ComputeStored(ctx, tx, layout.Options{})
		return err
	})
	if errors.Is(err, context.Canceled) {
		return errors.New("interrupted: the stored layout is unchanged")
	}
	if err != nil {
		return err
	}
	took := time.Since(start)
	err = s.Update(func(tx *kv.Tx) error {
		if now := layout.CurrentStamp(tx); now != st.Stamp {
			return fmt.Errorf("the graph changed while it was laid out (%s, now %s): run weaver layout again", st.Stamp, now)
		}
		return layout.Save(tx, st)
	})
	if err != nil {
		return err
	}
	k := 0
	if len(st.Community) > 0 {
		k = int(slices.Max(st.Community)) + 1
	}
	fmt.Fprintf(e.Stdout, "laid out %s and %s of %s: %s, modularity %.4f, in %s\n",
		count(st.Stamp.Nodes, "host", ""), count(st.Stamp.Edges, "link", ""), path,
		count(uint64(k), "community", "communities"), st.Modularity, took.Round(time.Millisecond))
	return nil
}
