package serve

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
)

// A read transaction held while a client downloads pins bbolt's map: a
// commit that must grow the store's file waits for the last byte, so a
// client reading 10 KB/s stalled the crawl for as long as it read. So
// /graph, /snapshot and the job API's graph are first written to a spool
// file under a short read transaction (at disk speed), and the client is
// sent the file after the transaction has ended.
//
// The spool file sits beside the store, not in os.TempDir: a /tmp on
// tmpfs would hold a snapshot of a multi-GB store in RAM, while the
// store's own disk is the one whose room the operator watches. It is
// unlinked as soon as it is created, so it is gone when the answer ends,
// however it ends (sent, client gone, error, the process killed). A spool
// must not take the room the crawl needs to keep committing: it stops
// with ErrNoSpace while less than spoolReserve would be left free.

// spoolCheckEvery is how many bytes are spooled between two looks at the
// free space.
const spoolCheckEvery = 8 << 20

// spoolReserve is the free space a spool leaves on the store's disk: room
// for bbolt's next growth of a store of storeSize bytes (it doubles the
// file up to 1 GiB, then grows it 1 GiB at a time) and 64 MiB more.
func spoolReserve(storeSize int64) int64 {
	return 64<<20 + min(max(storeSize, 0), 1<<30)
}

// freeSpace reports the bytes available to this process on the file
// system holding dir, or -1 when the platform cannot say. A variable so
// that tests can pretend a disk is full.
var freeSpace = diskFree

// spaceWriter writes to a spool file and stops with ErrNoSpace before the
// file system's free space drops under reserve.
type spaceWriter struct {
	f       *os.File
	dir     string
	reserve int64
	unseen  int64 // bytes written since the last look at the free space
}

func (s *spaceWriter) check(more int64) error {
	free, err := freeSpace(s.dir)
	if err != nil || free < 0 {
		return nil // cannot tell: the write itself will say if the disk is full
	}
	if free-more < s.reserve {
		return fmt.Errorf("%w: %s free in %s, the answer needs %s more and the crawl keeps %s", ErrNoSpace,
			mib(free), s.dir, mib(more), mib(s.reserve))
	}
	return nil
}

func (s *spaceWriter) Write(p []byte) (int, error) {
	s.unseen += int64(len(p))
	if s.unseen >= spoolCheckEvery {
		s.unseen = 0
		if err := s.check(spoolCheckEvery); err != nil {
			return 0, err
		}
	}
	return s.f.Write(p)
}

func mib(n int64) string { return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB" }

// spool runs fill into a new spool file beside the store at storePath and
// returns it rewound, with its size. expect is how many bytes fill will
// write, when known (0 otherwise): a spool that would not fit is refused
// before it starts. The caller closes the file.
func spool(storePath string, expect int64, fill func(io.Writer) error) (*spoolFile, int64, error) {
	dir := filepath.Dir(storePath)
	var storeSize int64
	if fi, err := os.Stat(storePath); err == nil {
		storeSize = fi.Size()
	}
	sw := &spaceWriter{dir: dir, reserve: spoolReserve(storeSize)}
	if err := sw.check(expect); err != nil {
		return nil, 0, err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(storePath)+".download-*")
	if err != nil {
		return nil, 0, fmt.Errorf("spool file: %w", err)
	}
	sf := &spoolFile{File: f, unlinked: os.Remove(f.Name()) == nil}
	sw.f = f
	bw := bufio.NewWriterSize(sw, 256<<10)
	err = fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	var size int64
	if err == nil {
		size, err = f.Seek(0, io.SeekCurrent)
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		sf.Close()
		return nil, 0, err
	}
	return sf, size, nil
}

// spoolFile is an open spool file; Close removes it where it could not be
// unlinked while open.
type spoolFile struct {
	*os.File
	unlinked bool
}

func (f *spoolFile) Close() error {
	err := f.File.Close()
	if !f.unlinked {
		os.Remove(f.Name())
	}
	return err
}

// spoolError answers a failed spool: 507 when the disk has no room for
// it, 500 otherwise.
func spoolError(w http.ResponseWriter, err error) {
	if errors.Is(err, ErrNoSpace) {
		writeError(w, http.StatusInsufficientStorage, "%v", err)
		return
	}
	writeError(w, http.StatusInternalServerError, "%v", err)
}

// sendSpool streams a spooled answer of size bytes; a client that stops
// reading is cut off after writeTimeout.
func sendSpool(w http.ResponseWriter, f *spoolFile, size int64) {
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	sw := newStreamWriter(w)
	if _, err := io.Copy(sw, f); err != nil {
		panic(http.ErrAbortHandler) // the client sees a cut answer, not a complete-looking one
	}
}
