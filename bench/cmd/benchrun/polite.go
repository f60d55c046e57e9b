package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// politeHosts is the size of the fake web of section 0: a new user's first
// crawl sees an endless supply of new hosts.
const politeHosts = 100_000

// polite is section 0: weaver at its defaults (1 s per-host delay,
// robots.txt obeyed, 3 workers; then 32) on 100,000 hosts answering in
// 20 ms. Each page costs robots.txt and the page, 40 ms of a worker, so the
// ideal is workers/0.040 pages/s; the steady state is read from fakeweb's
// own request log (the middle 60 % of the crawl: its ramp — nothing but
// robots.txt in the first second, few hosts known in the first seconds —
// and its end left out), and so are the gaps between two requests to one
// host, which must never be shorter than the delay.
func (h *harness) polite(ctx context.Context) ([]row, error) {
	var rows []row
	for _, c := range []struct{ workers, pages int }{{3, 4000}, {32, 30000}} {
		ideal := float64(c.workers) / (2 * h.opt.latency.Seconds())
		logPath := filepath.Join(h.work, fmt.Sprintf("polite-%d.requests.tsv", c.workers))
		fw, err := h.startFakewebArgs(ctx, politeHosts, h.opt.latency, "--request-log", logPath)
		if err != nil {
			return rows, err
		}
		h.seq++
		db := filepath.Join(h.work, fmt.Sprintf("crawl-%d.bolt", h.seq))
		metrics := db + ".metrics.json"
		load := load1()
		h.logf("defaults, %d workers, %d hosts at %v: %d pages", c.workers, politeHosts, h.opt.latency, c.pages)
		p, err := h.measured(ctx, h.work, h.weaverBin, "crawl", "--db", db, "--metrics", metrics,
			"--connect-to", "::"+fw.Addr, "--workers", fmt.Sprint(c.workers), "--max-pages", fmt.Sprint(c.pages), "--quiet", fw.Seed)
		fw.stop()
		os.Remove(db)
		if err != nil {
			return rows, err
		}
		m, err := readMetrics(metrics)
		os.Remove(metrics)
		if err != nil {
			return rows, err
		}
		st, err := readRequestLog(logPath)
		os.Remove(logPath)
		if err != nil {
			return rows, err
		}
		h.logf("  %.1f pages/s steady (%d pages in %.1f s), closest pair %v, %d pairs under 1 s; %d pages fetched, CPU %.1f s",
			st.rate, st.pages, st.window.Seconds(), st.minGap, st.tooClose, m.PagesFetched, p.CPU.Seconds())
		name := fmt.Sprintf("defaults (1 s delay, robots.txt), %d workers, %d hosts at %v", c.workers, politeHosts, h.opt.latency)
		rows = append(rows,
			row{
				Metric: fmt.Sprintf("0. Politeness and speed, %s: steady-state pages/s and ratio to the ideal %.0f (fakeweb's request log, %d pages)", name, ideal, c.pages),
				Weaver: fmt.Sprintf("%.0f (%.3f)", st.rate, down(st.rate/ideal)),
				Target: "ratio ≥ 0.90", Met: verdict(st.rate/ideal >= 0.9),
				Load: fmt.Sprintf("%.2f–%.2f", min(load, load1()), max(load, load1())),
			},
			row{
				Metric: fmt.Sprintf("0. Politeness, %s: closest two requests to one host (%d pairs)", name, st.pairs),
				Weaver: fmt.Sprintf("%v, %d pairs under 1 s", st.minGap.Round(time.Millisecond), st.tooClose),
				Target: "≥ 1 s", Met: verdict(st.tooClose == 0),
			})
	}
	return rows, nil
}

// requestStats is what section 0 reads from fakeweb's request log.
type requestStats struct {
	pages    int           // page (non-robots.txt) requests in the window
	window   time.Duration // the steady state: the middle 60 % of the requests' span
	rate     float64       // pages/window
	pairs    int           // consecutive requests to one host
	minGap   time.Duration // the closest of them
	tooClose int           // pairs under 1 s
}

func readRequestLog(path string) (requestStats, error) {
	f, err := os.Open(path)
	if err != nil {
		return requestStats{}, err
	}
	defer f.Close()
	type req struct {
		at   int64
		host string
		page bool
	}
	var reqs []req
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), "\t")
		if len(fs) != 4 {
			return requestStats{}, fmt.Errorf("%s: bad line %q", path, sc.Text())
		}
		at, err := strconv.ParseInt(fs[0], 10, 64)
		if err != nil {
			return requestStats{}, fmt.Errorf("%s: %w", path, err)
		}
		reqs = append(reqs, req{at, fs[1], fs[2] != "/robots.txt"})
	}
	if err := sc.Err(); err != nil {
		return requestStats{}, err
	}
	if len(reqs) < 2 {
		return requestStats{}, fmt.Errorf("%s: %d requests", path, len(reqs))
	}
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].at < reqs[j].at })
	var st requestStats
	// The steady state is the middle 60 % of the crawl's span: a crawl
	// from one seed needs seconds to find enough hosts for its workers
	// (and the first second holds nothing but robots.txt), and its end
	// drains the open hosts.
	span := reqs[len(reqs)-1].at - reqs[0].at
	from, to := reqs[0].at+span/5, reqs[len(reqs)-1].at-span/5
	last := map[string]int64{}
	st.minGap = time.Hour
	for _, r := range reqs {
		if r.page && r.at >= from && r.at < to {
			st.pages++
		}
		if prev, ok := last[r.host]; ok {
			st.pairs++
			gap := time.Duration(r.at - prev)
			st.minGap = min(st.minGap, gap)
			if gap < time.Second {
				st.tooClose++
			}
		}
		last[r.host] = r.at
	}
	if to > from {
		st.window = time.Duration(to - from)
		st.rate = float64(st.pages) / st.window.Seconds()
	}
	return st, nil
}
