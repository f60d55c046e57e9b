package kv_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/internal/tooltest"
	"github.com/weaver-crawler/weaver/kv"
)

// file is a Resource that records what the store told it; Prepare fails
// with fail while fails > 0.
type file struct {
	mu    sync.Mutex
	log   []string
	fails int
	fail  error
}

func (f *file) note(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, s)
}

func (f *file) Prepare() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, "prepare")
	if f.fails > 0 {
		f.fails--
		return f.fail
	}
	return nil
}
func (f *file) Abort()     { f.note("abort") }
func (f *file) Committed() { f.note("committed") }

func (f *file) calls() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.log, " ")
}

func TestTx_Enlist(t *testing.T) {
	s, err := kv.Open(filepath.Join(t.TempDir(), "w.bolt"), kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f := &file{}
	put := func(tx *kv.Tx) error {
		tx.Enlist(f)
		tx.Enlist(f) // once is enough
		return tx.SetMetaString("k", "v")
	}
	if err := s.Update(put); err != nil {
		t.Fatal(err)
	}
	if got, want := f.calls(), "prepare committed"; got != want {
		t.Errorf("a commit: %q, want %q", got, want)
	}
	f.log = nil
	boom := errors.New("boom")
	if err := s.Update(func(tx *kv.Tx) error { tx.Enlist(f); return boom }); !errors.Is(err, boom) {
		t.Fatalf("got %v, want boom", err)
	}
	if got, want := f.calls(), "abort"; got != want {
		t.Errorf("a failed function: %q, want %q", got, want)
	}
	f.log, f.fails, f.fail = nil, 1, boom
	if err := s.Update(func(tx *kv.Tx) error { tx.Enlist(f); return tx.SetMetaString("k", "w") }); !errors.Is(err, boom) {
		t.Fatalf("got %v, want the resource's boom", err)
	}
	if got, want := f.calls(), "prepare abort"; got != want {
		t.Errorf("a failed Prepare: %q, want %q", got, want)
	}
	s.View(func(tx *kv.Tx) error {
		if got := tx.MetaString("k"); got != "v" {
			t.Errorf("a failed Prepare wrote k = %q", got)
		}
		return nil
	})
	// In a group, a member that fails makes the others run again: what
	// they staged the first time is forgotten.
	f.log, f.fails = nil, 0
	a := s.Commit(func(tx *kv.Tx) error { tx.Enlist(f); return tx.SetMetaString("a", "1") })
	b := s.Commit(func(tx *kv.Tx) error { return boom })
	if err := <-a; err != nil {
		t.Fatal(err)
	}
	<-b
	if got := f.calls(); !strings.HasSuffix(got, "prepare committed") || strings.Count(got, "committed") != 1 {
		t.Errorf("a group with a failed member: %q", got)
	}
}

// fill writes path until the file system is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil && !errors.Is(err, syscall.ENOSPC) {
		t.Fatal(err)
	}
	if f == nil {
		return
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}

// waiter is a kv.Waiter that answers with the values sent to it.
type waiter struct {
	full    chan error
	answer  chan bool
	resumed chan struct{}
}

func newWaiter() *waiter {
	return &waiter{full: make(chan error, 10), answer: make(chan bool), resumed: make(chan struct{}, 10)}
}

func (w *waiter) Full(err error) bool { w.full <- err; return <-w.answer }
func (w *waiter) Resumed()            { w.resumed <- struct{}{} }

// enospc is a full disk as a write reports it.
var enospc = &fs.PathError{Op: "write", Path: "/x/f", Err: syscall.ENOSPC}

func TestStore_Waiter_RetriesTheGroup(t *testing.T) {
	s, err := kv.Open(filepath.Join(t.TempDir(), "w.bolt"), kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w := newWaiter()
	s.SetWaiter(w)
	f := &file{fails: 2, fail: enospc}
	runs := 0
	applied, done := s.CommitApplied(func(tx *kv.Tx) error {
		runs++
		tx.Enlist(f)
		_, err := tx.AddCounter("pages", 1)
		return err
	})
	if err := <-applied; err != nil {
		t.Fatal(err)
	}
	later := s.Commit(func(tx *kv.Tx) error { _, err := tx.AddCounter("later", 1); return err })
	for i := range 2 {
		err := <-w.full
		if !kv.IsFull(err) {
			t.Fatalf("wait %d: %v is not a full disk", i, err)
		}
		// While the group waits, nothing else is written.
		if err := s.Update(func(tx *kv.Tx) error { return tx.SetMetaString("x", "y") }); !kv.IsFull(err) {
			t.Errorf("Update while a group waits: %v, want the full disk", err)
		}
		select {
		case err := <-later:
			t.Fatalf("a later commit went first: %v", err)
		default:
		}
		w.answer <- true
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := <-later; err != nil {
		t.Fatal(err)
	}
	<-w.resumed
	if runs != 3 {
		t.Errorf("the function ran %d times, want 3 (twice failed, once committed)", runs)
	}
	if got, want := f.calls(), "prepare abort prepare abort prepare committed"; got != want {
		t.Errorf("resource: %q, want %q", got, want)
	}
	s.View(func(tx *kv.Tx) error {
		if tx.Counter("pages") != 1 || tx.Counter("later") != 1 || tx.MetaString("x") != "" {
			t.Errorf("pages %d, later %d, x %q: want 1, 1 and nothing", tx.Counter("pages"), tx.Counter("later"), tx.MetaString("x"))
		}
		return nil
	})
	if err := s.Update(func(tx *kv.Tx) error { return tx.SetMetaString("x", "y") }); err != nil {
		t.Errorf("Update after the wait: %v", err)
	}
}

func TestStore_Waiter_GivesUp(t *testing.T) {
	s, err := kv.Open(filepath.Join(t.TempDir(), "w.bolt"), kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w := newWaiter()
	s.SetWaiter(w)
	f := &file{fails: 1, fail: enospc}
	done := s.Commit(func(tx *kv.Tx) error { tx.Enlist(f); return tx.SetMetaString("k", "v") })
	<-w.full
	w.answer <- false
	if err := <-done; !kv.IsFull(err) {
		t.Fatalf("given up: %v, want the full disk", err)
	}
	if err := s.Update(func(tx *kv.Tx) error { return tx.SetMetaString("x", "y") }); err != nil {
		t.Errorf("Update after a group was given up: %v", err)
	}
	// Without a waiter the error goes to the functions at once.
	s.SetWaiter(nil)
	f.fails = 1
	if err := <-s.Commit(func(tx *kv.Tx) error { tx.Enlist(f); return nil }); !kv.IsFull(err) {
		t.Fatalf("no waiter: %v, want the full disk", err)
	}
}

// TestStore_FullDisk fills a real small file system under an open store:
// the commit fails with ENOSPC, the store reopens its file, and once the
// file system grows the group waiting commits; the file checks, and holds
// every commit once.
func TestStore_FullDisk(t *testing.T) {
	dir := t.TempDir()
	resize := tooltest.Tmpfs(t, dir, "512k")
	path := filepath.Join(dir, "w.bolt")
	s, err := kv.Open(path, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w := newWaiter()
	s.SetWaiter(w)
	value := make([]byte, 16<<10)
	var dones []<-chan error
	n := 0
	var full error
	for full == nil && n < 200 {
		n++
		k := n
		dones = append(dones, s.Commit(func(tx *kv.Tx) error {
			if _, err := tx.AddCounter("n", 1); err != nil {
				return err
			}
			return tx.PutRaw(kv.BucketMeta, []byte(fmt.Sprintf("v%04d", k)), value)
		}))
		select {
		case full = <-w.full:
		case err := <-dones[len(dones)-1]:
			if err != nil {
				t.Fatalf("commit %d: %v", k, err)
			}
			dones = dones[:len(dones)-1] // told already
		case <-time.After(10 * time.Second):
			t.Fatal("a commit took 10 s")
		}
	}
	if full == nil {
		t.Fatal("512 KiB never filled")
	}
	if !strings.Contains(full.Error(), "no space left on device") {
		t.Errorf("the wait's error %q does not say why", full)
	}
	// Still full: the group fails again on the reopened file, and waits
	// — unless the blocks the failed commit wrote hold it now (the
	// reopened file reuses them), and it commits: then it resumes.
	filler := filepath.Join(dir, "filler")
	fill(t, filler)
	w.answer <- true
	failures := 1
	select {
	case <-w.full:
		failures++
		resize("8m")
		os.Remove(filler)
		w.answer <- true
		select {
		case <-w.resumed:
		case <-time.After(10 * time.Second):
			t.Fatal("no resume 10 s after space came back")
		}
	case <-w.resumed:
	case <-time.After(10 * time.Second):
		t.Fatal("the group run again neither waited nor committed in 10 s")
	}
	for _, d := range dones {
		select {
		case err := <-d:
			if err != nil {
				t.Fatalf("a commit after space came back: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a commit still waits 10 s after space came back")
		}
	}
	if s.Reopens() < uint64(failures) {
		t.Errorf("the file was reopened %d times after %d failed commits", s.Reopens(), failures)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	s.View(func(tx *kv.Tx) error {
		if got := tx.Counter("n"); got != uint64(n) {
			t.Errorf("counter %d, want %d commits once each", got, n)
		}
		return nil
	})
	s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	s, err = kv.Open(path, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

// exclusive is a Resource that fails the test when a transaction enlists
// it before the store told it how the previous one ended.
type exclusive struct {
	t    *testing.T
	mu   sync.Mutex
	open *kv.Tx // the transaction it is enlisted in
}

func (e *exclusive) enlist(tx *kv.Tx) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.open != nil && e.open != tx {
		e.t.Error("a transaction staged before the previous one was told it committed")
	}
	e.open = tx
	tx.Enlist(e)
}

func (e *exclusive) Prepare() error { return nil }
func (e *exclusive) Abort()         { e.end() }
func (e *exclusive) Committed() {
	time.Sleep(50 * time.Microsecond) // the window the next transaction would stage in
	e.end()
}

func (e *exclusive) end() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.open = nil
}

// A resource is one transaction's until the store tells it the outcome:
// an Update does not begin between a group's commit and its Committed
// (a WARC writer would write the Update's records nowhere).
func TestTx_Enlist_OneTransactionAtATime(t *testing.T) {
	s, err := kv.Open(filepath.Join(t.TempDir(), "w.bolt"), kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e := &exclusive{t: t}
	put := func(tx *kv.Tx) error { e.enlist(tx); return tx.SetMetaString("k", "v") }
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if g%2 == 0 {
					if err := s.Update(put); err != nil {
						t.Error(err)
					}
				} else if err := <-s.Commit(put); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
}
