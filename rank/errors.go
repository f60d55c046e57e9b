package rank

import "errors"

// Errors of building a Graph. They are wrapped with the node or edge at
// fault; test them with errors.Is.
var (
	// ErrOrder means a node id was not larger than the one before it, or
	// an edge came after an edge from a larger id, or after the same pair.
	ErrOrder = errors.New("rank: out of order")
	// ErrUnknownNode means an edge names a node that was not added.
	ErrUnknownNode = errors.New("rank: edge to or from an unknown node")
	// ErrTooLarge means the graph has more nodes or edges than a uint32
	// index can number (4,294,967,295).
	ErrTooLarge = errors.New("rank: graph too large")
)

// Errors of the algorithms.
var (
	// ErrNotConverged means PageRank's power iteration did not reach its
	// tolerance within its iteration limit.
	ErrNotConverged = errors.New("rank: pagerank did not converge")
	// ErrBadOption means an option is out of its range (an alpha outside
	// (0, 1), a register count outside 2^4..2^16...).
	ErrBadOption = errors.New("rank: bad option")
)
