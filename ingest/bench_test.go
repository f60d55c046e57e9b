package ingest_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/ingest"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/warc"
)

// benchPages is how many pages the import benchmark's WARC holds:
// WEAVER_BENCH_PAGES, default 100,000.
func benchPages() int { return envInt("WEAVER_BENCH_PAGES", 100_000) }

// benchLinks is how many links a page of the WAT benchmark lists:
// WEAVER_BENCH_LINKS, default 60 (one in six to its own host).
func benchLinks() int { return envInt("WEAVER_BENCH_LINKS", 60) }

// benchHosts is how many hosts the WAT benchmark's pages link to:
// WEAVER_BENCH_HOSTS, default a tenth of the pages (each host then has
// ten pages); more hosts than pages make a web still being discovered.
func benchHosts() int { return envInt("WEAVER_BENCH_HOSTS", benchPages()/10) }

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// benchFilesDir is where the benchmarks write their generated files:
// WEAVER_BENCH_DIR, kept (and reused when its file is there) so that a
// whole-process run of weaver import can read the same files, else a
// temporary directory removed at the end.
func benchFilesDir(kind string) (dir string, keep bool, err error) {
	if d := os.Getenv("WEAVER_BENCH_DIR"); d != "" {
		dir = filepath.Join(d, kind)
		return dir, true, os.MkdirAll(dir, 0o755)
	}
	dir, err = os.MkdirTemp("", "weaver-import-bench-"+kind+"-")
	return dir, false, err
}

// pageExchange is page i of a generated web of hosts hosts: about 8 KB of
// HTML with 30 links, 25 of them to other hosts drawn at random.
func pageExchange(rng *rand.Rand, i, hosts int) warc.Exchange {
	host := fmt.Sprintf("www.host-%d.example", i%hosts)
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html><html><head><title>Page %d of %s</title><meta name=description content=\"A page about %d things\"></head><body><nav>", i, host, i)
	for j := range 30 {
		if j%6 == 5 {
			fmt.Fprintf(&b, "<a href=\"/p/%d\">same host %d</a> ", j, j)
			continue
		}
		fmt.Fprintf(&b, "<a href=\"https://www.host-%d.example/\">host %d</a> ", rng.Intn(hosts), j)
	}
	b.WriteString("</nav><article>")
	for b.Len() < 8000 {
		fmt.Fprintf(&b, "<p>Paragraph %d of ordinary prose, words words words.</p>\n", rng.Intn(1e6))
	}
	b.WriteString("</article></body></html>")
	body := b.String()
	return warc.Exchange{
		URL:      "http://" + host + "/",
		Request:  []byte("GET / HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: weaver-bench\r\n\r\n"),
		Response: []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nServer: bench\r\nContent-Length: %d\r\n\r\n%s", len(body), body)),
		RemoteIP: "192.0.2.7",
		Date:     time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second),
	}
}

var (
	benchOnce sync.Once
	benchDir  string
	benchKeep bool
	benchErr  error
)

// benchWARC writes benchPages() pages once per test binary run, with the
// writer, four goroutines at a time.
func benchWARC(b *testing.B) string {
	benchOnce.Do(func() {
		benchDir, benchKeep, benchErr = benchFilesDir(fmt.Sprintf("warc-%d", benchPages()))
		if benchErr != nil {
			return
		}
		if files, _ := ingest.Files([]string{benchDir}); len(files) > 0 {
			return
		}
		w, _, err := warc.Open(warc.Options{Dir: benchDir, Prefix: "bench", NoSync: true})
		if err != nil {
			benchErr = err
			return
		}
		n, hosts := benchPages(), benchPages()/10
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewSource(int64(g)))
				for i := g; i < n; i += 4 {
					if _, err := w.WriteExchange(context.Background(), pageExchange(rng, i, hosts)); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		benchErr = <-errs
		if err := w.Close(); benchErr == nil {
			benchErr = err
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDir
}

// BenchmarkImport imports a WARC of WEAVER_BENCH_PAGES generated pages
// (default 100,000: two records each) into a fresh store, with one parser
// and with one per CPU, and reports records/s and MB/s of compressed input
// over wall time, and the process's CPU (user+sys) per page: on a shared
// machine the steadier figure.
//
//	go test ./ingest -run '^$' -bench Import -benchtime 1x
func BenchmarkImport(b *testing.B) {
	benchImport(b, benchWARC(b), ingest.Defaults().MaxOutboundLinks)
}

// BenchmarkImportEvery is BenchmarkImport keeping every link
// (--max-outbound-links 0): each page is tokenized to its end, as the
// floor (internal/tools/importfloor) tokenizes it.
func BenchmarkImportEvery(b *testing.B) {
	benchImport(b, benchWARC(b), 0)
}

// BenchmarkImportWAT is BenchmarkImport on the same pages as a Common
// Crawl WAT file: per page a request and a response metadata record, the
// response's JSON envelope holding the page's title, description and
// links (WEAVER_BENCH_LINKS, 60 by default), as Common Crawl writes them;
// every link is kept (--max-outbound-links 0), as a host graph of Common
// Crawl keeps them. WEAVER_BENCH_DIR keeps the generated file for whole-
// process runs of weaver import:
//
//	go test ./ingest -run '^$' -bench ImportWAT -benchtime 1x
//	WEAVER_BENCH_DIR=/tmp/wb WEAVER_BENCH_PAGES=10000 go test ./ingest -run '^$' -bench 'ImportWAT$/none' -benchtime 1x
func BenchmarkImportWAT(b *testing.B) {
	benchImport(b, benchWAT(b), 0)
}

// BenchmarkImportWAT_Discovering is BenchmarkImportWAT on the first WAT
// files of a crawl, a web still being discovered (issue 54): 10,000 pages
// of 100,000 hosts, 48 links a page (40 to other hosts), so that about
// five hosts a record are new. make bench reports its records per
// CPU-second and CPU / wall.
//
//	go test ./ingest -run '^$' -bench 'ImportWAT_Discovering' -benchtime 3x
func BenchmarkImportWAT_Discovering(b *testing.B) {
	benchImport(b, benchWATOf(b, 10_000, 100_000, 48), 0)
}

func benchImport(b *testing.B, dir string, maxLinks int) {
	files, err := ingest.Files([]string{dir})
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, f := range files {
		fi, _ := os.Stat(f)
		size += fi.Size()
	}
	for _, workers := range []int{1, 0} {
		name := "workers=1"
		if workers == 0 {
			name = fmt.Sprintf("workers=%d", runtime.GOMAXPROCS(0))
		}
		b.Run(name, func(b *testing.B) {
			var records, pages int64
			var cpu time.Duration
			for range b.N {
				b.StopTimer()
				db := filepath.Join(b.TempDir(), "bench.bolt")
				store, err := kv.Open(db, kv.Options{MapAhead: ingest.MapAhead})
				if err != nil {
					b.Fatal(err)
				}
				opts := ingest.Defaults()
				opts.Workers = workers
				opts.MaxOutboundLinks = maxLinks
				c0 := cpuTime()
				b.StartTimer()
				st, err := ingest.Run(context.Background(), store, files, opts)
				if err != nil {
					b.Fatal(err)
				}
				if st.Pages == 0 || st.FilesDamaged > 0 {
					b.Fatalf("imported %d pages, %d files damaged", st.Pages, st.FilesDamaged)
				}
				records += st.Records
				pages += st.Pages
				b.StopTimer()
				cpu += cpuTime() - c0
				store.Close()
				b.StartTimer()
			}
			secs := b.Elapsed().Seconds()
			b.ReportMetric(float64(records)/secs, "records/s")
			b.ReportMetric(float64(size)*float64(b.N)/1e6/secs, "MB/s")
			b.ReportMetric(float64(size)/1e6, "file-MB")
			b.ReportMetric(float64(cpu.Microseconds())/float64(pages), "CPU-µs/page")
			b.ReportMetric(float64(records)/cpu.Seconds(), "records/CPU-s")
			b.ReportMetric(cpu.Seconds()/secs, "CPU/wall")
		})
	}
}

// watFile is a generated WAT file's directory, once per test binary run
// and set of parameters.
type watFile struct {
	once sync.Once
	dir  string
	keep bool
	err  error
}

var (
	watMu    sync.Mutex
	watFiles = map[[3]int]*watFile{}
)

// watDoc is page i of pageExchange's web as the JSON of a WAT response
// record listing links links.
func watDoc(rng *rand.Rand, i, hosts, links int) string {
	host := fmt.Sprintf("www.host-%d.example", i%hosts)
	var list strings.Builder
	for j := range links {
		if j > 0 {
			list.WriteString(",")
		}
		if j%6 == 5 {
			fmt.Fprintf(&list, `{"path":"A@/href","url":"/p/%d","text":"same host %d"}`, j, j)
			continue
		}
		fmt.Fprintf(&list, `{"path":"A@/href","url":"https://www.host-%d.example/","text":"host %d"}`, rng.Intn(hosts), j)
	}
	date := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second).Format(time.RFC3339)
	return `{"Container":{"Filename":"CC-MAIN-bench.warc.gz","Compressed":true,"Offset":"` + strconv.Itoa(i*9000) + `",` +
		`"Gzip-Metadata":{"Deflate-Length":"3000","Header-Length":"10","Footer-Length":"8","Inflated-Length":"8400"}},` +
		`"Envelope":{"Format":"WARC","WARC-Header-Length":"480","Block-Digest":"sha1:AAAA",` +
		`"WARC-Header-Metadata":{"WARC-Type":"response","WARC-Date":"` + date + `","WARC-Target-URI":"http://` + host + `/","WARC-IP-Address":"192.0.2.7","Content-Length":"8400"},` +
		`"Payload-Metadata":{"Actual-Content-Type":"application/http; msgtype=response",` +
		`"HTTP-Response-Metadata":{"Response-Message":{"Version":"HTTP/1.1","Status":"200","Reason":"OK"},` +
		`"Headers":{"Content-Type":"text/html; charset=utf-8","Server":"bench","Content-Length":"8200"},"Headers-Length":"120","Entity-Length":"8200",` +
		`"HTML-Metadata":{"Head":{"Title":"Page ` + strconv.Itoa(i) + ` of ` + host + `","Metas":[{"name":"description","content":"A page about ` + strconv.Itoa(i) + ` things"}]},` +
		`"Links":[` + list.String() + `]}}}}}`
}

// benchWAT writes benchPages() pages as a WAT file once per test binary
// run: a request and a response metadata record a page, benchLinks()
// links a response, to benchHosts() hosts.
func benchWAT(b *testing.B) string { return benchWATOf(b, benchPages(), benchHosts(), benchLinks()) }

// benchWATOf is benchWAT for n pages of hosts hosts, links links a page.
func benchWATOf(b *testing.B, n, hosts, links int) string {
	watMu.Lock()
	w := watFiles[[3]int{n, hosts, links}]
	if w == nil {
		w = new(watFile)
		watFiles[[3]int{n, hosts, links}] = w
	}
	watMu.Unlock()
	w.once.Do(func() {
		w.dir, w.keep, w.err = benchFilesDir(fmt.Sprintf("wat-%d-%d-%d", 2*n, links, hosts))
		if w.err != nil {
			return
		}
		path := filepath.Join(w.dir, "CC-MAIN-bench.warc.wat.gz")
		if _, err := os.Stat(path); err == nil {
			return
		}
		rng := rand.New(rand.NewSource(1))
		var docs []string
		for i := range n {
			host := fmt.Sprintf("www.host-%d.example", i%hosts)
			docs = append(docs,
				`{"Envelope":{"Format":"WARC","WARC-Header-Metadata":{"WARC-Type":"request","WARC-Target-URI":"http://`+host+`/"}}}`,
				watDoc(rng, i, hosts, links))
		}
		w.err = writeWATFile(path, docs...)
	})
	if w.err != nil {
		b.Fatal(w.err)
	}
	return w.dir
}

// cpuTime is the process's user and system CPU so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWriter writes 8 KB pages: records/s and MB/s of compressed
// output, with fsync (the crawl's setting) and without, one writer and
// GOMAXPROCS and 4×GOMAXPROCS concurrent callers (which share fsyncs), and
// gzip's default level (5) against the writer's default (1).
//
//	go test ./ingest -run '^$' -bench Writer
func BenchmarkWriter(b *testing.B) {
	for _, c := range []struct {
		name    string
		sync    bool
		writers int
		level   int
	}{{"fsync/x1", true, 1, 0}, {"fsync/x4", true, 4, 0}, {"nosync/x1", false, 1, 0}, {"nosync/x1/gzip5", false, 1, -1}} {
		b.Run(c.name, func(b *testing.B) {
			w, _, err := warc.Open(warc.Options{Dir: b.TempDir(), Prefix: "bench", NoSync: !c.sync, GzipLevel: c.level})
			if err != nil {
				b.Fatal(err)
			}
			exs := make([]warc.Exchange, 64)
			rng := rand.New(rand.NewSource(1))
			for i := range exs {
				exs[i] = pageExchange(rng, i, 1000)
			}
			b.SetParallelism(c.writers)
			b.ResetTimer()
			var mu sync.Mutex
			var i int
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					mu.Lock()
					ex := exs[i%len(exs)]
					i++
					mu.Unlock()
					if _, err := w.WriteExchange(context.Background(), ex); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			st := w.Stats()
			w.Close()
			secs := b.Elapsed().Seconds()
			b.ReportMetric(float64(b.N)/secs, "exchanges/s")
			b.ReportMetric(float64(st.Bytes)/1e6/secs, "MB/s")
		})
	}
}

// TestMain removes the benchmark's generated WARC.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range []struct {
		dir  string
		keep bool
	}{{benchDir, benchKeep}} {
		if d.dir != "" && !d.keep {
			os.RemoveAll(d.dir)
		}
	}
	for _, w := range watFiles {
		if w.dir != "" && !w.keep {
			os.RemoveAll(w.dir)
		}
	}
	os.Exit(code)
}
