package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// renderSection is section 9: --render auto against --render never on a
// fake web of 1,000 hosts at 20 ms of which every 10th is a JavaScript
// shell (its links added by a script 200 ms after it runs), 3 workers,
// no delay, each host once. It reports pages/s of both, weaver's own peak
// RSS, and the cost per rendered page: the extra wall time over the pages
// rendered. The peak RSS is the largest process's of the crawl's tree
// (rusage of the children: with --render, chromium's); the browser's
// whole memory is in go test ./render -bench Pool_Render.
func (h *harness) renderSection(ctx context.Context) ([]row, error) {
	browser, err := exec.LookPath("chromium")
	if err != nil {
		return nil, fmt.Errorf("no chromium on PATH: %w", err)
	}
	const hosts = 1000
	fw, err := h.startFakewebArgs(ctx, hosts, h.opt.latency, "--shell-every", "10")
	if err != nil {
		return nil, err
	}
	defer fw.stop()
	type run struct {
		pages, rendered int64
		secs            float64
		p               proc
	}
	crawl := func(mode string) (run, error) {
		h.seq++
		db := filepath.Join(h.work, fmt.Sprintf("crawl-%d.bolt", h.seq))
		metrics := db + ".metrics.json"
		defer os.Remove(db)
		defer os.Remove(metrics)
		p, err := h.measured(ctx, h.work, h.weaverBin, "crawl", "--db", db, "--metrics", metrics, "--connect-to", "::"+fw.Addr,
			"--delay", "0", "--max-depth", "0", "--max-crawls-per-node", "1", "--workers", "3", "--quiet",
			"--render", mode, "--browser", browser, fw.Seed)
		if err != nil {
			return run{}, err
		}
		b, err := os.ReadFile(metrics)
		if err != nil {
			return run{}, err
		}
		var m struct {
			PagesFetched  int64     `json:"pages_fetched"`
			PagesRendered int64     `json:"pages_rendered"`
			Start         time.Time `json:"start_time"`
			End           time.Time `json:"end_time"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return run{}, err
		}
		return run{m.PagesFetched, m.PagesRendered, m.End.Sub(m.Start).Seconds(), p}, nil
	}
	h.logf("render: --render never, then auto, on %d hosts (every 10th a shell)", hosts)
	never, err := crawl("never")
	if err != nil {
		return nil, err
	}
	auto, err := crawl("auto")
	if err != nil {
		return nil, err
	}
	per := 0.0
	if auto.rendered > 0 {
		per = (auto.secs - never.secs) / float64(auto.rendered) * 3 // 3 workers share the wall time
	}
	return []row{{
		Metric: fmt.Sprintf("9. Rendering: --render auto vs never, %d hosts at %v, every 10th a JavaScript shell, 3 workers: pages/s, peak RSS of the largest process (chromium's with auto), pages rendered; worker-seconds per rendered page", hosts, h.opt.latency),
		Weaver: fmt.Sprintf("auto %.0f pages/s (%d rendered), %.0f MiB; never %.0f pages/s, %.0f MiB; %.2f s per rendered page",
			float64(auto.pages)/auto.secs, auto.rendered, auto.p.MaxRSSMiB(), float64(never.pages)/never.secs, never.p.MaxRSSMiB(), per),
		Target: "measured", Met: "—",
	}}, nil
}
