package export_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/export"
)

// goldenCases are the golden files: the small graph in every format, and
// the filters through the JSON writer (they are the same view for all).
var goldenCases = []struct {
	file   string
	format export.Format
	opt    func(*export.Options)
}{
	{"small.graphml", export.FormatGraphML, nil},
	{"small.dot", export.FormatDOT, nil},
	{"no_layout.dot", export.FormatDOT, func(o *export.Options) { o.NoLayout = true }},
	{"small.json", export.FormatJSON, nil},
	{"small.sqlite.txt", export.FormatSQLite, nil},
	{"min_weight_2.json", export.FormatJSON, func(o *export.Options) { o.MinWeight = 2 }},
	{"crawled_only.json", export.FormatJSON, func(o *export.Options) { o.CrawledOnly = true }},
	{"domains.json", export.FormatJSON, func(o *export.Options) { o.Domains = true }},
	{"all_filters.graphml", export.FormatGraphML, func(o *export.Options) { o.MinWeight = 2; o.CrawledOnly = true; o.Domains = true }},
	{"domains.sqlite.txt", export.FormatSQLite, func(o *export.Options) { o.Domains = true }},
}

func TestExport_Golden(t *testing.T) {
	s := smallStore(t)
	for _, tc := range goldenCases {
		t.Run(tc.file, func(t *testing.T) {
			opt := fixedOptions()
			if tc.opt != nil {
				tc.opt(&opt)
			}
			var got []byte
			if tc.format == export.FormatSQLite {
				path, _ := exportFile(t, s, tc.format, opt)
				got = dumpSQLite(t, path)
			} else {
				var buf bytes.Buffer
				if _, err := export.Write(context.Background(), &buf, s, tc.format, opt); err != nil {
					t.Fatal(err)
				}
				got = buf.Bytes()
			}
			golden(t, tc.file, got)
		})
	}
}

// TestExport_Deterministic checks that two exports of one store are the
// same bytes, the SQLite one included.
func TestExport_Deterministic(t *testing.T) {
	s := paStore(t, 300)
	for _, f := range []export.Format{export.FormatSQLite, export.FormatGraphML, export.FormatDOT, export.FormatJSON} {
		a, _ := exportFile(t, s, f, fixedOptions())
		b, _ := exportFile(t, s, f, fixedOptions())
		da, db := readFile(t, a), readFile(t, b)
		if !bytes.Equal(da, db) {
			t.Errorf("%s: two exports of one store differ", f)
		}
	}
}

// golden compares got with testdata/golden/name, or rewrites it with
// -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./export -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./export -update rewrites it); got:\n%s", path, limit(string(got), 4000))
	}
}

func readFile(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// openSQLite opens an export read-only through go-sqlite3.
func openSQLite(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// dumpSQLite renders a database as text: its schema in creation order,
// then every row of every table, values quoted, NULL spelled out.
func dumpSQLite(tb testing.TB, path string) []byte {
	tb.Helper()
	db := openSQLite(tb, path)
	var out strings.Builder
	rows, err := db.Query("SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master ORDER BY rowid")
	if err != nil {
		tb.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var typ, name, tbl, sqlText string
		if err := rows.Scan(&typ, &name, &tbl, &sqlText); err != nil {
			tb.Fatal(err)
		}
		fmt.Fprintf(&out, "%s %s on %s: %s\n", typ, name, tbl, sqlText)
		if typ == "table" {
			tables = append(tables, name)
		}
	}
	rows.Close()
	for _, table := range tables {
		fmt.Fprintf(&out, "\n-- %s\n", table)
		rows, err := db.Query("SELECT * FROM " + table + " ORDER BY 1")
		if err != nil {
			tb.Fatal(err)
		}
		cols, _ := rows.Columns()
		fmt.Fprintln(&out, strings.Join(cols, "|"))
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				tb.Fatal(err)
			}
			cells := make([]string, len(vals))
			for i, v := range vals {
				switch v := v.(type) {
				case nil:
					cells[i] = "NULL"
				case []byte:
					cells[i] = fmt.Sprintf("%q", v)
				case string:
					cells[i] = fmt.Sprintf("%q", v)
				case time.Time: // go-sqlite3 parses TIMESTAMP columns
					cells[i] = v.UTC().Format(time.DateTime)
				default:
					cells[i] = fmt.Sprint(v)
				}
			}
			fmt.Fprintln(&out, strings.Join(cells, "|"))
		}
		if err := rows.Err(); err != nil {
			tb.Fatal(err)
		}
		rows.Close()
	}
	return []byte(out.String())
}
