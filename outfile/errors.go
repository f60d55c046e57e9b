package outfile

import (
	"errors"
	"fmt"
	"io/fs"
)

// ErrIsDir means an output name is a directory (or a link to one).
var ErrIsDir = errors.New("is a directory")

// ErrChanged means the file an output was about to replace became
// something other than a regular file while the output was written; it is
// left alone.
var ErrChanged = errors.New("is no longer a regular file: left alone")

// noDir is the error of an output in a directory that does not exist; it
// wraps fs.ErrNotExist.
type noDir struct{ name, dir string }

func (e noDir) Error() string { return fmt.Sprintf("%s: no such directory %s", e.name, e.dir) }
func (e noDir) Unwrap() error { return fs.ErrNotExist }
