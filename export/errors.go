package export

import (
	"errors"
	"fmt"
)

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

// wrap names the format, and the target when there is one, in an error.
// An error it already wrapped for f (a writer's, returned through
// WriteFile) gets the target added rather than a second prefix.
func wrap(f Format, target string, err error) error {
	if err == nil {
		return nil
	}
	var fe *formatError
	if errors.As(err, &fe) && fe.format == f {
		if fe.target == "" {
			fe.target = target
		}
		return err
	}
	return &formatError{format: f, target: target, err: err}
}

// formatError is an error of an export in one format.
type formatError struct {
	format Format
	target string // "" for a stream
	err    error
}

func (e *formatError) Error() string {
	if e.target == "" {
		return fmt.Sprintf("export: %s: %v", e.format, e.err)
	}
	return fmt.Sprintf("export: %s %s: %v", e.format, e.target, e.err)
}

func (e *formatError) Unwrap() error { return e.err }
