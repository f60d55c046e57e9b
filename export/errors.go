package export

import "errors"

// Errors about the target of an export, returned before anything is
// written. They are wrapped with the path; test them with errors.Is.
var (
	// ErrWouldOverwriteStore means the target is the store being exported
	// (the same path, or another name of the same file). Force does not
	// override it.
	ErrWouldOverwriteStore = errors.New("is the store being exported")
	// ErrExists means the target is an existing file, which the export
	// would destroy. Options.Force overrides it. A device or pipe is not
	// such a file.
	ErrExists = errors.New("already exists: use --force to replace it")
	// ErrIsDirectory means the target is a directory.
	ErrIsDirectory = errors.New("is a directory")
)

// Errors of the SQLite writer's final checks.
var (
	// ErrCheckFailed means PRAGMA foreign_key_check or integrity_check did
	// not come back clean on the written file, which is then discarded.
	ErrCheckFailed = errors.New("the written database failed its check")
)
