package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/serve"
)

func init() {
	register(&command{Name: "show", Summary: "show one host: its record, ranks, history and links in and out", Run: runShow})
}

const showSynopsis = `weaver show HOST [--db FILE] [--limit N] [--no-ranks] [--json]

Shows what the store knows of one host: its record (status, title, HTTP
answer, depth, first and last seen, crawls, pages fetched), its PageRank
and harmonic centrality, its mirror group, its crawl history and revisit
schedule, and its links in and out with their weights, heaviest first.
A crawl run with --anchors N also kept up to N example links per link:
the page, the URL, the anchor text and rel, listed under each link.
HOST is normalised as the crawler normalises hosts (a URL names its
host). A store a running crawl holds is asked through the crawl's
--listen API (set WEAVER_TOKEN when the API wants a token).`

const showExamples = `  weaver show www.example.com
  weaver show https://www.example.com/about --db crawl.bolt --limit 10
  weaver show www.example.com --json | jq '.in.links[] | [.host, .weight] | @tsv'`

func runShow(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "show", showSynopsis, showExamples)
	db := fs.String("db", "", "the bbolt store `FILE` (default $WEAVER_DB_PATH, else weaver.bolt)")
	limit := fs.Int("limit", serve.DefaultHostLimit, "list at most `N` links in each direction and N crawls of the history; 0 lists all")
	noRanks := fs.Bool("no-ranks", false, "leave out PageRank and harmonic centrality (computing them reads the whole graph)")
	asJSON := fs.Bool("json", false, "print the report as JSON, for scripts")
	timeout := durationFlag(fs, "timeout", time.Minute, "wait at most `DURATION` for a running crawl's API")
	tokenFile := fs.String("token-file", "", "the running crawl's API token, in `FILE` (or set WEAVER_TOKEN)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() == 0:
		return usageHelpf("show wants a HOST (e.g. weaver show www.example.com)")
	case fs.NArg() > 1:
		return usageHelpf("show takes one HOST, got %d arguments (%q)", fs.NArg(), fs.Args())
	case *limit < 0:
		return usagef("--limit %d: want a number of links, or 0 for all", *limit)
	}
	host := fs.Arg(0)
	if _, err := export.HostKey(host); err != nil {
		return usagef("%q is not a host name: %v", host, err)
	}
	path := dbPath(e, *db)
	ctx, cancel := withSignals(ctx, e)
	defer cancel()

	opt := export.HostOptions{Limit: *limit, NoRanks: *noRanks, Version: Version}
	var rep export.HostReport
	s, err := kv.Open(path, kv.Options{ReadOnly: true})
	switch {
	case errors.Is(err, kv.ErrInUse):
		auth, err := apiAuth(e, *tokenFile, false)
		if err != nil {
			return err
		}
		client := serve.Client{Path: path, Token: auth.Token, TokenHow: "give --token-file FILE (the crawl's token file) or set WEAVER_TOKEN", Timeout: *timeout}
		if rep, err = client.Host(ctx, host, opt, *timeout); err != nil {
			return clientError(err)
		}
	case err != nil:
		return storeError(err)
	default:
		rep, err = export.Host(ctx, s, host, opt)
		s.Close()
		switch {
		case errors.Is(err, context.Canceled):
			return errors.New("interrupted")
		case errors.Is(err, export.ErrUnknownHost):
			return usagef("%v in %s", err, path)
		case err != nil:
			return err
		}
	}
	if *asJSON {
		return writeJSON(e.Stdout, rep)
	}
	return printHost(e.Stdout, &rep, *limit)
}

// printHost writes the report as "key: value" lines and two tables.
func printHost(w io.Writer, rep *export.HostReport, limit int) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s (node %d)\n", rep.Host, rep.ID)
	printHostRecord(tw, rep)
	printHostFacts(tw, rep)
	printHistory(tw, rep)
	printLinks(tw, "Links out", "to", &rep.Out, limit)
	printLinks(tw, "Links in", "from", &rep.In, limit)
	if !rep.Anchors {
		fmt.Fprintln(tw, "\n(no example links kept: crawl with --anchors N to keep the pages, anchor texts and rel of each link)")
	}
	return tw.Flush()
}

// hostRow writes one "key: value" line of a host's report.
func hostRow(tw io.Writer, k string, format string, a ...any) {
	fmt.Fprintf(tw, "  %s:\t%s\n", k, fmt.Sprintf(format, a...))
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// printHostRecord writes the host's record: its last answer, title,
// depth, when it was seen and crawled.
func printHostRecord(tw io.Writer, rep *export.HostReport) {
	status := rep.Status
	if rep.HTTPStatus != 0 {
		status += fmt.Sprintf(", HTTP %d", rep.HTTPStatus)
	}
	if rep.ContentType != "" {
		status += ", " + rep.ContentType
	}
	if rep.Bytes > 0 {
		status += fmt.Sprintf(", %d bytes", rep.Bytes)
	}
	if rep.FetchMS > 0 {
		status += fmt.Sprintf(" in %d ms", rep.FetchMS)
	}
	hostRow(tw, "Status", "%s", status)
	if rep.Error != "" {
		hostRow(tw, "Error", "%s", oneLine(rep.Error, 120))
	}
	if rep.Title != "" {
		hostRow(tw, "Title", "%s", oneLine(rep.Title, 100))
	}
	if rep.Description != "" && rep.Description != rep.Title {
		hostRow(tw, "Description", "%s", oneLine(rep.Description, 100))
	}
	if rep.Domain != "" && rep.Domain != rep.Host {
		hostRow(tw, "Domain", "%s", rep.Domain)
	}
	hostRow(tw, "Depth", "%d", rep.Depth)
	hostRow(tw, "First seen", "%s", rfc3339(rep.FirstSeen))
	hostRow(tw, "Last seen", "%s", rfc3339(rep.LastSeen))
	if rep.LastCrawl != nil {
		hostRow(tw, "Last crawl", "%s", rfc3339(*rep.LastCrawl))
	} else {
		hostRow(tw, "Last crawl", "never")
	}
	crawls := count(rep.CrawlCount, "crawl", "")
	if rep.FailCount > 0 {
		crawls += fmt.Sprintf(", %s", count(rep.FailCount, "failure", ""))
	}
	if rep.PagesFetched > 0 {
		crawls += fmt.Sprintf(", %s fetched by the last", count(rep.PagesFetched, "page", ""))
	}
	hostRow(tw, "Crawls", "%s", crawls)
}

// printHostFacts writes what else is known of the host: its ranks,
// community, mirrors, canonical URL, robots directives, WARC record and
// revisit schedule.
func printHostFacts(tw io.Writer, rep *export.HostReport) {
	if r := rep.Ranks; r != nil {
		hostRow(tw, "PageRank", "%.6g (#%d of %d)", r.PageRank, r.Position, r.Of)
		hostRow(tw, "Harmonic", "%.2f (%s)", r.Harmonic, r.HarmonicMethod)
	}
	if l := rep.Layout; l != nil {
		hostRow(tw, "Community", "%d (at %.1f, %.1f)", l.Community, l.X, l.Y)
	}
	if rep.MirrorOf != "" {
		hostRow(tw, "Mirror of", "%s", rep.MirrorOf)
	}
	if len(rep.Mirrors) > 0 {
		hostRow(tw, "Mirrors", "%s", strings.Join(rep.Mirrors, ", "))
	}
	if rep.TLSProblem != "" {
		hostRow(tw, "TLS problem", "%s (accepted by --insecure)", rep.TLSProblem)
	}
	if rep.RedirectTo != "" {
		hostRow(tw, "Redirects to", "%s", rep.RedirectTo)
	}
	if rep.Home != "" {
		hostRow(tw, "Home page", "%s (where its redirects led)", rep.Home)
	}
	if rep.Canonical != "" {
		hostRow(tw, "Canonical", "%s", rep.Canonical)
	}
	if rep.RobotsDirectives != "" {
		hostRow(tw, "Robots", "%s", rep.RobotsDirectives)
	}
	if rep.Rendered {
		hostRow(tw, "Rendered", "yes")
	}
	if rep.Warc != "" {
		hostRow(tw, "WARC", "%s", rep.Warc)
	}
	if rep.NextDue != nil {
		due := fmt.Sprintf("%s (interval %s)", rfc3339(*rep.NextDue), (time.Duration(rep.IntervalMS) * time.Millisecond).String())
		hostRow(tw, "Next due", "%s", due)
	}
	if rep.Changes > 0 || rep.NotModified > 0 {
		ch := fmt.Sprintf("%s, %d answered 304", count(rep.Changes, "change", ""), rep.NotModified)
		if rep.LastChange != nil {
			ch += ", last " + rfc3339(*rep.LastChange)
		}
		hostRow(tw, "Changes", "%s", ch)
	}
}

// printHistory writes the host's crawls, latest first.
func printHistory(tw io.Writer, rep *export.HostReport) {
	if len(rep.History) == 0 {
		return
	}
	fmt.Fprintf(tw, "\nHistory (%s, latest first)\n", count(rep.Crawls, "crawl", ""))
	for i, c := range rep.History {
		what := "unchanged"
		switch {
		case i == rep.Crawls-1:
			what = "first crawl"
		case c.NotModified:
			what = "not modified"
		case c.Changed:
			what = "changed"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", rfc3339(c.At), what, count(c.Links, "host", "hosts")+" linked")
	}
	if left := rep.Crawls - len(rep.History); left > 0 {
		fmt.Fprintf(tw, "  (%d older left out: --limit 0 lists all)\n", left)
	}
}

// printLinks writes one direction of a host's links as a table, each
// link followed by its example links.
func printLinks(tw io.Writer, title, dir string, l *export.LinkList, limit int) {
	fmt.Fprintf(tw, "\n%s (%s, weight %d)\n", title, count(l.Total, "host", ""), l.Weight)
	if l.Total == 0 {
		fmt.Fprintln(tw, "  (none)")
		return
	}
	// The table is aligned on its own, its rows then interleaved with
	// their example links: a line of another shape between two rows
	// ends a tabwriter's column, and the rows after it were aligned
	// apart from the first.
	var tb bytes.Buffer
	t := tabwriter.NewWriter(&tb, 0, 4, 2, ' ', 0)
	fmt.Fprintf(t, "  #\t%s\tweight\tnofollow\tredirect\tframe\tstatus\n", dir)
	for i, k := range l.Links {
		fmt.Fprintf(t, "  %d\t%s\t%d\t%d\t%d\t%d\t%s\n", i+1, k.Host, k.Weight, k.Nofollow, k.Redirect, k.Frame, k.Status)
	}
	t.Flush()
	rows := strings.SplitAfter(tb.String(), "\n")
	io.WriteString(tw, rows[0])
	for i, k := range l.Links {
		io.WriteString(tw, rows[i+1])
		for _, a := range k.Anchors {
			fmt.Fprintf(tw, "       %s\n", anchorLine(&a))
		}
	}
	if l.Left > 0 {
		fmt.Fprintf(tw, "  (%d more left out of %d: --limit %d shows %d; --limit 0 lists all)\n", l.Left, l.Total, limit, len(l.Links))
	}
}

// anchorLine is one example link: "text" page → url [rel ...].
func anchorLine(a *graph.Anchor) string {
	var b strings.Builder
	switch {
	case a.Redirect:
		b.WriteString("redirect")
	case a.Text == "":
		b.WriteString("(no text)")
	default:
		fmt.Fprintf(&b, "%q", oneLine(a.Text, 60))
	}
	page := a.Page
	if page == "" {
		page = "?"
	}
	fmt.Fprintf(&b, " %s → %s", page, a.URL)
	if a.Rel != "" {
		fmt.Fprintf(&b, " (rel %s)", a.Rel)
	}
	return b.String()
}
