package archive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/weaver-crawler/weaver/kv"
)

// Options control the files Snapshot and Download write.
type Options struct {
	// Force replaces an existing target file (never an input).
	Force bool
	// Verify opens the copy and runs Verify on it before it is renamed into
	// place. Download always verifies.
	Verify bool
	// DropMeta names meta keys removed from the copy: values that describe
	// the process holding the store (such as its status API address) and
	// mean nothing where the copy is resumed.
	DropMeta []string
}

// Snapshot writes a consistent copy of s to path: the whole file as of one
// read transaction (bbolt's Tx.WriteTo), so commits running meanwhile are
// either entirely in the copy or not at all. The copy is built beside path
// and renamed into place once synced (and verified with opt.Verify). It
// returns checkTarget's errors (ErrSameFile for the store itself,
// ErrExists, ErrIsDir), Verify's, file system errors, and ctx's error,
// which is looked at between the steps (a copy runs at disk speed).
func Snapshot(ctx context.Context, s *kv.Store, path string, opt Options) (Info, error) {
	if err := checkTarget(path, opt.Force, s.Path()); err != nil {
		return Info{}, err
	}
	tmp, err := tempName(path)
	if err != nil {
		return Info{}, err
	}
	defer os.Remove(tmp) // after a successful install there is nothing to remove
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Info{}, fmt.Errorf("%s: %w", path, err)
	}
	var info Info
	err = s.View(func(tx *kv.Tx) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		info = countsOf(tx)
		n, err := tx.WriteTo(f)
		info.Bytes = n
		return err
	})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Info{}, fmt.Errorf("%s: snapshot: %w", path, err)
	}
	if err := dropMeta(tmp, opt.DropMeta); err != nil {
		return Info{}, fmt.Errorf("%s: snapshot: %w", path, err)
	}
	if opt.Verify {
		if _, err := VerifyFile(tmp); err != nil {
			return Info{}, fmt.Errorf("%s: snapshot: %w", path, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	if err := install(tmp, path); err != nil {
		return Info{}, err
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		info.Bytes = fi.Size() // DropMeta may have grown the copy
	}
	info.Path = path
	return info, nil
}

// dropMeta deletes the meta keys of the store at path that are set. It
// looks first in a read-only open: a store that has none of them is not
// opened for writing, which would cost a scan of the whole file (kv
// rebuilds bbolt's freelist on every writable open).
func dropMeta(path string, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	present := func(s *kv.Store) (found [][]byte, err error) {
		err = s.View(func(tx *kv.Tx) error {
			for _, k := range keys {
				if tx.GetRaw(kv.BucketMeta, []byte(k)) != nil {
					found = append(found, []byte(k))
				}
			}
			return nil
		})
		return found, err
	}
	s, err := kv.Open(path, kv.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	found, err := present(s)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil || len(found) == 0 {
		return err
	}
	if s, err = kv.Open(path, kv.Options{}); err != nil {
		return err
	}
	err = s.Update(func(tx *kv.Tx) error {
		for _, k := range found {
			if err := tx.Delete(kv.BucketMeta, k); err != nil {
				return err
			}
		}
		return nil
	})
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return err
}

// ListenPath is the sidecar file in which a crawl started with --listen
// records its status API address while it runs: the store's own file is
// locked, and the address is bound to this machine, so it is not kept in
// the store.
func ListenPath(db string) string { return db + ".listen" }

// ListenToken returns the token a running crawl's API on db wants, as the
// crawl left it in ListenPath(db) (a line "token TOKEN" after the
// address; the file is the crawl's user's alone, mode 0600): "" when it
// left none (a --listen without a token), or the file cannot be read.
func ListenToken(db string) string {
	data, err := os.ReadFile(ListenPath(db))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n")[1:] {
		if t, ok := strings.CutPrefix(strings.TrimSpace(line), "token "); ok {
			return strings.TrimSpace(t)
		}
	}
	return ""
}

// WriteListen records in ListenPath(db), for this machine's readers of a
// busy store, the address of the status API of the crawl running on it
// and the token the API wants ("" for none), through a temporary file
// and a rename, readable by its owner only.
func WriteListen(db, addr, token string) error {
	content := addr + "\n"
	if token != "" {
		content += "token " + token + "\n"
	}
	path := ListenPath(db)
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}

// ListenAddr returns the base URL (http://host:port) of the status API of
// the crawl running on db, read from ListenPath(db). A wildcard listen
// address (":8088", "0.0.0.0:8088", "[::]:8088") is reached on loopback.
// It returns an error wrapping ErrNoListen when there is no sidecar file.
func ListenAddr(db string) (string, error) {
	data, err := os.ReadFile(ListenPath(db))
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%s %w", db, ErrNoListen)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", ListenPath(db), err)
	}
	addr, _, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return "", fmt.Errorf("%s %w (empty %s)", db, ErrNoListen, ListenPath(db))
	}
	if i := strings.Index(addr, "://"); i >= 0 {
		return strings.TrimRight(addr, "/"), nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%s: bad address %q: %w", ListenPath(db), addr, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

// Download fetches a snapshot streamed by a running crawl's status API at
// base (GET base/snapshot) into path. The copy is built beside path, opened
// and verified (Verify) and only then synced and renamed into place. It
// returns checkTarget's errors, ErrRemote for a failed request or a non-200
// answer, ErrBadSnapshot for a copy that is not a sound store, and file
// system errors. protect names files the target must not be (the live
// store).
func Download(ctx context.Context, client *http.Client, base, path string, opt Options, protect ...string) (Info, error) {
	if err := checkTarget(path, opt.Force, protect...); err != nil {
		return Info{}, err
	}
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/snapshot", nil)
	if err != nil {
		return Info{}, fmt.Errorf("%w: %w", ErrRemote, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return Info{}, fmt.Errorf("%w: %w", ErrRemote, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return Info{}, fmt.Errorf("%w: GET %s: %s: %s", ErrRemote, req.URL, resp.Status, strings.TrimSpace(string(msg)))
	}
	tmp, err := tempName(path)
	if err != nil {
		return Info{}, err
	}
	defer os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Info{}, fmt.Errorf("%s: %w", path, err)
	}
	n, err := io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Info{}, fmt.Errorf("%w: GET %s: after %d bytes: %w", ErrRemote, req.URL, n, err)
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return Info{}, fmt.Errorf("%w: GET %s: got %d of %d bytes", ErrRemote, req.URL, n, resp.ContentLength)
	}
	if err := dropMeta(tmp, opt.DropMeta); err != nil {
		return Info{}, fmt.Errorf("%w: %w", ErrBadSnapshot, err)
	}
	info, err := VerifyFile(tmp)
	if err != nil {
		return Info{}, fmt.Errorf("%w: %w", ErrBadSnapshot, err)
	}
	if err := install(tmp, path); err != nil {
		return Info{}, err
	}
	info.Path, info.Bytes = path, n
	return info, nil
}
