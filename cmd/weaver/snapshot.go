package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/serve"
)

func init() {
	register(&command{Name: "snapshot", Summary: "write a consistent copy of the store, even while a crawl runs", Run: runSnapshot})
}

// snapshotClient fetches a hot snapshot from a crawl's status API on this
// machine: no proxy, and no overall deadline (a store may be gigabytes), only
// one for the answer to start.
var snapshotClient = &http.Client{Transport: &http.Transport{
	Proxy:                 nil,
	ResponseHeaderTimeout: 60 * time.Second,
}}

func runSnapshot(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "snapshot", "weaver snapshot [--db FILE] [--force] OUT.bolt", `  weaver snapshot backup.bolt                      # weaver.bolt, idle or crawling
  weaver snapshot --db live.bolt /mnt/usb/live.bolt
  weaver snapshot --db live.bolt --force nightly.bolt
  weaver crawl --db backup.bolt                    # resume the copy, on any machine`)
	db := fs.String("db", "", "the store `FILE` to copy (default $WEAVER_DB_PATH, else weaver.bolt)")
	force := fs.Bool("force", false, "replace OUT if it exists")
	verify := fs.Bool("verify", true, "check the copy (as weaver check does) before it replaces OUT")
	tokenFile := fs.String("token-file", "", "a running crawl's API token, in `FILE` (or set WEAVER_TOKEN)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	*db = dbPath(e, *db)
	if len(pos) != 1 {
		return usageHelpf("give one output file, e.g. weaver snapshot --db %s copy.bolt", *db)
	}
	out := pos[0]
	ctx, cancel := withSignals(ctx, e)
	defer cancel()
	// The copy must not carry the address of this machine's crawl API.
	opt := archive.Options{Force: *force, Verify: *verify, DropMeta: []string{metaListenAddr}}
	start := time.Now()
	auth, err := apiAuth(e, *tokenFile, false)
	if err != nil {
		return err
	}
	info, how, err := snapshot(ctx, *db, out, opt, auth.Token)
	if err != nil {
		return err
	}
	fmt.Fprintf(reportWriter(e, out), "snapshot of %s written to %s (%s): %s, %s, %d queued, %s, %s in %s\n",
		*db, out, how, count(info.Nodes, "node", ""), count(info.Edges, "edge", ""), info.Queued, count(info.Leases, "lease", ""), humanBytes(info.Bytes), time.Since(start).Round(time.Millisecond))
	return nil
}

// snapshot copies db to out from the file when no other process holds it,
// else asks the crawl holding it to stream the copy through its API, with
// token ("": the one the crawl left beside the store).
func snapshot(ctx context.Context, db, out string, opt archive.Options, token string) (archive.Info, string, error) {
	for attempt := 0; ; attempt++ {
		// A crawl holds the lock for its whole run: when one says it serves
		// an API, there is no point waiting long for the lock.
		wait := time.Second
		if _, err := os.Stat(archive.ListenPath(db)); err == nil {
			wait = 200 * time.Millisecond
		}
		s, err := kv.Open(db, kv.Options{ReadOnly: true, Timeout: wait})
		if err == nil {
			info, err := archive.Snapshot(ctx, s, out, opt)
			if cerr := s.Close(); err == nil && cerr != nil {
				err = cerr
			}
			return info, "copied from the file", archiveError(err)
		}
		if !errors.Is(err, kv.ErrInUse) {
			return archive.Info{}, "", storeError(err)
		}
		base, lerr := archive.ListenAddr(db)
		if errors.Is(lerr, archive.ErrNoListen) && attempt == 0 {
			continue // the crawl may have ended between the two looks
		}
		if lerr != nil {
			return archive.Info{}, "", usageError{err: lerr}
		}
		if token == "" {
			token = archive.ListenToken(db)
		}
		info, err := archive.Download(ctx, serve.WithToken(snapshotClient, token), base, out, opt, db)
		return info, "streamed by the running crawl at " + base, archiveError(err)
	}
}

// archiveError makes the archive errors that describe a bad command line
// (a target that exists or is an input) usage errors: exit code 2.
func archiveError(err error) error {
	if err == nil {
		return nil
	}
	for _, bad := range []error{archive.ErrExists, archive.ErrSameFile, archive.ErrIsDir, archive.ErrNoInputs} {
		if errors.Is(err, bad) {
			return usageError{err: err}
		}
	}
	return storeError(err)
}

// parseInterleaved parses args with parseFlags (flags before and after
// the arguments) and returns the positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	return fs.Args(), nil
}

// withSignals returns a context cancelled by SIGINT/SIGTERM, so that a long
// command stops and removes its temporary file.
func withSignals(ctx context.Context, e *env) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-e.Signals:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// humanBytes writes n with a binary unit: 1.5 MiB.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
