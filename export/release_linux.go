package export

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// pageReleaser keeps an export's resident memory flat. bbolt reads the
// store through a shared read-only memory map, and every page the export
// reads stays resident in this process (counted in its RSS, as RssFile)
// until the map is closed: exporting a 220 MB store would show 220 MB more
// RSS. Every releaseEvery rows, release tells the kernel that the pages
// read so far are not needed (madvise MADV_DONTNEED). For a shared file
// map this only unmaps them from this process: they stay in the page
// cache, unchanged, and fault back in if read again.
//
// It is safe because the export reads inside one bbolt read transaction,
// during which bbolt never moves its map (a remap waits for every read
// transaction to end), and because it only acts when exactly one map of
// the store's file exists in the process, read-only and shared: a second
// handle on the same file, which could remap under it, turns it off.
type pageReleaser struct {
	dev, ino uint64 // of the store's file
	rows     int
}

const releaseEvery = 1 << 16

func newPageReleaser(path string) *pageReleaser {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return nil
	}
	return &pageReleaser{dev: uint64(st.Dev), ino: st.Ino}
}

// tick counts a row and releases the store's pages every releaseEvery.
func (r *pageReleaser) tick() {
	if r == nil {
		return
	}
	if r.rows++; r.rows%releaseEvery == 0 {
		r.release()
	}
}

func (r *pageReleaser) release() {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	major := (r.dev>>8)&0xfff | (r.dev>>32)&^0xfff
	minor := r.dev&0xff | (r.dev>>12)&^0xff
	wantDev := []byte(hex2(major) + ":" + hex2(minor))
	var start, end uint64
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) < 5 || !bytes.Equal(f[3], wantDev) {
			continue
		}
		if ino, err := strconv.ParseUint(string(f[4]), 10, 64); err != nil || ino != r.ino {
			continue
		}
		found++
		lo, hi, ok := bytes.Cut(f[0], []byte("-"))
		s, err1 := strconv.ParseUint(string(lo), 16, 64)
		e, err2 := strconv.ParseUint(string(hi), 16, 64)
		if !ok || err1 != nil || err2 != nil || string(f[1]) != "r--s" {
			return
		}
		start, end = s, e
	}
	if found != 1 || end <= start {
		return
	}
	syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), syscall.MADV_DONTNEED)
}

// hex2 formats a device number as /proc/self/maps does: lowercase hex,
// at least two digits.
func hex2(n uint64) string {
	s := strconv.FormatUint(n, 16)
	if len(s) < 2 {
		s = "0" + s
	}
	return s
}
