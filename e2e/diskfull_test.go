package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/internal/tooltest"
	"github.com/weaver-crawler/weaver/serve"
)

// mountTmpfs mounts a tmpfs of size at dir (root only), or skips — fails
// under CI=true, where .ci/run runs as root.
func mountTmpfs(t *testing.T, dir, size string) func(size string) {
	t.Helper()
	return tooltest.Tmpfs(t, dir, size)
}

// ballast fills dir's file system with one file, dir/ballast, until left
// bytes are free; called again, it grows or shrinks the file to that.
// Removing it gives the space back.
func ballast(t *testing.T, dir string, left int64) {
	t.Helper()
	path := filepath.Join(dir, "ballast")
	var size int64
	if fi, err := os.Stat(path); err == nil {
		size = fi.Size()
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bavail) * st.Bsize
	want := size + free - left
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if want < size {
		if err := f.Truncate(max(want, 0)); err != nil {
			t.Fatal(err)
		}
		return
	}
	// Written, not truncated: a tmpfs gives a sparse file no blocks.
	chunk := make([]byte, 1<<20)
	for at := size; at < want; at += int64(len(chunk)) {
		n := min(int64(len(chunk)), want-at)
		if _, err := f.WriteAt(chunk[:n], at); err != nil {
			t.Fatalf("ballast: %v", err)
		}
	}
}

// liveStatus is weaver status --json of the crawl running on db.
func liveStatus(t *testing.T, dir, db string) serve.Status {
	t.Helper()
	r := weaver(t, dir, "status", "--db", db, "--json")
	if r.code != 0 {
		t.Fatalf("status: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var st serve.Status
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, r.stdout)
	}
	if st.Crawl == nil {
		t.Fatalf("status --json: no live crawl\n%s", r.stdout)
	}
	return st
}

// pausedMetric reads weaver_paused{reason} from the crawl on db's /metrics.
func pausedMetric(t *testing.T, db, reason string) float64 {
	t.Helper()
	data, err := os.ReadFile(db + ".listen")
	if err != nil {
		t.Fatalf("the crawl's address: %v", err)
	}
	a := api{t: t, base: "http://" + strings.TrimSpace(string(data))}
	code, body := a.do("GET", "/metrics", "")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return metric(t, fams, "weaver_paused", "reason", reason)
}

// TestDiskFull is issue 42's full disk: a --warc crawl on a real small
// file system that fills pauses (a store or WARC write failed with
// ENOSPC) instead of failing. The pause is said once, in weaver status
// (text and JSON, with the path) and on /metrics; no fetch goes out while
// it lasts; SIGINT ends it cleanly (exit 0, the store whole). A crawl
// resumed on the still-small disk pauses again, and goes on by itself
// when space is given back: the graph is exact, every page counted once
// over both runs, and the WARC files give the same graph to weaver
// import, each home page once.
func TestDiskFull(t *testing.T) {
	t.Parallel() // it mostly waits
	w := fakeweb.New(fakeweb.Config{Hosts: 400, Seed: 31, Latency: 10 * time.Millisecond, RobotsDisallowEvery: -1})
	srv := startWeb(t, w)
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	os.Mkdir(small, 0o755)
	mountTmpfs(t, small, "64m")
	ballast(t, small, 400<<10)
	db := filepath.Join(small, "w.bolt")
	warcs := filepath.Join(small, "warcs")
	mlog := filepath.Join(dir, "metrics.log")
	args := []string{"crawl", "--db", db, "--metrics", mlog, "--connect-to", srv.ConnectTo(), "--warc", warcs,
		"--delay", "0", "--quiet", "--max-depth", "0", "--max-crawls-per-node", "1", "--retry-delay", "10ms",
		"--min-free-space", "0", "--listen", "127.0.0.1:0"}

	lw := startWeaver(t, dir, nil, append(args, w.Seed())...)
	lw.waitLine(t, "Disk full since", time.Minute)
	st := liveStatus(t, dir, db)
	p := st.Crawl.Paused
	if p == nil || p.Reason != "disk_full" || !strings.HasPrefix(p.Path, small) || !strings.Contains(p.Detail, "no space left on device") ||
		p.Since.IsZero() || p.NextCheck.IsZero() || !st.Crawl.Running {
		t.Errorf("status --json during the pause: paused %+v, running %v", p, st.Crawl.Running)
	}
	r := weaver(t, dir, "status", "--db", db)
	if !regexp.MustCompile(`(?m)^  Paused: +disk full since \S+Z: .*` + regexp.QuoteMeta(small) + `.*no space left on device; next check in \d+s$`).MatchString(r.stdout) {
		t.Errorf("weaver status during the pause has no Paused line:\n%s", r.stdout)
	}
	if got := pausedMetric(t, db, "disk_full"); got != 1 {
		t.Errorf("weaver_paused{disk_full} %v during the pause, want 1", got)
	}
	asked := len(w.Requests())
	time.Sleep(2500 * time.Millisecond) // a look at the free space, and more
	if n := len(w.Requests()) - asked; n != 0 {
		t.Errorf("%d requests while paused", n)
	}
	if n := strings.Count(lw.log(), "Disk full since"); n != 1 {
		t.Errorf("the pause was said %d times, want once:\n%s", n, lw.log())
	}
	lw.cmd.Process.Signal(syscall.SIGINT)
	if err := lw.wait(t, 30*time.Second); err != nil {
		t.Fatalf("SIGINT during the pause: %v\n%s", err, lw.log())
	}
	first := metrics(t, mlog)
	if first.TerminationReason != "signal" || first.DiskPauses != 1 || first.DiskPausedSeconds <= 0 || first.Error != "" {
		t.Errorf("metrics of the run stopped during the pause: %s, %d disk pauses, %.1f s, error %q",
			first.TerminationReason, first.DiskPauses, first.DiskPausedSeconds, first.Error)
	}
	edges(t, db) // the store's invariants hold

	// Resumed with a little room: it fills again, pauses, and goes on by
	// itself once the ballast is gone.
	ballast(t, small, 400<<10)
	lw = startWeaver(t, dir, nil, args...)
	lw.waitLine(t, "Disk full since", time.Minute)
	if err := os.Remove(filepath.Join(small, "ballast")); err != nil {
		t.Fatal(err)
	}
	lw.waitLine(t, "Disk space back after a pause of", 30*time.Second)
	if err := lw.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("the resumed crawl: %v\n%s", err, lw.log())
	}
	second := metrics(t, mlog)
	if second.TerminationReason != "queue_empty" || second.DiskPauses != 1 || second.Error != "" {
		t.Errorf("metrics of the resumed run: %s, %d disk pauses, error %q", second.TerminationReason, second.DiskPauses, second.Error)
	}
	crawled := edges(t, db)
	storetest.SameGraph(t, crawled, w.ExpectedEdges(10, excluded))
	hosts := 0
	for _, n := range nodes(t, db) {
		if n.CrawlCount > 0 {
			hosts++
		}
		if n.CrawlCount > 1 {
			t.Errorf("%s crawled %d times", n.Host, n.CrawlCount)
		}
	}
	if got := first.PagesFetched + second.PagesFetched; got != int64(hosts) {
		t.Errorf("pages fetched %d + %d, want %d: each crawled host once", first.PagesFetched, second.PagesFetched, hosts)
	}
	for u, n := range warcResponses(t, warcs) {
		if n > 1 {
			t.Errorf("%s: %d response records", u, n)
		}
	}
	fresh := filepath.Join(dir, "imported.bolt")
	if r := fixture(t, dir, "import", "--db", fresh, "--quiet", warcs); r.code != 0 {
		t.Fatalf("import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	storetest.SameGraph(t, edges(t, fresh), crawled)
	if r := weaver(t, dir, "check", "--db", db); r.code != 0 {
		t.Errorf("check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestDiskFull_MinFreeSpace: a crawl pauses when a file system it writes
// to has less than --min-free-space free, before anything fails: said in
// the log and the status, no fetch meanwhile; SIGINT ends it cleanly; a
// crawl started on the short disk starts paused, and goes on by itself
// once there is room, to the exact graph.
func TestDiskFull_MinFreeSpace(t *testing.T) {
	t.Parallel() // it mostly waits
	w := fakeweb.New(fakeweb.Config{Hosts: 400, Seed: 37, Latency: 10 * time.Millisecond, RobotsDisallowEvery: -1})
	srv := startWeb(t, w)
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	os.Mkdir(small, 0o755)
	mountTmpfs(t, small, "64m")
	// 1.4 MB above the threshold: the crawl (about 5 MB of store and WARC
	// files in all) goes below it early, with seconds of work left, so a
	// look at the free space (every 2 s) finds it there; it writes far
	// less than the 8 MB left between two looks, so nothing fails first.
	ballast(t, small, 9<<20)
	db := filepath.Join(small, "w.bolt")
	warcs := filepath.Join(small, "warcs")
	mlog := filepath.Join(dir, "metrics.log")
	args := []string{"crawl", "--db", db, "--metrics", mlog, "--connect-to", srv.ConnectTo(), "--warc", warcs,
		"--delay", "0", "--quiet", "--max-depth", "0", "--max-crawls-per-node", "1", "--retry-delay", "10ms",
		"--min-free-space", "8MB", "--listen", "127.0.0.1:0"}

	lw := startWeaver(t, dir, nil, append(args, w.Seed())...)
	lw.waitLine(t, "Disk space low since", time.Minute)
	p := liveStatus(t, dir, db).Crawl.Paused
	if p == nil || p.Reason != "disk_full" || p.Path != small || !strings.Contains(p.Detail, "below min_free_space 8 MB") {
		t.Errorf("status --json during the pause: paused %+v", p)
	}
	asked := len(w.Requests())
	time.Sleep(2500 * time.Millisecond)
	if n := len(w.Requests()) - asked; n != 0 {
		t.Errorf("%d requests while paused", n)
	}
	lw.cmd.Process.Signal(syscall.SIGINT)
	if err := lw.wait(t, 30*time.Second); err != nil {
		t.Fatalf("SIGINT during the pause: %v\n%s", err, lw.log())
	}
	if m := metrics(t, mlog); m.TerminationReason != "signal" || m.DiskPauses != 1 {
		t.Errorf("metrics: %s, %d disk pauses; want signal, 1", m.TerminationReason, m.DiskPauses)
	}

	// Started short of space: paused from the start.
	asked = len(w.Requests())
	lw = startWeaver(t, dir, nil, args...)
	lw.waitLine(t, "Disk space low since", 30*time.Second)
	time.Sleep(2500 * time.Millisecond)
	if n := len(w.Requests()) - asked; n != 0 {
		t.Errorf("%d requests by a crawl started paused", n)
	}
	if err := os.Remove(filepath.Join(small, "ballast")); err != nil {
		t.Fatal(err)
	}
	lw.waitLine(t, "Disk space back after a pause of", 30*time.Second)
	if err := lw.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("the resumed crawl: %v\n%s", err, lw.log())
	}
	if m := metrics(t, mlog); m.TerminationReason != "queue_empty" || m.DiskPauses != 1 {
		t.Errorf("metrics: %s, %d disk pauses; want queue_empty, 1", m.TerminationReason, m.DiskPauses)
	}
	storetest.SameGraph(t, edges(t, db), w.ExpectedEdges(10, excluded))
}

// TestDiskFull_Job: weaver serve pauses a job whose directory fills, as a
// crawl pauses, instead of failing it: the job stays running with its
// progress saying why, and completes by itself once there is room, to
// the exact graph, its WARC files importing to the same.
func TestDiskFull_Job(t *testing.T) {
	t.Parallel() // it mostly waits
	w := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 41, Latency: 10 * time.Millisecond, RobotsDisallowEvery: -1})
	srv := startWeb(t, w)
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	os.Mkdir(small, 0o755)
	mountTmpfs(t, small, "64m")
	ballast(t, small, 600<<10)
	p := start(t, dir, "serve", "--listen", "127.0.0.1:0", "--dir", small, "--connect-to", srv.ConnectTo(), "--min-free-space", "0")
	a := jobAPI(t, p)
	var created serve.CreatedAnswer
	a.json("POST", "/crawl", fmt.Sprintf(`{"url": %q, "max_crawls_per_node": 1, "max_depth": 0, "politeness_delay_ms": 0, "retry_delay_ms": 10, "warc_dir": "warc"}`, w.Seed()), http.StatusCreated, &created)
	var j serve.JobAnswer
	p.poll(t, "the job to pause", func() bool {
		a.json("GET", "/crawl/"+created.JobID+"?graph=false", "", http.StatusOK, &j)
		if final(j.Job.Status) {
			t.Fatalf("the job ended on a full disk: %+v", j.Job)
		}
		return j.Job.Progress != nil && j.Job.Progress.Paused != nil
	})
	if pp := j.Job.Progress.Paused; j.Job.Status != serve.JobRunning || pp.Reason != "disk_full" || !strings.Contains(pp.Detail, "no space left on device") {
		t.Errorf("the paused job: %s, paused %+v", j.Job.Status, pp)
	}
	if err := os.Remove(filepath.Join(small, "ballast")); err != nil {
		t.Fatal(err)
	}
	p.poll(t, "the job to complete", func() bool {
		a.json("GET", "/crawl/"+created.JobID+"?graph=false", "", http.StatusOK, &j)
		return final(j.Job.Status)
	})
	if j.Job.Status != serve.JobCompleted || j.Job.Error != "" || j.Job.Metrics == nil || j.Job.Metrics.DiskPauses != 1 {
		t.Fatalf("the job after the pause: %s %q, metrics %+v", j.Job.Status, j.Job.Error, j.Job.Metrics)
	}
	db := filepath.Join(small, created.JobID+".bolt")
	crawled := edges(t, db)
	storetest.SameGraph(t, crawled, w.ExpectedEdges(10, excluded))
	fresh := filepath.Join(dir, "imported.bolt")
	if r := fixture(t, dir, "import", "--db", fresh, "--quiet", filepath.Join(small, "warc")); r.code != 0 {
		t.Fatalf("import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	storetest.SameGraph(t, edges(t, fresh), crawled)
}

func final(s serve.JobStatus) bool {
	return s == serve.JobCompleted || s == serve.JobStopped || s == serve.JobFailed
}

// TestDiskFull_OtherWriteError: a write that fails for another reason than
// a full disk (here a file grown past the process's limit, EFBIG) still
// ends the crawl: exit 1, one line naming it, the store whole. Resumed
// without the limit, the crawl ends with the exact graph, and its WARC
// files, records of the failed commit cut, import to the same.
func TestDiskFull_OtherWriteError(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 47, RobotsDisallowEvery: -1})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	warcs := filepath.Join(dir, "warcs")
	args := crawlArgs(srv, db, "--max-depth", "0", "--max-crawls-per-node", "1", "--warc", warcs, "--min-free-space", "0")
	// ulimit -f counts 512-byte blocks in dash, 1024-byte in bash: a file
	// of 512 KB or 1 MB at most, either way well short of the crawl's.
	r, _ := execute(t, 3*time.Minute, dir, "sh", append([]string{"-c", `ulimit -f 1024 && exec "$0" "$@"`, weaverBin}, append(args, w.Seed())...)...)
	if r.code != 1 || !strings.Contains(r.stderr, "file too large") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("exit %d, want 1 and one line naming the write that failed:\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "Disk full") {
		t.Errorf("a write that failed for another reason paused the crawl:\n%s", r.stdout)
	}
	if r := weaver(t, dir, "check", "--db", db); r.code != 0 {
		t.Fatalf("check after the failed write: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := weaver(t, dir, args...); r.code != 0 {
		t.Fatalf("resume: exit %d\n%s", r.code, r.stderr)
	}
	crawled := edges(t, db)
	storetest.SameGraph(t, crawled, w.ExpectedEdges(10, excluded))
	fresh := filepath.Join(dir, "imported.bolt")
	if r := fixture(t, dir, "import", "--db", fresh, "--quiet", warcs); r.code != 0 {
		t.Fatalf("import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	storetest.SameGraph(t, edges(t, fresh), crawled)
}
