package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

// openPTY opens a pseudo-terminal pair (Linux /dev/ptmx), or skips.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	unlock := int32(0)
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); errno != 0 {
		m.Close()
		t.Skipf("unlockpt: %v", errno)
	}
	var n uint32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); errno != 0 {
		m.Close()
		t.Skipf("ptsname: %v", errno)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("opening the pty's slave: %v", err)
	}
	return m, s
}

// TestCrawl_LiveLineOnATerminal runs a crawl whose stdout is a terminal:
// it shows the live line, redrawn in place, and no per-page lines.
func TestCrawl_LiveLineOnATerminal(t *testing.T) {
	master, slave := openPTY(t)
	defer master.Close()
	if !isTerminal(slave) {
		t.Fatal("a pseudo-terminal is not taken for a terminal")
	}
	var screen bytes.Buffer
	read := make(chan struct{})
	go func() {
		defer close(read)
		io.Copy(&screen, master) // ends with EIO once the slave is closed
	}()

	w := fakeweb.Loop3()
	srv, err := w.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	db := filepath.Join(t.TempDir(), "w.bolt")
	var errb bytes.Buffer
	e := &env{Stdin: strings.NewReader(""), Stdout: slave, Stderr: &errb, Getenv: func(string) string { return "" }}
	code := run(context.Background(), e, []string{"crawl", "--db", db, "--metrics", db + ".metrics",
		"--connect-to", srv.ConnectTo(), "--delay", "0", "--retry-delay", "10ms", w.Seed()})
	slave.Close()
	<-read
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	out := screen.String()
	for _, want := range []string{"[INFO] Starting crawl from http://a.test/", clearLine + "Queue: ", "| Errors: 0 | ", " pages/s | elapsed 0:00:0", "[INFO] Crawl ended ("} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal lacks %q:\n%q", want, out)
		}
	}
	if strings.Contains(out, "Worker ") {
		t.Errorf("per-page lines on the terminal:\n%q", out)
	}
}
