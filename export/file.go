package export

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/weaver-crawler/weaver/kv"
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
// HTML).
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
	case FormatSQLite:
		return Stats{}, fmt.Errorf("export: sqlite: cannot write to a stream, only to a file")
	}
	return Stats{}, fmt.Errorf("export: unknown format %q", f)
}

// WriteFile writes s to the file path in f. The file is built beside path
// under a temporary name, synced and renamed into place only when
// complete, so an interrupted export leaves no partial file and any
// previous one intact. A path that names a device or a pipe (/dev/stdout)
// is written directly. It returns CheckTarget's errors, then those of
// Write or SQLite, and file system errors.
func WriteFile(ctx context.Context, s *kv.Store, path string, f Format, opt Options) (Stats, error) {
	if f == FormatSQLite {
		return SQLite(ctx, s, path, opt)
	}
	target, fi, err := checkTarget(s, path, f, opt.Force)
	if err != nil {
		return Stats{}, err
	}
	if fi != nil && !fi.Mode().IsRegular() {
		out, err := os.OpenFile(target, os.O_WRONLY, 0)
		if err != nil {
			return Stats{}, wrap(f, path, err)
		}
		st, err := Write(ctx, out, s, f, opt)
		if cerr := out.Close(); err == nil && cerr != nil {
			err = wrap(f, path, cerr)
		}
		return st, err
	}
	var st Stats
	err = replaceFile(target, func(tmp *os.File) error {
		bw := bufio.NewWriterSize(tmp, 256<<10)
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
// directory (ErrIsDirectory), for SQLite a regular file or none
// (ErrNotRegular), and, unless force is set, not an existing
// file the export would wrongly destroy: for SQLite a file that is not a
// SQLite database (ErrNotSQLite), for the text formats a SQLite database
// or a bbolt file (ErrWouldOverwriteDatabase). An empty file may always be
// replaced. Errors are wrapped with path.
func CheckTarget(s *kv.Store, path string, f Format, force bool) error {
	_, _, err := checkTarget(s, path, f, force)
	return err
}

// checkTarget is CheckTarget returning the file to write (path with
// symbolic links resolved, so a link keeps pointing at the new file) and
// its FileInfo when it exists.
func checkTarget(s *kv.Store, path string, f Format, force bool) (string, os.FileInfo, error) {
	fail := func(err error) (string, os.FileInfo, error) {
		return "", nil, fmt.Errorf("export: %s: %s %w", f, path, err)
	}
	if path == "" {
		return "", nil, fmt.Errorf("export: %s: empty file name", f)
	}
	if same(path, s.Path()) {
		return fail(ErrWouldOverwriteStore)
	}
	target := path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		target = real
	}
	fi, err := os.Stat(target)
	switch {
	case errors.Is(err, os.ErrNotExist):
		// A dangling link, or no file yet; the store check is by name only.
		if same(target, s.Path()) {
			return fail(ErrWouldOverwriteStore)
		}
		return target, nil, nil
	case err != nil:
		return "", nil, fmt.Errorf("export: %s: %w", f, err)
	}
	if sfi, err := os.Stat(s.Path()); err == nil && os.SameFile(fi, sfi) {
		return fail(ErrWouldOverwriteStore)
	}
	if fi.IsDir() {
		return fail(ErrIsDirectory)
	}
	if !fi.Mode().IsRegular() {
		if f == FormatSQLite {
			return fail(ErrNotRegular)
		}
		return target, fi, nil
	}
	if force || fi.Size() == 0 {
		return target, fi, nil
	}
	kind, err := sniff(target)
	if err != nil {
		return "", nil, fmt.Errorf("export: %s: %w", f, err)
	}
	switch {
	case f == FormatSQLite && kind != kindSQLite:
		return fail(ErrNotSQLite)
	case f != FormatSQLite && kind != kindOther:
		return fail(ErrWouldOverwriteDatabase)
	}
	return target, fi, nil
}

// same reports whether two names, made absolute and clean, are equal.
func same(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

type fileKind int

const (
	kindOther fileKind = iota
	kindSQLite
	kindBolt
)

// sniff tells a SQLite database and a bbolt file from anything else by
// their headers.
func sniff(path string) (fileKind, error) {
	f, err := os.Open(path)
	if err != nil {
		return kindOther, err
	}
	defer f.Close()
	var hdr [32]byte
	n, err := io.ReadFull(f, hdr[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return kindOther, err
	}
	switch {
	case bytes.HasPrefix(hdr[:n], []byte("SQLite format 3\x00")):
		return kindSQLite, nil
	case n >= 20 && binary.LittleEndian.Uint32(hdr[16:]) == 0xED0CDAED: // bbolt's meta page magic
		return kindBolt, nil
	}
	return kindOther, nil
}

// replaceFile creates a temporary file beside path, lets fill write it,
// syncs it and renames it to path, then syncs the directory so the rename
// survives a crash. On any error, the temporary file is removed and path
// is untouched.
func replaceFile(path string, fill func(tmp *os.File) error) (err error) {
	tmp, err := createTemp(path)
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if err := fill(tmp); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// createTemp creates a new file beside path, hidden, with a random suffix.
// Unlike os.CreateTemp it asks for mode 0644, so the export gets the
// user's usual permissions (the umask applies).
func createTemp(path string) (*os.File, error) {
	dir, base := filepath.Split(path)
	for range 100 {
		var r [6]byte
		if _, err := rand.Read(r[:]); err != nil {
			return nil, err
		}
		name := filepath.Join(dir, "."+base+".tmp-"+hex.EncodeToString(r[:]))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("create a temporary file beside %s: too many attempts", path)
}

func syncDir(dir string) error {
	if dir == "" {
		dir = "."
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
