package warc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Built is one exchange's records, built and compressed by Build and not
// yet written: Stage writes them with the commit that refers to them.
type Built struct {
	Data          []byte // the request record, then the response (or revisit) record: one gzip member each
	ResponseID    string // WARC-Record-ID of the response (or revisit) record
	PayloadDigest string // "sha1:BASE32" of the response body
}

// Build makes ex's records without writing them, so that callers build
// and compress in parallel and the records wait, in memory, for the
// commit that writes them. It returns ErrBadExchange (wrapped) for an
// exchange it cannot record, and ctx's error if ctx is done.
func (w *Writer) Build(ctx context.Context, ex Exchange) (*Built, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out Written
	buf := bufs.Get().(*bytes.Buffer)
	defer bufs.Put(buf)
	buf.Reset()
	if err := w.build(buf, &ex, &out); err != nil {
		return nil, err
	}
	return &Built{Data: bytes.Clone(buf.Bytes()), ResponseID: out.ResponseID, PayloadDigest: out.PayloadDigest}, nil
}

// Position is where a writer's committed records end: the file, by its
// final base name, and the offset just past its last committed record.
// A crawl stores it with each commit that writes records; the next Open
// (Options.Committed) cuts what a stopped crawl wrote past it.
type Position struct {
	File   string
	Offset int64
}

// String is the position as a crawl stores it: "NAME OFFSET".
func (p Position) String() string { return p.File + " " + strconv.FormatInt(p.Offset, 10) }

// ParsePosition reads what String wrote.
func ParsePosition(s string) (Position, bool) {
	name, off, ok := strings.Cut(s, " ")
	n, err := strconv.ParseInt(off, 10, 64)
	if !ok || err != nil || n < 0 || name == "" {
		return Position{}, false
	}
	return Position{File: name, Offset: n}, true
}

// stagedFile is what a transaction appends to one file: the current file,
// or a new one it starts when the current one is full.
type stagedFile struct {
	name    string   // final base name
	path    string   // NAME.open
	f       *os.File // nil until Prepare creates a new file
	isNew   bool     // the transaction creates the file (its warcinfo is data's start)
	base    int64    // bytes in the file before the transaction
	data    []byte   // what the transaction appends
	records int64    // records in data
	written bool     // Prepare wrote data (Abort cuts it)
	infoLen int      // of a new file: bytes of its warcinfo record
}

func (s *stagedFile) end() int64 { return s.base + int64(len(s.data)) }

// The transactional way to write (Stage, Prepare, Abort, Committed) is the
// crawl's: a page's exchanges are built when they happen (Build), and
// written with the page's commit, in the order of the commits, so that a
// file holds the records of committed pages only, up to the position the
// store records with them. A Writer is written either this way or with
// WriteExchange, not both.

// Stage queues b's records for the next Prepare and returns where they
// will be. A file that would pass MaxSize is followed by a new one, in the
// same transaction (it opens with its warcinfo record). It returns
// ErrClosed after Close, and an error when the warcinfo cannot be built.
func (w *Writer) Stage(b *Built) (Written, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return Written{}, ErrClosed
	}
	last := w.lastStagedLocked()
	n := int64(len(b.Data))
	if last == nil || (last.end()+n > w.opts.MaxSize && last.end() > w.infoOf(last)) {
		var err error
		if last, err = w.planLocked(); err != nil {
			return Written{}, err
		}
	}
	out := Written{File: last.name, Offset: last.end(), Bytes: n, ResponseID: b.ResponseID, PayloadDigest: b.PayloadDigest}
	last.data = append(last.data, b.Data...)
	last.records += 2
	return out, nil
}

// StagedEnd is where the records staged so far end, and false when none
// are staged: the position to store with the transaction.
func (w *Writer) StagedEnd() (Position, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.staged) == 0 {
		return Position{}, false
	}
	last := w.staged[len(w.staged)-1]
	return Position{File: last.name, Offset: last.end()}, true
}

// lastStagedLocked returns the file the next staged records go to: the
// last one staged, else the current file (staged from now on), else nil.
func (w *Writer) lastStagedLocked() *stagedFile {
	if len(w.staged) > 0 {
		return w.staged[len(w.staged)-1]
	}
	if w.f == nil {
		return nil
	}
	cur := &stagedFile{name: strings.TrimSuffix(filepath.Base(w.path), openSuffix), path: w.path, f: w.f, base: w.size}
	w.staged = append(w.staged, cur)
	return cur
}

// infoOf is how many bytes of s are its warcinfo record: a file that holds
// no more is never left for a new one.
func (w *Writer) infoOf(s *stagedFile) int64 {
	if s.isNew {
		return s.base + int64(s.infoLen)
	}
	return w.info
}

// planLocked stages a new file: its name, and its warcinfo record.
func (w *Writer) planLocked() (*stagedFile, error) {
	now := w.opts.Now().UTC()
	name := w.nextName(now)
	info, err := w.infoRecord(name, now)
	if err != nil {
		return nil, err
	}
	s := &stagedFile{name: name, path: filepath.Join(w.opts.Dir, name+openSuffix), isNew: true, data: info, records: 1, infoLen: len(info)}
	w.staged = append(w.staged, s)
	return s, nil
}

// Prepare writes what was staged and makes it durable: one fsync per file
// written (one, unless a file was started), and one of the directory when
// a file was created. It returns the file system's error; the caller then
// calls Abort.
func (w *Writer) Prepare() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	created := false
	for _, s := range w.staged {
		if s.isNew && s.f == nil {
			f, err := os.OpenFile(s.path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if err != nil {
				return fmt.Errorf("warc: create: %w", err)
			}
			s.f, created = f, true
		}
		if len(s.data) == 0 {
			continue // the current file, full and already durable
		}
		if !s.isNew && w.dirty {
			// A failed Abort left bytes past the last commit.
			if err := s.f.Truncate(s.base); err != nil {
				return fmt.Errorf("warc: %w", err)
			}
			w.dirty = false
		}
		s.written = true
		if _, err := s.f.WriteAt(s.data, s.base); err != nil {
			return fmt.Errorf("warc: %w", err) // "write NAME.open: no space left on device"
		}
		if w.opts.NoSync {
			continue
		}
		if err := s.f.Sync(); err != nil {
			return fmt.Errorf("warc: %w", err)
		}
	}
	if created && !w.opts.NoSync {
		return syncDir(w.opts.Dir)
	}
	return nil
}

// Abort forgets what was staged: what Prepare wrote is cut off the
// current file, and a file it created is removed. A cut that fails is
// made again by the next Prepare (and by the next Open, from the
// position the store holds).
func (w *Writer) Abort() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.abortLocked()
}

func (w *Writer) abortLocked() {
	for _, s := range w.staged {
		switch {
		case s.isNew && s.f != nil:
			s.f.Close()
			os.Remove(s.path)
		case !s.isNew && s.written:
			if err := s.f.Truncate(s.base); err != nil {
				w.dirty = true
			}
		}
	}
	w.staged = nil
}

// Committed says the transaction that staged the records committed: they
// are the writer's now. A file followed by a new one is closed and
// renamed to its final name; a rename that fails leaves it NAME.open,
// which the next Open finishes (its records are all committed).
func (w *Writer) Committed() {
	w.mu.Lock()
	defer w.mu.Unlock()
	renamed := false
	for i, s := range w.staged {
		w.bytes.Add(int64(len(s.data)))
		w.records.Add(s.records)
		if s.isNew {
			w.files.Add(1)
		}
		if i == len(w.staged)-1 {
			w.f, w.path, w.size = s.f, s.path, s.end()
			if s.isNew {
				w.info = int64(s.infoLen)
			}
			break
		}
		err := s.f.Close()
		if err == nil {
			err = os.Rename(s.path, strings.TrimSuffix(s.path, openSuffix))
		}
		if err != nil && w.lateErr == nil {
			w.lateErr = fmt.Errorf("warc: closing %s: %w", s.path, err)
		}
		renamed = true
	}
	w.staged = nil
	if renamed && !w.opts.NoSync {
		if err := syncDir(w.opts.Dir); err != nil && w.lateErr == nil {
			w.lateErr = err
		}
	}
}

// serialOf returns the serial in a file name the writer gives, or false.
func serialOf(name, prefix string) (int, bool) {
	p, n, _, ok := ParseName(name)
	return n, ok && (prefix == "" || p == prefix)
}

// errShort is the error of a file shorter than the position the store
// recorded in it: records of committed pages are missing.
var errShort = errors.New("shorter than the last commit recorded in it")
