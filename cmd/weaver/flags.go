package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/weaver-crawler/weaver/kv"
)

// newFlagSet returns a FlagSet that reports to e.Stderr and whose usage
// prints synopsis, the flags, then examples.
func newFlagSet(e *env, name, synopsis, examples string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.Stderr, "Usage: %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
		if examples != "" {
			fmt.Fprintf(e.Stderr, "\nExamples:\n\n%s\n", strings.TrimRight(examples, "\n"))
		}
	}
	return fs
}

// parseFlags parses args, turning -h into errHelp and any other flag
// error into a usage error (exit 2).
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return usageError{err}
	}
	return nil
}

// openStore opens an existing store for a command. A file that is missing,
// locked, or not a usable store is bad input (exit 2), reported in one line.
func openStore(path string, readOnly bool) (*kv.Store, error) {
	s, err := kv.Open(path, kv.Options{ReadOnly: readOnly})
	if err != nil {
		return nil, storeError(err)
	}
	return s, nil
}

// storeError classifies an Open error: the ones that say the file is not
// what the user thinks are usage errors.
func storeError(err error) error {
	for _, bad := range []error{kv.ErrInUse, kv.ErrNotStore, kv.ErrEmptyFile, kv.ErrTruncated, kv.ErrNewerSchema, kv.ErrCorrupt} {
		if errors.Is(err, bad) {
			return usageError{err}
		}
	}
	if errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), "no such file") {
		return usageError{err}
	}
	return err
}
