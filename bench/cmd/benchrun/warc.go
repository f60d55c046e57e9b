package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// warcSection is section 10: the same crawl with and without --warc
// (2,000 hosts at 20 ms, 3 workers, robots.txt on, no delay), alternately,
// pages/s over the crawl's own time; the aim is --warc within 10 %.
func (h *harness) warcSection(ctx context.Context) ([]row, error) {
	const hosts = 2000
	fw, err := h.startFakeweb(ctx, hosts, h.opt.latency)
	if err != nil {
		return nil, err
	}
	defer fw.stop()
	var with, without []float64
	for i := range h.opt.pairs {
		for _, warcOn := range []bool{false, true} {
			h.seq++
			db := filepath.Join(h.work, fmt.Sprintf("crawl-%d.bolt", h.seq))
			metrics := db + ".metrics.json"
			args := weaverArgs(db, metrics, fw.Addr, 3, true)
			dir := filepath.Join(h.work, fmt.Sprintf("warc-%d", h.seq))
			if warcOn {
				args = append(args, "--warc", dir)
			}
			args = append(args, fw.Seed)
			if _, err := h.measured(ctx, h.work, h.weaverBin, args...); err != nil {
				return nil, err
			}
			m, err := readMetrics(metrics)
			os.Remove(db)
			os.Remove(metrics)
			os.RemoveAll(dir)
			if err != nil {
				return nil, err
			}
			rate := float64(m.PagesFetched) / m.EndTime.Sub(m.StartTime).Seconds()
			h.logf("  warc pair %d, --warc %v: %.0f pages/s", i+1, warcOn, rate)
			if warcOn {
				with = append(with, rate)
			} else {
				without = append(without, rate)
			}
		}
	}
	w, wo := medianOf(with), medianOf(without)
	return []row{{
		Metric: fmt.Sprintf("10. WARC: pages/s with --warc against without, %d hosts at %v, 3 workers, robots.txt on (median of %d alternating pairs)", hosts, h.opt.latency, len(with)),
		Weaver: fmt.Sprintf("%.0f vs %.0f: %.3f×", w, wo, w/wo),
		Target: "≥ 0.90×", Met: verdict(w/wo >= 0.9),
	}}, nil
}
