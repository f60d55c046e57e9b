package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

func init() {
	register(&command{Name: "check", Summary: "verify the store's file and weaver's invariants", Run: runCheck})
}

// errProblems is returned by check when the store has problems: exit 1.
var errProblems = errors.New("problems found")

func runCheck(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "check", "weaver check [--db FILE]", `  weaver check                     # weaver.bolt
  weaver check --db copy.bolt && weaver crawl --db copy.bolt`)
	db := fs.String("db", "weaver.bolt", "the store `FILE` to check")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 1 && !flagGiven(fs, "db"):
		*db = pos[0]
	case len(pos) > 0:
		fs.Usage()
		return usagef("unexpected arguments %q", pos)
	}
	s, err := kv.Open(*db, kv.Options{ReadOnly: true})
	if errors.Is(err, kv.ErrInUse) {
		return usageError{fmt.Errorf("%w (check a snapshot instead: weaver snapshot --db %s copy.bolt && weaver check --db copy.bolt)", err, *db)}
	}
	if err != nil {
		return storeError(err)
	}
	defer s.Close()

	var problems []string
	add := func(part string, err error, prefixes ...string) {
		if err == nil {
			return
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			for _, p := range prefixes {
				line = strings.TrimPrefix(line, p)
			}
			problems = append(problems, part+": "+line)
		}
	}
	add("bbolt", s.Check(), s.Path()+" "+kv.ErrCorrupt.Error()+": ")
	var counts graph.Counts
	var queued, leases uint64
	err = s.View(func(tx *kv.Tx) error {
		add("graph", graph.Check(tx), graph.ErrInconsistent.Error()+": ")
		add("frontier", frontier.Check(tx, func(id uint64) bool {
			return tx.GetRaw(kv.BucketNodes, kv.U64(id)) != nil
		}), frontier.ErrInconsistent.Error()+": ")
		counts, queued, leases = graph.GetCounts(tx), frontier.Len(tx), frontier.Leases(tx)
		return nil
	})
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		fmt.Fprintf(e.Stdout, "%s: %d problems:\n", *db, len(problems))
		for _, p := range problems {
			fmt.Fprintf(e.Stdout, "  %s\n", p)
		}
		return fmt.Errorf("%s: %d %w", *db, len(problems), errProblems)
	}
	fmt.Fprintf(e.Stdout, "ok: %d nodes, %d edges, %d queued, %d leases\n", counts.Nodes, counts.Edges, queued, leases)
	return nil
}

// flagGiven reports whether the flag name was given on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			found = true
		}
	})
	return found
}
