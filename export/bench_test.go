package export_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// The SQLite figures of the issue: exporting a 100,000-host,
// 1,000,000-edge store, against sqlite3 importing the same edges from CSV.
// Run them with
//
//	go test -bench SQLite -benchtime 1x -run '^$' ./export
//
// The export runs in a child process (this test binary, see TestMain) so
// that its peak RSS is its own, not that of the process that built the
// store.

const (
	benchNodes    = 100_000
	benchOutEdges = 10 // per node: 1,000,000 edges
)

// The benchmarks run their subjects in child processes, this test binary
// in one of two modes chosen by benchModeEnv, so that each peak RSS is the
// subject's own. (A child's rusage alone would not do: Go starts children
// with vfork, and Linux then counts the parent's peak in the child's.)
const (
	benchModeEnv   = "WEAVER_EXPORT_BENCH_MODE"   // "export" or "measure"
	benchStoreEnv  = "WEAVER_EXPORT_BENCH_STORE"  // export: the store
	benchTargetEnv = "WEAVER_EXPORT_BENCH_TARGET" // export: the file to write
	benchFormatEnv = "WEAVER_EXPORT_BENCH_FORMAT" // export: the format (default sqlite)
	benchCmdEnv    = "WEAVER_EXPORT_BENCH_CMD"    // measure: the command, as a JSON array
	// benchNoRanksEnv, set to anything, exports without the ranks
	// (Options.NoRanks), to see what they cost.
	benchNoRanksEnv = "WEAVER_EXPORT_BENCH_NORANKS"
)

// childReport is what a child process prints on stdout.
type childReport struct {
	Stats   export.Stats `json:"stats"`
	Seconds float64      `json:"seconds"`
	CPU     float64      `json:"cpu"`     // user + system seconds
	PeakKB  int64        `json:"peak_kb"` // peak RSS
	Status  string       `json:"status"`  // memory lines of /proc/self/status at the end
}

func TestMain(m *testing.M) {
	switch os.Getenv(benchModeEnv) {
	case "export":
		os.Exit(exportChild())
	case "measure":
		os.Exit(measureChild())
	}
	code := m.Run()
	if bigStore.dir != "" {
		os.RemoveAll(bigStore.dir)
	}
	os.Exit(code)
}

// exportChild opens the store read-only and exports it to SQLite, as
// `weaver export --sqlite` does, then reports its time and its own peak
// RSS (VmHWM, which counts this process only).
func exportChild() int {
	start := time.Now()
	s, err := kv.Open(os.Getenv(benchStoreEnv), kv.Options{ReadOnly: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	format := export.Format(os.Getenv(benchFormatEnv))
	if format == "" {
		format = export.FormatSQLite
	}
	st, err := export.WriteFile(context.Background(), s, os.Getenv(benchTargetEnv), format, export.Options{Force: true, NoRanks: os.Getenv(benchNoRanksEnv) != ""})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	r := childReport{Stats: st, Seconds: time.Since(start).Seconds()}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		r.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	r.PeakKB, r.Status = procStatus()
	json.NewEncoder(os.Stdout).Encode(r)
	return 0
}

// measureChild runs a command with this process's stdin and reports its
// time and peak RSS. This process is small, so the vfork effect above
// cannot inflate the command's figure.
func measureChild() int {
	var argv []string
	if err := json.Unmarshal([]byte(os.Getenv(benchCmdEnv)), &argv); err != nil || len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "bad command:", err)
		return 1
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	r := childReport{Seconds: time.Since(start).Seconds()}
	r.CPU = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.PeakKB = int64(ru.Maxrss) // int32 on 32-bit Linux
	}
	json.NewEncoder(os.Stdout).Encode(r)
	return 0
}

// procStatus returns VmHWM in KiB and the memory lines of
// /proc/self/status.
func procStatus() (int64, string) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, ""
	}
	var hwm int64
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "Vm") || strings.HasPrefix(l, "Rss") {
			lines = append(lines, strings.Join(strings.Fields(l), " "))
		}
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			hwm, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	return hwm, strings.Join(lines, "; ")
}

// runChild runs this test binary in a child mode and decodes its report.
func runChild(b *testing.B, env []string, stdin string) childReport {
	b.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("child %q: %v\n%s", env, err, stderr.String())
	}
	var r childReport
	if err := json.Unmarshal([]byte(stdout.String()), &r); err != nil {
		b.Fatalf("child report %q: %v", stdout.String(), err)
	}
	return r
}

// bigStore is the benchmark store, built once per test binary run.
var bigStore struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func bigStorePath(b *testing.B) string {
	b.Helper()
	bigStore.once.Do(func() {
		bigStore.dir, bigStore.err = os.MkdirTemp("", "weaver-export-bench-")
		if bigStore.err != nil {
			return
		}
		bigStore.path = filepath.Join(bigStore.dir, "weaver.bolt")
		start := time.Now()
		bigStore.err = buildBigStore(bigStore.path)
		b.Logf("built a %d-node, %d-edge store in %v", benchNodes, benchNodes*benchOutEdges, time.Since(start).Round(time.Millisecond))
	})
	if bigStore.err != nil {
		b.Fatal(bigStore.err)
	}
	return bigStore.path
}

// buildBigStore writes benchNodes hosts with page metadata, each linking
// to benchOutEdges others drawn from a skewed distribution (a few hosts
// get most links, as on the web), through graph's own functions.
func buildBigStore(path string) error {
	s, err := kv.Open(path, kv.Options{NoSync: true, Now: func() time.Time { return t0 }})
	if err != nil {
		return err
	}
	defer s.Close()
	r := rand.New(rand.NewPCG(42, 42))
	ids := make([]uint64, benchNodes)
	const batch = 10_000
	for lo := 0; lo < benchNodes; lo += batch {
		err := s.Update(func(tx *kv.Tx) error {
			for i := lo; i < min(lo+batch, benchNodes); i++ {
				seen := t0.Add(time.Duration(i) * time.Second)
				n, _, err := graph.Ensure(tx, fmt.Sprintf("host%d.domain%d.example", i, i/5), "https", seen)
				if err != nil {
					return err
				}
				ids[i] = n.ID
				if i%4 != 3 {
					n.Status, n.HTTPStatus, n.CrawlCount = graph.StatusCrawled, 200, 1
					n.Title = fmt.Sprintf("Host %d – a page title & some words", i)
					n.Description = fmt.Sprintf("The description of host %d, as its meta description says, about a hundred bytes long.", i)
					n.ContentType, n.Server, n.Bytes, n.FetchMS = "text/html", "nginx", 20_000, 120
					n.LastCrawl, n.LastSeen = seen.Add(time.Minute), seen.Add(time.Minute)
				}
				if err := graph.Put(tx, &n); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	targets := make([]int, 0, benchOutEdges)
	const perTx = 1_000 // sources per transaction
	for lo := 0; lo < benchNodes; lo += perTx {
		err := s.Update(func(tx *kv.Tx) error {
			for i := lo; i < min(lo+perTx, benchNodes); i++ {
				targets = targets[:0]
				for len(targets) < benchOutEdges {
					t := int(float64(benchNodes) * math.Pow(r.Float64(), 3))
					if t != i && !slices.Contains(targets, t) {
						targets = append(targets, t)
					}
				}
				slices.Sort(targets)
				for _, t := range targets {
					w := uint64(1 + r.IntN(3))
					if err := graph.AddEdge(tx, ids[i], ids[t], w, t0.Add(time.Hour)); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func BenchmarkSQLite_100kNodes_1MEdges(b *testing.B) {
	benchmarkExport(b, export.FormatSQLite, "crawler.db")
}

// BenchmarkGraphML_100kNodes_1MEdges and BenchmarkDOT_100kNodes_1MEdges
// are BenchmarkSQLite_100kNodes_1MEdges for the text formats, written to a
// file as `weaver export` writes them.
func BenchmarkGraphML_100kNodes_1MEdges(b *testing.B) {
	benchmarkExport(b, export.FormatGraphML, "graph.graphml")
}

func BenchmarkDOT_100kNodes_1MEdges(b *testing.B) {
	benchmarkExport(b, export.FormatDOT, "graph.dot")
}

// benchmarkExport exports the big store to a file named name in format f
// in a child process, and reports the export's seconds and peak RSS.
func benchmarkExport(b *testing.B, f export.Format, name string) {
	store := bigStorePath(b)
	if fi, err := os.Stat(store); err == nil {
		b.Logf("store: %.1f MB", float64(fi.Size())/1e6)
	}
	target := filepath.Join(b.TempDir(), name)
	var seconds float64
	var peak int64
	b.ResetTimer()
	for range b.N {
		r := runChild(b, []string{benchModeEnv + "=export", benchStoreEnv + "=" + store, benchTargetEnv + "=" + target, benchFormatEnv + "=" + string(f)}, "")
		if r.Stats.Edges != benchNodes*benchOutEdges {
			b.Fatalf("export wrote %+v", r.Stats)
		}
		seconds += r.Seconds
		peak = max(peak, r.PeakKB)
		b.Logf("export: %.2f s; %s", r.Seconds, r.Status)
	}
	b.StopTimer()
	if fi, err := os.Stat(target); err == nil {
		b.Logf("%s: %.1f MB", name, float64(fi.Size())/1e6)
	}
	b.ReportMetric(seconds/float64(b.N), "s/export")
	b.ReportMetric(float64(peak)/1024, "MB-peak-RSS")
}

// BenchmarkSQLite_Sqlite3Import_1MEdges is the yardstick: the sqlite3
// shell creating the seed's schema and importing the same edges from CSV
// (.import), first with the indexes in place as the seed's DDL creates
// them, then with the indexes created after the import, as the export
// does.
func BenchmarkSQLite_Sqlite3Import_1MEdges(b *testing.B) {
	sqlite3, err := exec.LookPath("sqlite3")
	if err != nil {
		b.Skip("sqlite3 is not installed")
	}
	store := bigStorePath(b)
	csvPath := filepath.Join(b.TempDir(), "edges.csv")
	if err := writeEdgesCSV(store, csvPath); err != nil {
		b.Fatal(err)
	}
	tables, indexes, _ := strings.Cut(seedSchema, "CREATE INDEX idx_nodes_domain")
	indexes = "CREATE INDEX idx_nodes_domain" + indexes
	for _, v := range []struct{ name, script string }{
		{"schema-first", seedSchema + ".mode csv\n.import " + csvPath + " edges\n"},
		{"indexes-after", tables + ".mode csv\n.import " + csvPath + " edges\n" + indexes},
	} {
		b.Run(v.name, func(b *testing.B) {
			var seconds, cpu float64
			var peak int64
			for range b.N {
				db := filepath.Join(b.TempDir(), "import.db")
				argv, _ := json.Marshal([]string{sqlite3, "-batch", db})
				r := runChild(b, []string{benchModeEnv + "=measure", benchCmdEnv + "=" + string(argv)}, v.script)
				seconds += r.Seconds
				cpu += r.CPU
				peak = max(peak, r.PeakKB)
				if got := strings.TrimSpace(string(runTool(b, nil, sqlite3, db, "SELECT count(*) FROM edges;"))); got != strconv.Itoa(benchNodes*benchOutEdges) {
					b.Fatalf("sqlite3 imported %s edges", got)
				}
			}
			b.ReportMetric(seconds/float64(b.N), "s/import")
			b.ReportMetric(cpu/float64(b.N), "CPU-s/import")
			b.ReportMetric(float64(peak)/1024, "MB-peak-RSS")
		})
	}
}

// writeEdgesCSV writes the store's edges as the rows of the seed's edges
// table: edge_id, from_node_id, to_node_id, weight.
func writeEdgesCSV(store, path string) error {
	s, err := kv.Open(store, kv.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer s.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	var id uint64
	var line []byte
	err = s.View(func(tx *kv.Tx) error {
		return graph.ForEachEdge(tx, func(e *graph.Edge) error {
			id++
			line = strconv.AppendUint(line[:0], id, 10)
			line = append(line, ',')
			line = strconv.AppendUint(line, e.From, 10)
			line = append(line, ',')
			line = strconv.AppendUint(line, e.To, 10)
			line = append(line, ',')
			line = strconv.AppendUint(line, e.Weight, 10)
			line = append(line, '\n')
			_, err := w.Write(line)
			return err
		})
	})
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
