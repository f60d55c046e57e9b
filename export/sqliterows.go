package export

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// The columns the export fills, in the order rows give them.
const (
	nodeInsertColumns = `node_id, domain_name, description, crawl_count, created_at,
		registrable_domain, title, status, http_status, fail_count, content_type, server, bytes, fetch_ms,
		content_hash, depth, scheme, last_error, first_seen, last_seen, last_crawl`
	edgeInsertColumns = "edge_id, from_node_id, to_node_id, weight, first_seen, last_seen"
	rankInsertColumns = "node_id, pagerank, harmonic"
	nodeFactsColumns  = "node_id, canonical, robots, mirror_of, pages_fetched, community, x, y, redirect_to, home, tls_problem"
	edgeFactsColumns  = "edge_id, nofollow, redirect, first_seen, last_seen, gone, frame"
	nodeAtColumns     = "node_id, as_of"
)

// Rows go to SQLite several at a time, one multi-row INSERT per batch: a
// statement execution has a fixed cost (for an AUTOINCREMENT table,
// reading and writing sqlite_sequence) that one row per statement would
// pay a million times.
const (
	nodesPerBatch = 32
	edgesPerBatch = 128
	ranksPerBatch = 256
)

// The tables rows go to.
const (
	tableNodes = iota
	tableEdges
	tableRanks
	tableNodeFacts
	tableEdgeFacts
	tableNodeAt
)

// rowBatch is the values of up to a batch of rows of one table.
type rowBatch struct {
	table int // tableNodes, tableEdges, ...: a position in sqliteTables
	args  []any
}

// sqliteTables are the tables rows go to, by table number: name, the
// columns rows fill and the rows of a full batch.
var sqliteTables = [...]struct {
	name, columns string
	perBatch      int
}{
	tableNodes:     {"nodes", nodeInsertColumns, nodesPerBatch},
	tableEdges:     {"edges", edgeInsertColumns, edgesPerBatch},
	tableRanks:     {"node_ranks", rankInsertColumns, ranksPerBatch},
	tableNodeFacts: {"node_facts", nodeFactsColumns, nodesPerBatch},
	tableEdgeFacts: {"edge_facts", edgeFactsColumns, edgesPerBatch},
	tableNodeAt:    {"node_at", nodeAtColumns, ranksPerBatch},
}

// inserters are the inserters of the tables, by table number; nil for a
// table the export leaves out (node_ranks with NoRanks, node_at without
// At), for which the walk sends no rows.
type inserters [len(sqliteTables)]*inserter

func newInserters(ctx context.Context, tx *sql.Tx, opt Options) (*inserters, error) {
	ins := &inserters{}
	for t, table := range sqliteTables {
		if t == tableRanks && opt.NoRanks || t == tableNodeAt && opt.At.IsZero() {
			continue
		}
		in, err := newInserter(ctx, tx, table.name, table.columns, table.perBatch)
		if err != nil {
			ins.close()
			return nil, err
		}
		ins[t] = in
	}
	return ins, nil
}

func (ins *inserters) close() {
	for _, in := range ins {
		if in != nil {
			in.close()
		}
	}
}

// fillTables inserts the rows of the view of s through ins. Two
// goroutines share the work: one walks the store (decoding, filtering,
// formatting values) and hands batches of rows to this one, which owns
// the SQLite connection, so that reading the store and inserting overlap.
func fillTables(ctx context.Context, s *kv.Store, opt Options, ins *inserters) (st Stats, f walkFacts, err error) {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	batches := make(chan rowBatch, 8)
	free := make(chan []any, 10) // used batches, for the walker to refill
	var walkErr error
	go func() {
		defer close(batches)
		st, walkErr = walk(wctx, s, opt, func(v *view) error {
			err := walkRows(wctx, v, batches, free)
			f = walkFactsOf(v)
			return err
		})
	}()
	if err := ins.drain(batches, free, stop); err != nil {
		return st, f, err
	}
	return st, f, walkErr
}

// drain inserts the batches until the walker closes the channel, and
// gives their slices back on free. After an error it stops the walker and
// drops the batches still coming.
func (ins *inserters) drain(batches <-chan rowBatch, free chan<- []any, stop func()) error {
	var err error
	for b := range batches {
		if err == nil {
			if err = ins[b.table].exec(b.args); err != nil {
				stop() // the walker stops at its next row
			}
		}
		clear(b.args)
		select {
		case free <- b.args[:0]:
		default:
		}
	}
	return err
}

// walkRows turns the view's nodes and edges into batches of row values
// and sends them on batches, reusing the slices that come back on free.
func walkRows(ctx context.Context, v *view, batches chan<- rowBatch, free <-chan []any) error {
	w := &rowWalker{ctx: ctx, v: v, batches: batches, free: free}
	if err := w.nodes(); err != nil {
		return fmt.Errorf("nodes: %w", err)
	}
	if err := w.edges(); err != nil {
		return fmt.Errorf("edges: %w", err)
	}
	return nil
}

// rowWalker is walkRows's state: the rows being filled, by table, and the
// time columns' text.
type rowWalker struct {
	ctx     context.Context
	v       *view
	batches chan<- rowBatch
	free    <-chan []any

	rows  []any // nodes rows, then edges rows
	facts []any // node_facts rows, then edge_facts rows
	ranks []any // node_ranks rows
	at    []any // node_at rows

	times  [5]timeText // one per time column
	edgeID int64       // the last edge's edge_id
}

// send hands *rows to the inserter of table, unless there are none, and
// takes a used slice (or none) to fill next.
func (w *rowWalker) send(table int, rows *[]any) error {
	if len(*rows) == 0 {
		return nil
	}
	select {
	case w.batches <- rowBatch{table: table, args: *rows}:
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
	select {
	case *rows = <-w.free:
	default:
		*rows = nil
	}
	return nil
}

// rowsOf names the rows being filled for a table.
type rowsOf struct {
	table int
	rows  *[]any
}

// flush sends what is left of each table's rows, in turn.
func (w *rowWalker) flush(tables ...rowsOf) error {
	for _, t := range tables {
		if err := w.send(t.table, t.rows); err != nil {
			return err
		}
	}
	return nil
}

// nodes sends the rows of every node: nodes, node_facts, node_at and
// node_ranks.
func (w *rowWalker) nodes() error {
	if err := w.v.nodes(w.node); err != nil {
		return err
	}
	return w.flush(rowsOf{tableNodes, &w.rows}, rowsOf{tableRanks, &w.ranks},
		rowsOf{tableNodeFacts, &w.facts}, rowsOf{tableNodeAt, &w.at})
}

// node adds the rows of n, and sends each table's batch once full.
func (w *rowWalker) node(n *graph.Node) error {
	v := w.v
	created := w.times[0].null(n.FirstSeen)
	w.rows = append(w.rows,
		int64(n.ID), n.Host, nullText(n.Description), int64(n.CrawlCount), created,
		n.Domain, nullText(n.Title), string(n.Status), nullInt(int64(n.HTTPStatus)), int64(n.FailCount),
		nullText(n.ContentType), nullText(n.Server), n.Bytes, n.FetchMS,
		nullText(n.ContentHash), int64(n.Depth), nullText(n.Scheme), nullText(n.Error),
		created, w.times[1].null(n.LastSeen), w.times[2].null(n.LastCrawl))
	w.facts = append(w.facts, int64(n.ID), nullText(n.Canonical), nullText(n.RobotsDirectives),
		nullInt(int64(n.MirrorOf)), int64(n.PagesFetched))
	if c, x, y, ok := v.layoutOf(n.ID); ok {
		w.facts = append(w.facts, int64(c), x, y)
	} else {
		w.facts = append(w.facts, nil, nil, nil)
	}
	w.facts = append(w.facts, nullText(n.RedirectTo), nullText(n.Home), nullText(n.TLSProblem))
	if len(w.facts) == 11*nodesPerBatch {
		if err := w.send(tableNodeFacts, &w.facts); err != nil {
			return err
		}
	}
	if v.asOf != "" {
		w.at = append(w.at, int64(n.ID), v.asOf)
		if len(w.at) == 2*ranksPerBatch {
			if err := w.send(tableNodeAt, &w.at); err != nil {
				return err
			}
		}
	}
	if pr, h, ok := v.rankOf(n.ID); ok {
		w.ranks = append(w.ranks, int64(n.ID), pr, h)
		if len(w.ranks) == 3*ranksPerBatch {
			if err := w.send(tableRanks, &w.ranks); err != nil {
				return err
			}
		}
	}
	if len(w.rows) == 21*nodesPerBatch {
		return w.send(tableNodes, &w.rows)
	}
	return nil
}

// edges sends the rows of every edge: edges and edge_facts, numbered in
// the view's (from, to) order.
func (w *rowWalker) edges() error {
	if err := w.v.edges(w.edge); err != nil {
		return err
	}
	return w.flush(rowsOf{tableEdges, &w.rows}, rowsOf{tableEdgeFacts, &w.facts})
}

// edge adds the rows of e, and sends both tables' batches once full.
func (w *rowWalker) edge(e *graph.Edge) error {
	w.edgeID++
	first, last := w.times[3].null(e.FirstSeen), w.times[4].null(e.LastSeen)
	w.rows = append(w.rows, w.edgeID, int64(e.From), int64(e.To), int64(e.Weight), first, last)
	gone := int64(0)
	if w.v.gone(e) {
		gone = 1
	}
	w.facts = append(w.facts, w.edgeID, int64(e.Nofollow), int64(e.Redirect), first, last, gone, int64(e.Frame))
	if len(w.rows) == 6*edgesPerBatch {
		if err := w.send(tableEdges, &w.rows); err != nil {
			return err
		}
		return w.send(tableEdgeFacts, &w.facts)
	}
	return nil
}

// inserter runs the multi-row INSERTs of one table.
type inserter struct {
	ctx  context.Context
	tx   *sql.Tx
	head string    // INSERT INTO table (columns) VALUES
	cols int       // columns per row
	rows int       // rows per full batch
	full *sql.Stmt // prepared for a full batch
}

func newInserter(ctx context.Context, tx *sql.Tx, table, columns string, rows int) (*inserter, error) {
	in := &inserter{ctx: ctx, tx: tx, head: "INSERT INTO " + table + " (" + columns + ") VALUES ", cols: strings.Count(columns, ",") + 1, rows: rows}
	var err error
	in.full, err = tx.PrepareContext(ctx, in.query(rows))
	return in, err
}

// query is the INSERT statement for n rows.
func (in *inserter) query(n int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", in.cols), ", ") + ")"
	return in.head + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

// exec inserts the rows whose values are args. It runs the INSERT as a
// query: go-sqlite3 then binds every value and steps in one cgo call,
// where Exec makes one call per value (a third of the insert's time for
// a 768-value batch). The statement returns no rows; stepping the result
// to its end surfaces any constraint error.
func (in *inserter) exec(args []any) error {
	if len(args)%in.cols != 0 {
		return fmt.Errorf("%d values for rows of %d columns", len(args), in.cols)
	}
	var rows *sql.Rows
	var err error
	if n := len(args) / in.cols; n == in.rows {
		rows, err = in.full.QueryContext(in.ctx, args...)
	} else {
		rows, err = in.tx.QueryContext(in.ctx, in.query(n), args...)
	}
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	return errors.Join(rows.Err(), rows.Close())
}

func (in *inserter) close() { in.full.Close() }

// nullText is NULL for an empty string, else s as valid UTF-8.
func nullText(s string) any {
	if s == "" {
		return nil
	}
	return validUTF8(s)
}

func nullInt(n int64) any {
	if n == 0 {
		return nil
	}
	return n
}

// sqlTime formats t as SQLite's CURRENT_TIMESTAMP does, in UTC.
func sqlTime(t time.Time) string { return t.UTC().Format(time.DateTime) }

// timeText is sqlTime for a column of a million rows: it formats by hand
// (time.Format is a third of an edge's cost) and remembers the last
// second it formatted, since the edges one page adds share their times.
type timeText struct {
	sec int64
	s   string
}

// null returns t as sqlTime formats it, or nil (NULL) for the zero time.
func (c *timeText) null(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	sec := t.Unix()
	if c.s != "" && sec == c.sec {
		return c.s
	}
	u := t.UTC()
	y, mo, d := u.Date()
	h, mi, se := u.Clock()
	if y < 0 || y > 9999 {
		c.sec, c.s = sec, sqlTime(t)
		return c.s
	}
	var b [19]byte
	put := func(at, v, width int) {
		for i := at + width - 1; i >= at; i-- {
			b[i] = byte('0' + v%10)
			v /= 10
		}
	}
	put(0, y, 4)
	b[4] = '-'
	put(5, int(mo), 2)
	b[7] = '-'
	put(8, d, 2)
	b[10] = ' '
	put(11, h, 2)
	b[13] = ':'
	put(14, mi, 2)
	b[16] = ':'
	put(17, se, 2)
	c.sec, c.s = sec, string(b[:])
	return c.s
}
