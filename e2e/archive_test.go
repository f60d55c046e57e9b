package e2e_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// onceEachArgs are the limits every crawl of the archive tests uses: no
// depth limit, each host fetched once, so that the final graph is the web's
// ground truth whatever order, interruptions and resumptions it took.
var onceEachArgs = []string{"--max-depth", "0", "--max-crawls-per-node", "1"}

// onceEach returns onceEachArgs followed by extra, in a new slice.
func onceEach(extra ...string) []string { return append(slices.Clone(onceEachArgs), extra...) }

// frontierClaimAll leases up to five queued entries, as a crawl's workers
// would before being stopped.
func frontierClaimAll(tx *kv.Tx) (int, error) {
	l, err := frontier.Claim(tx, 5, 1000, time.Now(), func(*frontier.Entry) frontier.Verdict { return frontier.Take })
	return len(l), err
}

// weaverOK runs weaver and fails the test unless it exits 0.
func weaverOK(t *testing.T, dir string, args ...string) run {
	t.Helper()
	r := weaver(t, dir, args...)
	if r.code != 0 {
		t.Fatalf("weaver %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// boltPageSize reads the bbolt page size recorded in a store's first meta page.
func boltPageSize(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var hdr [28]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		t.Fatal(err)
	}
	return int(binary.LittleEndian.Uint32(hdr[24:]))
}

func copyStore(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// fetchedHosts returns how many nodes of the store were fetched.
func fetchedHosts(t *testing.T, db string) int {
	t.Helper()
	n := 0
	for _, nd := range nodes(t, db) {
		if nd.CrawlCount > 0 {
			n++
		}
	}
	return n
}

// TestSnapshot_IdleStore_ResumesElsewhere: a snapshot of a stopped crawl,
// moved to another directory (another machine: nothing in it names the
// first), resumes to the graph of an uninterrupted crawl.
func TestSnapshot_IdleStore_ResumesElsewhere(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 21})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "live.bolt")
	weaverOK(t, dir, crawlArgs(srv, db, onceEach("--max-pages", "60", w.Seed())...)...)

	r := weaverOK(t, dir, "snapshot", "--db", db, "backup.bolt")
	if !strings.Contains(r.stdout, "copied from the file") {
		t.Errorf("snapshot output: %s", r.stdout)
	}
	if r := weaverOK(t, dir, "check", "--db", "backup.bolt"); !strings.HasPrefix(r.stdout, "ok: ") {
		t.Errorf("check: %s", r.stdout)
	}
	elsewhere := t.TempDir()
	copyStore(t, filepath.Join(dir, "backup.bolt"), filepath.Join(elsewhere, "w.bolt"))
	os.RemoveAll(dir) // the original is gone: the copy must stand alone
	weaverOK(t, elsewhere, crawlArgs(srv, "w.bolt", onceEach()...)...)
	storetest.SameGraph(t, edges(t, filepath.Join(elsewhere, "w.bolt")), w.ExpectedEdges(10, excluded))
}

// TestSnapshot_RunningCrawl_API takes a snapshot of a store while a crawl
// writes it, through the API of that crawl: the crawler runs in this test
// process with a stand-in for the status API's GET /snapshot (one read
// transaction streamed with WriteTo, as package serve does), and the
// weaver binary, finding the store locked, asks the API for the copy.
// The copy passes weaver check and resumes to the uninterrupted graph.
func TestSnapshot_RunningCrawl_API(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 22, Latency: 20 * time.Millisecond})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "live.bolt")
	store := storetest.MustOpenPath(t, db, kv.Options{})
	cfg := crawl.Defaults()
	cfg.DBPath, cfg.MetricsPath, cfg.PolitenessDelayMS, cfg.RetryDelayMS = db, "", 0, 10
	cfg.MaxDepth, cfg.MaxCrawlsPerNode, cfg.Quiet = 0, 1, true
	cfg.ConnectTo = []string{srv.ConnectTo()}
	c, err := crawl.New(cfg, store, crawl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Prepare([]string{w.Seed()}); err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		store.View(func(tx *kv.Tx) error {
			rw.Header().Set("Content-Length", strconv.FormatInt(tx.Size(), 10))
			_, err := tx.WriteTo(rw)
			return err
		})
	}))
	defer api.Close()
	if err := os.WriteFile(db+".listen", []byte(strings.TrimPrefix(api.URL, "http://")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.Run(ctx)
		done <- err
	}()
	waitFetched(t, store, 30)

	r := weaverOK(t, dir, "snapshot", "--db", db, "hot.bolt")
	if !strings.Contains(r.stdout, "streamed by the running crawl at "+api.URL) {
		t.Errorf("snapshot output: %s", r.stdout)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	api.Close()
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	hot := filepath.Join(dir, "hot.bolt")
	if r := weaverOK(t, dir, "check", "--db", hot); !strings.HasPrefix(r.stdout, "ok: ") {
		t.Errorf("check: %s", r.stdout)
	}
	if got, all := fetchedHosts(t, hot), fetchedHosts(t, db); got >= all {
		t.Errorf("the snapshot holds %d crawled hosts of %d: not taken during the crawl", got, all)
	}
	weaverOK(t, dir, crawlArgs(srv, hot, onceEach()...)...)
	want := w.ExpectedEdges(10, excluded)
	storetest.SameGraph(t, edges(t, hot), want)
	storetest.SameGraph(t, edges(t, db), want)
}

// waitFetched waits until store records n crawled pages.
func waitFetched(t *testing.T, store *kv.Store, n uint64) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		var nodes uint64
		store.View(func(tx *kv.Tx) error {
			return graph.ForEachNode(tx, func(nd *graph.Node) error {
				if nd.CrawlCount > 0 {
					nodes++
				}
				return nil
			})
		})
		if nodes >= n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the crawl did not reach %d pages", n)
}

// TestSnapshot_RunningCrawl_Listen is the same through the real thing: a
// `weaver crawl --listen` process and its status API.
func TestSnapshot_RunningCrawl_Listen(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 23, Latency: 30 * time.Millisecond})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "live.bolt")
	cmd := exec.Command(weaverBin, crawlArgs(srv, db, onceEach("--listen", "127.0.0.1:0", w.Seed())...)...)
	cmd.Dir, cmd.Env = dir, cleanEnv()
	var out syncOutput
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }()
	defer func() {
		cmd.Process.Kill() // an error once the crawl has ended: nothing to do
		<-exited
	}()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(db + ".listen"); err == nil && len(w.Requests()) >= 60 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s.listen and %d requests after a minute:\n%s", db, len(w.Requests()), out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	r := weaverOK(t, dir, "snapshot", "--db", db, "hot.bolt")
	if !strings.Contains(r.stdout, "streamed by the running crawl") {
		t.Errorf("snapshot output: %s", r.stdout)
	}
	<-exited
	if waitErr != nil {
		t.Fatalf("crawl: %v\n%s", waitErr, out.String())
	}
	hot := filepath.Join(dir, "hot.bolt")
	if r := weaverOK(t, dir, "check", "--db", hot); !strings.HasPrefix(r.stdout, "ok: ") {
		t.Errorf("check: %s", r.stdout)
	}
	if got, all := fetchedHosts(t, hot), fetchedHosts(t, db); got >= all {
		t.Errorf("the snapshot holds %d crawled hosts of %d: not taken during the crawl", got, all)
	}
	checkPortableMeta(t, hot, dir)
	checkPortableMeta(t, db, dir)
	weaverOK(t, dir, crawlArgs(srv, hot, onceEach()...)...)
	storetest.SameGraph(t, edges(t, hot), w.ExpectedEdges(10, excluded))
}

// syncOutput is a bytes.Buffer a child process writes while the test
// may read it.
type syncOutput struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *syncOutput) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncOutput) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// checkPortableMeta: the store's meta holds only what any machine can
// use (weaver's own keys and counters: no absolute path, host name, PID or
// listen address), but for the machine paths of its settings
// (crawl.MachineKeys), and the file names the directory it was written in
// nowhere else. A new meta key fails this test on purpose: say here why it
// is not bound to the machine.
func checkPortableMeta(t *testing.T, db, dir string) {
	t.Helper()
	s, err := kv.Open(db, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	host, _ := os.Hostname()
	abs, _ := filepath.Abs(dir)
	var machine []json.RawMessage // the settings' machine paths, as the store holds them
	s.View(func(tx *kv.Tx) error {
		c := tx.Cursor(kv.BucketMeta)
		for k, v := c.First(); k != nil; k, v = c.Next() {
			key := string(k)
			switch {
			case key == "graph.mirror_index": // the mirror index is complete
			case strings.HasPrefix(key, "graph.") || strings.HasPrefix(key, "frontier."):
				if len(v) != 8 {
					t.Errorf("%s: counter %s is %d bytes", db, key, len(v))
				}
			case key == "magic" || key == "schema_version":
			case key == "created_at":
				if _, err := time.Parse(time.RFC3339Nano, string(v)); err != nil {
					t.Errorf("%s: created_at %q", db, v)
				}
			case key == "listen_addr" && len(v) == 0: // cleared when the crawl stops
			case key == "crawl.running": // a time while a crawl runs, else empty: after a crash, hosts wait a delay
				if _, err := time.Parse(time.RFC3339, string(v)); len(v) > 0 && err != nil {
					t.Errorf("%s: crawl.running %q", db, v)
				}
			case key == "crawl.reach_limits": // "max_depth max_subdomains_per_root" the excluded hosts were judged by
				var d, sub int
				if n, err := fmt.Sscanf(string(v), "%d %d", &d, &sub); n != 2 || err != nil {
					t.Errorf("%s: crawl.reach_limits %q", db, v)
				}
			case key == "warc.dir": // where --warc wrote the crawl's files
			case key == "warc.prefix": // the first part of their names: the crawl's or the store's name, no path
			case key == "crawl.settings": // the crawl's settings, JSON
				var set map[string]json.RawMessage
				if err := json.Unmarshal(v, &set); err != nil {
					t.Errorf("%s: crawl.settings is not JSON: %q", db, v)
				}
				// The machine's paths (metrics_path, warc_dir, ...) are
				// stored absolute, so that a resume from any directory
				// finds them; a resume on another machine is told of one
				// that is gone. No other setting names a path.
				for _, mk := range crawl.MachineKeys {
					if p := set[mk]; len(p) > 0 {
						machine = append(machine, p)
						delete(set, mk)
					}
				}
				v, _ = json.Marshal(set)
			default:
				t.Errorf("%s: meta %s = %q is not known to be portable", db, key, v)
			}
			if host != "" && len(v) != 8 && string(v) == host {
				t.Errorf("%s: meta %s holds the host name", db, key)
			}
			if bytes.Contains(v, []byte(abs)) || (len(v) != 8 && bytes.HasPrefix(v, []byte("/"))) {
				t.Errorf("%s: meta %s holds a path: %q", db, key, v)
			}
		}
		return nil
	})
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range machine {
		data = bytes.ReplaceAll(data, p, nil)
	}
	if bytes.Contains(data, []byte(abs)) {
		t.Errorf("%s names the directory %s (beside the machine paths of its settings)", db, abs)
	}
}

// TestPageSize_Portable: stores created with 4, 16 and 64 KiB pages (the
// defaults of x86 and most arm64 Linux, Apple silicon and some arm64
// kernels) are crawled, resumed and checked by this machine's weaver.
//
// bbolt takes the page size of an existing file from its meta page, and the
// OS page size only from os.Getpagesize when it creates a file; it maps the
// file from offset 0, which is aligned on any machine. So a 16 KiB store
// resumed here is exactly "made on a Mac, resumed on a 4 KiB Pi"; and
// "made here, resumed on a 16 KiB machine" runs the same code with the
// OS page size out of the picture, which the last case shows by opening a
// 4 KiB store with Options.PageSize 16384 (what a 16 KiB machine would
// ask for a new file) and crawling on with it.
func TestPageSize_Portable(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 200, Seed: 24})
	srv := startWeb(t, w)
	want := w.ExpectedEdges(10, excluded)
	for _, ps := range []int{4096, 16384, 65536} {
		t.Run(strconv.Itoa(ps), func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "w.bolt")
			s, err := kv.Open(db, kv.Options{PageSize: ps})
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			weaverOK(t, dir, crawlArgs(srv, db, onceEach("--max-pages", "50", w.Seed())...)...)
			if got := boltPageSize(t, db); got != ps {
				t.Fatalf("page size after a crawl here: %d, want %d", got, ps)
			}
			if ps == 4096 {
				resumeInProcess(t, srv, db, kv.Options{PageSize: 16384})
			} else {
				weaverOK(t, dir, crawlArgs(srv, db, onceEach()...)...)
			}
			if got := boltPageSize(t, db); got != ps {
				t.Errorf("page size after resuming: %d, want %d", got, ps)
			}
			weaverOK(t, dir, "check", "--db", db)
			storetest.SameGraph(t, edges(t, db), want)
		})
	}
}

// resumeInProcess finishes the crawl of db in this process, opening the
// store with opts.
func resumeInProcess(t *testing.T, srv *fakeweb.Server, db string, opts kv.Options) {
	t.Helper()
	s, err := kv.Open(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cfg := crawl.Defaults()
	cfg.DBPath, cfg.MetricsPath, cfg.PolitenessDelayMS, cfg.RetryDelayMS = db, "", 0, 10
	cfg.MaxDepth, cfg.MaxCrawlsPerNode, cfg.Quiet = 0, 1, true
	cfg.ConnectTo = []string{srv.ConnectTo()}
	c, err := crawl.New(cfg, s, crawl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Prepare(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshot_LeasesReclaimed: leases in a store (a crawl on another
// machine was stopped between claiming hosts and committing their pages)
// go back to the queue when the store is resumed here, and nothing is lost.
func TestSnapshot_LeasesReclaimed(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 150, Seed: 25})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	weaverOK(t, dir, crawlArgs(srv, db, onceEach("--max-pages", "30", w.Seed())...)...)
	s, err := kv.Open(db, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var leased int
	err = s.Update(func(tx *kv.Tx) error {
		l, err := frontierClaimAll(tx)
		leased = l
		return err
	})
	s.Close()
	if err != nil || leased == 0 {
		t.Fatalf("leasing: %d leases, %v", leased, err)
	}
	r := weaverOK(t, dir, crawlArgs(srv, db, onceEach()...)...)
	if !strings.Contains(r.stdout, "Recovered "+strconv.Itoa(leased)+" in-flight entries") {
		t.Errorf("resume did not report %d recovered leases:\n%s", leased, r.stdout)
	}
	storetest.SameGraph(t, edges(t, db), w.ExpectedEdges(10, excluded))
}

// TestMerge_OverlappingHalves merges two crawls of halves of a fake web
// and compares the result with the crawl of the whole.
//
// The halves: a first crawl of the whole web (max_crawls_per_node 1, no
// depth limit) says which hosts a crawl fetches (or tries: robots.txt
// disallows some). Those hosts are split by the parity of their rank in
// name order, and each half is a fresh crawl seeded with its hosts only and
// --max-pages set to their number: depth-0 entries are always claimed
// before deeper ones, so a half fetches exactly its seeds and stops. Each
// half still records every link of its pages, so it discovers hosts of the
// other half, and queues them: the halves overlap in nodes, edges' targets
// and frontiers, never in fetches. Merged, every host has been fetched
// once, as in the whole crawl, and every edge comes from one fetch. (--exclude-host
// would not do: an excluded host is dropped from link selection, so the
// edges into the other half would be lost.)
func TestMerge_OverlappingHalves(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 200, Seed: 26})
	srv := startWeb(t, w)
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.bolt")
	weaverOK(t, dir, crawlArgs(srv, whole, onceEach(w.Seed())...)...)
	wholeNodes := nodes(t, whole)

	var tried []string
	for h, n := range wholeNodes {
		if n.Status != graph.StatusDiscovered && n.Status != graph.StatusExcludedByLimit {
			tried = append(tried, h)
		}
	}
	slices.Sort(tried)
	var halves [2][]string
	seedHost, _ := strings.CutPrefix(w.Seed(), "http://")
	seedHost = strings.TrimSuffix(seedHost, "/")
	for i, h := range tried {
		u := wholeNodes[h].Scheme + "://" + h + "/"
		if h == seedHost {
			u = w.Seed()
		}
		halves[i%2] = append(halves[i%2], u)
	}
	parts := []string{filepath.Join(dir, "a.bolt"), filepath.Join(dir, "b.bolt")}
	for i, seeds := range halves {
		args := append(onceEach("--max-pages", strconv.Itoa(len(seeds))), seeds...)
		weaverOK(t, dir, crawlArgs(srv, parts[i], args...)...)
		if got := fetchedHosts(t, parts[i]); got == 0 || got > len(seeds) {
			t.Fatalf("half %d fetched %d hosts, seeded with %d", i, got, len(seeds))
		}
	}
	merged := filepath.Join(dir, "merged.bolt")
	r := weaverOK(t, dir, "merge", "-o", merged, parts[0], parts[1])
	t.Log(strings.TrimSpace(r.stdout))
	weaverOK(t, dir, "check", "--db", merged)

	storetest.SameGraph(t, edges(t, merged), edges(t, whole))
	got := nodes(t, merged)
	if len(got) != len(wholeNodes) {
		t.Errorf("nodes: got %d, want %d", len(got), len(wholeNodes))
	}
	for h, want := range wholeNodes {
		n, ok := got[h]
		switch {
		case !ok:
			t.Errorf("%s missing from the merge", h)
		case n.CrawlCount != want.CrawlCount || n.Status != want.Status || n.Title != want.Title:
			t.Errorf("%s: crawl count %d status %s title %q; whole crawl: %d %s %q",
				h, n.CrawlCount, n.Status, n.Title, want.CrawlCount, want.Status, want.Title)
		}
	}

	// Same inputs, byte-identical export (but for its time stamp).
	again := filepath.Join(dir, "again.bolt")
	weaverOK(t, dir, "merge", "-o", again, parts[0], parts[1])
	stamp := regexp.MustCompile(`"exported_at": ?"[^"]*"`)
	var exports [][]byte
	for _, db := range []string{merged, again} {
		r := weaverOK(t, dir, "export", "--db", db, "--json", "-")
		exports = append(exports, stamp.ReplaceAll([]byte(r.stdout), nil))
	}
	if len(exports[0]) == 0 || !bytes.Equal(exports[0], exports[1]) {
		t.Error("two merges of the same stores export differently")
	}
}

// TestDiff_LaterCrawl compares a crawl with its own later extension: the
// diff lists exactly the edges the extension added, and nothing vanished
// or changed weight (every host is fetched once, so an edge, once
// recorded, keeps its weight).
func TestDiff_LaterCrawl(t *testing.T) {
	t.Parallel()
	w := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 27})
	srv := startWeb(t, w)
	dir := t.TempDir()
	old := filepath.Join(dir, "march.bolt")
	weaverOK(t, dir, crawlArgs(srv, old, "--max-depth", "1", "--max-crawls-per-node", "1", w.Seed())...)
	later := filepath.Join(dir, "april.bolt")
	weaverOK(t, dir, "snapshot", "--db", old, later)
	weaverOK(t, dir, crawlArgs(srv, later, "--max-depth", "2", "--max-crawls-per-node", "1", w.Seed())...)

	if r := weaverOK(t, dir, "diff", old, old); r.stdout != "no differences (host level)\n" {
		t.Errorf("diff of a store with itself:\n%s", r.stdout)
	}
	if r := weaverOK(t, dir, "diff", "--domains", "--exit-code", later, later); r.stdout != "no differences (domain level)\n" {
		t.Errorf("domain diff of a store with itself:\n%s", r.stdout)
	}
	r := weaverOK(t, dir, "diff", old, later, "--json")
	var rep struct {
		Added        []string
		Removed      []string
		EdgesAdded   []struct{ From, To string } `json:"edges_added"`
		EdgesRemoved []json.RawMessage           `json:"edges_removed"`
		EdgesChanged []json.RawMessage           `json:"edges_changed"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	before, after := edges(t, old), edges(t, later)
	want := map[[2]string]bool{}
	for k := range after {
		if _, ok := before[k]; !ok {
			want[k] = true
		}
	}
	got := map[[2]string]bool{}
	for _, e := range rep.EdgesAdded {
		got[[2]string{e.From, e.To}] = true
	}
	if len(want) == 0 || len(got) != len(rep.EdgesAdded) || !sameEdgeSet(got, want) {
		t.Errorf("edges added: got %d, want %d", len(got), len(want))
	}
	if len(rep.EdgesRemoved) != 0 || len(rep.EdgesChanged) != 0 || len(rep.Removed) != 0 {
		t.Errorf("removed or changed: %s", r.stdout)
	}
	oldNodes, newNodes := nodes(t, old), nodes(t, later)
	if len(rep.Added) != len(newNodes)-len(oldNodes) {
		t.Errorf("hosts added: got %d, want %d", len(rep.Added), len(newNodes)-len(oldNodes))
	}
	if r := weaver(t, dir, "diff", "--exit-code", old, later); r.code != 1 || !strings.Contains(r.stdout, "+ edge ") {
		t.Errorf("--exit-code: exit %d\n%s", r.code, r.stdout)
	}
}

func sameEdgeSet(a, b map[[2]string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}
