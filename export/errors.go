package export

import "errors"

// Errors about the target of an export, returned before anything is
// written. They are wrapped with the path; test them with errors.Is.
var (
	// ErrWouldOverwriteStore means the target is the store being exported
	// (the same path, or another name of the same file). Force does not
	// override it.
	ErrWouldOverwriteStore = errors.New("is the store being exported")
	// ErrNotSQLite means a SQLite export would replace an existing file
	// that is not a SQLite database. Options.Force overrides it.
	ErrNotSQLite = errors.New("exists and is not a SQLite database (use --force to replace it)")
	// ErrWouldOverwriteDatabase means a GraphML, DOT or JSON export would
	// replace an existing SQLite database or bbolt file. Options.Force
	// overrides it.
	ErrWouldOverwriteDatabase = errors.New("exists and is a database, not a text export (use --force to replace it)")
	// ErrIsDirectory means the target is a directory.
	ErrIsDirectory = errors.New("is a directory")
	// ErrNotRegular means a SQLite export names a device, pipe or socket:
	// a database can only be built as a file and renamed into place.
	ErrNotRegular = errors.New("is not a regular file (a SQLite export needs one)")
)

// Errors of the SQLite writer's final checks.
var (
	// ErrCheckFailed means PRAGMA foreign_key_check or integrity_check did
	// not come back clean on the written file, which is then discarded.
	ErrCheckFailed = errors.New("export: sqlite check failed")
)
