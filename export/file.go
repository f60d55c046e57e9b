package export

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/outfile"
)

// Format names an output format.
type Format string

// The formats weaver exports.
const (
	FormatSQLite  Format = "sqlite"
	FormatGraphML Format = "graphml"
	FormatDOT     Format = "dot"
	FormatJSON    Format = "json"
)

// Write writes s to w in f, one of the text formats (GraphML, DOT, JSON,
// HTML, GEXF).
// It returns what was written, or the writer's, the store's or the
// context's error; it returns an error for FormatSQLite, which needs a
// file.
func Write(ctx context.Context, w io.Writer, s *kv.Store, f Format, opt Options) (Stats, error) {
	switch f {
	case FormatGraphML:
		return GraphML(ctx, w, s, opt)
	case FormatDOT:
		return DOT(ctx, w, s, opt)
	case FormatJSON:
		return JSON(ctx, w, s, opt)
	case FormatHTML:
		return HTML(ctx, w, s, opt)
	case FormatGEXF:
		return GEXF(ctx, w, s, opt)
	case FormatSQLite:
		return Stats{}, fmt.Errorf("export: sqlite: cannot write to a stream, only to a file")
	}
	return Stats{}, fmt.Errorf("export: unknown format %q", f)
}

// WriteFile writes s to the file path in f. A file is built beside path
// under a temporary name, synced and renamed into place only when
// complete, so an interrupted export leaves no partial file and any
// previous one intact. A device, pipe or descriptor (/dev/null,
// /dev/stdout) is written in place, never replaced; a symbolic link keeps
// pointing at the new file. It returns CheckTarget's errors, then those of
// Write or SQLite, and file system errors.
func WriteFile(ctx context.Context, s *kv.Store, path string, f Format, opt Options) (Stats, error) {
	if f == FormatSQLite {
		return SQLite(ctx, s, path, opt)
	}
	t, err := checkTarget(s, path, f, opt.Force)
	if err != nil {
		return Stats{}, err
	}
	var st Stats
	err = t.Write(0o644, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 256<<10)
		var err error
		if st, err = Write(ctx, bw, s, f, opt); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		return ctx.Err() // interrupted after the last row: still no file
	})
	if err != nil {
		return st, wrap(f, path, err)
	}
	return st, nil
}

// CheckTarget returns nil when an export of s in f may write path: path
// is not s's own file (ErrWouldOverwriteStore, whatever force says), not a
// directory (ErrIsDirectory), and, unless force is set, not an existing
// file (ErrExists), which the export would destroy. A device, pipe or
// descriptor (/dev/null, /dev/stdout) is not a file to protect: it is
// written in place. Errors are wrapped with path.
func CheckTarget(s *kv.Store, path string, f Format, force bool) error {
	_, err := checkTarget(s, path, f, force)
	return err
}

// checkTarget is CheckTarget returning the resolved target.
func checkTarget(s *kv.Store, path string, f Format, force bool) (outfile.Target, error) {
	fail := func(err error) (outfile.Target, error) {
		return outfile.Target{}, fmt.Errorf("%s %w", path, err)
	}
	if path == "" {
		return outfile.Target{}, fmt.Errorf("%s: empty file name", f)
	}
	if same(path, s.Path()) {
		return fail(ErrWouldOverwriteStore)
	}
	t, err := outfile.Resolve(path)
	switch {
	case errors.Is(err, outfile.ErrIsDir):
		return fail(ErrIsDirectory)
	case err != nil:
		return outfile.Target{}, err
	}
	if same(t.Path, s.Path()) {
		return fail(ErrWouldOverwriteStore)
	}
	if sfi, err := os.Stat(s.Path()); err == nil && t.Info != nil && os.SameFile(t.Info, sfi) {
		return fail(ErrWouldOverwriteStore)
	}
	if t.Exists() && !force {
		return fail(ErrExists)
	}
	return t, nil
}

// same reports whether two names, made absolute and clean, are equal.
func same(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// Stats count what an export wrote.
type Stats struct {
	Nodes  uint64 `json:"nodes"`
	Edges  uint64 `json:"edges"`
	Weight uint64 `json:"total_weight"` // sum of the written edges' weights
}
