package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/internal/tooltest"
	"github.com/weaver-crawler/weaver/warc"
)

// importWeb is a fake web whose every host serves its home page (no
// robots.txt disallows), so that fetching every home page once is the
// crawl ExpectedEdges models.
func importWeb(hosts int, seed int64) *fakeweb.Web {
	return fakeweb.New(fakeweb.Config{Hosts: hosts, Seed: seed, RobotsDisallowEvery: -1, CrawlDelayEvery: -1})
}

// homeURLs are the home pages of every host of w.
func homeURLs(w *fakeweb.Web) []string {
	var out []string
	for _, h := range w.Hosts() {
		out = append(out, "http://"+h+"/")
	}
	return out
}

// TestImport_Wget_GroundTruth: wget (Debian's, --warc-file) fetches every
// home page of a fake web through it as a proxy, and /about and /contact
// of each host, before or after its home page; importing its WARC/1.0
// file (angle-bracketed target URIs, a log resource record) gives the
// graph computed from the web's definition, and each host the facts of
// its home page: its title, and one crawl.
func TestImport_Wget_GroundTruth(t *testing.T) {
	t.Parallel()
	wget, err := exec.LookPath("wget")
	if err != nil {
		tooltest.Missing(t, "wget is missing (apt-get install wget)")
	}
	w := importWeb(300, 11)
	srv := startWeb(t, w)
	dir := t.TempDir()
	list := filepath.Join(dir, "urls.txt")
	var urls []string
	for i, u := range homeURLs(w) {
		// The small pages link only to their own host's home page: they
		// add no edge. Half the hosts have one before their home page.
		if i%2 == 0 {
			urls = append(urls, u+"about", u, u+"contact")
		} else {
			urls = append(urls, u, u+"about", u+"contact")
		}
	}
	if err := os.WriteFile(list, []byte(strings.Join(urls, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, _ := execute(t, 3*time.Minute, dir, wget, "-q", "--warc-file=wget", "-e", "robots=off", "-e", "use_proxy=yes",
		"-e", "http_proxy="+srv.Addr(), "--delete-after", "-i", list)
	if r.code != 0 {
		t.Fatalf("wget: exit %d\n%s", r.code, r.stderr)
	}
	db := filepath.Join(dir, "w.bolt")
	r = weaver(t, dir, "import", "--db", db, filepath.Join(dir, "wget.warc.gz"))
	if r.code != 0 {
		t.Fatalf("import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	t.Log(strings.TrimSpace(r.stdout))
	storetest.SameGraph(t, edges(t, db), w.ExpectedEdges(10, fakeweb.DefaultExcluded))
	ns := nodes(t, db)
	for _, h := range w.Hosts() {
		n := ns[h]
		if n.Status != graph.StatusCrawled || n.CrawlCount != 1 || n.HTTPStatus != 200 || n.Title == "" || n.Server != "fakeweb" || len(n.ContentHash) != 64 {
			t.Errorf("%s: got %+v", h, n)
			break
		}
		if strings.Contains(n.Title, "/about") || strings.Contains(n.Title, "/contact") {
			t.Errorf("%s: the title %q is not its home page's", h, n.Title)
			break
		}
	}
	if !strings.Contains(r.stdout, fmt.Sprintf("%d pages", 3*len(w.Hosts()))) || !strings.Contains(r.stdout, fmt.Sprintf("%d requests", 3*len(w.Hosts()))) {
		t.Errorf("summary: %s", r.stdout)
	}
}

// writeWebWARC fetches every home page of w through srv and writes each
// exchange with weaver's writer into dir: every third again as a revisit,
// every seventh marked truncated. It returns each exchange's Written.
func writeWebWARC(t testing.TB, w *fakeweb.Web, srv *fakeweb.Server, dir string, maxSize int64) []warc.Written {
	t.Helper()
	wr, rec, err := warc.Open(warc.Options{Dir: dir, Prefix: "e2e", MaxSize: maxSize, Software: "weaver e2e",
		Settings: map[string]string{"max_outbound_links": "10"}, Robots: "ignore"})
	if err != nil || len(rec) != 0 {
		t.Fatalf("open: %v %v", rec, err)
	}
	client := srv.Client()
	var out []warc.Written
	for i, u := range homeURLs(w) {
		ex := fetchExchange(t, client, u)
		ex.Truncated = i%7 == 3
		got, err := wr.WriteExchange(context.Background(), ex)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, got)
		if i%3 == 0 {
			ex.Revisit = &warc.Original{URL: u, Date: ex.Date, RecordID: got.ResponseID}
			ex.Date = ex.Date.Add(time.Minute)
			if _, err := wr.WriteExchange(context.Background(), ex); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := wr.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// fetchExchange GETs u and returns the exchange as raw bytes.
func fetchExchange(t testing.TB, client *http.Client, u string) warc.Exchange {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("User-Agent", "weaver-e2e")
	rawReq, err := httputil.DumpRequestOut(req, false)
	if err != nil {
		t.Fatal(err)
	}
	date := time.Now().UTC()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rawResp, err := httputil.DumpResponse(resp, true)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return warc.Exchange{URL: u, Request: rawReq, Response: rawResp, RemoteIP: "127.0.0.1", Date: date}
}

// warcioCheck runs e2e/testdata/warcio/check.mjs (warcio.js, installed
// with npm into the user's cache on first use) on files, and returns its
// per-file reports.
func warcioCheck(t *testing.T, files []string) []warcioReport {
	t.Helper()
	node, err := exec.LookPath("node")
	npm, nerr := exec.LookPath("npm")
	if err != nil || nerr != nil {
		tooltest.Missing(t, "node and npm are needed to check WARC files with warcio.js")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	mod := filepath.Join(cache, "weaver-e2e-warcio")
	src, _ := filepath.Abs("testdata/warcio")
	for _, f := range []string{"package.json", "check.mjs"} {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(mod, 0o755)
		if err := os.WriteFile(filepath.Join(mod, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(mod, "node_modules", "warcio", "package.json")); err != nil {
		r, _ := execute(t, 5*time.Minute, mod, npm, "install", "--no-audit", "--no-fund", "--silent")
		if r.code != 0 {
			tooltest.Missing(t, "npm install warcio: exit %d\n%s", r.code, r.stderr)
		}
	}
	r, _ := execute(t, 5*time.Minute, mod, node, append([]string{"check.mjs"}, files...)...)
	var out []warcioReport
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var rep warcioReport
		if err := json.Unmarshal(sc.Bytes(), &rep); err != nil {
			t.Fatalf("warcio check: %v in %q", err, sc.Text())
		}
		out = append(out, rep)
	}
	if len(out) != len(files) {
		t.Fatalf("warcio check: exit %d, %d reports for %d files\n%s%s", r.code, len(out), len(files), r.stdout, r.stderr)
	}
	return out
}

type warcioReport struct {
	File    string         `json:"file"`
	Records int            `json:"records"`
	Types   map[string]int `json:"types"`
	Digests int            `json:"digests"`
	Errors  []string       `json:"errors"`
	// Of response records: their WARC-Protocol fields joined by spaces
	// → count, how many name a cipher suite, how many are of an https URI.
	Protocols map[string]int `json:"protocols"`
	Ciphers   int            `json:"ciphers"`
	HTTPS     int            `json:"https"`
}

// TestImport_WriterFiles_Warcio: weaver's writer's files (rotated, with
// revisits and truncated responses) pass warcio.js with every block and
// payload digest recomputed, and import to the web's graph.
func TestImport_WriterFiles_Warcio(t *testing.T) {
	t.Parallel()
	w := importWeb(200, 5)
	srv := startWeb(t, w)
	dir := t.TempDir()
	warcs := filepath.Join(dir, "warcs")
	writeWebWARC(t, w, srv, warcs, 1<<20)
	files, _ := filepath.Glob(filepath.Join(warcs, "e2e-*.warc.gz"))
	if len(files) < 2 {
		t.Fatalf("want several files at 1 MiB each, got %v", files)
	}
	types := map[string]int{}
	digests := 0
	for _, rep := range warcioCheck(t, files) {
		for _, e := range rep.Errors {
			t.Errorf("%s: %s", filepath.Base(rep.File), e)
		}
		if rep.Types["warcinfo"] != 1 {
			t.Errorf("%s: %d warcinfo records", filepath.Base(rep.File), rep.Types["warcinfo"])
		}
		for k, v := range rep.Types {
			types[k] += v
		}
		digests += rep.Digests
	}
	n := len(w.Hosts())
	revisits := (n + 2) / 3
	if types["response"] != n || types["revisit"] != revisits || types["request"] != n+revisits {
		t.Errorf("record types %v, want %d responses, %d revisits", types, n, revisits)
	}
	// Every record has a block digest; requests and responses a payload digest.
	if want := len(files) + (n+revisits)*2 + n + n + revisits; digests != want {
		t.Errorf("%d digests checked, want %d", digests, want)
	}

	db := filepath.Join(dir, "w.bolt")
	r := weaver(t, dir, "import", "--db", db, warcs)
	if r.code != 0 {
		t.Fatalf("import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	storetest.SameGraph(t, edges(t, db), w.ExpectedEdges(10, fakeweb.DefaultExcluded))
	// Importing again counts nothing twice.
	r = weaver(t, dir, "import", "--db", db, warcs)
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("%d already imported", len(files))) {
		t.Fatalf("second import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	storetest.SameGraph(t, edges(t, db), w.ExpectedEdges(10, fakeweb.DefaultExcluded))
}

// TestImport_Damaged: a file cut in the middle of a record, and one with
// a byte of a gzip member flipped, give the pages before the damage, one
// line naming the file and the damaged record's offset, and exit 1.
func TestImport_Damaged(t *testing.T) {
	t.Parallel()
	w := importWeb(40, 9)
	srv := startWeb(t, w)
	dir := t.TempDir()
	written := writeWebWARC(t, w, srv, filepath.Join(dir, "src"), 1<<30)
	files, _ := filepath.Glob(filepath.Join(dir, "src", "e2e-*.warc.gz"))
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	const k = 25 // the exchange damaged; its request comes first
	at := written[k].Offset
	flipped := append([]byte(nil), data...)
	flipped[at+written[k].Bytes-200] ^= 0x55 // inside the response's deflate stream
	for name, content := range map[string][]byte{"cut.warc.gz": data[:at+written[k].Bytes/2], "flipped.warc.gz": flipped} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		db := filepath.Join(dir, name+".bolt")
		r := weaver(t, dir, "import", "--db", db, path)
		if r.code != 1 {
			t.Errorf("%s: exit %d, want 1\n%s%s", name, r.code, r.stdout, r.stderr)
		}
		// The request of exchange k is whole; its response is not.
		respAt := -1
		for _, line := range strings.Split(r.stderr, "\n") {
			if strings.Contains(line, path+": damaged at offset ") {
				fmt.Sscanf(line[strings.Index(line, "offset ")+len("offset "):], "%d", &respAt)
			}
		}
		if respAt <= int(at) || respAt >= int(at+written[k].Bytes) {
			t.Errorf("%s: no damage line inside exchange %d's records (%d+%d):\n%s", name, k, at, written[k].Bytes, r.stderr)
		}
		crawled := 0
		for _, n := range nodes(t, db) {
			if n.Status == graph.StatusCrawled {
				crawled++
			}
		}
		if crawled != k {
			t.Errorf("%s: %d pages imported, want the %d before the damage", name, crawled, k)
		}
		edges(t, db) // the store's invariants hold
	}
}

// TestImport_KilledResumes: an import SIGKILLed part-way and run again
// gives the same graph, weights and crawl counts as one uninterrupted run.
func TestImport_KilledResumes(t *testing.T) {
	t.Parallel()
	// 500 hosts in files of 2 MiB: three files, so the kill lands in the
	// middle of one and the resume crosses into the next.
	w := importWeb(500, 21)
	srv := startWeb(t, w)
	dir := t.TempDir()
	warcs := filepath.Join(dir, "warcs")
	writeWebWARC(t, w, srv, warcs, 2<<20)

	// The uninterrupted import is the reference: the binary without the
	// race detector builds it (the killed and resumed runs have it).
	whole := filepath.Join(dir, "whole.bolt")
	if r := fixture(t, dir, "import", "--db", whole, "--quiet", warcs); r.code != 0 {
		t.Fatalf("import: exit %d\n%s", r.code, r.stderr)
	}

	db := filepath.Join(dir, "killed.bolt")
	cmd := exec.Command(weaverBin, "import", "--db", db, "--batch", "50", "--progress", "20ms", warcs)
	cmd.Dir, cmd.Env = dir, cleanEnv()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it in the middle of a file once it has read 200 records (four
	// batches of 50: on a slow machine the second progress line may come
	// before the first commit).
	sc := bufio.NewScanner(stderr)
	lines := 0
	for sc.Scan() {
		var n int
		if i := strings.Index(sc.Text(), "| records "); i >= 0 && strings.Contains(sc.Text(), " at ") {
			fmt.Sscan(sc.Text()[i+len("| records "):], &n)
		}
		if n >= 200 {
			if lines++; lines == 2 {
				cmd.Process.Signal(syscall.SIGKILL)
				break
			}
		}
	}
	go io.Copy(io.Discard, stderr)
	err := cmd.Wait()
	if lines < 2 {
		t.Fatalf("the import ended (%v) before it could be killed", err)
	}
	r := weaver(t, dir, "import", "--db", db, warcs)
	if r.code != 0 || !strings.Contains(r.stderr, "resuming at offset") {
		t.Fatalf("resume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	storetest.SameGraph(t, edges(t, db), edges(t, whole))
	a, b := nodes(t, db), nodes(t, whole)
	if len(a) != len(b) {
		t.Fatalf("%d nodes after the resume, %d in one run", len(a), len(b))
	}
	for h, n := range b {
		if m := a[h]; m.CrawlCount != n.CrawlCount || m.Status != n.Status || m.Title != n.Title {
			t.Errorf("%s: resumed %+v\none run %+v", h, m, n)
			break
		}
	}
	var buf bytes.Buffer
	fmt.Fprint(&buf, r.stdout)
	t.Log(strings.TrimSpace(buf.String()))
}
