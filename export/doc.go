// Package export turns a weaver store into files other programs open:
// a SQLite database with the schema of seed 000 §4.1 (sqlite3, Python,
// Datasette), GraphML (Gephi, networkx, yEd), DOT (Graphviz), JSON in
// networkx's node-link form (scripts, web pages) and HTML: the map page of
// package ui with that JSON inside, one file a browser opens from disk.
//
// Every writer reads the store in one read transaction through one filtered
// view (Options: MinWeight, CrawledOnly, Domains), so the filters exist in
// one place and all formats agree. The view streams: nodes in id order,
// then edges in (from, to) order, each decoded, written and dropped, so
// memory does not grow with the graph. Three exceptions are bounded and
// documented: CrawledOnly keeps one bit per node id; Domains keeps the
// collapsed graph (one record per registrable domain and one per domain
// pair) in memory, since summing weights needs every pair at once; and the
// ranks every node carries (PageRank and harmonic centrality, package
// rank) are computed before the writer starts, from one more walk of the
// view into a compact graph (about 12 bytes per edge and 16 per node, plus
// HyperBall's 132 bytes per node and 4 per edge above 10,000 nodes), so that they are the
// ranks of the graph the file holds, filters applied: networkx computes
// the same figures from the file. Options.NoRanks skips them. On
// Linux the store's pages, which bbolt's memory map would otherwise keep
// resident as the walk reads them, are handed back every 65,536 rows (see
// kv.Tx.ReleasePages), so the resident size stays flat too.
//
// The SQLite writer inserts in one transaction, many rows per prepared
// statement, without journal or syncs (the file is private until renamed),
// creates the seed's indexes after the rows, then runs PRAGMA
// foreign_key_check and integrity_check before the file is synced and
// renamed into place.
//
// Node ids are the store's stable ids, so two exports of one store agree
// and ids can be joined across formats; with Domains a domain takes the
// smallest id of its hosts.
//
// Files are written beside the target under a temporary name, synced, and
// renamed into place only when complete: an interrupted or failed export
// leaves any previous file untouched and no partial one. A target that is
// the store itself is always refused (ErrWouldOverwriteStore).
package export
