package archive

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/outfile"
)

// Info describes a store archive wrote or read.
type Info struct {
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	Nodes  uint64 `json:"nodes"`
	Edges  uint64 `json:"edges"`
	Weight uint64 `json:"total_weight"`
	Queued uint64 `json:"queued"`
	Leases uint64 `json:"leases"`
}

// countsOf reads the store's counters in tx.
func countsOf(tx *kv.Tx) Info {
	c := graph.GetCounts(tx)
	return Info{Nodes: c.Nodes, Edges: c.Edges, Weight: c.Weight, Queued: frontier.Len(tx), Leases: frontier.Leases(tx)}
}

// Verify runs bbolt's consistency check and weaver's invariants (graph and
// frontier) on s, the checks of `weaver check`, and returns the store's
// counts. It returns the problems found, wrapping kv.ErrCorrupt,
// graph.ErrInconsistent or frontier.ErrInconsistent.
func Verify(s *kv.Store) (Info, error) {
	if err := s.Check(); err != nil {
		return Info{}, err
	}
	var info Info
	err := s.View(func(tx *kv.Tx) error {
		if err := graph.Check(tx); err != nil {
			return err
		}
		if err := frontier.Check(tx, func(id uint64) bool { return tx.GetRaw(kv.BucketNodes, kv.U64(id)) != nil }); err != nil {
			return err
		}
		info = countsOf(tx)
		info.Bytes = tx.Size()
		return nil
	})
	return info, err
}

// VerifyFile opens the store at path read-only and runs Verify. It returns
// kv.Open's errors for a file that is not a usable store.
func VerifyFile(path string) (Info, error) {
	s, err := kv.Open(path, kv.Options{ReadOnly: true})
	if err != nil {
		return Info{}, err
	}
	info, err := Verify(s)
	if cerr := s.Close(); err == nil && cerr != nil {
		err = cerr
	}
	info.Path = path
	return info, err
}

// sameFile reports whether a and b name the same file (both must exist),
// or, when one does not exist, the same absolute path.
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	aa, errA := filepath.Abs(a)
	ab, errB := filepath.Abs(b)
	return errA == nil && errB == nil && aa == ab
}

// checkTarget refuses to write path when it is a directory, one of the
// inputs, or an existing file without force. A device, pipe or descriptor
// (/dev/null, /dev/stdout) is no file to protect: the output is copied
// into it (see outfile).
func checkTarget(path string, force bool, inputs ...string) error {
	if path == "" {
		return fmt.Errorf("archive: empty output file name")
	}
	for _, in := range inputs {
		if sameFile(path, in) {
			return fmt.Errorf("%s %w", path, ErrSameFile)
		}
	}
	t, err := outfile.Resolve(path)
	switch {
	case errors.Is(err, outfile.ErrIsDir):
		return fmt.Errorf("%s %w", path, ErrIsDir)
	case err != nil:
		return err
	case t.Exists() && !force:
		return fmt.Errorf("%s %w", path, ErrExists)
	}
	return nil
}

// tempName returns an unused name for the file that becomes path: beside
// it, or in $TMPDIR when path is a device or pipe. The file does not exist
// when tempName returns (kv.Open must create it).
func tempName(path string) (string, error) {
	t, err := outfile.Resolve(path)
	if err != nil {
		return "", err
	}
	return t.TempName()
}

// install syncs the finished file tmp and renames it to path (a link's
// target), then syncs the directory, so that after a crash path is either
// the old file or the whole new one; a device or pipe gets tmp's bytes
// copied into it in place.
func install(tmp, path string) error {
	t, err := outfile.Resolve(path)
	if err != nil {
		return err
	}
	return t.Install(tmp)
}
