package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// throughput is sections 1 and 2: crawls of fakeweb with latency per
// response and no politeness delay, at 3 and at 32 workers, weaver and
// Colly alternately; pages/s as a ratio to the ideal workers/latency.
func (h *harness) throughput(ctx context.Context) ([]row, error) {
	var rows []row
	lat := h.opt.latency
	for _, c := range []struct {
		workers, hosts int
		target         float64
	}{{3, h.opt.hosts3, 0.95}, {32, h.opt.hosts32, 0.85}} {
		fw, err := h.startFakeweb(ctx, c.hosts, lat)
		if err != nil {
			return rows, err
		}
		label := fmt.Sprintf("%v w=%d %dh", lat, c.workers, c.hosts)
		h.logf("%d workers, %d hosts, %v latency: %d pairs", c.workers, c.hosts, lat, h.opt.pairs)
		w, co, err := h.pairs(ctx, label, fw, h.opt.pairs, c.workers, false)
		fw.stop()
		if err != nil {
			return rows, err
		}
		ideal := float64(c.workers) / lat.Seconds()
		wr, cr := median(w, crawlRun.Rate), median(co, crawlRun.Rate)
		name := fmt.Sprintf("%d workers, %v latency, %d hosts, robots off", c.workers, lat, c.hosts)
		rows = append(rows,
			row{
				Metric: fmt.Sprintf("1. Throughput, %s: pages/s over the crawl's own time and ratio to the ideal %.0f pages/s (median of %d)", name, ideal, len(w)),
				Weaver: fmt.Sprintf("%.0f (%.3f)", wr, down(wr/ideal)), Colly: fmt.Sprintf("%.0f (%.3f)", cr, down(cr/ideal)),
				Target: fmt.Sprintf("ratio ≥ %.2f", c.target), Met: verdict(wr/ideal >= c.target),
				Load: loadRange(w, co),
			},
			row{
				Metric: fmt.Sprintf("2. weaver vs Colly, %s: speed (A B × %d, medians); CPU-s per 1,000 pages", name, len(w)),
				Weaver: fmt.Sprintf("%.2f× Colly; %.2f CPU-s", wr/cr, median(w, crawlRun.CPUPerK)),
				Colly:  fmt.Sprintf("1×; %.2f CPU-s", median(co, crawlRun.CPUPerK)),
				Load:   loadRange(w, co),
			})
		h.checkSameWork(label, w, co, c.hosts)
	}
	return rows, nil
}

// checkSameWork notes when the crawlers did not crawl the same web: fewer
// pages than hosts, different edge counts, or hosts Colly fetched twice.
func (h *harness) checkSameWork(label string, w, c []crawlRun, hosts int) {
	for _, rs := range [][]crawlRun{w, c} {
		for _, r := range rs {
			if r.Pages != int64(hosts) || r.Failed != 0 {
				h.note("%s, %s: %d pages and %d failures, want %d pages of %d hosts", label, r.Who, r.Pages, r.Failed, hosts, hosts)
			}
			if r.Who == "colly" && r.Fetches > r.Hosts {
				h.note("%s, colly fetched %d home pages of %d distinct hosts (%d twice)", label, r.Fetches, r.Hosts, r.Fetches-r.Hosts)
			}
		}
	}
	if len(w) > 0 && len(c) > 0 && w[0].Edges != c[0].Edges {
		h.note("%s: weaver recorded %d edges, colly %d", label, w[0].Edges, c[0].Edges)
	}
}

// cpu is section 3: zero latency, 3 workers, persistence on (weaver's
// fsync'd group commits; Colly's default in-memory storage), on 2,000 and
// on 20,000 hosts with robots.txt off, then on 20,000 with it on for both.
// Speed is pages per second of the whole process's wall time.
func (h *harness) cpu(ctx context.Context) ([]row, error) {
	var rows []row
	for _, c := range []struct {
		hosts  int
		robots bool
	}{{h.opt.hostsSmall, false}, {h.opt.hosts, false}, {h.opt.hosts, true}} {
		fw, err := h.startFakeweb(ctx, c.hosts, 0)
		if err != nil {
			return rows, err
		}
		onOff := map[bool]string{false: "off", true: "on"}[c.robots]
		label := fmt.Sprintf("0ms w=3 %dh robots %s", c.hosts, onOff)
		h.logf("zero latency, 3 workers, %d hosts, robots %s: %d pairs", c.hosts, onOff, h.opt.cpuPairs)
		w, co, err := h.pairs(ctx, label, fw, h.opt.cpuPairs, 3, c.robots)
		fw.stop()
		if err != nil {
			return rows, err
		}
		load := loadRange(w, co)
		wr, cr := median(w, crawlRun.WallRate), median(co, crawlRun.WallRate)
		wc, cc := median(w, crawlRun.CPUPerK), median(co, crawlRun.CPUPerK)
		name := fmt.Sprintf("zero latency, 3 workers, %d hosts, robots %s", c.hosts, onOff)
		r := row{
			Metric: fmt.Sprintf("3. %s: hosts/s over the whole process's wall time (median of %d)", name, len(w)),
			Weaver: fmt.Sprintf("%.0f (%.3f× Colly)", wr, down(wr/cr)), Colly: fmt.Sprintf("%.0f", cr), Load: load,
		}
		if !c.robots {
			r.Target, r.Met = "≥ 2× Colly", verdict(wr >= 2*cr)
		}
		rows = append(rows, r)
		r = row{
			Metric: fmt.Sprintf("3. %s: CPU-s per 1,000 pages (whole process)", name),
			Weaver: fmt.Sprintf("%.2f (%.3f× Colly)", wc, up(wc/cc)), Colly: fmt.Sprintf("%.2f", cc), Load: load,
		}
		if !c.robots {
			r.Target, r.Met = "≤ 0.5× Colly", verdict(wc <= 0.5*cc)
		}
		rows = append(rows, r)
		if c.hosts == h.opt.hosts && !c.robots {
			wm, cm := median(w, func(r crawlRun) float64 { return r.Proc.MaxRSSMiB() }), median(co, func(r crawlRun) float64 { return r.Proc.MaxRSSMiB() })
			rows = append(rows, row{
				Metric: fmt.Sprintf("3. %s: peak RSS of the whole process (median)", name),
				Weaver: fmt.Sprintf("%.0f MiB", wm), Colly: fmt.Sprintf("%.0f MiB", cm),
				Target: "≤ 100 MiB", Met: verdict(wm <= 100), Load: load,
			})
		}
		h.checkSameWork(label, w, co, c.hosts)
	}
	return rows, nil
}

// scale is section 4: weaver's peak RSS with a frontier of 1M queued
// hosts (Colly's in-memory queue for comparison), and page commits while
// the store holds 1M nodes and 10M edges.
func (h *harness) scale(ctx context.Context) ([]row, error) {
	var rows []row
	n := h.opt.queued

	// The real process: bin/weaver queues n seeds, a chunk per run, then
	// crawls 2,000 of them with n queued.
	crawl, seed, size, rate, err := h.bigFrontier(ctx, n)
	if err != nil {
		return rows, err
	}
	colly, cerr := h.measured(ctx, h.work, h.collyBin, "--mode", "queue", "--queue-hosts", fmt.Sprint(n))
	var cq struct {
		Queued  int     `json:"queued"`
		HeapMiB float64 `json:"heap_mib"`
	}
	collyCell := "error"
	if cerr == nil && json.Unmarshal(colly.Stdout, &cq) == nil {
		collyCell = fmt.Sprintf("%s, Go heap %.0f MiB: colly/queue InMemoryQueueStorage, %d requests", colly.rss(), cq.HeapMiB, cq.Queued)
	} else {
		h.note("colly queue: %v", cerr)
	}
	rows = append(rows,
		row{
			Metric: fmt.Sprintf("4. Peak RSS, weaver crawling 2,000 pages with %s hosts queued (store %.0f MiB on disk)", count(n), float64(size)/(1<<20)),
			Weaver: fmt.Sprintf("%s; %.0f pages/s (404s)", crawl.rss(), rate), Colly: collyCell,
			Target: "< 150 MB", Met: verdict(crawl.MaxRSSMiB()*1.048576 < 150),
		},
		row{
			Metric: fmt.Sprintf("4. Peak RSS, weaver queueing %s seed hosts, %s per process (Prepare commits 5,000 a transaction)", count(n), count(min(n, h.opt.seedChunk))),
			Weaver: seed.rss(),
		})

	// The store package's own measure, in a test process.
	fm := h.bench(ctx, "./internal/storetest", "1x", "BenchmarkFrontierMemory")
	r := row{Metric: "4. BenchmarkFrontierMemory, 1,000,000 queued (test process, NoSync): peak RSS; Go heap", Target: "< 150 MB"}
	if s := fm.status("BenchmarkFrontierMemory"); s != "" {
		r.Weaver, r.Met = s, s
		h.benchNote("BenchmarkFrontierMemory", fm)
	} else if l, ok := find(fm.Lines, "BenchmarkFrontierMemory"); ok {
		r.Weaver = fmt.Sprintf("%s; Go heap %.1f MiB; %.0f B/entry on disk", fm.Proc.rss(), l.Metrics["heap-MiB"], l.Metrics["file-B/entry"])
		r.Met = verdict(fm.Proc.MaxRSSMiB()*1.048576 < 150)
	}
	rows = append(rows, r)

	// Commits into a big store: BenchmarkCommitPages_1MNodes10MEdges.
	cb := h.bench(ctx, "./internal/storetest", fmt.Sprintf("%dx", h.opt.commitPages), "BenchmarkCommitPages_1MNodes10MEdges")
	rows = append(rows, h.commitRows(cb, "BenchmarkCommitPages_1MNodes10MEdges", "4. Page commits/s, fsync on, store holding 1M nodes / 10M edges")...)
	return rows, nil
}

// bigFrontier queues n hosts (host0000000.example, ...) in a new store with
// bin/weaver itself, seedChunk seeds per process through --config, then
// resumes with a fakeweb that knows none of them and crawls 2,000 pages.
// It returns the resumed crawl's peak RSS, the largest peak RSS of the
// queueing processes (MiB), the store's size and the resumed crawl's pages/s.
func (h *harness) bigFrontier(ctx context.Context, n int) (crawl, seed proc, size int64, rate float64, err error) {
	fw, err := h.startFakeweb(ctx, 100, 0)
	if err != nil {
		return crawl, seed, 0, 0, err
	}
	defer fw.stop()
	db := filepath.Join(h.work, "frontier.bolt")
	defer os.Remove(db)
	start := time.Now()
	h.logf("queueing %d hosts with bin/weaver, %d per process", n, h.opt.seedChunk)
	for from := 0; from < n; from += h.opt.seedChunk {
		to := min(from+h.opt.seedChunk, n)
		seeds := make([]string, 0, to-from)
		for i := from; i < to; i++ {
			seeds = append(seeds, fmt.Sprintf("http://host%07d.example/", i))
		}
		cfg := filepath.Join(h.work, "seeds.json")
		b, _ := json.Marshal(map[string][]string{"seed_urls": seeds})
		if err := os.WriteFile(cfg, b, 0o644); err != nil {
			return crawl, seed, 0, 0, err
		}
		// --max-pages 1: each run queues its seeds and fetches one page.
		args := append(weaverArgs(db, db+".metrics.json", fw.Addr, 3, false), "--config", cfg, "--max-pages", "1")
		p, err := h.measured(ctx, h.work, h.weaverBin, args...)
		if err != nil {
			return crawl, seed, 0, 0, err
		}
		if p.MaxRSSKiB > seed.MaxRSSKiB {
			seed = p
		}
	}
	h.logf("queued in %s; crawling 2,000 pages with them queued", time.Since(start).Round(time.Second))
	args := append(weaverArgs(db, db+".metrics.json", fw.Addr, 3, false), "--max-pages", "2000")
	p, err := h.measured(ctx, h.work, h.weaverBin, args...)
	if err != nil {
		return crawl, seed, 0, 0, err
	}
	m, err := readMetrics(db + ".metrics.json")
	if err != nil {
		return crawl, seed, 0, 0, err
	}
	os.Remove(db + ".metrics.json")
	if m.FrontierSize < int64(n)-2100 {
		h.note("scale: the resumed crawl left %d queued, want about %d", m.FrontierSize, n-2000)
	}
	if fi, err := os.Stat(db); err == nil {
		size = fi.Size()
	}
	done := m.PagesFetched + m.PagesFailed
	h.logf("  weaver with %d queued: %d pages in %.2f s, peak RSS %s (queueing: %s)", m.FrontierSize, done, m.EndTime.Sub(m.StartTime).Seconds(), p.rss(), seed.rss())
	return p, seed, size, float64(done) / m.EndTime.Sub(m.StartTime).Seconds(), nil
}

// commitRows reads BenchmarkCommitPages-style results: pages/s and
// pages/group per sub-benchmark, against the 5,000/s target.
func (h *harness) commitRows(r benchResult, name, metric string) []row {
	if s := r.status(name); s != "" {
		h.benchNote(name, r)
		return []row{{Metric: metric, Weaver: s, Target: "≥ 5,000/s", Met: s}}
	}
	var rows []row
	for _, l := range r.Lines {
		v, ok := l.Metrics["pages/s"]
		if !ok {
			continue
		}
		m := metric
		if sub := strings.TrimPrefix(l.Name, name); sub != "" {
			m += " (" + strings.TrimPrefix(sub, "/") + ")"
		}
		rows = append(rows, row{Metric: m, Weaver: fmt.Sprintf("%.0f/s (%.1f pages/group)", v, l.Metrics["pages/group"]),
			Target: "≥ 5,000/s", Met: verdict(v >= 5000)})
	}
	if len(rows) == 0 {
		rows = append(rows, row{Metric: metric, Weaver: "no pages/s metric", Met: "error"})
	}
	return rows
}

// benchNote explains a missing or failed benchmark under the table.
func (h *harness) benchNote(name string, r benchResult) {
	switch {
	case r.Missing[name]:
		h.note("%s is not in the main module yet: its row says missing", name)
	case r.Err != nil:
		h.note("%s: %v", name, r.Err)
	}
}

// export is section 5: SQLite, GraphML and DOT exports of 100k nodes and
// 1M edges (seconds and peak RSS), and SQLite against sqlite3 .import of
// the same edges as CSV: the export package's own yardstick
// (BenchmarkSQLite_Sqlite3Import_1MEdges, edges only), and benchrun's
// (nodes and edges with every column the export writes).
func (h *harness) export(ctx context.Context) ([]row, error) {
	var rows []row
	const yardstick = "BenchmarkSQLite_Sqlite3Import_1MEdges"
	formats := []string{"SQLite", "GraphML", "DOT"}
	names := []string{yardstick}
	for _, f := range formats {
		names = append(names, "Benchmark"+f+"_100kNodes_1MEdges")
	}
	// One process: the benchmarks share the store it builds once.
	r := h.bench(ctx, "./export", "1x", names...)
	var base float64 // the fastest import of the yardstick
	if s := r.status(yardstick); s != "" {
		h.benchNote(yardstick, r)
		rows = append(rows, row{Metric: "5. Baseline: sqlite3 .import of the 1M edges as CSV (" + yardstick + ")", Weaver: s})
	} else {
		var cells []string
		for _, l := range r.Lines {
			sec, ok := l.Metrics["s/import"]
			if !ok || !strings.HasPrefix(l.Name, yardstick) {
				continue
			}
			if base == 0 || sec < base {
				base = sec
			}
			cells = append(cells, fmt.Sprintf("%s %.2f s (%.0f MiB)", strings.TrimPrefix(l.Name, yardstick+"/"), sec, l.Metrics["MB-peak-RSS"]))
		}
		if len(cells) == 0 {
			h.note("%s printed no s/import metric", yardstick)
			cells = []string{"error"}
		}
		rows = append(rows, row{Metric: "5. Baseline: sqlite3 .import of the same 1M edges (4 columns) as CSV (" + yardstick + "): s (peak RSS)", Weaver: strings.Join(cells, "; ")})
	}
	if p, err := h.sqliteImport(ctx, 100_000, 1_000_000); err != nil {
		h.note("benchrun's sqlite3 .import baseline: %v", err)
	} else {
		rows = append(rows, row{Metric: "5. Baseline: sqlite3 .import of 100k nodes + 1M edges with every exported column, as CSV (benchrun's): s (peak RSS)",
			Weaver: fmt.Sprintf("%.2f s (%.0f MiB)", p.Wall.Seconds(), p.MaxRSSMiB())})
	}
	for _, f := range formats {
		name := "Benchmark" + f + "_100kNodes_1MEdges"
		out := row{Metric: fmt.Sprintf("5. Export %s, 100k nodes / 1M edges: s (peak RSS)", f)}
		if f == "SQLite" {
			out.Target = "≤ 1.5× sqlite3 .import"
		}
		l, ok := find(r.Lines, name)
		switch {
		case r.status(name) != "":
			out.Weaver = r.status(name)
			if out.Target != "" {
				out.Met = out.Weaver
			}
			h.benchNote(name, r)
		case !ok:
			out.Weaver = "error"
			h.note("%s: no result line", name)
		default:
			// The export benchmarks time and measure the export in a child
			// process of their own (s/export, MB-peak-RSS); without those
			// metrics, the benchmark process's figures stand in.
			sec, ok := l.Metrics["s/export"]
			if !ok {
				sec = l.Metrics["ns/op"] / 1e9
			}
			rss, ok := l.Metrics["MB-peak-RSS"]
			if !ok {
				rss = r.Proc.MaxRSSMiB()
			}
			out.Weaver = fmt.Sprintf("%.2f s (%.0f MiB)", sec, rss)
			if f == "SQLite" && base > 0 {
				out.Weaver = fmt.Sprintf("%.2f s (%.0f MiB); %.3f× the fastest .import", sec, rss, up(sec/base))
				out.Met = verdict(sec <= 1.5*base)
			}
		}
		rows = append(rows, out)
	}
	rows = append(rows, h.mergeRow(ctx))
	rows = append(rows, h.importRows(ctx)...)
	return append(rows, h.dotPictures(ctx)...), nil
}

// mergeRow is weaver merge of four overlapping stores (BenchmarkMerge_4Overlapping,
// ./archive): input edges per CPU-second and the peak RSS.
func (h *harness) mergeRow(ctx context.Context) row {
	const name = "BenchmarkMerge_4Overlapping"
	r := h.bench(ctx, "./archive", "1x", name)
	out := row{Metric: "5. weaver merge of 4 stores of 50,000 hosts / 500,000 edges, each sharing half its hosts with the next, without --verify: input edges per CPU-second (peak RSS)",
		Target: "≥ 1,000,000"}
	l, ok := find(r.Lines, name)
	switch {
	case r.status(name) != "":
		out.Weaver, out.Met = r.status(name), r.status(name)
		h.benchNote(name, r)
	case !ok:
		out.Weaver = "error"
		h.note("%s: no result line", name)
	default:
		rate := l.Metrics["input-edges/CPU-s"]
		out.Weaver = fmt.Sprintf("%.0f (%.0f MiB)", rate, l.Metrics["peakRSS-MiB"])
		out.Met = verdict(rate >= 1_000_000)
	}
	return out
}

// importRows are weaver import of the first WAT files of a crawl, a web
// still being discovered (BenchmarkImportWAT_Discovering, issue 54): its
// records per CPU-second, and its CPU / wall with the parsers on every
// core.
func (h *harness) importRows(ctx context.Context) []row {
	const name = "BenchmarkImportWAT_Discovering"
	r := h.bench(ctx, "./ingest", "3x", name)
	rate := row{Metric: "5. weaver import of a WAT file of a web being discovered (20,000 records, 100,000 hosts, about 5 new a record): records per CPU-second, one parser; every core's",
		Target: "≥ 4,000"}
	wall := row{Metric: "5. … its CPU / wall with a parser a core (records per wall-second)", Target: "≥ 1.8"}
	if s := r.status(name); s != "" {
		rate.Weaver, rate.Met, wall.Weaver, wall.Met = s, s, s, s
		h.benchNote(name, r)
		return []row{rate, wall}
	}
	one, ok1 := find(r.Lines, name+"/workers=1")
	var all benchLine
	ok2 := false
	for _, l := range r.Lines {
		if strings.HasPrefix(l.Name, name+"/workers=") && l.Name != name+"/workers=1" {
			all, ok2 = l, true
		}
	}
	if !ok1 || !ok2 {
		h.note("%s: no result lines", name)
		rate.Weaver, wall.Weaver = "error", "error"
		return []row{rate, wall}
	}
	rate.Weaver = fmt.Sprintf("%.0f; %.0f", one.Metrics["records/CPU-s"], all.Metrics["records/CPU-s"])
	rate.Met = verdict(all.Metrics["records/CPU-s"] >= 4000)
	wall.Weaver = fmt.Sprintf("%.2f (%.0f records/s)", all.Metrics["CPU/wall"], all.Metrics["records/s"])
	wall.Met = verdict(all.Metrics["CPU/wall"] >= 1.8)
	return []row{rate, wall}
}

// dotTargets are the pictures BenchmarkDOT_Readable (./e2e) draws with
// dot -Tsvg, with issue 40's targets for the time.
var dotTargets = []struct {
	sub, what string
	seconds   float64
}{
	{"uk1996", "UK-1996 replay", 5},
	{"uk1996-top20", "UK-1996 replay, --top 20", 5},
	{"fakeweb5000", "fakeweb crawl of 5,000 hosts", 12},
}

// dotPictures are the rows of the DOT pictures: dot -Tsvg's time on the
// DOT export, the hosts named and the pairs of names that overlap in the
// SVG (issue 40: none).
func (h *harness) dotPictures(ctx context.Context) []row {
	const name = "BenchmarkDOT_Readable"
	r := h.bench(ctx, "./e2e", "1x", name)
	var rows []row
	for _, c := range dotTargets {
		out := row{Metric: fmt.Sprintf("5. DOT export drawn by dot -Tsvg, %s (%s/%s): s; hosts named; overlapping pairs of names", c.what, name, c.sub),
			Target: fmt.Sprintf("≤ %g s, 0 overlapping, the top 20 named", c.seconds)}
		l, ok := find(r.Lines, name+"/"+c.sub)
		switch {
		case r.status(name) != "":
			out.Weaver, out.Met = r.status(name), r.status(name)
			h.benchNote(name, r)
		case !ok:
			out.Weaver, out.Met = "error", "error"
			h.note("%s/%s: no result line", name, c.sub)
		default:
			sec, overlaps := l.Metrics["s/dot-Tsvg"], l.Metrics["overlapping-label-pairs"]
			out.Weaver = fmt.Sprintf("%.2f s; %.0f of %.0f hosts named; %.0f overlapping", sec, l.Metrics["labelled-hosts"], l.Metrics["hosts"], overlaps)
			out.Met = verdict(sec <= c.seconds && overlaps == 0 && l.Metrics["labelled-hosts"] >= min(20, l.Metrics["hosts"]))
		}
		rows = append(rows, out)
	}
	return rows
}

// micro is section 6: link extraction MB/s on the 30 KB page and page
// commits/s with fsync on.
func (h *harness) micro(ctx context.Context) ([]row, error) {
	var rows []row
	r := h.bench(ctx, "./crawl/extract", "1s", "BenchmarkPage")
	ex := row{Metric: "6. Link extraction, 30 KB page (byte scanner; x/net/html tokenizer): MB/s"}
	if s := r.status("BenchmarkPage"); s != "" {
		ex.Weaver = s
		h.benchNote("BenchmarkPage", r)
	} else {
		e, ok1 := find(r.Lines, "BenchmarkPage/extract")
		t, ok2 := find(r.Lines, "BenchmarkPage/tokenizer-only")
		sc, ok3 := find(r.Lines, "BenchmarkPage/scan")
		switch {
		case ok1 && ok2 && ok3:
			ex.Weaver = fmt.Sprintf("%.0f MB/s (%.0f allocs/page); tokenizer %.0f MB/s (tokenizer alone %.0f MB/s)",
				sc.Metrics["MB/s"], sc.Metrics["allocs/op"], e.Metrics["MB/s"], t.Metrics["MB/s"])
		case ok1 && ok2:
			ex.Weaver = fmt.Sprintf("%.0f MB/s (tokenizer alone %.0f MB/s); %.0f allocs/page", e.Metrics["MB/s"], t.Metrics["MB/s"], e.Metrics["allocs/op"])
		case ok1:
			ex.Weaver = fmt.Sprintf("%.0f MB/s", e.Metrics["MB/s"])
		default:
			ex.Weaver = "error"
		}
	}
	rows = append(rows, ex)
	cp := h.bench(ctx, "./internal/storetest", fmt.Sprintf("%dx", h.opt.commitPages), "BenchmarkCommitPages")
	rows = append(rows, h.commitRows(cp, "BenchmarkCommitPages", "6. Page commits/s, fsync on (group commit), empty store")...)
	return rows, nil
}

// down and up round a ratio to 3 decimals toward failing its target
// (down for a ≥ target, up for a ≤ one), so that a printed ratio never
// seems to meet a target its verdict says it misses.
func down(x float64) float64 { return math.Floor(x*1000) / 1000 }
func up(x float64) float64   { return math.Ceil(x*1000) / 1000 }

// count writes 1000000 as "1,000,000".
func count(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
