package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/serve"
)

// readStore is a store opened for reading: the file itself, or, while a
// crawl holds it, a hot snapshot of it that the crawl streamed through
// its API (the reading then runs in this process, never in the crawl's).
type readStore struct {
	*kv.Store
	// Copy is where the snapshot is, "" when the store is read itself.
	Copy string
	tmp  string // the snapshot's directory, removed by Close
}

// Close closes the store and removes the snapshot.
func (r *readStore) Close() error {
	err := r.Store.Close()
	if r.tmp != "" {
		os.RemoveAll(r.tmp)
	}
	return err
}

// openReading opens path read-only; when a running crawl holds it, it
// takes a snapshot through the crawl's API (with token, "" for the one
// the crawl left beside the store) into a temporary directory beside the
// store, which has room for a copy of it, and opens that. Errors are the
// command's: a store that is no store, or a busy store whose holder
// serves no API, is bad input.
func openReading(ctx context.Context, path, token string) (*readStore, error) {
	s, err := kv.Open(path, kv.Options{ReadOnly: true})
	if err == nil {
		return &readStore{Store: s}, nil
	}
	if !errors.Is(err, kv.ErrInUse) {
		return nil, storeError(err)
	}
	base, lerr := archive.ListenAddr(path)
	if lerr != nil {
		return nil, inUseError(err, path, nil)
	}
	tmp, terr := os.MkdirTemp(filepath.Dir(path), "."+filepath.Base(path)+".reading-")
	if terr != nil {
		return nil, fmt.Errorf("%s is in use by a running crawl; a snapshot of it needs a directory beside it: %w", path, terr)
	}
	if token == "" {
		token = archive.ListenToken(path)
	}
	copyPath := filepath.Join(tmp, filepath.Base(path))
	if _, err := archive.Download(ctx, serve.WithToken(snapshotClient, token), base, copyPath, archive.Options{DropMeta: []string{metaListenAddr}}, path); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("%s is in use by the crawl serving %s, and its snapshot failed: %w", path, base, err)
	}
	s, err = kv.Open(copyPath, kv.Options{ReadOnly: true})
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return &readStore{Store: s, Copy: copyPath, tmp: tmp}, nil
}
