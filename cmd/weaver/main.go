// Command weaver crawls the web at the level of hosts and records a
// weighted host→host link graph in one bbolt file. Run `weaver help`.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"sort"
	"strings"
	"syscall"

	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/outfile"
	"github.com/weaver-crawler/weaver/suggest"
)

// Version is weaver's version, stamped into exports and the User-Agent.
var Version = "0.1.0"

// env carries what a command may touch of the outside world, so tests run
// commands in-process without capturing globals.
type env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// Environ lists the environment (NAME=value), for the warnings about
	// WEAVER_ variables weaver does not know; nil: none are checked.
	Environ func() []string
	// Signals delivers SIGINT/SIGTERM to long-running commands.
	Signals <-chan os.Signal
}

// command is one subcommand, defined in its own file.
type command struct {
	Name    string
	Summary string
	Run     func(ctx context.Context, e *env, args []string) error
}

var commands = map[string]*command{}

func register(c *command) { commands[c.Name] = c }

// usageError is a bad command line or bad input: exit code 2. With help
// set, the message is followed by a line pointing at the command's -h.
type usageError struct {
	err  error
	help bool
}

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, a ...any) error { return usageError{err: fmt.Errorf(format, a...)} }

// usageHelpf is usagef for a command line that misses or misuses flags:
// run adds where the help is.
func usageHelpf(format string, a ...any) error {
	return usageError{err: fmt.Errorf(format, a...), help: true}
}

// usageHelp is usageHelpf for an error already made.
func usageHelp(err error) error { return usageError{err: err, help: true} }

// exitCode maps an error to weaver's exit codes: 0 ok, 1 failure,
// 2 usage or bad input.
func exitCode(err error) int {
	var u usageError
	var damaged *kv.CorruptError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &damaged):
		return 1 // a damaged store is not a bad command line
	case errors.As(err, &u):
		return 2
	}
	return 1
}

func main() {
	// A crawl allocates briefly per page and keeps little; collecting at
	// 200 % growth instead of 100 % halves GC work for a few MB more.
	debug.SetGCPercent(200)
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	e := &env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Environ: os.Environ, Signals: sig}
	os.Exit(profiled(func() int { return run(context.Background(), e, os.Args[1:]) }))
}

// profiled runs fn under the profilers the environment asks for, for
// performance work: WEAVER_CPUPROFILE=FILE (go tool pprof bin/weaver FILE),
// WEAVER_BLOCKPROFILE and WEAVER_MUTEXPROFILE (where goroutines wait), and
// WEAVER_TRACE (go tool trace FILE), and WEAVER_MEMPROFILE (the heap
// profile at exit: go tool pprof -sample_index=alloc_space bin/weaver FILE
// for where the run allocated).
func profiled(fn func() int) int {
	if p := os.Getenv("WEAVER_CPUPROFILE"); p != "" {
		if f, err := os.Create(p); err == nil && pprof.StartCPUProfile(f) == nil {
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
	}
	if p := os.Getenv("WEAVER_TRACE"); p != "" {
		if f, err := os.Create(p); err == nil && trace.Start(f) == nil {
			defer f.Close()
			defer trace.Stop()
		}
	}
	for _, prof := range []struct{ env, name string }{{"WEAVER_BLOCKPROFILE", "block"}, {"WEAVER_MUTEXPROFILE", "mutex"}, {"WEAVER_MEMPROFILE", "allocs"}} {
		p := os.Getenv(prof.env)
		if p == "" {
			continue
		}
		switch prof.name {
		case "block":
			runtime.SetBlockProfileRate(10_000) // one sample per 10 µs blocked
		case "mutex":
			runtime.SetMutexProfileFraction(5)
		}
		defer func(name, path string) {
			if f, err := os.Create(path); err == nil {
				_ = pprof.Lookup(name).WriteTo(f, 0)
				f.Close()
			}
		}(prof.name, p)
	}
	return fn()
}

func run(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		names := make([]string, 0, len(commands))
		for n := range commands {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(e.Stderr, "weaver: no command given: choose one of %s\nRun 'weaver help' for what each does.\n", strings.Join(names, ", "))
		return 2
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && commands[args[1]] != nil { // weaver help export
			return run(ctx, e, []string{args[1], "-h"})
		}
		printHelp(e.Stdout)
		return 0
	case "version", "--version":
		fmt.Fprintf(e.Stdout, "weaver %s\n", Version)
		return 0
	}
	c, ok := commands[name]
	if !ok {
		names := []string{"help", "version"}
		for n := range commands {
			names = append(names, n)
		}
		if near, ok := suggest.Closest(name, names); ok && !strings.HasPrefix(name, "-") {
			fmt.Fprintf(e.Stderr, "weaver: unknown command %q: did you mean %s? (run 'weaver help')\n", name, near)
		} else {
			fmt.Fprintf(e.Stderr, "weaver: unknown command %q (run 'weaver help')\n", name)
		}
		return 2
	}
	warnEnviron(e)
	err := c.Run(ctx, e, args[1:])
	if errors.Is(err, errHelp) {
		return 0
	}
	if err != nil {
		msg := message(err)
		// A damaged store, met by any command: the way out is named.
		if d := (*kv.CorruptError)(nil); errors.As(err, &d) && !strings.Contains(msg, "check --repair") {
			msg += "; " + repairHint(d.Path)
		}
		fmt.Fprintf(e.Stderr, "weaver %s: %s\n", name, msg)
		if u := (usageError{}); errors.As(err, &u) && u.help {
			fmt.Fprintf(e.Stderr, "Run 'weaver %s -h' for its flags and examples.\n", name)
		}
	}
	return exitCode(err)
}

// packagePrefixes are the prefixes weaver's packages put on their errors
// ("export: sqlite: …"). Under "weaver export: " they say the same thing
// twice, so message drops them from the front of a message.
var packagePrefixes = []string{"export: ", "archive: ", "crawl: ", "kv: ", "frontier: ", "graph: ", "rank: ", "layout: ", "serve: ", "cluster: "}

// message is err's text for the command's one line: without the leading
// package prefixes, and naming output files rather than the temporary
// files they were built as.
func message(err error) string {
	msg := outfile.Untemp(err.Error())
	for again := true; again; {
		again = false
		for _, p := range packagePrefixes {
			if strings.HasPrefix(msg, p) {
				msg, again = strings.TrimPrefix(msg, p), true
			}
		}
	}
	return msg
}

// errHelp is returned by a command that printed its usage on -h.
var errHelp = errors.New("help requested")

func printHelp(w io.Writer) {
	fmt.Fprintf(w, "weaver %s maps the web at the level of hosts: a weighted host→host link graph in one bbolt file.\n\n", Version)
	fmt.Fprintln(w, "Usage:\n\n\tweaver <command> [flags] [arguments]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "\t%-10s %s\n", n, commands[n].Summary)
	}
	fmt.Fprintf(w, "\t%-10s %s\n", "version", "print weaver's version")
	fmt.Fprintf(w, "\t%-10s %s\n", "help", "print this help")
	fmt.Fprintln(w, "\nRun 'weaver <command> -h' (or 'weaver help <command>') for a command's flags.")
	fmt.Fprintln(w, "\nExamples:\n\n\tweaver crawl https://example.com\n\tweaver export --sqlite crawler.db\n\tweaver export --dot | dot -Tsvg > map.svg")
}

// writeJSON writes v to w as indented JSON and a newline: the --json
// answer of status, show, rank and cluster status.
func writeJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}
