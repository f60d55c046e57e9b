package export

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"
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
    y REAL,
    redirect_to TEXT,
    home TEXT,
    tls_problem TEXT
)`
	edgeFactsTable = `CREATE TABLE edge_facts (
    edge_id INTEGER PRIMARY KEY REFERENCES edges(edge_id),
    nofollow INTEGER NOT NULL DEFAULT 0,
    redirect INTEGER NOT NULL DEFAULT 0,
    first_seen TIMESTAMP,
    last_seen TIMESTAMP,
    gone INTEGER NOT NULL DEFAULT 0,
    frame INTEGER NOT NULL DEFAULT 0
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

// createTables creates the tables: the seed's, then weaver's (node_ranks
// without NoRanks, node_at with At), then weaver's columns of the seed's.
func createTables(ctx context.Context, tx *sql.Tx, opt Options) error {
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
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("schema: %w", err)
		}
	}
	return nil
}

// finishSchema creates what comes after the rows: the seed's indexes,
// then extraSchema.
func finishSchema(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, seedIndexes); err != nil {
		return fmt.Errorf("indexes: %w", err)
	}
	if _, err := tx.ExecContext(ctx, extraSchema); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	return nil
}

// walkFacts are what the walk of the store learns for the meta table
// besides Stats: the crawl's time range (RFC 3339, "" when unknown) and
// how harmonic centrality was computed.
type walkFacts struct {
	first, last, method string
}

// walkFactsOf reads the walkFacts of a view that has been walked.
func walkFactsOf(v *view) walkFacts {
	f := walkFacts{method: v.harmonicMethod()}
	if !v.first.IsZero() {
		f.first = isoTime(v.first)
	}
	if !v.last.IsZero() {
		f.last = isoTime(v.last)
	}
	return f
}

// metaRows are the keys and values of the meta table: weaver's version,
// the export time, the store's creation time (created), the crawl's time
// range, what was written and the filters that chose it.
func metaRows(opt Options, created time.Time, st Stats, f walkFacts) [][2]string {
	meta := [][2]string{
		{"weaver_version", opt.Version},
		{"exported_at", isoTime(opt.Now())},
		{"schema", "nodes and edges tables with idx_nodes_domain, idx_edges_from, idx_edges_to; weaver columns appended"},
		{"store_created_at", isoTime(created)},
		{"crawl_first_seen", f.first},
		{"crawl_last_seen", f.last},
		{"nodes", strconv.FormatUint(st.Nodes, 10)},
		{"edges", strconv.FormatUint(st.Edges, 10)},
		{"total_weight", strconv.FormatUint(st.Weight, 10)},
		{"min_weight", strconv.FormatUint(opt.MinWeight, 10)},
		{"crawled_only", strconv.FormatBool(opt.CrawledOnly)},
		{"domains", strconv.FormatBool(opt.Domains)},
		{"no_mirrors", strconv.FormatBool(opt.NoMirrors)},
		{"harmonic_method", f.method},
	}
	if opt.Top > 0 {
		meta = append(meta, [2]string{"top", strconv.Itoa(opt.Top)}, [2]string{"top_by", opt.topByName()})
	}
	if !opt.At.IsZero() {
		meta = append(meta, [2]string{"at", atText(opt.At)}, [2]string{"node_attributes", atNote + "; table node_at"})
	}
	return meta
}

// writeMeta fills the meta table; an empty value is NULL.
func writeMeta(ctx context.Context, tx *sql.Tx, meta [][2]string) error {
	for _, kv := range meta {
		if _, err := tx.ExecContext(ctx, "INSERT INTO meta (key, value) VALUES (?, ?)", kv[0], nullText(kv[1])); err != nil {
			return fmt.Errorf("meta: %w", err)
		}
	}
	return nil
}
