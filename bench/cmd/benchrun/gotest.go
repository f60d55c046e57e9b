package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// benchLine is one result line of a Go benchmark.
type benchLine struct {
	Name    string             // without the -GOMAXPROCS suffix, e.g. "BenchmarkPage/extract"
	N       int64              // iterations
	Metrics map[string]float64 // by unit: "ns/op", "MB/s", "pages/s", ...
}

var procsSuffix = regexp.MustCompile(`-\d+$`)

// parseBench reads the result lines of `go test -bench` output, in order.
func parseBench(out []byte) []benchLine {
	var lines []benchLine
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		l := benchLine{Name: procsSuffix.ReplaceAllString(f[0], ""), N: n, Metrics: map[string]float64{}}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			l.Metrics[f[i+1]] = v
		}
		lines = append(lines, l)
	}
	return lines
}

// find returns the line named name.
func find(lines []benchLine, name string) (benchLine, bool) {
	for _, l := range lines {
		if l.Name == name {
			return l, true
		}
	}
	return benchLine{}, false
}

// testBin is a compiled test binary of one main-module package.
type testBin struct {
	pkg   string // "./internal/storetest"
	path  string // the binary
	err   error  // why it could not be built
	names map[string]bool
}

// testBinary compiles pkg's tests once (go test -c) so that a benchmark's
// rusage is the test process's own, not the go command's or the compiler's,
// and lists its benchmarks.
func (h *harness) testBinary(ctx context.Context, pkg string) *testBin {
	if tb, ok := h.testBins[pkg]; ok {
		return tb
	}
	tb := &testBin{pkg: pkg, names: map[string]bool{}}
	h.testBins[pkg] = tb
	tb.path = filepath.Join(h.work, "bin", strings.ReplaceAll(strings.Trim(pkg, "./"), "/", "_")+".test")
	h.logf("building the tests of %s", pkg)
	if _, err := h.run(ctx, h.root, "go", "test", "-c", "-o", tb.path, pkg); err != nil {
		tb.err = err
		return tb
	}
	p, err := h.run(ctx, filepath.Join(h.root, pkg), tb.path, "-test.list", "^Benchmark")
	if err != nil {
		tb.err = err
		return tb
	}
	for _, name := range strings.Fields(string(p.Stdout)) {
		tb.names[name] = true
	}
	return tb
}

// benchResult is one run of one or more benchmarks in a process of their
// own.
type benchResult struct {
	Lines   []benchLine
	Proc    proc
	Missing map[string]bool // benchmarks that do not exist (yet)
	Err     error           // they could not be built or run
}

// status is "missing", "error" or "" for a benchmark that can be read.
func (r benchResult) status(name string) string {
	switch {
	case r.Missing[name]:
		return "missing"
	case r.Err != nil:
		return "error"
	}
	return ""
}

// bench runs the top-level benchmarks names of pkg, those that exist, in
// one process of their own (so that they share what they build once per
// process), in the package's directory (benchmarks read testdata/), with
// benchtime.
func (h *harness) bench(ctx context.Context, pkg, benchtime string, names ...string) benchResult {
	r := benchResult{Missing: map[string]bool{}}
	tb := h.testBinary(ctx, pkg)
	if tb.err != nil {
		r.Err = tb.err
		return r
	}
	var run []string
	for _, name := range names {
		if tb.names[name] {
			run = append(run, regexp.QuoteMeta(name))
		} else {
			r.Missing[name] = true
		}
	}
	if len(run) == 0 {
		return r
	}
	h.logf("running %s %s (benchtime %s)", pkg, strings.Join(run, " "), benchtime)
	p, err := h.measured(ctx, filepath.Join(h.root, pkg), tb.path,
		"-test.run", "^$", "-test.bench", "^("+strings.Join(run, "|")+")$", "-test.benchtime", benchtime, "-test.count", "1", "-test.timeout", "30m")
	r.Lines, r.Proc, r.Err = parseBench(p.Stdout), p, err
	if err == nil && len(r.Lines) == 0 {
		r.Err = fmt.Errorf("%s: no result line%s", pkg, tail(p.Stdout))
	}
	return r
}
