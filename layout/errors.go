package layout

import "errors"

// Errors of building a Graph and of reading a stored layout; they are
// wrapped with what is at fault: test them with errors.Is.
var (
	// ErrOrder means a node id was not larger than the one before it.
	ErrOrder = errors.New("layout: nodes out of order")
	// ErrUnknownNode means an edge names a node that was not added.
	ErrUnknownNode = errors.New("layout: edge to or from an unknown node")
	// ErrTooLarge means the graph has more nodes or edges than a uint32
	// index can number.
	ErrTooLarge = errors.New("layout: graph too large")
	// ErrDamaged means a stored layout record cannot be decoded.
	ErrDamaged = errors.New("layout: damaged layout record")
)
