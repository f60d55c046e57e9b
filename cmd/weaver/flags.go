package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/suggest"
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

// parseFlags parses args, flags before and after the arguments alike
// (weaver crawl https://x/ --max-depth 2), as git and most tools do; "--"
// ends the flags. fs.Args() then holds the arguments, in their order.
// -h and --help print the usage to stdout and return errHelp (exit 0);
// any other flag error is a usage error (exit 2) that points at -h, and
// an unknown flag names the closest known one.
func parseFlags(fs *flag.FlagSet, args []string) error {
	flags, pos, err := splitArgs(fs, args)
	if err != nil {
		return usageHelp(err)
	}
	usage := fs.Usage
	fs.Usage = func() {} // package flag calls it on every error too
	err = fs.Parse(flags)
	if err == nil {
		// Parsed apart, so that a flag missing its value at the end is
		// told so rather than given "--". Parsing again only sets Args.
		err = fs.Parse(append([]string{"--"}, pos...))
	}
	fs.Usage = usage
	switch {
	case errors.Is(err, flag.ErrHelp):
		usage()
		return errHelp
	case err != nil:
		return usageHelp(flagError(fs, err))
	}
	return nil
}

// splitArgs separates args into flags (each with its value, when it takes
// one as the next argument) and the arguments between and after them.
// A flag takes the next argument as its value unless it is a boolean
// flag (those take a value only as --flag=false); an unknown flag is
// kept, for Parse to report. "-" alone is an argument (stdin); "--" ends
// the flags. A file flag whose value starts with "-" is refused (see
// fileValue).
func splitArgs(fs *flag.FlagSet, args []string) (flags, pos []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return flags, append(pos, args[i+1:]...), nil
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimPrefix(a[1:], "-")
		if name, v, ok := strings.Cut(name, "="); ok {
			if err := fileValue(fs.Lookup(name), v); err != nil {
				return nil, nil, err
			}
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			if err := fileValue(f, args[i+1]); err != nil {
				return nil, nil, err
			}
			flags = append(flags, args[i+1])
			i++
		}
	}
	return flags, pos, nil
}

// fileFlagKinds are the placeholders (see flag.UnquoteUsage) of the flags
// that name a file or a directory.
var fileFlagKinds = map[string]bool{"FILE": true, "PREFIX": true, "DIR": true, "PATH": true}

// fileValue refuses v for f, a file flag, when v starts with "-" (other
// than "-" itself, stdin or stdout): it is the next flag taken for the
// file's name (weaver export --csv --json j.json took --json as the CSV
// prefix, then complained of j.json).
func fileValue(f *flag.Flag, v string) error {
	if f == nil || len(v) < 2 || v[0] != '-' {
		return nil
	}
	if kind, _ := flag.UnquoteUsage(f); fileFlagKinds[kind] {
		return fmt.Errorf("--%s %s: a %s that starts with '-' is taken for a flag: give the %s (a file so named: ./%s)", f.Name, v, kind, kind, v)
	}
	return nil
}

// flagError rewrites package flag's errors in weaver's words: flags
// written with two dashes as the help shows them, and an unknown flag
// with the known one it is closest to.
func flagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if near, ok := suggest.Closest(name, names); ok {
			return fmt.Errorf("unknown flag --%s: did you mean --%s?", name, near)
		}
		return fmt.Errorf("unknown flag --%s", name)
	}
	for _, p := range []string{"flag needs an argument: -", "for flag -", "for -"} {
		if i := strings.Index(msg, p); i >= 0 {
			return errors.New(msg[:i+len(p)] + "-" + msg[i+len(p):])
		}
	}
	return err
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
// A bare number other than 0 is refused: --delay 1 is not one millisecond
// nor one second but a mistake either way.
func durationFlag(fs *flag.FlagSet, name string, value time.Duration, usage string) *time.Duration {
	p := new(time.Duration)
	*p = value
	fs.Func(name, usage+fmt.Sprintf(" (default %s)", value), func(s string) error {
		if err := needUnit(s); err != nil {
			return err
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("want a duration such as 10s or 500ms")
		}
		*p = d
		return nil
	})
	return p
}

// errNeedUnit is the error of a duration flag given a bare number.
var errNeedUnit = errors.New("a duration needs a unit: 1s or 1ms")

// needUnit returns errNeedUnit when s, a duration flag's value, is a bare
// number other than zero (which needs no unit, as in Go's syntax).
func needUnit(s string) error {
	s = strings.TrimLeft(strings.TrimSpace(s), "+-")
	if s == "" || strings.Trim(s, "0123456789.") != "" {
		return nil // a duration, or not a number: ParseDuration says which
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f != 0 {
		return errNeedUnit
	}
	return nil
}

// uintFlag defines a flag holding a whole number ≥ 0 whose bad value
// (-1, 2.5, abc) is reported as what is wanted, not as a "parse error".
// A default of 0 is not shown, as package flag shows none.
func uintFlag(fs *flag.FlagSet, name string, value uint64, usage string) *uint64 {
	p := new(uint64)
	*p = value
	if value != 0 {
		usage += fmt.Sprintf(" (default %d)", value)
	}
	fs.Func(name, usage, func(s string) error {
		n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return fmt.Errorf("want a whole number, 0 or more, such as 2")
		}
		*p = n
		return nil
	})
	return p
}

// rangeFlag defines a flag holding a whole number from lo to hi, 0 until
// set, whose bad value (0, -5, 2.5, abc, too large) is told in one
// message: what N may be.
func rangeFlag(fs *flag.FlagSet, name string, lo, hi int64, usage string) *int64 {
	p := new(int64)
	fs.Func(name, usage, func(s string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("want a whole number N from %d to %d", lo, hi)
		}
		*p = n
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
		return usageError{err: fmt.Errorf("%w that serves no status API (an import, a layout, a merge, or a crawl of an older weaver): wait for it to end or stop it (Ctrl-C; 'weaver crawl --db %s' resumes a crawl)", err, db)}
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

// firstNonEmpty returns the first of v that is not "".
func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}
