package serve

import "errors"

// Errors of the job API. They are wrapped with the job id or the offending
// value; test them with errors.Is.
var (
	// ErrNoJob means no job has the given id.
	ErrNoJob = errors.New("no such job")
	// ErrBadJob means a job request is not valid: bad JSON, a missing or
	// bad URL, an unknown or forbidden config key, or a bad value.
	ErrBadJob = errors.New("bad job request")
	// ErrClosing means the job manager is shutting down and takes no new
	// jobs.
	ErrClosing = errors.New("shutting down")
	// ErrJobEnded means a stop was asked of a job that had already ended:
	// nothing was done (DELETE stops a job; it deletes nothing).
	ErrJobEnded = errors.New("job already ended")
)

// ErrNoSpace means a download (graph or snapshot) would leave the store's
// disk with less free space than the crawl keeps for itself; it is
// answered 507.
var ErrNoSpace = errors.New("not enough free disk space for this download")

// ErrBadInput wraps a Client error that is the caller's to fix: a store
// held by a process that serves no status API, a host the store does not
// hold. Test it with errors.Is.
var ErrBadInput = errors.New("bad input")
