package main

import (
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
)

// liveInterval is how often the live line is redrawn.
const liveInterval = 500 * time.Millisecond

// clearLine returns the cursor to the start of the line and erases it.
const clearLine = "\r\x1b[2K"

// isTerminal reports whether w is a terminal: an *os.File on a character
// device other than the null device (which is one too, and where nobody
// reads a redrawn line). It needs no ioctl, so it builds everywhere.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(fi, null) {
		return false
	}
	return true
}

// renderLive is the live line's text: the progress line the log shows
// without a terminal, with the time the crawl has run as the line redrawn
// sees it.
func renderLive(st crawl.Status, elapsed time.Duration) string {
	st.UptimeSeconds = elapsed.Truncate(time.Second).Seconds()
	return st.Progress()
}

// liveLine keeps one status line at the bottom of a terminal, redrawn in
// place, with log lines printed above it.
type liveLine struct {
	mu    sync.Mutex // guards writes to w, text and shown
	w     io.Writer
	log   func(level, msg string) // the plain logger, writing to w
	start time.Time
	text  string // the line last drawn
	shown bool   // the line is on screen, the cursor after it

	stop chan struct{} // closed by Stop
	done chan struct{} // closed when the redraw loop has returned
}

func newLiveLine(w io.Writer, log func(level, msg string)) *liveLine {
	return &liveLine{w: w, log: log, start: time.Now()}
}

// Log prints a log line above the live line.
func (l *liveLine) Log(level, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shown {
		io.WriteString(l.w, clearLine)
	}
	l.log(level, msg)
	if l.shown {
		io.WriteString(l.w, l.text)
	}
}

// CrawlerLog is the crawler's Log while the live line shows: the per-page
// INFO and progress lines are what the line sums up, so they are dropped;
// the other lines (start and end, warnings and errors) go above it.
func (l *liveLine) CrawlerLog(level, msg string) {
	if level == "INFO" && (strings.HasPrefix(msg, "Worker ") || strings.HasPrefix(msg, "Queue: ")) {
		return
	}
	l.Log(level, msg)
}

func (l *liveLine) draw(st crawl.Status) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.text = renderLive(st, time.Since(l.start))
	io.WriteString(l.w, clearLine+l.text)
	l.shown = true
}

// Start redraws the line from status every liveInterval until Stop.
func (l *liveLine) Start(status func() crawl.Status) {
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(l.done)
		t := time.NewTicker(liveInterval)
		defer t.Stop()
		l.draw(status())
		for {
			select {
			case <-l.stop:
				l.draw(status())
				return
			case <-t.C:
				l.draw(status())
			}
		}
	}()
}

// Stop draws the line a last time and leaves it on screen, ending it
// with a newline so that what follows starts below it.
func (l *liveLine) Stop() {
	if l.stop == nil {
		return
	}
	close(l.stop)
	<-l.done
	l.stop = nil
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shown {
		io.WriteString(l.w, "\n")
		l.shown = false
	}
}
