package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// rankTargets are the rank package's benchmarks on a synthetic graph of
// 1,000,000 hosts and 10,000,000 edges, with the targets.
var rankTargets = []struct {
	bench, what, unit string
	seconds           float64
	target            string
}{
	{"BenchmarkPageRank_1MHosts10MEdges", "PageRank", "s/pagerank", 10, "≤ 10 s, ≤ 500 MB"},
	{"BenchmarkHyperBall_1MHosts10MEdges", "harmonic centrality (HyperBall, 64 registers)", "s/hyperball", 120, "≤ 2 min, ≤ 500 MB"},
}

// spearmanLine is what TestHyperBall_Spearman10k logs for each graph.
var spearmanLine = regexp.MustCompile(`(\d+) hosts, (\d+) edges: Spearman ([0-9.]+)`)

// ranks is the rank section: PageRank and HyperBall on 1M hosts / 10M
// edges (each benchmark in a process of its own, so that its peak RSS —
// the benchmark's own VmHWM, graph included — is its own), and
// HyperBall's Spearman rank correlation with the exact harmonic centrality
// on the 10,000-host graphs of TestHyperBall_Spearman10k.
func (h *harness) ranks(ctx context.Context) ([]row, error) {
	var rows []row
	for _, c := range rankTargets {
		r := h.bench(ctx, "./rank", "1x", c.bench)
		out := row{Metric: fmt.Sprintf("7. Ranks, %s on 1M hosts / 10M edges (synthetic, power-law; %s): s (peak RSS; iterations)", c.what, c.bench), Target: c.target}
		l, ok := find(r.Lines, c.bench)
		switch {
		case r.status(c.bench) != "":
			out.Weaver, out.Met = r.status(c.bench), r.status(c.bench)
			h.benchNote(c.bench, r)
		case !ok:
			out.Weaver, out.Met = "error", "error"
			h.note("%s: no result line", c.bench)
		default:
			sec, mb := l.Metrics[c.unit], l.Metrics["MB-peak-RSS"]
			out.Weaver = fmt.Sprintf("%.2f s (%.0f MB; %.0f iterations)", sec, mb, l.Metrics["iterations"])
			out.Met = verdict(sec <= c.seconds && mb <= 500)
		}
		rows = append(rows, out)
	}

	out := row{Metric: "7. Ranks, HyperBall against exact harmonic centrality on 10,000 hosts (TestHyperBall_Spearman10k): Spearman rank correlation", Target: "≥ 0.99"}
	tb := h.testBinary(ctx, "./rank")
	if tb.err != nil {
		out.Weaver, out.Met = "error", "error"
		h.note("rank tests: %v", tb.err)
		return append(rows, out), nil
	}
	p, err := h.run(ctx, filepath.Join(h.root, "rank"), tb.path, "-test.run", "^TestHyperBall_Spearman10k$", "-test.v", "-test.count", "1")
	var cells []string
	met := err == nil
	for _, m := range spearmanLine.FindAllStringSubmatch(string(p.Stdout), -1) {
		cells = append(cells, fmt.Sprintf("%s (%s hosts, %s edges)", m[3], m[1], m[2]))
		var rho float64
		fmt.Sscan(m[3], &rho)
		met = met && rho >= 0.99
	}
	switch {
	case err != nil || len(cells) == 0:
		out.Weaver, out.Met = "error", "error"
		h.note("TestHyperBall_Spearman10k: %v%s", err, tail(p.Stdout))
	default:
		out.Weaver, out.Met = strings.Join(cells, "; "), verdict(met)
	}
	return append(rows, out), nil
}
