//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package archive

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/weaver-crawler/weaver/kv"
)

// lockShared takes a shared lock on f, as a read-only kv.Open does (bbolt
// locks with flock), so that a running crawl's exclusive lock refuses it:
// Repair reads pages itself and must not read a file being written.
func lockShared(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return fmt.Errorf("%s %w", f.Name(), kv.ErrInUse)
	}
	if err != nil {
		return fmt.Errorf("%s: lock: %w", f.Name(), err)
	}
	return nil
}
