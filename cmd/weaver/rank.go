package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/rank"
)

func init() {
	register(&command{Name: "rank", Summary: "list the hosts with the highest PageRank, with their harmonic centrality", Run: runRank})
}

const rankSynopsis = `weaver rank [--db FILE] [--top N] [--domains] [--weights all|latest] [--json]

Lists the hosts of the store with the highest PageRank (weighted by link
weight, as networkx.pagerank(G, weight="weight")), with their harmonic
centrality (networkx.harmonic_centrality(G): exact up to 10,000 hosts,
estimated with HyperBall above), the summed weight of the links to them
and their page title. A store a running crawl holds is ranked here, on a
snapshot the crawl streams. --weights latest weighs each link by its
source's latest crawl only (the default sums every crawl).`

const rankExamples = `  weaver rank                               # the top 20 hosts of weaver.bolt
  weaver rank --db crawl.bolt --top 50 --domains
  weaver rank --db living.bolt --weights latest   # revisited hosts weigh as their latest crawl
  weaver rank --top 0 --json | jq -r '.top[] | [.host, .harmonic] | @tsv'`

func runRank(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "rank", rankSynopsis, rankExamples)
	db := fs.String("db", "", "the bbolt store `FILE` (default $WEAVER_DB_PATH, else weaver.bolt)")
	top := fs.Int("top", 20, "list `N` hosts; 0 lists every host")
	domains := fs.Bool("domains", false, "rank registrable domains (hosts collapsed, weights summed) instead of hosts")
	asJSON := fs.Bool("json", false, "print the list as JSON, for scripts")
	weights := fs.String("weights", string(export.WeightsAll), "what an edge's `WEIGHT` counts: all (the pages that linked, summed over every crawl) or latest (its source's latest crawl only)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	wts, err := export.ParseWeights(*weights)
	if err != nil {
		return usageError{err: err}
	}
	if fs.NArg() > 0 {
		return usagef("rank takes no arguments (got %q): name the store with --db", fs.Args())
	}
	if *top < 0 {
		return usagef("--top %d: want a number of hosts, or 0 for all", *top)
	}
	path := firstNonEmpty(*db, e.Getenv("WEAVER_DB_PATH"), crawl.Defaults().DBPath)
	// The ranks hold a large graph for the whole command and make garbage
	// only while reading the store: the crawl's GC setting (200 %, see
	// main) would let that garbage grow to twice the graph's size.
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	ctx, cancel := withSignals(ctx, e)
	defer cancel()

	auth, err := apiAuth(e, "", false)
	if err != nil {
		return err
	}
	// A running crawl's store is ranked here, on a snapshot: the ranks
	// are computed in this process, never in the crawl's.
	s, err := openReading(ctx, path, auth.Token)
	if err != nil {
		return err
	}
	if err := memoryShort(s.Store, "ranking the graph", rank.MemoryNeed); err != nil {
		s.Close()
		return err
	}
	list, err := export.Top(ctx, s.Store, export.Options{Domains: *domains, Version: Version, Weights: wts}, *top)
	s.Close()
	if errors.Is(err, context.Canceled) {
		return errors.New("interrupted")
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.Stdout, list)
	}
	return printRanks(e.Stdout, list)
}

// printRanks writes the list as an aligned table.
func printRanks(w io.Writer, list export.RankList) error {
	what := "hosts"
	if list.Domains {
		what = "domains"
	}
	method := list.HarmonicMethod
	if method == "" {
		method = "exact"
	}
	fmt.Fprintf(w, "Top %d of %d %s by PageRank (%s; harmonic centrality: %s)\n\n", len(list.Top), list.Nodes, what, count(list.Edges, "edge", ""), method)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "#\t%s\tpagerank\tharmonic\tin-weight\ttitle\n", strings.TrimSuffix(what, "s"))
	for i, r := range list.Top {
		fmt.Fprintf(tw, "%d\t%s\t%.6g\t%.2f\t%d\t%s\n", i+1, r.Host, r.PageRank, r.Harmonic, r.InWeight, oneLine(r.Title, 60))
	}
	return tw.Flush()
}

// oneLine makes s fit a table cell: control characters become spaces,
// runs of spaces one, and it is cut to at most n runes with "…".
func oneLine(s string, n int) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
