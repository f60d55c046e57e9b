package export

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	_ "github.com/mattn/go-sqlite3" // the database/sql driver "sqlite3"

	"github.com/weaver-crawler/weaver/kv"
)

// SQLite writes s to the SQLite database path, replacing any database
// there: the tables, columns, constraints and indexes of seed 000 §4.1,
// with the columns weaver adds (see nodeColumns), a node_ranks table
// (node_id, pagerank, harmonic: see rankTable; none with Options.NoRanks),
// node_facts (node_id, canonical, robots, mirror_of: the node_id of the
// mirror group's first host for a copy, else NULL, pages_fetched) and
// edge_facts (edge_id, nofollow, redirect, first_seen, last_seen, gone:
// 1 for an edge its source's latest crawl no longer links, frame: the
// pages that showed the target in a frame), a row per node
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

// writeSQLite writes the database in file, in one transaction: the
// tables, their rows (fillTables), then the indexes, the view and the
// meta table.
func writeSQLite(ctx context.Context, s *kv.Store, file string, opt Options) (st Stats, err error) {
	db, err := openSQLite(file)
	if err != nil {
		return Stats{}, err
	}
	defer func() {
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}()
	// Statements get a context without Done: go-sqlite3 starts a goroutine
	// per statement for one that has. ctx is checked every checkEvery rows
	// instead.
	bg := context.WithoutCancel(ctx)
	conn, err := exportConn(bg, db)
	if err != nil {
		return Stats{}, err
	}
	defer conn.Close()
	created := s.Created()
	tx, err := conn.BeginTx(bg, nil)
	if err != nil {
		return Stats{}, err
	}
	defer tx.Rollback()
	if err := createTables(bg, tx, opt); err != nil {
		return Stats{}, err
	}
	ins, err := newInserters(bg, tx, opt)
	if err != nil {
		return Stats{}, err
	}
	defer ins.close()
	st, facts, err := fillTables(ctx, s, opt, ins)
	if err != nil {
		return st, err
	}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	if err := finishSchema(bg, tx); err != nil {
		return st, err
	}
	if err := writeMeta(bg, tx, metaRows(opt, created, st, facts)); err != nil {
		return st, err
	}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	return st, tx.Commit()
}

// openSQLite opens the database file with one connection: the pragmas
// hold per connection.
func openSQLite(file string) (*sql.DB, error) {
	dsn, err := sqliteDSN(file)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// exportConn is db's connection with exportPragmas set.
func exportConn(ctx context.Context, db *sql.DB) (*sql.Conn, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	for _, p := range exportPragmas {
		if _, err := conn.ExecContext(ctx, p); err != nil {
			conn.Close()
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return conn, nil
}

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
