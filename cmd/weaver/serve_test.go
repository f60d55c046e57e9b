package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/serve"
)

// syncBuffer is a bytes.Buffer safe to read while a command writes it.
type syncBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls cond every 20 ms for up to a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestServe_Usage(t *testing.T) {
	dir := t.TempDir()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve", "--dir", dir, "job"}, 2, "no arguments"},
		{[]string{"serve", "--dir", dir, "--max-jobs", "0"}, 2, "--max-jobs"},
		{[]string{"serve", "--dir", dir, "--listen", "nowhere"}, 2, "nowhere"},
		{[]string{"serve", "--dir", dir, "--connect-to", "a:b"}, 2, "connect_to"},
		{[]string{"serve", "--dir", dir, "--listen", busy.Addr().String()}, 1, "listen"},
	} {
		code, _, errs := runWeaverCmd(t, nil, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", c.args, code, c.code, c.want, errs)
		}
	}
}

func TestCrawl_Listen_Usage(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	code, _, errs := runWeaverCmd(t, nil, "crawl", "--db", db, "--listen", "no-port", "http://a.test/")
	if code != 2 || !strings.Contains(errs, "no-port") {
		t.Errorf("exit %d, want 2:\n%s", code, errs)
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a bad --listen created the store")
	}
}

// TestServe_InProcess runs weaver serve until its context ends: a job
// posted to it runs to completion against the fake web.
func TestServe_InProcess(t *testing.T) {
	w := fakeweb.Loop3()
	srv, err := w.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "jobs")
	var out syncBuffer
	var errb bytes.Buffer
	e := &env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, e, []string{"serve", "--listen", "0", "--dir", dir, "--connect-to", srv.ConnectTo()})
	}()
	re := regexp.MustCompile(`Serving the job API on (http://127\.0\.0\.1:\d+) `)
	var base string
	waitFor(t, "the serving line", func() bool {
		m := re.FindStringSubmatch(out.String())
		if m != nil {
			base = m[1]
		}
		return m != nil
	})
	resp, err := http.Post(base+"/crawl", "application/json", strings.NewReader(`{"url": "http://a.test/", "max_crawls_per_node": 1, "retry_delay_ms": 10, "politeness_delay_ms": 0}`))
	if err != nil {
		t.Fatal(err)
	}
	var created serve.CreatedAnswer
	json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /crawl: %d", resp.StatusCode)
	}
	waitFor(t, "the job to complete", func() bool {
		resp, err := http.Get(base + "/crawl/" + created.JobID + "?graph=false")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var j serve.JobAnswer
		body, _ := io.ReadAll(resp.Body)
		json.Unmarshal(body, &j)
		return j.Job.Status == serve.JobCompleted
	})
	if _, err := os.Stat(filepath.Join(dir, created.JobID+".bolt")); err != nil {
		t.Errorf("the job's store: %v", err)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d: %s", code, errb.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("weaver serve did not stop")
	}
	if !strings.Contains(out.String(), "[INFO] Stopped") {
		t.Errorf("log:\n%s", out.String())
	}
}
