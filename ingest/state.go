package ingest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/weaver-crawler/weaver/kv"
)

// Meta keys of the store.
const (
	// MetaSettings holds the last import's settings, as JSON.
	MetaSettings = "import.settings"
	// metaFilePrefix + file key holds a fileState, as JSON.
	metaFilePrefix = "import.file/"
	// metaRuns holds the runs of sorted edges waiting to be merged, as
	// JSON (runState).
	metaRuns = "import.runs"
	// metaStandInPrefix + a node's decimal id holds the path of the page
	// whose facts the node carries while no capture of its home page has
	// been imported (see importer.apply); the key goes when one is.
	metaStandInPrefix = "import.standin/"
)

// fileState is how far an import got in one file.
type fileState struct {
	Path    string `json:"path"`
	Offset  int64  `json:"offset"` // just past the last record whose node is committed
	Records int64  `json:"records"`
	// Edges is just past the last record whose edges are durable, in a
	// run file or in the store; nil when they all are (and an import
	// before issue 43 wrote none): Offset.
	Edges *int64 `json:"edges,omitempty"`
	Read  bool   `json:"read,omitempty"` // every record's node is committed
	Done  bool   `json:"done"`           // and every edge is in the store
}

// edgesAt is where the records whose edges are not durable start.
func (st *fileState) edgesAt() int64 {
	if st.Edges != nil {
		return *st.Edges
	}
	return st.Offset
}

func (im *importer) saveSettings(files []string) error {
	settings := map[string]any{
		"max_outbound_links": im.opts.MaxOutboundLinks,
		"exclude_hosts":      im.opts.ExcludeHosts,
		"scope":              im.opts.Scope,
		"max_body_bytes":     im.opts.MaxBodyBytes,
		"files":              files,
		"started_at":         im.opts.Now().UTC().Format(time.RFC3339),
	}
	data, err := json.Marshal(settings)
	if err != nil {
		return err
	}
	return im.store.Update(func(tx *kv.Tx) error { return tx.SetMetaString(MetaSettings, string(data)) })
}

// loadState returns the state of the file key (at path): the one in
// memory while its edges are not all in the store, else the store's.
func (im *importer) loadState(key, path string) (*fileState, error) {
	if st := im.pending[key]; st != nil {
		return st, nil
	}
	st := new(fileState)
	if err := im.store.View(func(tx *kv.Tx) error {
		if v := tx.MetaString(key); v != "" {
			return json.Unmarshal([]byte(v), st)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("ingest: %s: state: %w", path, err)
	}
	return st, nil
}

// fileKey names a file by its base name and a digest of its first 4 KiB
// (its warcinfo record, usually, which names it uniquely).
func fileKey(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", err
	}
	sum := sha256.Sum256(head[:n])
	return metaFilePrefix + filepath.Base(path) + "@" + hex.EncodeToString(sum[:8]), nil
}

func putState(tx *kv.Tx, key string, st *fileState) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return tx.SetMetaString(key, string(data))
}

// finish records, once every edge is in the store, that every file read
// to its end is done and that the edges of the others are in the store.
func (im *importer) finish(tx *kv.Tx) error {
	type kept struct {
		key string
		st  fileState
	}
	var changed []kept
	c := tx.Cursor(kv.BucketMeta)
	prefix := []byte(metaFilePrefix)
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var st fileState
		if err := json.Unmarshal(v, &st); err != nil {
			return fmt.Errorf("ingest: %s: %w", k, err)
		}
		if st.Done || (st.Edges == nil && !st.Read) {
			continue
		}
		st.Edges, st.Done = nil, st.Read
		changed = append(changed, kept{string(k), st})
	}
	for _, c := range changed {
		if err := putState(tx, c.key, &c.st); err != nil {
			return err
		}
	}
	for _, st := range im.pending {
		st.Edges, st.Done = nil, st.Read
	}
	return nil
}
