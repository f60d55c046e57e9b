package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// row is one line of the results table.
type row struct {
	Metric, Weaver, Colly, Target, Met string
	// Load is the machine's 1-minute load average while the figure was
	// measured (a range over its runs): this VM swings ±30 % with load.
	Load string
}

// load1 is the 1-minute load average now (0 when unknown).
func load1() float64 {
	var l float64
	fmt.Sscan(loadavg(), &l)
	return l
}

// loadRange describes the load averages of runs as "min–max".
func loadRange(runs ...[]crawlRun) string {
	lo, hi, n := 0.0, 0.0, 0
	for _, rs := range runs {
		for _, r := range rs {
			if n == 0 || r.Load < lo {
				lo = r.Load
			}
			if n == 0 || r.Load > hi {
				hi = r.Load
			}
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%.2f–%.2f", lo, hi)
}

// verdict is the met? cell of a measured value against a target.
func verdict(ok bool) string {
	if ok {
		return "yes"
	}
	return "**NO**"
}

// table renders rows as one markdown table.
func table(rows []row) string {
	var b strings.Builder
	b.WriteString("| metric | weaver | colly | target | met? | load (1 min) |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", cell(r.Metric), cell(r.Weaver), cell(r.Colly), cell(r.Target), cell(r.Met), cell(r.Load))
	}
	return b.String()
}

func cell(s string) string {
	if s == "" {
		return "—"
	}
	return strings.ReplaceAll(s, "|", `\|`)
}

// machine describes where the figures were measured.
type machine struct {
	Uname, CPU, Go string
	CPUs           int
	LoadStart      string // /proc/loadavg when the run began
	LoadEnd        string
}

func describeMachine(goCmd string) machine {
	m := machine{CPUs: runtime.NumCPU(), Uname: command("uname", "-srvmo"), Go: command(goCmd, "version")}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	m.LoadStart = loadavg()
	return m
}

func command(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return strings.TrimSpace(string(out))
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// results renders RESULTS.md: where and when, how, the table, the notes
// and every crawl run.
func (h *harness) results(start time.Time, rows []row) []byte {
	var b bytes.Buffer
	m := h.machine
	fmt.Fprintf(&b, "# weaver benchmark results\n\n")
	fmt.Fprintf(&b, "Measured by `make bench` (bench/cmd/benchrun); every figure below is measured by the command, none typed in.\n\n")
	fmt.Fprintf(&b, "- Date: %s (took %s)\n", start.UTC().Format(time.RFC3339), time.Since(start).Round(time.Second))
	fmt.Fprintf(&b, "- Machine: %s; %d CPUs (%s)\n", m.Uname, m.CPUs, m.CPU)
	fmt.Fprintf(&b, "- Go: %s\n", m.Go)
	fmt.Fprintf(&b, "- Load average (1, 5, 15 min): %s at start, %s at end\n", m.LoadStart, loadavg())
	fmt.Fprintf(&b, "- Command: `%s`\n", h.cmdline)
	fmt.Fprintf(&b, "- Fake internet: `bin/fakeweb --seed 1 --robots-disallow-every -1 --crawl-delay-every -1` (no host disallows weaver or sets a Crawl-delay, so robots.txt costs both crawlers the same); weaver crawls with `--delay 0 --max-depth 0 --max-crawls-per-node 1 --quiet`, fsync on\n\n")
	b.WriteString(table(rows))
	if len(h.notes) > 0 {
		b.WriteString("\nNotes:\n\n")
		for _, n := range h.notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	if len(h.runs) > 0 {
		b.WriteString("\nEvery crawl, in the order run (pages/s over the crawl's own duration and over the whole process's wall time; CPU and peak RSS of the whole process; the 1-minute load average when it started):\n\n")
		b.WriteString("| crawler | configuration | pages | failed | edges | crawl s | pages/s | process s | pages/s (process) | CPU-s | CPU-s / 1k pages | peak RSS MiB | load |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, r := range h.runs {
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %.2f | %.0f | %.2f | %.0f | %.2f | %.2f | %.0f | %.2f |\n",
				r.Who, r.Label, r.Pages, r.Failed, r.Edges, r.Seconds, r.Rate(), r.Proc.Wall.Seconds(), r.WallRate(), r.Proc.CPU.Seconds(), r.CPUPerK(), r.Proc.MaxRSSMiB(), r.Load)
		}
	}
	return b.Bytes()
}
