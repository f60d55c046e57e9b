package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// clusterCase is the cluster section's comparison: one process against
// three shards on one NATS server, the same fake internet (20 ms before
// every answer) and the same workers in all.
const (
	clusterHosts   = 10000
	clusterLatency = 20 * time.Millisecond
	clusterWorkers = 4 // per shard; the one process gets 3×
	clusterShards  = 3
)

// natsServer is bin/nats-server (the Go module's binary) on a free port.
type natsServer struct {
	cmd  *exec.Cmd
	URL  string
	done chan error
}

func (h *harness) startNATS(ctx context.Context, dir string) (*natsServer, error) {
	bin := filepath.Join(h.work, "bin", "nats-server")
	if _, err := os.Stat(bin); err != nil {
		h.logf("building nats-server (the Go module's binary)")
		if _, err := h.run(ctx, h.root, "go", "build", "-o", bin, "github.com/nats-io/nats-server/v2"); err != nil {
			return nil, err
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "-js", "-sd", dir, "-a", "127.0.0.1", "-p", fmt.Sprint(port))
	cmd.Env = h.env
	out, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &natsServer{cmd: cmd, URL: fmt.Sprintf("nats://127.0.0.1:%d", port), done: make(chan error, 1)}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ok := false
		for sc.Scan() {
			if !ok && strings.Contains(sc.Text(), "Server is ready") {
				ok = true
				ready <- true
			}
		}
		if !ok {
			ready <- false
		}
		s.done <- cmd.Wait()
	}()
	select {
	case ok := <-ready:
		if !ok {
			return nil, errors.New("nats-server exited before it was ready")
		}
		return s, nil
	case <-time.After(30 * time.Second):
		s.stop()
		return nil, errors.New("nats-server: not ready after 30 s")
	}
}

func (s *natsServer) stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// runShards crawls fw with clusterShards weaver processes at once, each a
// shard on a NATS server of its own (a new stream for each run). The rate
// is pages over the cluster's crawl time: first shard's start to last
// shard's end.
func (h *harness) runShards(ctx context.Context, fw *fakeweb, workers int) (crawlRun, error) {
	h.seq++
	dir := filepath.Join(h.work, fmt.Sprintf("cluster-%d", h.seq))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return crawlRun{}, err
	}
	defer os.RemoveAll(dir)
	ns, err := h.startNATS(ctx, filepath.Join(dir, "nats"))
	if err != nil {
		return crawlRun{}, err
	}
	defer ns.stop()
	load := load1()
	var wg sync.WaitGroup
	procs := make([]proc, clusterShards)
	errs := make([]error, clusterShards)
	for k := range clusterShards {
		db := filepath.Join(dir, fmt.Sprintf("s%d.bolt", k))
		args := append(weaverArgs(db, db+".metrics.json", fw.Addr, workers, false), "--cluster", ns.URL, "--shard", fmt.Sprintf("%d/%d", k, clusterShards), fw.Seed)
		wg.Add(1)
		go func() {
			defer wg.Done()
			procs[k], errs[k] = h.measured(ctx, dir, h.weaverBin, args...)
		}()
	}
	wg.Wait()
	r := crawlRun{Who: "weaver", Label: fmt.Sprintf("%d shards w=%d", clusterShards, workers), Load: load}
	var first, last time.Time
	for k := range clusterShards {
		if errs[k] != nil {
			return crawlRun{}, fmt.Errorf("shard %d: %w", k, errs[k])
		}
		m, err := readMetrics(filepath.Join(dir, fmt.Sprintf("s%d.bolt.metrics.json", k)))
		if err != nil {
			return crawlRun{}, err
		}
		if m.TerminationReason != "queue_empty" {
			return crawlRun{}, fmt.Errorf("shard %d ended %q, want queue_empty", k, m.TerminationReason)
		}
		r.Pages += m.PagesFetched
		r.Failed += m.PagesFailed
		r.Edges += m.TotalEdges
		if first.IsZero() || m.StartTime.Before(first) {
			first = m.StartTime
		}
		if m.EndTime.After(last) {
			last = m.EndTime
		}
		r.Proc.CPU += procs[k].CPU
		r.Proc.Wall = max(r.Proc.Wall, procs[k].Wall)
		r.Proc.MaxRSSKiB += procs[k].MaxRSSKiB
	}
	r.Seconds = last.Sub(first).Seconds()
	h.record(r)
	return r, nil
}

// clusterSection is the cluster section: pages/s of three shards against
// one process with the same workers in all, and the cost of a link
// between shards (cluster's BenchmarkLinks, a real NATS server in the
// benchmark's process).
func (h *harness) clusterSection(ctx context.Context) ([]row, error) {
	fw, err := h.startFakeweb(ctx, clusterHosts, clusterLatency)
	if err != nil {
		return nil, err
	}
	defer fw.stop()
	var one, three []crawlRun
	for range h.opt.pairs {
		a, err := h.runWeaver(ctx, fmt.Sprintf("1 process w=%d", clusterShards*clusterWorkers), fw, clusterShards*clusterWorkers, false)
		if err != nil {
			return nil, err
		}
		b, err := h.runShards(ctx, fw, clusterWorkers)
		if err != nil {
			return nil, err
		}
		if b.Pages != a.Pages || b.Edges < a.Edges {
			h.note("cluster: %d pages and %d edges (summed over shards) against one process's %d and %d", b.Pages, b.Edges, a.Pages, a.Edges)
		}
		one, three = append(one, a), append(three, b)
	}
	r1, r3 := median(one, crawlRun.Rate), median(three, crawlRun.Rate)
	rows := []row{{
		Metric: fmt.Sprintf("8. Cluster, %d shards (w=%d each) against 1 process (w=%d), %d hosts at %s latency, one NATS server, all on this machine: pages/s of crawl time, ratio (median of %d)",
			clusterShards, clusterWorkers, clusterShards*clusterWorkers, clusterHosts, clusterLatency, len(one)),
		Weaver: fmt.Sprintf("%.0f vs %.0f pages/s: %.2f× (CPU %.2f vs %.2f s/1k pages)", r3, r1, r3/r1, median(three, crawlRun.CPUPerK), median(one, crawlRun.CPUPerK)),
		Target: "≥ 0.9×", Met: verdict(r3/r1 >= 0.9),
	}}

	r := h.bench(ctx, "./cluster", "1x", "BenchmarkLinks")
	out := row{Metric: "8. Cluster, links between shards through a real NATS server (BenchmarkLinks, 50,000 links): published/s by a shard, consumed/s (applied to its frontier) by a shard, bytes per link in the stream"}
	l, ok := find(r.Lines, "BenchmarkLinks")
	switch {
	case r.status("BenchmarkLinks") != "":
		out.Weaver, out.Met = r.status("BenchmarkLinks"), r.status("BenchmarkLinks")
		h.benchNote("BenchmarkLinks", r)
	case !ok:
		out.Weaver, out.Met = "error", "error"
		h.note("BenchmarkLinks: no result line")
	default:
		out.Weaver = fmt.Sprintf("%.0f published/s, %.0f consumed/s, %.0f B/link (host names of %.0f B)",
			l.Metrics["links/s-published"], l.Metrics["links/s-consumed"], l.Metrics["B/link-in-stream"], l.Metrics["B/host-name"])
		out.Met = "—"
	}
	return append(rows, out), nil
}
