package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/kv"
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
	st := im.pending[key]
	if st == nil {
		st = new(fileState)
		if err := im.store.View(func(tx *kv.Tx) error {
			if v := tx.MetaString(key); v != "" {
				return json.Unmarshal([]byte(v), st)
			}
			return nil
		}); err != nil {
			return fmt.Errorf("ingest: %s: state: %w", path, err)
		}
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
	var batchBytes, batchRecords int64 // read since the last commit
	commit := func() error {
		err := im.commit(key, st)
		batchBytes, batchRecords = 0, 0
		return err
	}
	chunks, stop := im.pipeline(ctx, r)
	defer stop()
	for c := range chunks {
		for i, rec := range c.recs {
			if err := ctx.Err(); err != nil {
				if cerr := commit(); cerr != nil {
					return cerr
				}
				return err
			}
			out := &c.out[i]
			if de := (*warc.DamageError)(nil); errors.As(out.err, &de) {
				// The reader met it: what came before is imported.
				if cerr := commit(); cerr != nil {
					return cerr
				}
				return de
			}
			if out.err != nil {
				return fmt.Errorf("ingest: %s at offset %d: %w", path, rec.Offset, out.err)
			}
			if rec.End <= nodesTo {
				// Its node is committed: its links only.
				im.relinks = append(im.relinks, out.pages...)
				continue
			}
			for _, l := range out.logs {
				im.opts.Log(l)
			}
			im.stats.add(&out.stats)
			im.batch = append(im.batch, out.pages...)
			im.stats.Records++
			im.stats.Bytes += rec.End - rec.Offset
			batchBytes += rec.End - rec.Offset
			batchRecords++
			st.Offset = rec.End
			st.Records++
			if batchRecords >= int64(im.opts.BatchRecords) || batchBytes >= im.opts.BatchBytes {
				if err := commit(); err != nil {
					return err
				}
			}
			if im.opts.Progress != nil && time.Since(im.lastProgress) >= im.opts.ProgressEvery {
				im.lastProgress = time.Now()
				im.opts.Progress(Progress{File: path, Offset: st.Offset, Size: r.Size(), Stats: im.current(), Elapsed: time.Since(im.start)})
			}
		}
		if c.err == nil {
			continue
		}
		if errors.Is(c.err, io.EOF) {
			break
		}
		if cerr := commit(); cerr != nil {
			return cerr
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		return c.err
	}
	if err := ctx.Err(); err != nil {
		// The pipeline stopped early: what was applied is committed.
		if cerr := commit(); cerr != nil {
			return cerr
		}
		return err
	}
	st.Read = true
	if err := commit(); err != nil {
		return err
	}
	if im.opts.Progress != nil {
		im.opts.Progress(Progress{File: path, Offset: st.Offset, Size: r.Size(), Stats: im.current(), Elapsed: time.Since(im.start), Done: true})
	}
	return nil
}
