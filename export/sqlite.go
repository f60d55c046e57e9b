package export

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	_ "github.com/mattn/go-sqlite3" // the database/sql driver "sqlite3"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// seedSchema is seed 000 §4.1, verbatim. Its tables are created first and
// its indexes last (after the rows: an index built once is much faster
// than one maintained per insert, and the schema is the same).
const (
	seedNodes = `CREATE TABLE nodes (
    node_id INTEGER PRIMARY KEY AUTOINCREMENT,
    domain_name TEXT UNIQUE NOT NULL,
    description TEXT,
    crawl_count INTEGER DEFAULT 0,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
)`
	seedEdges = `CREATE TABLE edges (
    edge_id INTEGER PRIMARY KEY AUTOINCREMENT,
    from_node_id INTEGER NOT NULL,
    to_node_id INTEGER NOT NULL,
    weight INTEGER DEFAULT 1,
    FOREIGN KEY (from_node_id) REFERENCES nodes(node_id),
    FOREIGN KEY (to_node_id) REFERENCES nodes(node_id),
    UNIQUE(from_node_id, to_node_id)
)`
	seedIndexes = `CREATE INDEX idx_nodes_domain ON nodes(domain_name);
CREATE INDEX idx_edges_from ON edges(from_node_id);
CREATE INDEX idx_edges_to ON edges(to_node_id);`
)

// nodeColumns are weaver's columns after the seed's, added with ALTER
// TABLE so that the seed's columns keep their definitions and positions
// (SQLite appends them to the stored CREATE TABLE text).
var nodeColumns = []string{
	"registrable_domain TEXT",
	"title TEXT",
	"status TEXT",
	"http_status INTEGER",
	"fail_count INTEGER DEFAULT 0",
	"content_type TEXT",
	"server TEXT",
	"bytes INTEGER",
	"fetch_ms INTEGER",
	"content_hash TEXT",
	"depth INTEGER",
	"scheme TEXT",
	"last_error TEXT",
	"first_seen TIMESTAMP",
	"last_seen TIMESTAMP",
	"last_crawl TIMESTAMP",
}

// rankTable holds every node's ranks (see package rank), a table of its
// own so that the seed's nodes table keeps its definition. Options.NoRanks
// leaves it out.
const rankTable = `CREATE TABLE node_ranks (
    node_id INTEGER PRIMARY KEY REFERENCES nodes(node_id),
    pagerank REAL,
    harmonic REAL
)`

// factTables hold the page-level facts of issue 20 in tables of their
// own, so that the seed's nodes and edges tables keep their definitions:
// a row per node and per edge.
const (
	nodeFactsTable = `CREATE TABLE node_facts (
    node_id INTEGER PRIMARY KEY REFERENCES nodes(node_id),
    canonical TEXT,
    robots TEXT,
    mirror_of INTEGER REFERENCES nodes(node_id),
    pages_fetched INTEGER DEFAULT 0,
    community INTEGER,
    x REAL,
    y REAL
)`
	edgeFactsTable = `CREATE TABLE edge_facts (
    edge_id INTEGER PRIMARY KEY REFERENCES edges(edge_id),
    nofollow INTEGER NOT NULL DEFAULT 0,
    redirect INTEGER NOT NULL DEFAULT 0,
    first_seen TIMESTAMP,
    last_seen TIMESTAMP,
    gone INTEGER NOT NULL DEFAULT 0
)`
	// nodeAtTable is written with Options.At: how far each node's
	// attributes are those at that time (see AsOfAt).
	nodeAtTable = `CREATE TABLE node_at (
    node_id INTEGER PRIMARY KEY REFERENCES nodes(node_id),
    as_of TEXT NOT NULL
)`
)

var edgeColumns = []string{
	"first_seen TIMESTAMP",
	"last_seen TIMESTAMP",
}

// extraSchema is created after the seed's indexes.
const extraSchema = `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE VIEW edge_hosts AS
    SELECT e.edge_id, f.domain_name AS from_host, t.domain_name AS to_host, e.weight
    FROM edges e JOIN nodes f ON f.node_id = e.from_node_id JOIN nodes t ON t.node_id = e.to_node_id;`

// SQLite writes s to the SQLite database path, replacing any database
// there: the tables, columns, constraints and indexes of seed 000 §4.1,
// with the columns weaver adds (see nodeColumns), a node_ranks table
// (node_id, pagerank, harmonic: see rankTable; none with Options.NoRanks),
// node_facts (node_id, canonical, robots, mirror_of: the node_id of the
// mirror group's first host for a copy, else NULL, pages_fetched) and
// edge_facts (edge_id, nofollow, redirect, first_seen, last_seen, gone:
// 1 for an edge its source's latest crawl no longer links), a row per node
// and per edge, with Options.At node_at (node_id, as_of: see AsOfAt), a meta table (weaver
// version, export time, the store's creation time, the crawl's time range,
// counts, filters and how harmonic centrality was computed) and an
// edge_hosts view. node_id is the store's id,
// domain_name the host (the registrable domain with Domains), created_at
// the time it was first seen; edge_id numbers edges in (from, to) order.
//
// The database is written in one transaction beside path, checked with
// PRAGMA foreign_key_check and integrity_check, synced and renamed into
// place: an interrupted or failed export leaves no file and any previous
// one intact. It returns CheckTarget's errors, ErrCheckFailed, the
// context's error, and store, SQLite or file system errors.
func SQLite(ctx context.Context, s *kv.Store, path string, opt Options) (Stats, error) {
	opt = opt.withDefaults()
	t, err := checkTarget(s, path, FormatSQLite, opt.Force)
	if err != nil {
		return Stats{}, err
	}
	var st Stats
	err = t.Build(func(tmp string) error {
		// SQLite creates the file by name and closes it before it is
		// synced and renamed into place (or, for a device, copied into
		// it). With journal_mode=OFF it writes no side file, so removing
		// tmp on failure removes everything.
		var err error
		if st, err = writeSQLite(ctx, s, tmp, opt); err != nil {
			return err
		}
		err = checkSQLite(ctx, tmp)
		if cerr := ctx.Err(); cerr != nil { // interrupted during the checks
			return cerr
		}
		return err
	})
	if err != nil {
		return st, wrap(FormatSQLite, path, err)
	}
	return st, nil
}

// sqliteDSN is a URI naming file, so that no character of its name ('?',
// '#', '%') is read as a parameter.
func sqliteDSN(file string) (string, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", err
	}
	return "file:" + (&url.URL{Path: abs}).EscapedPath(), nil
}

// The pragmas of the export connection. The file is private until it is
// renamed into place, and discarded on any failure, so it needs neither a
// journal nor syncs before the one at the end.
var exportPragmas = []string{
	"PRAGMA journal_mode = OFF",
	"PRAGMA synchronous = OFF",
	"PRAGMA locking_mode = EXCLUSIVE",
	"PRAGMA foreign_keys = OFF", // checked once at the end instead of per row
	"PRAGMA cache_size = -32768",
	"PRAGMA threads = 4", // sorter threads for building the indexes
}

// The columns the export fills, in the order rows give them.
const (
	nodeInsertColumns = `node_id, domain_name, description, crawl_count, created_at,
		registrable_domain, title, status, http_status, fail_count, content_type, server, bytes, fetch_ms,
		content_hash, depth, scheme, last_error, first_seen, last_seen, last_crawl`
	edgeInsertColumns = "edge_id, from_node_id, to_node_id, weight, first_seen, last_seen"
	rankInsertColumns = "node_id, pagerank, harmonic"
	nodeFactsColumns  = "node_id, canonical, robots, mirror_of, pages_fetched, community, x, y"
	edgeFactsColumns  = "edge_id, nofollow, redirect, first_seen, last_seen, gone"
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
	table int // tableNodes, tableEdges or tableRanks
	args  []any
}

// writeSQLite writes the database in file. Two goroutines share the work:
// one walks the store (decoding, filtering, formatting values) and hands
// batches of rows to the other, which owns the SQLite connection, so that
// reading the store and inserting overlap.
func writeSQLite(ctx context.Context, s *kv.Store, file string, opt Options) (st Stats, err error) {
	dsn, err := sqliteDSN(file)
	if err != nil {
		return Stats{}, err
	}
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return Stats{}, err
	}
	defer func() {
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}()
	db.SetMaxOpenConns(1) // pragmas hold per connection
	// Statements get a context without Done: go-sqlite3 starts a goroutine
	// per statement for one that has. ctx is checked every checkEvery rows
	// instead.
	bg := context.WithoutCancel(ctx)
	conn, err := db.Conn(bg)
	if err != nil {
		return Stats{}, err
	}
	defer conn.Close()
	for _, p := range exportPragmas {
		if _, err := conn.ExecContext(bg, p); err != nil {
			return Stats{}, fmt.Errorf("%s: %w", p, err)
		}
	}
	created := s.Created()
	tx, err := conn.BeginTx(bg, nil)
	if err != nil {
		return Stats{}, err
	}
	defer tx.Rollback()
	ddl := []string{seedNodes, seedEdges}
	if !opt.NoRanks {
		ddl = append(ddl, rankTable)
	}
	ddl = append(ddl, nodeFactsTable, edgeFactsTable)
	if !opt.At.IsZero() {
		ddl = append(ddl, nodeAtTable)
	}
	for _, c := range nodeColumns {
		ddl = append(ddl, "ALTER TABLE nodes ADD COLUMN "+c)
	}
	for _, c := range edgeColumns {
		ddl = append(ddl, "ALTER TABLE edges ADD COLUMN "+c)
	}
	for _, q := range ddl {
		if _, err := tx.ExecContext(bg, q); err != nil {
			return Stats{}, fmt.Errorf("schema: %w", err)
		}
	}
	nodes, err := newInserter(bg, tx, "nodes", nodeInsertColumns, nodesPerBatch)
	if err != nil {
		return Stats{}, err
	}
	defer nodes.close()
	edges, err := newInserter(bg, tx, "edges", edgeInsertColumns, edgesPerBatch)
	if err != nil {
		return Stats{}, err
	}
	defer edges.close()
	nodeFacts, err := newInserter(bg, tx, "node_facts", nodeFactsColumns, nodesPerBatch)
	if err != nil {
		return Stats{}, err
	}
	defer nodeFacts.close()
	edgeFacts, err := newInserter(bg, tx, "edge_facts", edgeFactsColumns, edgesPerBatch)
	if err != nil {
		return Stats{}, err
	}
	defer edgeFacts.close()
	var nodeAt *inserter // nil without At: the walk sends no as_of rows
	if !opt.At.IsZero() {
		nodeAt, err = newInserter(bg, tx, "node_at", nodeAtColumns, ranksPerBatch)
		if err != nil {
			return Stats{}, err
		}
		defer nodeAt.close()
	}
	var ranks *inserter // nil with NoRanks: the walk sends no rank rows
	if !opt.NoRanks {
		ranks, err = newInserter(bg, tx, "node_ranks", rankInsertColumns, ranksPerBatch)
		if err != nil {
			return Stats{}, err
		}
		defer ranks.close()
	}

	wctx, stop := context.WithCancel(ctx)
	defer stop()
	batches := make(chan rowBatch, 8)
	free := make(chan []any, 10) // used batches, for the walker to refill
	var first, last, method string
	var walkErr error
	go func() {
		defer close(batches)
		st, walkErr = walk(wctx, s, opt, func(v *view) error {
			err := walkRows(wctx, v, batches, free)
			method = v.harmonicMethod()
			if !v.first.IsZero() {
				first = isoTime(v.first)
			}
			if !v.last.IsZero() {
				last = isoTime(v.last)
			}
			return err
		})
	}()
	var insErr error
	for b := range batches {
		if insErr == nil {
			ins := [...]*inserter{tableNodes: nodes, tableEdges: edges, tableRanks: ranks,
				tableNodeFacts: nodeFacts, tableEdgeFacts: edgeFacts, tableNodeAt: nodeAt}[b.table]
			if insErr = ins.exec(b.args); insErr != nil {
				stop() // the walker stops at its next row
			}
		}
		clear(b.args)
		select {
		case free <- b.args[:0]:
		default:
		}
	}
	if insErr != nil {
		return st, insErr
	}
	if walkErr != nil {
		return st, walkErr
	}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	if _, err := tx.ExecContext(bg, seedIndexes); err != nil {
		return st, fmt.Errorf("indexes: %w", err)
	}
	if _, err := tx.ExecContext(bg, extraSchema); err != nil {
		return st, fmt.Errorf("schema: %w", err)
	}
	meta := [][2]string{
		{"weaver_version", opt.Version},
		{"exported_at", isoTime(opt.Now())},
		{"schema", "nodes and edges tables with idx_nodes_domain, idx_edges_from, idx_edges_to; weaver columns appended"},
		{"store_created_at", isoTime(created)},
		{"crawl_first_seen", first},
		{"crawl_last_seen", last},
		{"nodes", strconv.FormatUint(st.Nodes, 10)},
		{"edges", strconv.FormatUint(st.Edges, 10)},
		{"total_weight", strconv.FormatUint(st.Weight, 10)},
		{"min_weight", strconv.FormatUint(opt.MinWeight, 10)},
		{"crawled_only", strconv.FormatBool(opt.CrawledOnly)},
		{"domains", strconv.FormatBool(opt.Domains)},
		{"no_mirrors", strconv.FormatBool(opt.NoMirrors)},
		{"harmonic_method", method},
	}
	if opt.Top > 0 {
		meta = append(meta, [2]string{"top", strconv.Itoa(opt.Top)}, [2]string{"top_by", opt.topByName()})
	}
	if !opt.At.IsZero() {
		meta = append(meta, [2]string{"at", atText(opt.At)}, [2]string{"node_attributes", atNote + "; table node_at"})
	}
	for _, kv := range meta {
		if _, err := tx.ExecContext(bg, "INSERT INTO meta (key, value) VALUES (?, ?)", kv[0], nullText(kv[1])); err != nil {
			return st, fmt.Errorf("meta: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	return st, tx.Commit()
}

// walkRows turns the view's nodes and edges into batches of row values
// and sends them on batches, reusing the slices that come back on free.
func walkRows(ctx context.Context, v *view, batches chan<- rowBatch, free <-chan []any) error {
	var cur, rankRows, factRows, atRows []any
	send := func(table int, rows *[]any) error {
		if len(*rows) == 0 {
			return nil
		}
		select {
		case batches <- rowBatch{table: table, args: *rows}:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case *rows = <-free:
		default:
			*rows = nil
		}
		return nil
	}
	var times [5]timeText // one per time column
	err := v.nodes(func(n *graph.Node) error {
		created := times[0].null(n.FirstSeen)
		cur = append(cur,
			int64(n.ID), n.Host, nullText(n.Description), int64(n.CrawlCount), created,
			n.Domain, nullText(n.Title), string(n.Status), nullInt(int64(n.HTTPStatus)), int64(n.FailCount),
			nullText(n.ContentType), nullText(n.Server), n.Bytes, n.FetchMS,
			nullText(n.ContentHash), int64(n.Depth), nullText(n.Scheme), nullText(n.Error),
			created, times[1].null(n.LastSeen), times[2].null(n.LastCrawl))
		factRows = append(factRows, int64(n.ID), nullText(n.Canonical), nullText(n.RobotsDirectives),
			nullInt(int64(n.MirrorOf)), int64(n.PagesFetched))
		if c, x, y, ok := v.layoutOf(n.ID); ok {
			factRows = append(factRows, int64(c), x, y)
		} else {
			factRows = append(factRows, nil, nil, nil)
		}
		if len(factRows) == 8*nodesPerBatch {
			if err := send(tableNodeFacts, &factRows); err != nil {
				return err
			}
		}
		if v.asOf != "" {
			atRows = append(atRows, int64(n.ID), v.asOf)
			if len(atRows) == 2*ranksPerBatch {
				if err := send(tableNodeAt, &atRows); err != nil {
					return err
				}
			}
		}
		if pr, h, ok := v.rankOf(n.ID); ok {
			rankRows = append(rankRows, int64(n.ID), pr, h)
			if len(rankRows) == 3*ranksPerBatch {
				if err := send(tableRanks, &rankRows); err != nil {
					return err
				}
			}
		}
		if len(cur) == 21*nodesPerBatch {
			return send(tableNodes, &cur)
		}
		return nil
	})
	if err == nil {
		err = send(tableNodes, &cur)
	}
	if err == nil {
		err = send(tableRanks, &rankRows)
	}
	if err == nil {
		err = send(tableNodeFacts, &factRows)
	}
	if err == nil {
		err = send(tableNodeAt, &atRows)
	}
	if err != nil {
		return fmt.Errorf("nodes: %w", err)
	}
	var edgeID int64
	err = v.edges(func(e *graph.Edge) error {
		edgeID++
		first, last := times[3].null(e.FirstSeen), times[4].null(e.LastSeen)
		cur = append(cur, edgeID, int64(e.From), int64(e.To), int64(e.Weight), first, last)
		gone := int64(0)
		if v.gone(e) {
			gone = 1
		}
		factRows = append(factRows, edgeID, int64(e.Nofollow), int64(e.Redirect), first, last, gone)
		if len(cur) == 6*edgesPerBatch {
			if err := send(tableEdges, &cur); err != nil {
				return err
			}
			return send(tableEdgeFacts, &factRows)
		}
		return nil
	})
	if err == nil {
		err = send(tableEdges, &cur)
	}
	if err == nil {
		err = send(tableEdgeFacts, &factRows)
	}
	if err != nil {
		return fmt.Errorf("edges: %w", err)
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

// checkSQLite runs PRAGMA foreign_key_check and PRAGMA integrity_check
// on the finished database, side by side on two read-only connections,
// and returns ErrCheckFailed with what they found. Cancelling ctx
// interrupts them.
func checkSQLite(ctx context.Context, file string) (err error) {
	dsn, err := sqliteDSN(file)
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite3", dsn+"?mode=ro")
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}()
	db.SetMaxOpenConns(2)
	check := func(pragma string, ok func(rows *sql.Rows) (bool, string, error)) error {
		conn, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "PRAGMA cache_size = -32768"); err != nil {
			return err
		}
		rows, err := conn.QueryContext(ctx, pragma)
		if err != nil {
			return fmt.Errorf("%s: %w", pragma, err)
		}
		good, msg, err := ok(rows)
		if err = errors.Join(err, rows.Err(), rows.Close()); err != nil {
			return fmt.Errorf("%s: %w", pragma, err)
		}
		if !good {
			return fmt.Errorf("%w: %s: %s", ErrCheckFailed, pragma, msg)
		}
		return nil
	}
	fk := make(chan error, 1)
	go func() {
		fk <- check("PRAGMA foreign_key_check", func(rows *sql.Rows) (bool, string, error) {
			var bad []string
			for rows.Next() && len(bad) < 10 {
				var table, parent string
				var rowid sql.NullInt64
				var fkid int64
				if err := rows.Scan(&table, &rowid, &parent, &fkid); err != nil {
					return false, "", err
				}
				bad = append(bad, fmt.Sprintf("%s row %d → %s", table, rowid.Int64, parent))
			}
			return len(bad) == 0, strings.Join(bad, "; "), nil
		})
	}()
	ierr := check("PRAGMA integrity_check", func(rows *sql.Rows) (bool, string, error) {
		var msgs []string
		for rows.Next() {
			var m string
			if err := rows.Scan(&m); err != nil {
				return false, "", err
			}
			msgs = append(msgs, m)
		}
		return len(msgs) == 1 && msgs[0] == "ok", strings.Join(msgs, "; "), nil
	})
	return errors.Join(<-fk, ierr)
}

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
