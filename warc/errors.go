package warc

import (
	"errors"
	"fmt"
)

// ErrClosed is returned by WriteExchange after Close.
var ErrClosed = errors.New("warc: writer closed")

// ErrBadExchange is returned by WriteExchange for an exchange it cannot
// record: no URL, or a response that is not an HTTP message.
var ErrBadExchange = errors.New("warc: bad exchange")

// DamageError says where a WARC file stops being readable: every record
// before Offset was read.
type DamageError struct {
	File   string
	Offset int64 // of the first byte of the damaged record
	Err    error
}

func (e *DamageError) Error() string {
	return fmt.Sprintf("%s: damaged at offset %d: %v", e.File, e.Offset, e.Err)
}

func (e *DamageError) Unwrap() error { return e.Err }
