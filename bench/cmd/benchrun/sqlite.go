package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// importSchema is what weaver's SQLite export creates (seed 000 §4.1's
// tables, then weaver's columns appended with ALTER TABLE), so that the
// baseline fills the same columns; its indexes are built after the rows,
// as the export does. Keep it in step with export/sqlite.go.
const importSchema = `CREATE TABLE nodes (
    node_id INTEGER PRIMARY KEY AUTOINCREMENT,
    domain_name TEXT UNIQUE NOT NULL,
    description TEXT,
    crawl_count INTEGER DEFAULT 0,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE edges (
    edge_id INTEGER PRIMARY KEY AUTOINCREMENT,
    from_node_id INTEGER NOT NULL,
    to_node_id INTEGER NOT NULL,
    weight INTEGER DEFAULT 1,
    FOREIGN KEY (from_node_id) REFERENCES nodes(node_id),
    FOREIGN KEY (to_node_id) REFERENCES nodes(node_id),
    UNIQUE(from_node_id, to_node_id)
);
`

var importNodeColumns = []string{
	"registrable_domain TEXT", "title TEXT", "status TEXT", "http_status INTEGER", "fail_count INTEGER DEFAULT 0",
	"content_type TEXT", "server TEXT", "bytes INTEGER", "fetch_ms INTEGER", "content_hash TEXT", "depth INTEGER",
	"scheme TEXT", "last_error TEXT", "first_seen TIMESTAMP", "last_seen TIMESTAMP", "last_crawl TIMESTAMP",
}

const importIndexes = `CREATE INDEX idx_nodes_domain ON nodes(domain_name);
CREATE INDEX idx_edges_from ON edges(from_node_id);
CREATE INDEX idx_edges_to ON edges(to_node_id);
`

// sqliteImport writes nodes hosts and edges host pairs (10 distinct other
// hosts per host, in (from, to) order, as the export writes them) as CSV
// files, then times the sqlite3 shell importing them into the export's
// schema with the export's pragmas. It returns the sqlite3 process.
func (h *harness) sqliteImport(ctx context.Context, nodes, edges int) (proc, error) {
	dir := filepath.Join(h.work, "import")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return proc{}, err
	}
	defer os.RemoveAll(dir)
	h.logf("sqlite3 .import baseline: writing %d nodes and %d edges as CSV", nodes, edges)
	if err := writeCSV(filepath.Join(dir, "nodes.csv"), func(w *bufio.Writer) {
		for id := 1; id <= nodes; id++ {
			host := fmt.Sprintf("h%d.d%d.example", id, id%(nodes/20+1))
			fmt.Fprintf(w, "%d,%s,About site %d,1,2025-01-16 10:00:00,d%d.example,Site %d,crawled,200,0,text/html; charset=utf-8,nginx,%d,%d,%064x,%d,https,,2025-01-16 10:00:00,2025-01-16 11:00:00,2025-01-16 11:00:00\n",
				id, host, id, id%(nodes/20+1), id, 30000+id%1000, 20+id%50, id, id%6)
		}
	}); err != nil {
		return proc{}, err
	}
	perNode := max(edges/nodes, 1)
	r := rand.New(rand.NewPCG(1, 2))
	if err := writeCSV(filepath.Join(dir, "edges.csv"), func(w *bufio.Writer) {
		edgeID := 0
		targets := make([]int, 0, perNode)
		for from := 1; from <= nodes && edgeID < edges; from++ {
			targets = targets[:0]
			for len(targets) < perNode && len(targets) < nodes-1 {
				t := 1 + r.IntN(nodes)
				if t != from && !slices.Contains(targets, t) {
					targets = append(targets, t)
				}
			}
			slices.Sort(targets)
			for _, t := range targets {
				if edgeID++; edgeID > edges {
					break
				}
				fmt.Fprintf(w, "%d,%d,%d,%d,2025-01-16 11:00:00,2025-01-16 11:00:00\n", edgeID, from, t, 1+r.IntN(3))
			}
		}
	}); err != nil {
		return proc{}, err
	}
	var script strings.Builder
	for _, p := range []string{"journal_mode = OFF", "synchronous = OFF", "locking_mode = EXCLUSIVE", "foreign_keys = OFF", "cache_size = -32768", "threads = 4"} {
		fmt.Fprintf(&script, "PRAGMA %s;\n", p)
	}
	script.WriteString("BEGIN;\n" + importSchema)
	for _, c := range importNodeColumns {
		fmt.Fprintf(&script, "ALTER TABLE nodes ADD COLUMN %s;\n", c)
	}
	script.WriteString("ALTER TABLE edges ADD COLUMN first_seen TIMESTAMP;\nALTER TABLE edges ADD COLUMN last_seen TIMESTAMP;\n")
	script.WriteString(".mode csv\n.import nodes.csv nodes\n.import edges.csv edges\n" + importIndexes + "COMMIT;\n")
	script.WriteString("SELECT count(*) FROM nodes;\nSELECT count(*) FROM edges;\n")
	if err := os.WriteFile(filepath.Join(dir, "import.sql"), []byte(script.String()), 0o644); err != nil {
		return proc{}, err
	}
	h.logf("running sqlite3 .import")
	p, err := h.measured(ctx, dir, "sqlite3", "-bail", "-init", "import.sql", filepath.Join(dir, "import.db"), ".quit")
	if err != nil {
		return p, err
	}
	want := fmt.Sprintf("%d\n%d", nodes, edges)
	if got := strings.TrimSpace(string(p.Stdout)); !strings.HasSuffix(got, want) {
		return p, fmt.Errorf("sqlite3 imported %q, want counts %q", got, want)
	}
	h.logf("  sqlite3 .import: %.2f s, peak RSS %.0f MiB", p.Wall.Seconds(), p.MaxRSSMiB())
	return p, nil
}

func writeCSV(path string, fill func(*bufio.Writer)) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fill(w)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
