package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/warc"
)

// Files expands paths: a directory gives its .warc, .warc.gz, .wat and
// .wat.gz files (recursively, in name order); a file is taken as it is.
// It returns the first file system error.
func Files(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && isArchive(d.Name()) {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

func isArchive(name string) bool {
	for _, ext := range []string{".warc", ".warc.gz", ".wat", ".wat.gz"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// file imports one file from where an earlier import stopped: from the
// first record whose edges are not durable, adding only the edges of the
// records whose nodes are already committed.
func (im *importer) file(ctx context.Context, path string) error {
	key, err := fileKey(path)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	st, err := im.loadState(key, path)
	if err != nil {
		return err
	}
	if st.Done || (st.Read && st.edgesAt() == st.Offset) {
		im.stats.FilesSkipped++
		im.logf("%s: already imported (%d records), skipped", path, st.Records)
		return nil
	}
	from, nodesTo := st.edgesAt(), st.Offset
	switch {
	case from < nodesTo:
		im.logf("%s: resuming at offset %d after %d records (the links of those after offset %d are read again)", path, nodesTo, st.Records, from)
	case nodesTo > 0:
		im.logf("%s: resuming at offset %d after %d records", path, nodesTo, st.Records)
	}
	st.Path = path
	st.Edges = &from // the links read from here on wait in memory
	r, err := warc.NewReader(path, from)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	defer r.Close()
	im.stats.Files++
	im.pending[key] = st
	f := &fileRead{im: im, key: key, path: path, st: st, nodesTo: nodesTo, r: r, base: im.current(), links0: im.linksRead, at: nodesTo}
	return f.read(ctx)
}

// fileRead is one file being read from r: its records applied in their
// order and committed in batches.
type fileRead struct {
	im      *importer
	key     string     // the file's meta key
	path    string     // as the import was given it
	st      *fileState // committed with each batch
	nodesTo int64      // the records before it have their nodes committed
	r       *warc.Reader
	base    Stats // the import's when the file began, for its own figures
	links0  int64 // the import's links read when the file began

	bytes, records int64 // read since the last commit
	at             int64 // st.Offset at the last commit
}

// read applies the records as the pipeline parses them and commits them:
// a batch at a time, where the import stops and at the file's end.
func (f *fileRead) read(ctx context.Context) error {
	chunks, stop := f.im.pipeline(ctx, f.r)
	defer stop()
	for c := range chunks {
		for i, rec := range c.recs {
			if err := f.record(ctx, rec, &c.out[i]); err != nil {
				return err
			}
		}
		if c.err == nil {
			continue
		}
		if errors.Is(c.err, io.EOF) {
			break
		}
		if cerr := f.commit(); cerr != nil {
			return cerr
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		return c.err
	}
	if err := ctx.Err(); err != nil {
		// The pipeline stopped early: what was applied is committed.
		return f.stopAt(err)
	}
	if f.im.final {
		// What follows is the last commit and the last pass: a pass
		// started now would merge runs that one merges again.
		f.im.merger.finishing.Store(true)
	}
	f.st.Read = true
	if err := f.commit(); err != nil {
		return err
	}
	if n := f.r.LooseEnds; n > 0 {
		f.im.logf("%s: %d records end in one CRLF where WARC puts two (read whole, as warcio reads them)", f.path, n)
	}
	if f.im.opts.Progress != nil {
		f.progress(true)
	}
	return nil
}

// record applies one record's parse out (its links only when its node is
// committed), and commits the batch when it is full.
func (f *fileRead) record(ctx context.Context, rec *raw, out *parsed) error {
	im := f.im
	if err := ctx.Err(); err != nil {
		return f.stopAt(err)
	}
	if de := (*warc.DamageError)(nil); errors.As(out.err, &de) {
		// The reader met it: what came before is imported.
		return f.stopAt(de)
	}
	if out.err != nil {
		return fmt.Errorf("ingest: %s at offset %d: %w", f.path, rec.Offset, out.err)
	}
	if rec.End <= f.nodesTo {
		// Its node is committed: its links only.
		im.relinks = append(im.relinks, out.pages...)
		return nil
	}
	for _, l := range out.logs {
		im.opts.Log(l)
	}
	im.stats.add(&out.stats)
	im.batch = append(im.batch, out.pages...)
	im.stats.Records++
	im.stats.Bytes += rec.End - rec.Offset
	f.bytes += rec.End - rec.Offset
	f.records++
	f.st.Offset = rec.End
	f.st.Records++
	if f.records >= int64(im.batchRecords()) || f.bytes >= im.opts.BatchBytes {
		if err := f.commit(); err != nil {
			return err
		}
	}
	if im.opts.Progress != nil && time.Since(im.lastProgress) >= im.opts.ProgressEvery {
		im.lastProgress = time.Now()
		f.progress(false)
	}
	return nil
}

// commit commits the records applied since the last commit.
func (f *fileRead) commit() error {
	err := f.im.commit(f.key, f.st)
	f.bytes, f.records = 0, 0
	f.im.merger.input(f.im.after+f.r.Size()-f.st.Offset, f.st.Offset-f.at)
	f.at = f.st.Offset
	return err
}

// stopAt commits the records applied and returns err, the reason the file
// stops there.
func (f *fileRead) stopAt(err error) error {
	if cerr := f.commit(); cerr != nil {
		return cerr
	}
	return err
}

// progress reports the import's state in the file (done: at its end).
func (f *fileRead) progress(done bool) {
	im := f.im
	now := im.current()
	fs := now.since(f.base)
	fs.Links = im.linksRead - f.links0
	im.opts.Progress(Progress{File: f.path, Offset: f.st.Offset, Size: f.r.Size(), Stats: now, FileStats: fs,
		Elapsed: time.Since(im.start), Done: done})
}
