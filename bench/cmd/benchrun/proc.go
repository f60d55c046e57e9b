package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// proc is what one finished child process cost and said.
type proc struct {
	Stdout, Stderr []byte
	Wall           time.Duration // from start to exit, measured here
	CPU            time.Duration // the child's user + system time (rusage)
	MaxRSSKiB      int64         // the child's peak resident set (rusage ru_maxrss)
	AnonKiB        int64         // measured: the largest RssAnon sampled (heap, stacks)
	FileKiB        int64         // measured: the largest RssFile sampled (mapped files: the bbolt store)
}

// rss describes the peak RSS and, when sampled, its anonymous and
// file-backed parts.
func (p proc) rss() string {
	if p.AnonKiB == 0 && p.FileKiB == 0 {
		return fmt.Sprintf("%.0f MiB", p.MaxRSSMiB())
	}
	return fmt.Sprintf("%.0f MiB (anon %.0f + file-backed %.0f)", p.MaxRSSMiB(), float64(p.AnonKiB)/1024, float64(p.FileKiB)/1024)
}

// MaxRSSMiB is the peak RSS in MiB.
func (p proc) MaxRSSMiB() float64 { return float64(p.MaxRSSKiB) / 1024 }

// childEnv is the environment of every child: the harness's, without the
// variables that would silently change a crawl (weaver's WEAVER_* config
// keys and proxies), with TMPDIR in the work directory so that test
// binaries' stores are on the same disk and cleaned up with it.
func childEnv(tmp string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch up := strings.ToUpper(name); {
		case strings.HasPrefix(up, "WEAVER_"), up == "HTTP_PROXY", up == "HTTPS_PROXY", up == "NO_PROXY", up == "ALL_PROXY", up == "TMPDIR":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "TMPDIR="+tmp)
}

// run runs name with args in dir and waits for it, killing it when ctx
// ends. A child that exits non-zero returns its proc and an error quoting
// the end of its stderr. The proc's CPU and peak RSS are only the child's
// own when it was started through measure: see measured.
func (h *harness) run(ctx context.Context, dir, name string, args ...string) (proc, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = h.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	p := proc{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Wall: time.Since(start)}
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			p.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			p.MaxRSSKiB = ru.Maxrss
		}
	}
	if err != nil {
		return p, fmt.Errorf("%s %s: %w%s", name, strings.Join(args, " "), err, tail(p.Stderr))
	}
	return p, nil
}

// measured is run through bench/cmd/measure, so that the CPU time and peak
// RSS are the child's own: a child started directly by this (larger)
// process inherits its peak RSS through vfork and exec.
func (h *harness) measured(ctx context.Context, dir, name string, args ...string) (proc, error) {
	h.seq++
	costFile := filepath.Join(h.work, fmt.Sprintf("cost-%d.json", h.seq))
	defer os.Remove(costFile)
	p, err := h.run(ctx, dir, h.measureBin, append([]string{"-o", costFile, name}, args...)...)
	b, rerr := os.ReadFile(costFile)
	if rerr != nil {
		if err == nil {
			err = fmt.Errorf("measure %s: %w", name, rerr)
		}
		return p, err
	}
	var c struct {
		UserNS    int64 `json:"user_ns"`
		SysNS     int64 `json:"sys_ns"`
		MaxRSSKiB int64 `json:"maxrss_kib"`
		AnonKiB   int64 `json:"anon_kib"`
		FileKiB   int64 `json:"file_kib"`
	}
	if jerr := json.Unmarshal(b, &c); jerr != nil && err == nil {
		err = fmt.Errorf("measure %s: %w", name, jerr)
	}
	p.CPU, p.MaxRSSKiB, p.AnonKiB, p.FileKiB = time.Duration(c.UserNS+c.SysNS), c.MaxRSSKiB, c.AnonKiB, c.FileKiB
	return p, err
}

// tail returns the last lines of a child's stderr for an error message.
func tail(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return ":\n    " + strings.Join(lines, "\n    ")
}

// fakeweb is a running fakeweb child.
type fakeweb struct {
	cmd  *exec.Cmd
	Addr string // host:port it listens on
	Seed string // the seed URL
	done chan error
}

// startFakeweb starts bin/fakeweb with hosts generated hosts (seed 1),
// latency before every response, and no robots.txt disallow or Crawl-delay
// hosts, so that robots.txt costs the same for both crawlers. It returns
// once fakeweb prints its ready line.
func (h *harness) startFakeweb(ctx context.Context, hosts int, latency time.Duration) (*fakeweb, error) {
	return h.startFakewebArgs(ctx, hosts, latency)
}

// startFakewebArgs is startFakeweb with more fakeweb flags.
func (h *harness) startFakewebArgs(ctx context.Context, hosts int, latency time.Duration, more ...string) (*fakeweb, error) {
	args := append([]string{"--listen", "127.0.0.1:0", "--hosts", fmt.Sprint(hosts), "--seed", "1", "--latency", latency.String(),
		"--robots-disallow-every", "-1", "--crawl-delay-every", "-1"}, more...)
	cmd := exec.Command(h.fakewebBin, args...)
	cmd.Env = h.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("fakeweb: %w", err)
	}
	fw := &fakeweb{cmd: cmd, done: make(chan error, 1)}
	ready := make(chan string, 1)
	go func() {
		r := bufio.NewReader(out)
		line, _ := r.ReadString('\n')
		ready <- line
		_, _ = io.Copy(io.Discard, r)
		fw.done <- cmd.Wait()
	}()
	timer := time.NewTimer(2 * time.Minute)
	defer timer.Stop()
	select {
	case line := <-ready:
		// "fakeweb listening on ADDR seed URL"
		f := strings.Fields(line)
		if len(f) != 6 || f[0] != "fakeweb" || f[4] != "seed" {
			fw.stop()
			return nil, fmt.Errorf("fakeweb: unexpected ready line %q%s", line, tail(stderr.Bytes()))
		}
		fw.Addr, fw.Seed = f[3], f[5]
		return fw, nil
	case <-timer.C:
		fw.stop()
		return nil, errors.New("fakeweb: not ready after 2 minutes")
	case <-ctx.Done():
		fw.stop()
		return nil, ctx.Err()
	}
}

// stop interrupts fakeweb and waits for it (killing it after 10 s).
func (fw *fakeweb) stop() {
	_ = fw.cmd.Process.Signal(os.Interrupt)
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case <-fw.done:
	case <-t.C:
		_ = fw.cmd.Process.Kill()
		<-fw.done
	}
}
