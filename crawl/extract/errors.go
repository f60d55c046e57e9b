package extract

import "errors"

// Errors returned by Page. They are wrapped; test them with errors.Is.
var (
	// ErrNoPageURL means Page was called with a nil page URL, against which
	// no link could be resolved.
	ErrNoPageURL = errors.New("extract: no page URL")
)
