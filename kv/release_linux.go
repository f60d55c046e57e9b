package kv

import "golang.org/x/sys/unix"

// ReleasePages tells the kernel this process no longer needs the store's
// pages it has read so far (madvise MADV_DONTNEED on bbolt's read-only
// shared map). They stay in the page cache and fault back in when read
// again; what changes is that they stop counting in this process's RSS,
// which would otherwise grow towards the file's size during a long crawl
// or a large export. It is safe inside a transaction: bbolt never moves
// its map while a transaction is open.
func (tx *Tx) ReleasePages() {
	info := tx.btx.DB().Info()
	size := tx.btx.Size()
	if info == nil || info.Data == 0 || size <= 0 {
		return
	}
	// The raw syscall keeps bbolt's map address a uintptr: it is bbolt's
	// memory, only named here.
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, info.Data, uintptr(size), unix.MADV_DONTNEED)
}
