package frontier

import "errors"

var (
	// ErrInconsistent means Check found the queue's records contradicting
	// each other.
	ErrInconsistent = errors.New("frontier: inconsistent")
	// ErrBadEntry means an entry without a node id or host was pushed.
	ErrBadEntry = errors.New("frontier: entry needs a node id and a host")
)
