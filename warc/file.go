// The file being written: appends at its end, a new file with its
// warcinfo record when it would pass MaxSize, and the fsyncs that make
// the writes durable (one for every write made before it).

package warc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// append writes data (records whole gzip members) to the current file,
// rotating first when it would pass MaxSize, and returns the write's seq.
func (w *Writer) append(data []byte, records int64, out *Written) (uint64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, ErrClosed
	}
	if w.f != nil && w.size+int64(len(data)) > w.opts.MaxSize {
		if err := w.rotateLocked(); err != nil {
			return 0, err
		}
	}
	if w.f == nil {
		if err := w.createLocked(); err != nil {
			return 0, err
		}
	}
	out.File = strings.TrimSuffix(filepath.Base(w.path), openSuffix)
	out.Offset = w.size
	out.Bytes = int64(len(data))
	if err := w.writeLocked(data); err != nil {
		return 0, err
	}
	w.records.Add(records)
	return w.seq, nil
}

// writeLocked appends data at the end of f. A failed write is cut back so
// the file still ends with a whole record; if even that fails, the file
// is closed and left for Recover.
func (w *Writer) writeLocked(data []byte) error {
	n, err := w.f.WriteAt(data, w.size)
	if err != nil {
		if terr := w.f.Truncate(w.size); terr != nil {
			w.f.Close()
			w.f = nil
			return fmt.Errorf("warc: write %s: %w (and cutting the torn record failed: %v; the next Open repairs it)", w.path, err, terr)
		}
		return fmt.Errorf("warc: write %s: %w", w.path, err)
	}
	w.size += int64(n)
	w.seq++
	w.bytes.Add(int64(n))
	return nil
}

const openSuffix = ".open"

// createLocked creates the next file and writes its warcinfo record.
func (w *Writer) createLocked() error {
	now := w.opts.Now().UTC()
	for {
		path := filepath.Join(w.opts.Dir, w.nextName(now)+openSuffix)
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("warc: create: %w", err)
		}
		w.f, w.path, w.size = f, path, 0
		break
	}
	w.files.Add(1)
	info, err := w.infoRecord(strings.TrimSuffix(filepath.Base(w.path), openSuffix), now)
	if err != nil {
		return err
	}
	if err := w.writeLocked(info); err != nil {
		return err
	}
	w.info = int64(len(info))
	w.records.Add(1)
	if w.opts.NoSync {
		return nil
	}
	return syncDir(w.opts.Dir)
}

// nextName names the next file: the prefix, the time now and a serial
// number.
func (w *Writer) nextName(now time.Time) string {
	name := fmt.Sprintf("%s-%s-%05d.warc.gz", w.opts.Prefix, now.Format("20060102150405"), w.serial)
	w.serial++
	return name
}

// infoRecord is the warcinfo record that opens the file name, compressed.
func (w *Writer) infoRecord(name string, now time.Time) ([]byte, error) {
	var buf bytes.Buffer
	if err := w.marshal(&buf, w.warcinfo(name, now)); err != nil {
		return nil, fmt.Errorf("warc: warcinfo: %w", err)
	}
	return buf.Bytes(), nil
}

// rotateLocked makes the current file durable, closes it and renames it
// to its final name.
func (w *Writer) rotateLocked() error {
	if w.f == nil {
		return nil
	}
	f, path := w.f, w.path
	w.f = nil
	if !w.opts.NoSync {
		if err := f.Sync(); err != nil {
			f.Close()
			return fmt.Errorf("warc: sync %s: %w", path, err)
		}
	}
	w.markSynced(w.seq)
	if err := f.Close(); err != nil {
		return fmt.Errorf("warc: close %s: %w", path, err)
	}
	if err := os.Rename(path, strings.TrimSuffix(path, openSuffix)); err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	if w.opts.NoSync {
		return nil
	}
	return syncDir(w.opts.Dir)
}

func (w *Writer) markSynced(seq uint64) {
	for {
		cur := w.synced.Load()
		if cur >= seq || w.synced.CompareAndSwap(cur, seq) {
			return
		}
	}
}

// syncTo returns once the write numbered seq is on disk. Callers queue on
// syncMu; the fsync of the first covers every write made before it, so
// the others find their seq covered and return without one.
func (w *Writer) syncTo(seq uint64) error {
	if w.opts.NoSync || w.synced.Load() >= seq {
		return nil
	}
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	if w.synced.Load() >= seq {
		return nil
	}
	w.mu.Lock()
	f, upto := w.f, w.seq
	w.mu.Unlock()
	if f == nil { // rotated (and so synced) or closed by a failure
		if w.synced.Load() >= seq {
			return nil
		}
		return fmt.Errorf("warc: sync: the file was closed after a failed write")
	}
	if err := f.Sync(); err != nil {
		if w.synced.Load() >= seq { // a rotation synced and closed it meanwhile
			return nil
		}
		return fmt.Errorf("warc: sync: %w", err)
	}
	w.markSynced(upto)
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("warc: sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("warc: sync %s: %w", dir, err)
	}
	return nil
}
