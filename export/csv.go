package export

import (
	"bufio"
	"context"
	"encoding/csv"
	"io"
	"strconv"
	"strings"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// FormatCSV is a pair of CSV files, PREFIX-nodes.csv and PREFIX-edges.csv.
const FormatCSV Format = "csv"

// CSVFiles returns the two files CSV writes for prefix.
func CSVFiles(prefix string) (nodes, edges string) {
	return prefix + "-nodes.csv", prefix + "-edges.csv"
}

// column is one attribute of a node or edge, as the CSV and GEXF exports
// write it: its name (a CSV header, a GEXF attribute id), its kind, and
// how its value is made ("" for none: an empty CSV cell, no GEXF
// attvalue).
type column[T any] struct {
	name string
	kind colKind
	cell func(v *view, x *T) string
}

// colKind is the type of a column's values.
type colKind int

const (
	colText   colKind = iota // free text: guarded against formulas in CSV (see csvText)
	colInt                   // a 32-bit integer
	colLong                  // a 64-bit integer
	colDouble                // a float
	colTime                  // RFC 3339 in UTC
	colBool                  // true or false
)

// gexfType is the GEXF attribute type of k.
func (k colKind) gexfType() string {
	return [...]string{colText: "string", colInt: "integer", colLong: "long", colDouble: "double", colTime: "string", colBool: "boolean"}[k]
}

func csvInt[N int | int64](n N) string { return strconv.FormatInt(int64(n), 10) }
func csvUint(n uint64) string          { return strconv.FormatUint(n, 10) }

// csvNonZero is n, or "" (an empty cell, NaN in pandas) when it is 0: the
// fields the JSON export leaves out when zero.
func csvNonZero[N int | uint64](n N) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatUint(uint64(n), 10)
}

// csvNodeColumns are the columns of PREFIX-nodes.csv: every attribute a
// node of the JSON export carries, by the same names. A node attribute
// to add (community, x, y) is one line here.
var csvNodeColumns = []column[graph.Node]{
	{"id", colLong, func(_ *view, n *graph.Node) string { return csvUint(n.ID) }},
	{"host", colText, func(_ *view, n *graph.Node) string { return n.Host }},
	{"domain", colText, func(_ *view, n *graph.Node) string { return n.Domain }},
	{"scheme", colText, func(_ *view, n *graph.Node) string { return n.Scheme }},
	{"title", colText, func(_ *view, n *graph.Node) string { return n.Title }},
	{"description", colText, func(_ *view, n *graph.Node) string { return n.Description }},
	{"status", colText, func(_ *view, n *graph.Node) string { return string(n.Status) }},
	{"crawl_count", colInt, func(_ *view, n *graph.Node) string { return csvInt(n.CrawlCount) }},
	{"fail_count", colInt, func(_ *view, n *graph.Node) string { return csvInt(n.FailCount) }},
	{"http_status", colInt, func(_ *view, n *graph.Node) string { return csvNonZero(max(n.HTTPStatus, 0)) }},
	{"content_type", colText, func(_ *view, n *graph.Node) string { return n.ContentType }},
	{"server", colText, func(_ *view, n *graph.Node) string { return n.Server }},
	{"bytes", colLong, func(_ *view, n *graph.Node) string { return csvInt(n.Bytes) }},
	{"fetch_ms", colLong, func(_ *view, n *graph.Node) string { return csvInt(n.FetchMS) }},
	{"content_hash", colText, func(_ *view, n *graph.Node) string { return n.ContentHash }},
	{"error", colText, func(_ *view, n *graph.Node) string { return n.Error }},
	{"depth", colInt, func(_ *view, n *graph.Node) string { return csvInt(n.Depth) }},
	{"first_seen", colTime, func(_ *view, n *graph.Node) string { return isoTime(n.FirstSeen) }},
	{"last_seen", colTime, func(_ *view, n *graph.Node) string { return isoTime(n.LastSeen) }},
	{"last_crawl", colTime, func(_ *view, n *graph.Node) string { return isoTime(n.LastCrawl) }},
	{"canonical", colText, func(_ *view, n *graph.Node) string { return n.Canonical }},
	{"robots", colText, func(_ *view, n *graph.Node) string { return n.RobotsDirectives }},
	{"mirror_of", colLong, func(_ *view, n *graph.Node) string { return csvNonZero(n.MirrorOf) }},
	{"pages_fetched", colInt, func(_ *view, n *graph.Node) string { return csvInt(n.PagesFetched) }},
	{"render_ms", colLong, func(_ *view, n *graph.Node) string { return csvInt(n.RenderMS) }},
	{"redirect_to", colText, func(_ *view, n *graph.Node) string { return n.RedirectTo }},
	{"home", colText, func(_ *view, n *graph.Node) string { return n.Home }},
	{"tls_problem", colText, func(_ *view, n *graph.Node) string { return n.TLSProblem }},
}

// csvRankColumns follow csvNodeColumns unless Options.NoRanks.
var csvRankColumns = []column[graph.Node]{
	{"pagerank", colDouble, func(v *view, n *graph.Node) string {
		pr, _, _ := v.rankOf(n.ID)
		return strconv.FormatFloat(pr, 'g', -1, 64)
	}},
	{"harmonic", colDouble, func(v *view, n *graph.Node) string {
		_, h, _ := v.rankOf(n.ID)
		return strconv.FormatFloat(h, 'g', -1, 64)
	}},
}

// csvLayoutColumns follow unless Options.NoLayout: the node's community
// (0 the largest) and its ForceAtlas2 position (see package layout).
var csvLayoutColumns = []column[graph.Node]{
	{"community", colLong, func(v *view, n *graph.Node) string {
		c, _, _, _ := v.layoutOf(n.ID)
		return strconv.FormatUint(uint64(c), 10)
	}},
	{"x", colDouble, func(v *view, n *graph.Node) string {
		_, x, _, _ := v.layoutOf(n.ID)
		return strconv.FormatFloat(x, 'f', 3, 64)
	}},
	{"y", colDouble, func(v *view, n *graph.Node) string {
		_, _, y, _ := v.layoutOf(n.ID)
		return strconv.FormatFloat(y, 'f', 3, 64)
	}},
}

// csvAtColumns follow the node columns with Options.At: how far the
// node's attributes are those at At (see AsOfAt).
var csvAtColumns = []column[graph.Node]{
	{"as_of", colText, func(v *view, _ *graph.Node) string { return v.asOf }},
}

// nodeColumns are the node columns of v's CSV and GEXF exports.
func (v *view) nodeColumns() []column[graph.Node] {
	cols := csvNodeColumns
	if v.ranks != nil {
		cols = append(cols[:len(cols):len(cols)], csvRankColumns...)
	}
	if v.lay != nil {
		cols = append(cols[:len(cols):len(cols)], csvLayoutColumns...)
	}
	if !v.opt.At.IsZero() {
		cols = append(cols[:len(cols):len(cols)], csvAtColumns...)
	}
	return cols
}

// csvEdgeColumns are the columns of PREFIX-edges.csv; hosts maps the
// ids of the nodes written to their hosts.
func csvEdgeColumns(hosts map[uint64]string) []column[graph.Edge] {
	return []column[graph.Edge]{
		{"source", colLong, func(_ *view, e *graph.Edge) string { return csvUint(e.From) }},
		{"target", colLong, func(_ *view, e *graph.Edge) string { return csvUint(e.To) }},
		{"source_host", colText, func(_ *view, e *graph.Edge) string { return hosts[e.From] }},
		{"target_host", colText, func(_ *view, e *graph.Edge) string { return hosts[e.To] }},
		{"weight", colLong, func(_ *view, e *graph.Edge) string { return csvUint(e.Weight) }},
		{"first_seen", colTime, func(_ *view, e *graph.Edge) string { return isoTime(e.FirstSeen) }},
		{"last_seen", colTime, func(_ *view, e *graph.Edge) string { return isoTime(e.LastSeen) }},
		{"nofollow", colLong, func(_ *view, e *graph.Edge) string { return csvUint(e.Nofollow) }},
		{"redirect", colLong, func(_ *view, e *graph.Edge) string { return csvUint(e.Redirect) }},
		{"gone", colBool, func(v *view, e *graph.Edge) string { return strconv.FormatBool(v.gone(e)) }},
		{"frame", colLong, func(_ *view, e *graph.Edge) string { return csvUint(e.Frame) }},
	}
}

// csvText makes s safe for a cell: invalid UTF-8 becomes U+FFFD, NUL
// bytes are dropped (pandas' C parser ends a cell at one), and a
// cell that a spreadsheet would read as a formula (starting with =, +,
// -, @, a tab or a carriage return) gets a leading apostrophe, as OWASP
// advises against CSV injection. A reader that wants the exact text drops
// a leading ' when the next character is one of those.
func csvText(s string) string {
	s = validUTF8(s)
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// CSV writes the graph of s, filters applied, as two RFC 4180 files with
// a header row: PREFIX-nodes.csv, a row per node with every attribute of
// the JSON export (ranks included unless Options.NoRanks), and
// PREFIX-edges.csv, a row per edge with source and target ids, their
// hosts (source_host, target_host), weight, first_seen, last_seen,
// nofollow, redirect and gone (true for an edge its source's latest crawl
// no longer links; see graph.Gone). With Options.At the nodes file ends
// with an as_of column (see AsOfAt). Text cells are guarded against formula injection
// (see csvText). Both files come from one read of the store; each is
// built beside its name and renamed into place when complete, the nodes
// file after the edges file. It holds a map of the kept nodes' hosts in
// memory. It returns CheckTarget's errors for either file, the
// context's, the store's and file system errors.
func CSV(ctx context.Context, s *kv.Store, prefix string, opt Options) (Stats, error) {
	opt = opt.withDefaults()
	npath, epath := CSVFiles(prefix)
	ntarget, err := checkTarget(s, npath, FormatCSV, opt.Force)
	if err != nil {
		return Stats{}, err
	}
	etarget, err := checkTarget(s, epath, FormatCSV, opt.Force)
	if err != nil {
		return Stats{}, err
	}
	failed := npath
	st, err := walk(ctx, s, opt, func(v *view) error {
		return ntarget.Write(0o644, func(nf io.Writer) error {
			cols := v.nodeColumns()
			hosts := map[uint64]string{}
			err := writeCSV(nf, cols, v, func(row func(*graph.Node) error) error {
				return v.nodes(func(n *graph.Node) error {
					hosts[n.ID] = n.Host
					return row(n)
				})
			})
			if err != nil {
				return err
			}
			failed = epath
			err = etarget.Write(0o644, func(ef io.Writer) error {
				if err := writeCSV(ef, csvEdgeColumns(hosts), v, v.edges); err != nil {
					return err
				}
				return ctx.Err() // interrupted after the last row: neither file

			})
			if err != nil {
				return err
			}
			failed = npath
			return ctx.Err()
		})
	})
	if err != nil {
		return st, wrap(FormatCSV, failed, err)
	}
	return st, nil
}

// writeCSV writes the header of cols, then a row per item walk hands
// out, to f.
func writeCSV[T any](f io.Writer, cols []column[T], v *view, walk func(func(*T) error) error) error {
	bw := bufio.NewWriterSize(f, 256<<10)
	w := csv.NewWriter(bw)
	rec := make([]string, len(cols))
	for i, c := range cols {
		rec[i] = c.name
	}
	if err := w.Write(rec); err != nil {
		return err
	}
	err := walk(func(x *T) error {
		for i, c := range cols {
			cell := c.cell(v, x)
			if c.kind == colText {
				cell = csvText(cell)
			}
			rec[i] = cell
		}
		return w.Write(rec)
	})
	if err != nil {
		return err
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return bw.Flush()
}
