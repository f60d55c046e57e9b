package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
)

func TestRenderLive(t *testing.T) {
	st := crawl.Status{PagesPerSecond: 123.44, FrontierSize: 456, Nodes: 789, Edges: 1011,
		ErrorsByType: map[string]int64{"dns": 1, "timeout": 2}}
	got := renderLive(st, time.Hour+2*time.Minute+3*time.Second+400*time.Millisecond)
	want := "Queue: 456 | Nodes: 789 | Edges: 1011 | Pages: 0 | Errors: 3 | 123.4 pages/s | elapsed 1:02:03"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := renderLive(crawl.Status{}, 0); got != "Queue: 0 | Nodes: 0 | Edges: 0 | Pages: 0 | Errors: 0 | 0.0 pages/s | elapsed 0:00:00" {
		t.Errorf("zero status: %q", got)
	}
	// With max_pages: N/M pages and the time left at the current rate.
	st = crawl.Status{PagesPerSecond: 10, PagesDone: 400, MaxPages: 1000, ETASeconds: 60, FrontierSize: 9, Nodes: 8, Edges: 7}
	if got, want := renderLive(st, 5*time.Second), "Queue: 9 | Nodes: 8 | Edges: 7 | Pages: 400/1000 | Errors: 0 | 10.0 pages/s | ETA 0:01:00 | elapsed 0:00:05"; got != want {
		t.Errorf("with max_pages:\ngot  %q\nwant %q", got, want)
	}
}

func TestLiveLine_LogsAboveTheLine(t *testing.T) {
	var b bytes.Buffer
	lg := newLogger(&b, false)
	l := newLiveLine(&b, lg.log)
	l.Log("INFO", "before any line")
	if got := b.String(); got != "[INFO] before any line\n" {
		t.Fatalf("before the first draw: %q", got)
	}
	b.Reset()
	l.draw(crawl.Status{Nodes: 5})
	if !strings.HasPrefix(b.String(), clearLine+"Queue: 0 | Nodes: 5 | Edges: 0 |") {
		t.Fatalf("draw: %q", b.String())
	}
	b.Reset()
	l.CrawlerLog("INFO", "Worker 2 fetched a.test (depth=1, 3 outbound links)")
	l.CrawlerLog("INFO", "Queue: 3 | Nodes: 5 | Edges: 4")
	if b.Len() != 0 {
		t.Errorf("per-page and progress lines were printed: %q", b.String())
	}
	l.CrawlerLog("WARN", "Worker 1 failed to fetch b.test (dns: no such host)")
	l.CrawlerLog("INFO", "Shutdown signal received")
	want := clearLine + "[WARN] Worker 1 failed to fetch b.test (dns: no such host)\n" + l.text +
		clearLine + "[INFO] Shutdown signal received\n" + l.text
	if got := b.String(); got != want {
		t.Errorf("lines above the live line:\ngot  %q\nwant %q", got, want)
	}
}

func TestLiveLine_StartStop(t *testing.T) {
	var b bytes.Buffer
	lg := newLogger(&b, false)
	l := newLiveLine(&b, lg.log)
	var calls atomic.Int32
	l.Start(func() crawl.Status { calls.Add(1); return crawl.Status{FrontierSize: 42} })
	l.Stop()
	l.Stop() // twice is fine
	if calls.Load() < 2 {
		t.Errorf("status read %d times, want a first and a last draw", calls.Load())
	}
	out := b.String()
	if !strings.HasSuffix(out, "\n") || !strings.Contains(out, "Queue: 42 |") || strings.Count(out, "\n") != 1 {
		t.Errorf("output %q", out)
	}
	l.Log("INFO", "after")
	if !strings.HasSuffix(b.String(), "\n[INFO] after\n") {
		t.Errorf("a line after Stop: %q", b.String())
	}
}

func TestIsTerminal(t *testing.T) {
	if isTerminal(&bytes.Buffer{}) {
		t.Error("a buffer is a terminal")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if isTerminal(w) {
		t.Error("a pipe is a terminal")
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "out.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("a file is a terminal")
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer null.Close()
	if isTerminal(null) {
		t.Error("the null device is a terminal")
	}
}
