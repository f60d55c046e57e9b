package graph

import "errors"

// Errors of the store operations.
var (
	// ErrNoID means a node was written without the id Ensure gives.
	ErrNoID = errors.New("node has no id")
	// ErrInconsistent means Check found records that contradict each other.
	ErrInconsistent = errors.New("graph: store inconsistent")
	// ErrBadFacts means AddEdgeFacts was given more nofollow or redirect
	// pages than the weight it adds.
	ErrBadFacts = errors.New("graph: link facts above the weight")
)
