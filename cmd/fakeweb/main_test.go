package main

// These tests call run directly: a main package cannot be imported by an
// external test package.

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

func TestRun_PrintSeed(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"--print-seed", "--hosts", "50", "--seed", "3"}, &out, &errOut)
	if err != nil {
		t.Fatalf("run: %v (stderr %q)", err, errOut.String())
	}
	got := strings.TrimSpace(out.String())
	if !strings.HasPrefix(got, "http://www.") || !strings.HasSuffix(got, ".com/") {
		t.Errorf("seed: got %q", got)
	}
	// One line: a shell prompt after it starts on its own line.
	if out.String() != got+"\n" {
		t.Errorf("stdout %q, want the seed and a newline", out.String())
	}
}

// TestRun_Topics: --topics serves the topical web of fakeweb.Config.Topics.
func TestRun_Topics(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--print-seed", "--hosts", "300", "--seed", "1", "--topics", "8"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	w := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 1, Topics: 8})
	if got, want := strings.TrimSpace(out.String()), w.Seed(); got != want || w.Topic(w.Hosts()[0]) != 0 {
		t.Errorf("seed %s, want %s, the seed of topic 0", got, want)
	}
	if plain := fakeweb.New(fakeweb.Config{Hosts: 300, Seed: 1}).Seed(); plain == w.Seed() {
		t.Errorf("the topical web's seed is the generated web's, %s", plain)
	}
}

func TestRun_Errors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"help", []string{"-h"}, 0},
		{"unknown flag", []string{"--nope"}, 2},
		{"argument", []string{"extra"}, 2},
		{"bad hosts", []string{"--hosts", "0"}, 2},
		{"bad topics", []string{"--topics", "-1"}, 2},
		{"bad fault", []string{"--fault", "x.test=Sloth"}, 2},
		{"bad fault syntax", []string{"--fault", "SlowDrip"}, 2},
		{"missing file", []string{"--uk", filepath.Join(t.TempDir(), "none.tsv"), "--print-seed"}, 2},
		{"bad listen", []string{"--listen", "256.0.0.1:0"}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var errOut bytes.Buffer
			err := run(context.Background(), tc.args, io.Discard, &errOut)
			if got := exitCode(err); got != tc.code {
				t.Errorf("exit code: got %d (%v), want %d", got, err, tc.code)
			}
			if tc.name == "help" {
				if !errors.Is(err, flag.ErrHelp) || !strings.Contains(errOut.String(), "Examples:") {
					t.Errorf("help: %v, usage %q", err, errOut.String())
				}
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestRun_Serves(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--listen", "127.0.0.1:0", "--hosts", "20", "--fault", "slow.test=SlowDrip"}, &out, io.Discard)
	}()
	var line string
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for line == "" {
		select {
		case <-tick.C:
			line = out.String()
		case err := <-done:
			t.Fatalf("run returned early: %v", err)
		case <-deadline:
			t.Fatal("no ready line after 10s")
		}
	}
	var addr, seed string
	if f := strings.Fields(line); len(f) == 6 && f[0] == "fakeweb" && f[2] == "on" && f[4] == "seed" {
		addr, seed = f[3], f[5]
	} else {
		t.Fatalf("ready line: got %q", line)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = strings.TrimSuffix(strings.TrimPrefix(seed, "http://"), "/")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET seed: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET seed: status %d", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after cancel")
	}
}
