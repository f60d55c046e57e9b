package fakeweb

import "errors"

// Errors returned by the package, grouped by the operation that returns them.
var (
	// ErrUnknownFault is returned by ParseFault for a name that is not a fault.
	ErrUnknownFault = errors.New("unknown fault")

	// ErrNoEdges is returned by FromEdges when the input holds no valid line.
	ErrNoEdges = errors.New("no valid edges")
)
