package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/kv"
)

// newFlagSet returns a FlagSet whose usage (the synopsis, the flags, then
// examples) goes to e.Stdout when asked for with -h or --help. Parse
// errors are returned, not printed: run prints them in one line with a
// pointer to -h, rather than the whole usage.
func newFlagSet(e *env, name, synopsis, examples string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		w := e.Stdout
		fmt.Fprintf(w, "Usage: %s\n\nFlags:\n", synopsis)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		if examples != "" {
			fmt.Fprintf(w, "\nExamples:\n\n%s\n", strings.TrimRight(examples, "\n"))
		}
	}
	return fs
}

// parseFlags parses args. -h and --help print the usage to stdout and
// return errHelp (exit 0); any other flag error is a usage error (exit 2)
// that points at -h.
func parseFlags(fs *flag.FlagSet, args []string) error {
	usage := fs.Usage
	fs.Usage = func() {} // package flag calls it on every error too
	err := fs.Parse(args)
	fs.Usage = usage
	switch {
	case errors.Is(err, flag.ErrHelp):
		usage()
		return errHelp
	case err != nil:
		return usageHelp(err)
	}
	return nil
}

// storeError classifies an Open error: the ones that say the file is not
// what the user thinks are usage errors. A damaged store (kv.ErrCorrupt)
// is a failure, exit 1, and run names weaver check --repair for it.
func storeError(err error) error {
	for _, bad := range []error{kv.ErrInUse, kv.ErrNotStore, kv.ErrEmptyFile, kv.ErrTruncated, kv.ErrNewerSchema} {
		if errors.Is(err, bad) {
			return usageError{err: err}
		}
	}
	if errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), "no such file") {
		return usageError{err: err}
	}
	return err
}

// dbPath is the store a command works on: flag (--db, or the store named
// as an argument), else $WEAVER_DB_PATH, else the default weaver.bolt.
func dbPath(e *env, flag string) string {
	return firstNonEmpty(flag, e.Getenv("WEAVER_DB_PATH"), crawl.Defaults().DBPath)
}

// durationFlag defines a flag holding a duration in Go's syntax (10s,
// 1.5m, 500ms) whose bad value is reported as such, not as a "parse error".
func durationFlag(fs *flag.FlagSet, name string, value time.Duration, usage string) *time.Duration {
	p := new(time.Duration)
	*p = value
	fs.Func(name, usage+fmt.Sprintf(" (default %s)", value), func(s string) error {
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("want a duration such as 10s or 500ms")
		}
		*p = d
		return nil
	})
	return p
}

// reportWriter is where a command that writes the file out reports what it
// did: stdout, unless out is stdout itself (weaver snapshot /dev/stdout |
// ssh …), whose bytes the report must not corrupt: then stderr.
func reportWriter(e *env, out string) io.Writer {
	if f, ok := e.Stdout.(*os.File); ok {
		ofi, err1 := os.Stat(out)
		sfi, err2 := f.Stat()
		if err1 == nil && err2 == nil && os.SameFile(ofi, sfi) {
			return e.Stderr
		}
	}
	return e.Stdout
}

// inUseError explains err, a store db that another process (a running
// crawl) holds, with what to do instead: instead(base) for a crawl that
// serves its API at base; for one without --listen, wait or stop it.
func inUseError(err error, db string, instead func(base string) string) error {
	base, lerr := archive.ListenAddr(db)
	if lerr != nil {
		return usageError{err: fmt.Errorf("%w, a crawl without --listen: wait for it to end or stop it (Ctrl-C; 'weaver crawl --db %s' resumes it); a crawl started with --listen can be copied with 'weaver snapshot' while it runs", err, db)}
	}
	return usageError{err: fmt.Errorf("%w, a crawl serving %s: %s", err, base, instead(base))}
}

// snapshotFirst is inUseError's advice for a command that reads a whole
// store: verb a snapshot with cmd.
func snapshotFirst(db, verb, cmd string) func(string) string {
	return func(string) string {
		return fmt.Sprintf("%s a copy instead: weaver snapshot --db %s copy.bolt && %s", verb, db, cmd)
	}
}
