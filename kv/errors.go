package kv

import (
	"errors"
	"fmt"
	"os"
)

// Errors returned by Open. They are wrapped with the file name; test them
// with errors.Is.
var (
	// ErrInUse means another process holds the file's lock.
	ErrInUse = errors.New("is in use by another weaver process")
	// ErrNotStore means the file is not a weaver store (not bbolt, or bbolt
	// without weaver's meta bucket).
	ErrNotStore = errors.New("is not a weaver store")
	// ErrEmptyFile means the file exists but holds zero bytes.
	ErrEmptyFile = errors.New("is an empty file, not a weaver store")
	// ErrTruncated means the file is shorter than the store it describes.
	ErrTruncated = errors.New("is truncated")
	// ErrNewerSchema means the file was written by a newer weaver.
	ErrNewerSchema = errors.New("was written by a newer weaver (schema version too new)")
	// ErrCorrupt means the file failed bbolt's consistency check.
	ErrCorrupt = errors.New("is corrupt")
)

// Errors returned by transactions.
var (
	// ErrClosed is returned by Commit and Update after Close.
	ErrClosed = errors.New("kv: store closed")
	// ErrNoBucket means a bucket name that Open did not create.
	ErrNoBucket = errors.New("kv: no such bucket")
)

// pathError is err, about the file at path, said once: an *os.PathError
// of path itself reads "path: permission denied", not "path: open path:
// permission denied". It wraps what err wraps.
func pathError(path string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) && pe.Path == path {
		if errors.Is(pe.Err, os.ErrPermission) {
			return fmt.Errorf("%s: %w (the file's owner or mode keeps this user out)", path, pe.Err)
		}
		return fmt.Errorf("%s: %w", path, pe.Err)
	}
	return fmt.Errorf("%s: %w", path, err)
}
