//go:build unix

package outfile

import (
	"io/fs"
	"os"
	"syscall"
)

// chown gives f the owner of old when running as root (only root may).
func chown(f *os.File, old fs.FileInfo) {
	if st, ok := old.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
		_ = f.Chown(int(st.Uid), int(st.Gid))
	}
}
