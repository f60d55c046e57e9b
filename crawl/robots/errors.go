package robots

import "errors"

// Errors returned by Rules.UnmarshalBinary. They are wrapped with the
// operation; test them with errors.Is.
var (
	// ErrShortData means the cached bytes end before the header does.
	ErrShortData = errors.New("robots: cached rules are truncated")
	// ErrVersion means the cached bytes were written in an encoding this
	// weaver does not know, usually by a newer one.
	ErrVersion = errors.New("robots: unknown encoding version of cached rules")
	// ErrKind means the cached bytes name a Kind that does not exist.
	ErrKind = errors.New("robots: unknown kind in cached rules")
)
