package crawl

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/outfile"
)

// diskState is what the crawl believes of the file systems it writes to.
type diskState uint8

const (
	diskOK   diskState = iota // room: fetching
	diskLow                   // paused: free space below min_free_space somewhere
	diskFull                  // paused: a write failed for want of room
)

// DiskCheckEvery is how often the free space of the file systems a crawl
// writes to is looked at: before it runs short (min_free_space), and while
// a pause waits for room.
const DiskCheckEvery = 2 * time.Second

// minRoom is the least free space a pause for a failed write waits for
// when min_free_space is off (0): room for a commit group, a WARC group
// and a step of the store's growth is more than a few pages.
const minRoom = 16 << 20

// watchedDir is a directory the crawl writes to.
type watchedDir struct {
	path string // the directory
	what string // what the crawl writes there: "the store", "the WARC files", "metrics.log"
}

// diskwatch pauses the crawl when a file system it writes to is full
// (docs/crawling.md, "A full disk"). Two things pause it: a write that
// failed for want of room (kv.IsFull: ENOSPC, EDQUOT) — the store's
// group writer then holds the group whose commit failed and asks Full
// whether to try it again (diskwatch is the store's kv.Waiter) — and free
// space below min_free_space on any directory the crawl writes to, looked
// at every DiskCheckEvery. While paused no step is handed out and no
// lease claimed; the pages in flight finish and wait for their commits in
// memory. The pause ends when every directory has room again (for a
// failed write, once the write that failed has been made), by itself.
type diskwatch struct {
	now     func() time.Time
	minFree int64
	dirs    []watchedDir
	free    func(dir string) (int64, bool) // free bytes for an unprivileged user; false: unknown (statfs)
	every   time.Duration
	logf    func(level, format string, a ...any)

	mu        sync.Mutex // guards every field below
	state     diskState  //
	since     time.Time  // when the pause began
	path      string     // the file whose write failed, or the directory short of room
	detail    string     // the pause in words
	waiting   bool       // a write waits in Full for room
	nextCheck time.Time  // when the free space is looked at next
	pauses    int64      // pauses in this run
	pausedNs  int64      // time spent paused, pauses ended

	quit    chan struct{} // closed when the crawl stops: a write waiting is given up (stop)
	stopped bool          // quit is closed
	gaveUp  bool          // a write that waited for room was given up in this run

	retry   chan struct{} // cap 1: room again; the write waiting in Full may try again
	changed chan struct{} // cap 1: the state changed (the dispatcher looks)
}

func newDiskwatch(now func() time.Time, minFree int64, dirs []watchedDir, logf func(level, format string, a ...any)) *diskwatch {
	return &diskwatch{now: now, minFree: minFree, dirs: dirs, free: freeSpace, every: DiskCheckEvery, logf: logf,
		retry: make(chan struct{}, 1), changed: make(chan struct{}, 1), quit: make(chan struct{})}
}

// crawlDirs are the directories cfg's crawl writes to: the store's, the
// WARC files', and metrics.log's when it is a file (a device or a pipe,
// /dev/stdout, has no room to run out of), each once.
func crawlDirs(cfg *Config) []watchedDir {
	var out []watchedDir
	add := func(path, what string) {
		if path == "" {
			return
		}
		dir, err := filepath.Abs(path)
		if err != nil {
			return
		}
		for _, d := range out {
			if d.path == dir {
				return
			}
		}
		out = append(out, watchedDir{path: dir, what: what})
	}
	add(filepath.Dir(cfg.DBPath), "the store")
	add(cfg.WarcDir, "the WARC files")
	if t, err := outfile.Resolve(cfg.MetricsPath); cfg.MetricsPath != "" && err == nil && t.Kind != outfile.Special {
		add(filepath.Dir(cfg.MetricsPath), "metrics.log")
	}
	return out
}

func (d *diskwatch) notify() {
	select {
	case d.changed <- struct{}{}:
	default:
	}
}

// paused reports whether the crawl is paused for its disk.
func (d *diskwatch) paused() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.state != diskOK
}

// Full is kv.Waiter's: a commit failed for want of room. The pause is
// declared (said once); Full returns true when room is back, false when
// the crawl stops first.
func (d *diskwatch) Full(err error) bool {
	d.mu.Lock()
	d.waiting = true
	d.fullLocked(err)
	quit := d.quit
	d.mu.Unlock()
	select {
	case <-d.retry:
		return true
	case <-quit:
		d.mu.Lock()
		d.waiting, d.gaveUp = false, true
		d.mu.Unlock()
		return false
	}
}

// Resumed is kv.Waiter's: the write that waited is made.
func (d *diskwatch) Resumed() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.waiting = false
	d.endLocked()
}

// failed declares a pause for a write that failed for want of room
// outside the store's group writer (an Update): the pause ends when room
// is back, and the caller writes again then.
func (d *diskwatch) failed(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fullLocked(err)
}

// errPath is the file err names (a *fs.PathError's), "" when none.
func errPath(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Path
	}
	return ""
}

// fullLocked declares (or carries on) a pause for err.
func (d *diskwatch) fullLocked(err error) {
	path := errPath(err)
	if d.state == diskFull && d.path == path {
		return // the same pause, said already
	}
	begun := d.state == diskOK
	if begun {
		d.since = d.now()
		d.pauses++
	}
	d.state, d.path, d.detail = diskFull, path, err.Error()
	d.nextCheck = d.now().Add(d.every)
	d.notify()
	if begun {
		d.logf("WARN", "Disk full since %s: %s; paused: no new fetches, the pages in flight wait in memory for their commit; free space is checked every %v and the crawl goes on by itself when there is room",
			d.since.UTC().Format(time.RFC3339), err, d.every)
	}
}

// endLocked ends the pause.
func (d *diskwatch) endLocked() {
	if d.state == diskOK {
		return
	}
	took := d.now().Sub(d.since)
	d.pausedNs += int64(took)
	d.state, d.path, d.detail = diskOK, "", ""
	select { // a token left for a write that no longer waits
	case <-d.retry:
	default:
	}
	d.notify()
	d.logf("INFO", "Disk space back after a pause of %v: resuming the crawl", took.Round(time.Second))
}

// start readies the watch for a run.
func (d *diskwatch) start() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.quit, d.stopped, d.gaveUp = make(chan struct{}), false, false
}

// gaveUpWrite reports whether a write that waited for room was given up
// in this run (Full returned false): its claim, if it held one, never
// committed.
func (d *diskwatch) gaveUpWrite() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.gaveUp
}

// stop gives up a write waiting for room: the crawl stops.
func (d *diskwatch) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.stopped {
		close(d.quit)
		d.stopped = true
	}
}

// watch looks at the free space every d.every until the crawl stops.
func (d *diskwatch) watch() {
	d.mu.Lock()
	quit := d.quit
	d.mu.Unlock()
	t := time.NewTicker(d.every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			d.check()
		case <-quit:
			return
		}
	}
}

// check looks at every directory's free space once: below min_free_space
// pauses the crawl; room everywhere ends a pause (or, for a write that
// waits in Full, lets it try again: the pause ends when it succeeds).
func (d *diskwatch) check() {
	short, room := d.short()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nextCheck = d.now().Add(d.every)
	switch {
	case d.state == diskOK && short != nil:
		d.state, d.since, d.path, d.detail = diskLow, d.now(), short.path, d.shortText(short, room)
		d.pauses++
		d.notify()
		d.logf("WARN", "Disk space low since %s: %s; paused: no new fetches; free space is checked every %v and the crawl goes on by itself when there is room (or stop it and run it with a lower --min-free-space, which is chosen at each run; 0 = off)",
			d.since.UTC().Format(time.RFC3339), d.detail, d.every)
	case d.state == diskLow && short == nil:
		d.endLocked()
	case d.state == diskFull && short == nil && d.roomAt(d.path):
		if !d.waiting {
			d.endLocked()
			return
		}
		select {
		case d.retry <- struct{}{}:
		default:
		}
	}
}

// short returns the first directory below min_free_space (nil: none, or
// min_free_space is off) and its free bytes.
func (d *diskwatch) short() (*watchedDir, int64) {
	if d.minFree <= 0 {
		return nil, 0
	}
	for i := range d.dirs {
		if free, ok := d.free(d.dirs[i].path); ok && free < d.minFree {
			return &d.dirs[i], free
		}
	}
	return nil, 0
}

// roomAt reports whether the file system of path (a file whose write
// failed; "": every directory) has room for a write again: minRoom free,
// and min_free_space. A file system whose free space cannot be read has
// room: the write itself, tried again, tells.
func (d *diskwatch) roomAt(path string) bool {
	need := max(d.minFree, minRoom)
	dirs := []string{filepath.Dir(path)}
	if path == "" {
		dirs = dirs[:0]
		for _, w := range d.dirs {
			dirs = append(dirs, w.path)
		}
	}
	for _, dir := range dirs {
		if free, ok := d.free(dir); ok && free < need {
			return false
		}
	}
	return true
}

func (d *diskwatch) shortText(w *watchedDir, free int64) string {
	return fmt.Sprintf("%s free on %s (%s), below min_free_space %s", FormatBytes(free), w.path, w.what, FormatBytes(d.minFree))
}

// pause returns the pause as Status shows it, or nil.
func (d *diskwatch) pause() *Pause {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.state == diskOK {
		return nil
	}
	return &Pause{Reason: PauseDisk, Since: d.since.UTC(), Detail: d.detail, Path: d.path, NextCheck: d.nextCheck.UTC()}
}

// figures returns the run's disk pauses and the time spent in them (the
// current one included).
func (d *diskwatch) figures() (pauses int64, paused time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := time.Duration(d.pausedNs)
	if d.state != diskOK {
		p += d.now().Sub(d.since)
	}
	return d.pauses, p
}

// waitRoom waits, for a write outside the crawl (metrics.log at its end)
// that failed for want of room, until path's file system has room again:
// true, or false when done closes first.
func (d *diskwatch) waitRoom(err error, done <-chan struct{}) bool {
	d.failed(err)
	path := errPath(err)
	t := time.NewTicker(d.every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			d.mu.Lock()
			d.nextCheck = d.now().Add(d.every)
			d.mu.Unlock()
			if d.roomAt(path) {
				d.mu.Lock()
				d.endLocked()
				d.mu.Unlock()
				return true
			}
		case <-done:
			return false
		}
	}
}

var _ kv.Waiter = (*diskwatch)(nil)
