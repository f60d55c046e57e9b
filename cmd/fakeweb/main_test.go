package main

// These tests call run directly: a main package cannot be imported by an
// external test package.

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
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
		{"living request log", []string{"--living", "5", "--request-log", filepath.Join(t.TempDir(), "log")}, 2},
		{"living ca-out without tls", []string{"--living", "5", "--ca-out", filepath.Join(t.TempDir(), "ca.pem")}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var errOut bytes.Buffer
			err := run(context.Background(), tc.args, io.Discard, &errOut)
			if got := exitCode(err); got != tc.code {
				t.Errorf("exit code: got %d (%v), want %d", got, err, tc.code)
			}
			if tc.code == 2 && err != nil && strings.HasSuffix(err.Error(), "usage") {
				t.Errorf("message %q ends in the word usage, not in what is wrong", err)
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

// TestRun_LivingTLS: --living with --tls serves the living web over HTTPS
// (the seed https://, the CA in --ca-out) and redirects plain HTTP to it.
func TestRun_LivingTLS(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--listen", "127.0.0.1:0", "--living", "5", "--tls", "--ca-out", ca}, &out, io.Discard)
	}()
	addr, seed := readyLine(t, &out, done)
	if seed != "https://h0.test/" {
		t.Fatalf("seed %q, want https://h0.test/", seed)
	}
	pem, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("--ca-out wrote no certificate: %q", pem)
	}
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	client := &http.Client{
		Transport:     &http.Transport{DialContext: dial, TLSClientConfig: &tls.Config{RootCAs: pool}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Get(seed)
	if err != nil {
		t.Fatalf("GET %s: %v", seed, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") == "" || resp.TLS == nil {
		t.Errorf("GET %s: status %d, ETag %q, TLS %v", seed, resp.StatusCode, resp.Header.Get("ETag"), resp.TLS != nil)
	}
	resp, err = client.Get("http://h1.test/")
	if err != nil {
		t.Fatalf("GET http://h1.test/: %v", err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusMovedPermanently || loc != "https://h1.test/" {
		t.Errorf("plain GET: status %d, Location %q; want 301 to https://h1.test/", resp.StatusCode, loc)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run: %v", err)
	}
}

// readyLine waits for run's "fakeweb listening on ADDR seed URL" line.
func readyLine(t *testing.T, out *syncBuffer, done <-chan error) (addr, seed string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("run returned early: %v", err)
		default:
		}
		if f := strings.Fields(out.String()); len(f) == 6 && f[0] == "fakeweb" && f[2] == "on" && f[4] == "seed" {
			return f[3], f[5]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no ready line after 10s: %q", out.String())
	return "", ""
}
