// Command measure runs a command and writes what it cost, from its rusage,
// as one JSON object to a file:
//
//	{"user_ns":N,"sys_ns":N,"maxrss_kib":N,"anon_kib":N,"file_kib":N,"exit_code":N}
//
// benchrun starts every measured child through it because a child's own
// ru_maxrss is not its own: Go starts children with vfork, and when the
// child execs, Linux folds the peak RSS of the address space it leaves —
// the parent's — into the child's. measure is small, so the peak it lends
// the command it starts is a few MiB, not the harness's.
//
// anon_kib and file_kib split the resident set: the largest RssAnon (heap,
// stacks) and RssFile (mapped files, such as a bbolt store: page cache the
// kernel can take back) seen in /proc/PID/status, sampled every 10 ms.
//
// The command inherits measure's standard streams, directory and
// environment; it is killed if measure dies, and measure exits with its
// exit code.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 4 || os.Args[1] != "-o" {
		fmt.Fprintln(os.Stderr, `Usage: measure -o FILE COMMAND [ARG ...]

Examples:
  measure -o cost.json bin/weaver crawl --db w.bolt http://example.com/`)
		os.Exit(2)
	}
	os.Exit(run(os.Args[2], os.Args[3], os.Args[4:]))
}

// cost is what measure writes.
type cost struct {
	UserNS    int64 `json:"user_ns"`
	SysNS     int64 `json:"sys_ns"`
	MaxRSSKiB int64 `json:"maxrss_kib"`
	AnonKiB   int64 `json:"anon_kib"`
	FileKiB   int64 `json:"file_kib"`
	ExitCode  int   `json:"exit_code"`
}

// sample returns RssAnon and RssFile of pid in KiB (zeros once it is gone).
func sample(pid int) (anon, file int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "RssAnon:":
			anon = v
		case "RssFile:":
			file = v
		}
	}
	return anon, file
}

func run(out, name string, args []string) int {
	// Pdeathsig belongs to the thread that started the child: keep it.
	runtime.LockOSThread()
	cmd := exec.Command(name, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// Interrupts reach the command through the process group; measure
	// waits for it to finish rather than dying first.
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	var peakAnon, peakFile int64
	err := cmd.Start()
	if err == nil {
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		tick := time.NewTicker(10 * time.Millisecond)
	wait:
		for {
			select {
			case err = <-done:
				break wait
			case <-tick.C:
				a, f := sample(cmd.Process.Pid)
				peakAnon, peakFile = max(peakAnon, a), max(peakFile, f)
			}
		}
		tick.Stop()
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		fmt.Fprintln(os.Stderr, "measure:", err)
		return 1
	}
	c := cost{ExitCode: cmd.ProcessState.ExitCode(), AnonKiB: peakAnon, FileKiB: peakFile}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		c.UserNS, c.SysNS, c.MaxRSSKiB = ru.Utime.Nano(), ru.Stime.Nano(), ru.Maxrss
	}
	b, _ := json.Marshal(c)
	if err := os.WriteFile(out, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		return 1
	}
	if c.ExitCode < 0 {
		return 1 // killed by a signal
	}
	return c.ExitCode
}
