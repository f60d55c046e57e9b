package archive

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// runFile makes a sorted run's file in dir: an unnamed one (O_TMPFILE),
// which no kill can leave behind, where the file system makes them (Linux
// since 3.11: ext4, xfs, btrfs, tmpfs); else createRun's. It reports
// whether the file had a name (createRun).
func runFile(dir string) (*os.File, bool, error) {
	fd, err := unix.Open(dir, unix.O_RDWR|unix.O_TMPFILE|unix.O_CLOEXEC, 0o600)
	if err == nil {
		return os.NewFile(uintptr(fd), dir+"/(sorted run)"), false, nil
	}
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL) {
		return createRun(dir)
	}
	return nil, false, &os.PathError{Op: "open", Path: dir, Err: err}
}
