package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// historySection is section 12, issue 43's history that packs: a fakeweb
// of --history-hosts hosts with 10 links a page, crawled once (--delay 0,
// otherwise the defaults), then revisited, unchanged, for
// --history-duration with --revisit 1s --revisit-max 1s, as
// scripts/history-growth.sh does. The rows: the store file's and bbolt's
// pages' growth per revisit, the fill of the history's pages
// (storestats), CPU per page of the revisit run; then
// BenchmarkHistory_Revisits, the same in a test process.
func (h *harness) historySection(ctx context.Context) ([]row, error) {
	hosts := h.opt.historyHosts
	fw, err := h.startFakewebArgs(ctx, hosts, 0, "--links-per-page", "10")
	if err != nil {
		return nil, err
	}
	defer fw.stop()
	stats := filepath.Join(h.work, "bin", "storestats")
	if _, err := h.run(ctx, h.root, "go", "build", "-o", stats, "./internal/tools/storestats"); err != nil {
		return nil, err
	}
	db := filepath.Join(h.work, "history.bolt")
	metrics := db + ".metrics.json"
	defer os.Remove(db)
	defer os.Remove(metrics)
	base := []string{"crawl", "--db", db, "--metrics", metrics, "--connect-to", "::" + fw.Addr, "--delay", "0", "--quiet"}
	h.logf("history: first crawl of %d hosts", hosts)
	if _, err := h.measured(ctx, h.work, h.weaverBin, append(base, fw.Seed)...); err != nil {
		return nil, err
	}
	size1, hwm1, _, err := h.storeSize(ctx, stats, db)
	if err != nil {
		return nil, err
	}
	h.logf("history: revisits for %v", h.opt.historyDuration)
	load := load1()
	p, err := h.measured(ctx, h.work, h.weaverBin, append(base, "--revisit", "1s", "--revisit-max", "1s",
		"--max-duration", h.opt.historyDuration.String())...)
	if err != nil {
		return nil, err
	}
	m, err := readMetrics(metrics)
	if err != nil {
		return nil, err
	}
	size2, hwm2, fill, err := h.storeSize(ctx, stats, db)
	if err != nil {
		return nil, err
	}
	n := float64(m.Revisits)
	if n == 0 {
		return nil, fmt.Errorf("history: no revisit in %v", h.opt.historyDuration)
	}
	file := float64(size2-size1) / n
	name := fmt.Sprintf("%s-host fakeweb of 10 links, crawled once, then revisited unchanged for %v (--revisit 1s --revisit-max 1s): %s revisits",
		count(hosts), h.opt.historyDuration, count(int(m.Revisits)))
	rows := []row{
		{
			Metric: "12. History: " + name + "; the store file's growth per revisit (bbolt's pages')",
			Weaver: fmt.Sprintf("%.1f B (%.1f B)", file, float64(hwm2-hwm1)/n),
			Target: "≤ 60 B", Met: verdict(file <= 60), Load: fmt.Sprintf("%.2f", load),
		},
		{
			Metric: "12. History: its pages (history and recent buckets) after the revisits: fill; CPU-ms per page of the revisit run",
			Weaver: fmt.Sprintf("%s; %.3f", fill, p.CPU.Seconds()/float64(m.PagesFetched)*1000),
			Target: "≥ 80 %", Met: verdict(fillAtLeast(fill, 80)), Load: fmt.Sprintf("%.2f", load),
		},
	}
	const bench = "BenchmarkHistory_Revisits"
	br := h.bench(ctx, "./graph", "80000x", bench)
	r := row{Metric: "12. " + bench + ": 2,000 hosts of 10 links × 40 unchanged revisits, commits of 50, no fsync (test process): history bytes per revisit; fill; µs per revisit"}
	if s := br.status(bench); s != "" {
		r.Weaver, r.Met = s, s
		h.benchNote(bench, br)
	} else if l, ok := find(br.Lines, bench); ok {
		r.Weaver = fmt.Sprintf("%.1f B; %.0f %%; %.1f µs", l.Metrics["history-B/revisit"], l.Metrics["fill-%"], l.Metrics["ns/op"]/1000)
	}
	return append(rows, r), nil
}

// storeSize returns the store file's size, bbolt's high-water mark and
// the history buckets' fill, read by storestats (see parseStoreStats).
func (h *harness) storeSize(ctx context.Context, stats, db string) (size, hwm int64, fill string, err error) {
	fi, err := os.Stat(db)
	if err != nil {
		return 0, 0, "", err
	}
	p, err := h.run(ctx, h.work, stats, db)
	if err != nil {
		return 0, 0, "", err
	}
	hwm, fill = parseStoreStats(string(p.Stdout))
	return fi.Size(), hwm, fill, nil
}

// parseStoreStats reads storestats' output: the high-water mark, and the
// fill of each history bucket with pages and of them all ("history 97 %,
// recent 74 %, all 88 %").
func parseStoreStats(out string) (hwm int64, fill string) {
	if m := hwmLine.FindStringSubmatch(out); m != nil {
		hwm, _ = strconv.ParseInt(m[1], 10, 64)
	}
	var inuse, disk int64
	for _, m := range bucketLine.FindAllStringSubmatch(out, -1) {
		if m[1] != "history" && m[1] != "recent" && m[1] != "crawls" {
			continue
		}
		d, _ := strconv.ParseInt(m[2], 10, 64)
		u, _ := strconv.ParseInt(m[3], 10, 64)
		if d > 0 {
			fill += fmt.Sprintf("%s %.0f %%, ", m[1], 100*float64(u)/float64(d))
		}
		inuse, disk = inuse+u, disk+d
	}
	if disk > 0 {
		fill += fmt.Sprintf("all %.0f %%", 100*float64(inuse)/float64(disk))
	}
	return hwm, fill
}

var (
	hwmLine    = regexp.MustCompile(`high-water mark (\d+) B`)
	bucketLine = regexp.MustCompile(`(?m)^(\w+)\s+\d+\s+\d+\s+(\d+)\s+(\d+)\s`)
	allFill    = regexp.MustCompile(`all (\d+) %`)
)

// fillAtLeast reports whether storeSize's fill of all the history buckets
// is at least pct.
func fillAtLeast(fill string, pct int) bool {
	m := allFill.FindStringSubmatch(fill)
	if m == nil {
		return false
	}
	n, _ := strconv.Atoi(m[1])
	return n >= pct
}
