package serve

import "testing"

// SetFreeSpace makes every spool see the free space f reports instead of
// the disk's, until tb ends.
func SetFreeSpace(tb testing.TB, f func(dir string) (int64, error)) {
	old := freeSpace
	freeSpace = f
	tb.Cleanup(func() { freeSpace = old })
}
