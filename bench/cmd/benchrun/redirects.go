package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// redirectsSection is section 13 (issue 50): the bundled web (make demo's:
// 300 hosts in 8 topics) crawled whole, as it is and with every second
// host reached through a twin name that redirects to it (fakeweb
// --apex-every 2, robots.txt included, as most real sites send apex to
// www). fakeweb's request log counts the requests by kind and the pages
// answered more than once: a redirect's target is crawled on its own, so
// every page is fetched once.
func (h *harness) redirectsSection(ctx context.Context) ([]row, error) {
	var rows []row
	for _, apex := range []int{0, 2} {
		logPath := filepath.Join(h.work, fmt.Sprintf("redirects-%d.requests.tsv", apex))
		fw, err := h.startFakewebArgs(ctx, 300, 0, "--topics", "8", "--apex-every", fmt.Sprint(apex), "--request-log", logPath)
		if err != nil {
			return rows, err
		}
		h.seq++
		db := filepath.Join(h.work, fmt.Sprintf("crawl-%d.bolt", h.seq))
		metrics := db + ".metrics.json"
		load := load1()
		p, err := h.measured(ctx, h.work, h.weaverBin, "crawl", "--db", db, "--metrics", metrics, "--connect-to", "::"+fw.Addr,
			"--delay", "0", "--max-depth", "0", "--quiet", fw.Seed)
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
		rc, err := countRequests(logPath)
		os.Remove(logPath)
		if err != nil {
			return rows, err
		}
		name := "the bundled web (300 hosts, 8 topics)"
		if apex > 0 {
			name += ", every second host behind a twin name that redirects to it"
		}
		h.logf("redirects, %s: %d requests (%d robots.txt, %d pages; %d home pages), %d pages answered twice, %d pages fetched, CPU %.2f s",
			name, rc.all, rc.robots, rc.pages, rc.home, rc.twice, m.PagesFetched, p.CPU.Seconds())
		rows = append(rows, row{
			Metric: fmt.Sprintf("13. Redirects, %s: requests (robots.txt + pages), pages answered more than once, CPU", name),
			Weaver: fmt.Sprintf("%d (%d + %d), %d twice, %.2f s", rc.all, rc.robots, rc.pages, rc.twice, p.CPU.Seconds()),
			Target: "no page twice", Met: verdict(rc.twice == 0),
			Load: fmt.Sprintf("%.2f–%.2f", min(load, load1()), max(load, load1())),
		})
	}
	return rows, nil
}

// requestCounts is what section 13 reads from fakeweb's request log.
type requestCounts struct {
	all, robots, pages int
	home               int // page requests for "/"
	twice              int // pages (host and path) answered 2xx more than once
}

// countRequests reads fakeweb's request log (unix-ns, host, path, status).
func countRequests(path string) (requestCounts, error) {
	var rc requestCounts
	f, err := os.Open(path)
	if err != nil {
		return rc, err
	}
	defer f.Close()
	answered := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), "\t")
		if len(fs) != 4 {
			return rc, fmt.Errorf("%s: bad line %q", path, sc.Text())
		}
		status, err := strconv.Atoi(fs[3])
		if err != nil {
			return rc, fmt.Errorf("%s: %w", path, err)
		}
		rc.all++
		switch {
		case fs[2] == "/robots.txt":
			rc.robots++
			continue
		case fs[2] == "/":
			rc.home++
		}
		rc.pages++
		if status >= 200 && status < 300 {
			if answered[fs[1]+" "+fs[2]]++; answered[fs[1]+" "+fs[2]] == 2 {
				rc.twice++
			}
		}
	}
	return rc, sc.Err()
}
