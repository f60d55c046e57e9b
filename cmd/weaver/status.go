package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/serve"
)

func init() {
	register(&command{Name: "status", Summary: "show what a store holds, or a running crawl's live status", Run: runStatus})
}

func runStatus(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "status", "weaver status [--db FILE | --cluster URL [--crawl NAME]] [--json]", `  weaver status                      # weaver.bolt
  weaver status --db crawl.bolt --json | jq .store.top_hosts
  weaver status --cluster nats://10.0.0.5:4222   # every shard of the cluster crawls on that server
  weaver crawl --listen 127.0.0.1:8088 https://example.com &
  weaver status                      # asks the running crawl`)
	db := fs.String("db", "", "the bbolt store `FILE` (default $WEAVER_DB_PATH, else weaver.bolt)")
	asJSON := fs.Bool("json", false, "print the report as JSON, for scripts")
	timeout := durationFlag(fs, "timeout", 10*time.Second, "wait at most `DURATION` for a running crawl's status API")
	tokenFile := fs.String("token-file", "", "the running crawl's API token, in `FILE` (or set WEAVER_TOKEN)")
	clusterURL := fs.String("cluster", "", "report the cluster crawls on the NATS server at `URL` (default $WEAVER_CLUSTER when --db is not given)")
	crawlName := fs.String("crawl", "", "with --cluster: only the cluster crawl `NAME`")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("status takes no arguments (got %q): name the store with --db", fs.Args())
	}
	if *clusterURL == "" && *db == "" {
		*clusterURL = e.Getenv("WEAVER_CLUSTER")
	}
	if *clusterURL != "" {
		return clusterStatus(ctx, e, *clusterURL, *crawlName, *asJSON, *timeout)
	}
	path := firstNonEmpty(*db, e.Getenv("WEAVER_DB_PATH"), crawl.Defaults().DBPath)
	// The summary holds the graph for PageRank while it reads the store:
	// the crawl's GC setting (200 %, see main) would let garbage grow to
	// twice its size.
	defer debug.SetGCPercent(debug.SetGCPercent(100))

	var rep serve.Status
	s, err := kv.Open(path, kv.Options{ReadOnly: true})
	switch {
	case errors.Is(err, kv.ErrInUse):
		auth, err := apiAuth(e, *tokenFile, false)
		if err != nil {
			return err
		}
		client := serve.Client{Path: path, Token: auth.Token, TokenHow: "give --token-file FILE (the crawl's token file) or set WEAVER_TOKEN", Timeout: *timeout}
		if rep, err = client.Status(ctx); err != nil {
			return clientError(err)
		}
	case err != nil:
		return storeError(err)
	default:
		sum, err := serve.ReadSummary(s, time.Now())
		s.Close()
		if err != nil {
			return err
		}
		abs, _ := filepath.Abs(path)
		rep = serve.Status{Version: Version, DBPath: abs, Store: sum}
	}
	if *asJSON {
		return writeJSON(e.Stdout, rep)
	}
	return printStatus(e.Stdout, rep, time.Now())
}

// clientError makes the errors of a running crawl's API that are the
// command line's to fix (serve.ErrBadInput) usage errors: exit code 2.
func clientError(err error) error {
	if errors.Is(err, serve.ErrBadInput) {
		return usageError{err: err}
	}
	return err
}

// printStatus writes rep as aligned "key  value" lines and short tables.
func printStatus(w io.Writer, rep serve.Status, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	printStore(tw, rep.DBPath, &rep.Store, now)
	printStoreTables(tw, &rep.Store)
	printSettings(tw, rep.Store.Settings)
	printTopHosts(tw, &rep.Store)
	if c := rep.Crawl; c != nil {
		printLiveCrawl(tw, rep.Listen, c, now)
	}
	return tw.Flush()
}

// printStore writes the store's figures, one "key: value" line each.
func printStore(tw io.Writer, path string, st *serve.Summary, now time.Time) {
	row := func(k string, v any) { fmt.Fprintf(tw, "%s:\t%v\n", k, v) }
	row("Store", path)
	if !st.Created.IsZero() {
		row("Created", st.Created.UTC().Format(time.RFC3339))
	}
	row("Nodes", st.Nodes)
	row("Crawled nodes", st.CrawledNodes)
	row("Edges", st.Edges)
	row("Total weight", st.TotalWeight)
	row("Frontier", st.FrontierSize)
	if st.Leases > 0 {
		row("Leases", fmt.Sprintf("%d (hosts handed out, not yet committed: in flight, parked for their delay, claimed ahead)", st.Leases))
	} else {
		row("Leases", st.Leases)
	}
	row("Robots cached", st.RobotsCached)
	if st.LastCrawl != nil {
		row("Last crawl", fmt.Sprintf("%s (%s ago)", st.LastCrawl.UTC().Format(time.RFC3339), now.Sub(*st.LastCrawl).Round(time.Second)))
	} else {
		row("Last crawl", "never")
	}
	if rv := st.Revisits; rv != nil {
		row("Revisits", fmt.Sprintf("%d (%d not modified, %d changed, %d unchanged)", rv.Revisits, rv.NotModified, rv.Changed, rv.Revisits-min(rv.Changed, rv.Revisits)))
		if rv.NextDue != nil {
			when := "in " + rv.NextDue.Sub(now).Round(time.Second).String()
			if late := now.Sub(*rv.NextDue).Round(time.Second); late > 0 {
				when = "overdue by " + late.String()
			}
			row("Next due", fmt.Sprintf("%s (%s; %s scheduled)", rv.NextDue.Format(time.RFC3339), when, count(rv.Scheduled, "host", "")))
		}
	}
}

// printStoreTables writes the nodes by status and the hosts and the
// frontier by depth.
func printStoreTables(tw io.Writer, st *serve.Summary) {
	if len(st.NodesByStatus) > 0 {
		fmt.Fprintln(tw, "\nNodes by status")
		keys := make([]string, 0, len(st.NodesByStatus))
		for k := range st.NodesByStatus {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(tw, "  %s\t%d\n", k, st.NodesByStatus[k])
		}
	}
	if len(st.NodesByError) > 0 {
		fmt.Fprintf(tw, "  failed by cause\t%s\n", countList(st.NodesByError))
	}
	if len(st.NodesByTLSProblem) > 0 {
		fmt.Fprintf(tw, "  TLS problems accepted\t%s (--insecure)\n", countList(st.NodesByTLSProblem))
	}
	if st.Redirected > 0 {
		fmt.Fprintf(tw, "  redirected\t%d (crawled; the home page sends to another host, crawled on its own)\n", st.Redirected)
	}
	if len(st.HostsByDepth) > 0 {
		fmt.Fprintln(tw, "\nHosts by depth (links from the nearest seed)")
		for _, d := range st.HostsByDepth {
			fmt.Fprintf(tw, "  depth %d\t%s, %d crawled\n", d.Depth, count(d.Hosts, "host", ""), d.Crawled)
		}
	}
	fmt.Fprintln(tw, "\nFrontier by depth")
	if len(st.FrontierByDepth) == 0 {
		fmt.Fprintln(tw, "  (empty)")
	}
	for _, d := range st.FrontierByDepth {
		fmt.Fprintf(tw, "  depth %d\t%d\n", d.Depth, d.Entries)
	}
}

// printTopHosts writes the top hosts by in-weight and by PageRank, the
// WARC files and the largest mirror groups.
func printTopHosts(tw io.Writer, st *serve.Summary) {
	fmt.Fprintf(tw, "\nTop %d hosts by in-weight\n", serve.TopHosts)
	if len(st.TopHosts) == 0 {
		fmt.Fprintln(tw, "  (no edges)")
	}
	for i, h := range st.TopHosts {
		fmt.Fprintf(tw, "  %d\t%s\t%d\tfrom %s\t%s\n", i+1, h.Host, h.InWeight, count(h.InHosts, "host", ""), h.Status)
	}
	fmt.Fprintf(tw, "\nTop %d hosts by PageRank\n", serve.TopHosts)
	if len(st.TopPageRank) == 0 {
		fmt.Fprintln(tw, "  (no hosts)")
	}
	for i, h := range st.TopPageRank {
		fmt.Fprintf(tw, "  %d\t%s\t%.6g\tin-weight %d\t%s\n", i+1, h.Host, h.PageRank, h.InWeight, h.Status)
	}
	if st.Warc != nil {
		fmt.Fprintf(tw, "\nWARC files:\t%s, %d bytes in %s\n", count(st.Warc.Files, "file", ""), st.Warc.Bytes, st.Warc.Dir)
	}
	if len(st.MirrorGroups) > 0 {
		fmt.Fprintf(tw, "\nLargest mirror groups (same home page)\n")
		for i, g := range st.MirrorGroups {
			more := ""
			if g.Size > len(g.Hosts) {
				more = fmt.Sprintf(" and %d more", g.Size-len(g.Hosts))
			}
			fmt.Fprintf(tw, "  %d\t%d hosts\t%s%s\n", i+1, g.Size, strings.Join(g.Hosts, ", "), more)
		}
	}
}

// printLiveCrawl writes a running crawl's live status.
func printLiveCrawl(tw io.Writer, listen string, c *crawl.Status, now time.Time) {
	where := ""
	if listen != "" {
		where = " (http://" + listen + ")"
	}
	fmt.Fprintf(tw, "\nLive crawl%s\n", where)
	state := "running"
	if !c.Running {
		state = "ended " + c.TerminationReason
	}
	up := time.Duration(c.UptimeSeconds * float64(time.Second)).Round(time.Second)
	fmt.Fprintf(tw, "  State:\t%s, up %s\n", state, up)
	if c.Paused != nil {
		fmt.Fprintf(tw, "  Paused:\t%s\n", c.Paused.Text(now))
	}
	fmt.Fprintf(tw, "  Pages/s:\t%.1f\n", c.PagesPerSecond)
	pages := fmt.Sprint(c.PagesDone)
	if c.MaxPages > 0 {
		pages += fmt.Sprintf(" of max_pages %d", c.MaxPages)
	}
	fmt.Fprintf(tw, "  Pages:\t%s: %d fetched, %d failed, %d skipped\n", pages, c.PagesFetched, c.PagesFailed, c.PagesSkipped)
	fmt.Fprintf(tw, "  Nodes crawled:\t%d hosts\n", c.NodesCrawled)
	fmt.Fprintf(tw, "  Hosts open:\t%d (%d waiting for their delay or a retry)\n", c.HostsOpen, c.HostsWaiting)
	fmt.Fprintf(tw, "  Errors:\t%s\n", countList(c.ErrorsByType))
	workers := map[string]int64{}
	for _, wk := range c.Workers {
		workers[wk.State]++
	}
	fmt.Fprintf(tw, "  Workers:\t%s\n", countList(workers))
	fmt.Fprintf(tw, "  Fetch p50/p90/p99:\t%.0f / %.0f / %.0f ms\n", c.FetchP50MS, c.FetchP90MS, c.FetchP99MS)
	fmt.Fprintf(tw, "  Robots fetched:\t%d (robots disallowed: %d)\n", c.RobotsFetched, c.RobotsDisallowed)
	fmt.Fprintf(tw, "  Retries:\t%d\n", c.Retries)
	if c.Revisits > 0 {
		fmt.Fprintf(tw, "  Revisits:\t%d (%d not modified, %d changed; %d bytes saved)\n", c.Revisits, c.NotModified, c.Changed, c.BytesSaved)
	}
	if c.PagesRendered+c.RenderFailures > 0 {
		fmt.Fprintf(tw, "  Pages rendered:\t%d (render failures: %d)\n", c.PagesRendered, c.RenderFailures)
	}
}

// printSettings writes the settings a store's crawl runs by, in
// crawl.SettingKeys order.
func printSettings(w io.Writer, set crawl.Settings) {
	if set == nil {
		fmt.Fprintln(w, "\nSettings\n  (none stored: the next weaver crawl stores its own)")
		return
	}
	fmt.Fprintln(w, "\nSettings (weaver crawl resumes with them)")
	for _, key := range crawl.SettingKeys {
		if _, ok := set[key]; ok {
			fmt.Fprintf(w, "  %s\t%s\n", key, set.Text(key))
		}
	}
}

// countList writes counts as "a 3, b 1", largest first; "none" if empty.
func countList[N int | int64 | uint64](m map[string]N) string {
	keys := make([]string, 0, len(m))
	for k, n := range m {
		if n != 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "none"
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
