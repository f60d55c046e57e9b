package graph

import "errors"

// Errors returned by NormalizeHost and HostOf. They are wrapped with the
// offending value (fmt.Errorf("%w: %q", ErrInvalidHost, h)); test them with
// errors.Is.
var (
	// ErrEmptyHost means there was no host, or nothing was left of it once
	// the port and the root dot were removed (":80", ".").
	ErrEmptyHost = errors.New("graph: empty host")
	// ErrHostTooLong means the ASCII form of the host is over 253 bytes, or
	// one of its labels is over 63 bytes.
	ErrHostTooLong = errors.New("graph: host too long")
	// ErrInvalidHost means a character outside [a-z0-9_-] in a name, an
	// empty label, a failed IDNA conversion, a malformed IP literal, or a
	// port that is not a number in 0..65535.
	ErrInvalidHost = errors.New("graph: invalid host")
	// ErrUnsupportedScheme means HostOf was given a URL whose scheme is
	// neither http nor https.
	ErrUnsupportedScheme = errors.New("graph: unsupported scheme")
)
