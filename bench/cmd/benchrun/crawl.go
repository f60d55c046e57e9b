package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// crawlRun is one crawl of fakeweb by weaver or Colly, in its own process.
type crawlRun struct {
	Who     string  // "weaver" or "colly"
	Label   string  // the configuration, e.g. "20ms w=3"
	Pages   int64   // pages fetched and parsed (2xx)
	Failed  int64   // fetches that failed or answered 4xx/5xx
	Fetches int64   // Colly: home-page answers, to spot hosts fetched twice
	Hosts   int64   // Colly: distinct hosts fetched
	Edges   int64   // distinct host pairs recorded
	Seconds float64 // the crawl's own duration (weaver: metrics start_time→end_time; Colly: first Visit→Wait)
	Proc    proc    // wall, CPU and peak RSS of the whole process
	Load    float64 // the machine's 1-minute load average when the run started
}

// Rate is pages per second of crawl time.
func (r crawlRun) Rate() float64 { return float64(r.Pages) / r.Seconds }

// WallRate is pages per second of the whole process's wall time: start-up,
// opening the store and writing the metrics included.
func (r crawlRun) WallRate() float64 { return float64(r.Pages) / r.Proc.Wall.Seconds() }

// CPUPerK is CPU-seconds of the whole process per 1,000 pages.
func (r crawlRun) CPUPerK() float64 { return r.Proc.CPU.Seconds() / float64(r.Pages) * 1000 }

// weaverMetrics is the part of weaver's metrics.log the harness reads.
type weaverMetrics struct {
	StartTime         time.Time `json:"start_time"`
	EndTime           time.Time `json:"end_time"`
	PagesFetched      int64     `json:"pages_fetched"`
	PagesFailed       int64     `json:"pages_failed"`
	TotalEdges        int64     `json:"total_edges"`
	TerminationReason string    `json:"termination_reason"`
	FrontierSize      int64     `json:"frontier_size"`
	Revisits          int64     `json:"revisits"`
}

// weaverArgs are the flags of every benchmark crawl: the fake internet
// through --connect-to, no politeness delay, unlimited depth, each host
// once, no per-page log lines.
func weaverArgs(db, metrics, addr string, workers int, robots bool) []string {
	args := []string{"crawl", "--db", db, "--metrics", metrics, "--connect-to", "::" + addr,
		"--delay", "0", "--max-depth", "0", "--max-crawls-per-node", "1", "--workers", fmt.Sprint(workers), "--quiet"}
	if !robots {
		args = append(args, "--ignore-robots")
	}
	return args
}

// runWeaver crawls fw from its seed with bin/weaver into a new store
// (fsync on: the default) and removes the store afterwards.
func (h *harness) runWeaver(ctx context.Context, label string, fw *fakeweb, workers int, robots bool) (crawlRun, error) {
	h.seq++
	db := filepath.Join(h.work, fmt.Sprintf("crawl-%d.bolt", h.seq))
	metrics := db + ".metrics.json"
	defer os.Remove(db)
	defer os.Remove(metrics)
	load := load1()
	p, err := h.measured(ctx, h.work, h.weaverBin, append(weaverArgs(db, metrics, fw.Addr, workers, robots), fw.Seed)...)
	if err != nil {
		return crawlRun{}, err
	}
	m, err := readMetrics(metrics)
	if err != nil {
		return crawlRun{}, err
	}
	if m.TerminationReason != "queue_empty" {
		return crawlRun{}, fmt.Errorf("weaver crawl ended %q, want queue_empty", m.TerminationReason)
	}
	r := crawlRun{Who: "weaver", Label: label, Pages: m.PagesFetched, Failed: m.PagesFailed, Edges: m.TotalEdges,
		Seconds: m.EndTime.Sub(m.StartTime).Seconds(), Proc: p, Load: load}
	h.record(r)
	return r, nil
}

func readMetrics(path string) (weaverMetrics, error) {
	var m weaverMetrics
	b, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// collyResult is the JSON line bench/colly prints.
type collyResult struct {
	Pages   int64   `json:"pages"`
	Fetches int64   `json:"fetches"`
	Errors  int64   `json:"errors"`
	Hosts   int64   `json:"hosts"`
	Edges   int64   `json:"edges"`
	Seconds float64 `json:"seconds"`
}

// runColly crawls fw from its seed with the Colly program.
func (h *harness) runColly(ctx context.Context, label string, fw *fakeweb, workers int, robots bool) (crawlRun, error) {
	args := []string{"--connect", fw.Addr, "--workers", fmt.Sprint(workers)}
	if robots {
		args = append(args, "--robots")
	}
	load := load1()
	p, err := h.measured(ctx, h.work, h.collyBin, append(args, fw.Seed)...)
	if err != nil {
		return crawlRun{}, err
	}
	var c collyResult
	if err := json.Unmarshal(p.Stdout, &c); err != nil {
		return crawlRun{}, fmt.Errorf("colly output %q: %w", p.Stdout, err)
	}
	r := crawlRun{Who: "colly", Label: label, Pages: c.Pages, Failed: c.Errors, Fetches: c.Fetches, Hosts: c.Hosts,
		Edges: c.Edges, Seconds: c.Seconds, Proc: p, Load: load}
	h.record(r)
	return r, nil
}

func (h *harness) record(r crawlRun) {
	h.runs = append(h.runs, r)
	h.logf("  %-6s %-22s %6d pages %7d edges %6.2f s  %7.1f pages/s (whole process %7.1f)  %5.2f CPU-s/1k pages  %4.0f MiB  load %.2f",
		r.Who, r.Label, r.Pages, r.Edges, r.Seconds, r.Rate(), r.WallRate(), r.CPUPerK(), r.Proc.MaxRSSMiB(), r.Load)
}

// pairs runs weaver then Colly, n times (A B A B ...), on one fakeweb.
func (h *harness) pairs(ctx context.Context, label string, fw *fakeweb, n, workers int, robots bool) (w, c []crawlRun, err error) {
	for i := 0; i < n; i++ {
		a, err := h.runWeaver(ctx, label, fw, workers, robots)
		if err != nil {
			return w, c, err
		}
		b, err := h.runColly(ctx, label, fw, workers, robots)
		if err != nil {
			return w, c, err
		}
		w, c = append(w, a), append(c, b)
	}
	return w, c, nil
}

// median of f over runs.
func median(runs []crawlRun, f func(crawlRun) float64) float64 {
	v := make([]float64, len(runs))
	for i, r := range runs {
		v[i] = f(r)
	}
	return medianOf(v)
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
