package main

import (
	"errors"
	"testing"
)

func TestParseBench(t *testing.T) {
	out := []byte(`goos: linux
BenchmarkPage/extract-2         	    1578	   1082281 ns/op	  27.76 MB/s	   43320 B/op	    1192 allocs/op
BenchmarkCommitPages/producers=3-2         	   20000	    195138 ns/op	       952.4 pages/group	      5125 pages/s
BenchmarkFrontierMemory
    bench_test.go:54: a log line
BenchmarkFrontierMemory-2   	       1	12345 ns/op	 43.7 heap-MiB	 879 file-B/entry
BenchmarkDOT_Readable/uk1996-top20-2   	       3	  46202683 ns/op	        20.00 edges	        20.00 edges-drawn	        20.00 hosts	        20.00 labelled-hosts	         0 overlapping-label-pairs	         0.02277 s/dot-Tsvg	         0.02398 s/weaver-export
PASS
`)
	lines := parseBench(out)
	if got, want := len(lines), 4; got != want {
		t.Fatalf("got %d lines, want %d: %+v", got, want, lines)
	}
	for _, c := range []struct {
		name, unit string
		want       float64
	}{
		{"BenchmarkPage/extract", "MB/s", 27.76},
		{"BenchmarkPage/extract", "allocs/op", 1192},
		{"BenchmarkCommitPages/producers=3", "pages/s", 5125},
		{"BenchmarkCommitPages/producers=3", "pages/group", 952.4},
		{"BenchmarkFrontierMemory", "heap-MiB", 43.7},
		// A sub-benchmark whose name ends in a word and digits keeps them.
		{"BenchmarkDOT_Readable/uk1996-top20", "s/dot-Tsvg", 0.02277},
		{"BenchmarkDOT_Readable/uk1996-top20", "labelled-hosts", 20},
		{"BenchmarkDOT_Readable/uk1996-top20", "overlapping-label-pairs", 0},
	} {
		l, ok := find(lines, c.name)
		if !ok {
			t.Errorf("%s: not found", c.name)
			continue
		}
		if got := l.Metrics[c.unit]; got != c.want {
			t.Errorf("%s %s: got %v, want %v", c.name, c.unit, got, c.want)
		}
	}
}

func TestMedianOf(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := medianOf(c.in); got != c.want {
			t.Errorf("medianOf(%v): got %v, want %v", c.in, got, c.want)
		}
	}
}

func TestCount(t *testing.T) {
	for in, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 20000: "20,000", 1000000: "1,000,000"} {
		if got := count(in); got != want {
			t.Errorf("count(%d): got %q, want %q", in, got, want)
		}
	}
}

func TestChosen(t *testing.T) {
	got, err := chosen("cpu,scale", "scale")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sections {
		if want := s == "cpu"; got[s] != want {
			t.Errorf("section %s: got %v, want %v", s, got[s], want)
		}
	}
	if _, err := chosen("bogus", ""); !errors.Is(err, errUsage) {
		t.Errorf("unknown section: got %v, want errUsage", err)
	}
}

func TestParseStoreStats(t *testing.T) {
	out := `file 10248192 B (391.0 B/edge); pages to the high-water mark 9146368 B (349.0 B/edge); page 4096 B, 26206 edges; pages in no bucket 211
bucket           keys    pages       disk B     in use B   B/edge      fill  depth
nodes            4638      712      2916352      1649919    111.3       57%      3
history          5949      111       454656       441138     17.3       97%      2
recent           3068       72       294912       219576     11.3       74%      2
crawls              0        0            0           16      0.0        0%      1
buckets                             8105984                 309.3
`
	hwm, fill := parseStoreStats(out)
	if hwm != 9146368 || fill != "history 97 %, recent 74 %, all 88 %" || !fillAtLeast(fill, 80) || fillAtLeast(fill, 89) {
		t.Errorf("got %d, %q", hwm, fill)
	}
}
