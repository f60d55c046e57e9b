//go:build unix

package crawl

import "golang.org/x/sys/unix"

// freeSpace returns the bytes an unprivileged user may still write on
// dir's file system (statfs: free blocks available, times the block
// size), and false when it cannot be read.
func freeSpace(dir string) (int64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true //nolint:unconvert // the fields' types differ between systems
}
