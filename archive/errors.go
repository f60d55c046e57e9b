package archive

import "errors"

// Errors about the files archive is asked to write. They are wrapped with
// the file name; test them with errors.Is.
var (
	// ErrExists means the target file exists and Force was not given.
	ErrExists = errors.New("already exists: use --force to replace it")
	// ErrSameFile means the target is the store being read, or one of the
	// inputs of a merge, or an input was given twice.
	ErrSameFile = errors.New("is also an input")
	// ErrIsDir means the target is a directory.
	ErrIsDir = errors.New("is a directory")
	// ErrNoInputs means Merge was given no store to merge.
	ErrNoInputs = errors.New("archive: no input stores")
)

// Errors of a snapshot streamed by a running crawl.
var (
	// ErrNoListen means the store is locked by another process that records
	// no status API address (it was not started with --listen).
	ErrNoListen = errors.New("is in use by a crawl without a status API (start it with --listen to take hot snapshots)")
	// ErrRemote means the crawl's API answered the snapshot request with an
	// error or could not be reached.
	ErrRemote = errors.New("archive: snapshot request failed")
	// ErrBadSnapshot means the downloaded copy failed the store's checks;
	// it is deleted and the target left untouched.
	ErrBadSnapshot = errors.New("archive: downloaded snapshot is not a sound store")
)
