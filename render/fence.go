package render

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// fence is the proxy the browser is told to use: a listener on 127.0.0.1
// that answers every request 403 and forwards nothing. Only what escapes
// the Fetch interception reaches it — chromium's background traffic, a
// popup's requests — and it records where that wanted to go.
type fence struct {
	ln  net.Listener
	srv *http.Server

	mu   sync.Mutex // guards seen
	seen []string   // "METHOD host/path" of each request, at most maxFenceLog
}

const maxFenceLog = 1000

func startFence() (*fence, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("render: fence: %w", err)
	}
	f := &fence{ln: ln}
	f.srv = &http.Server{
		Handler:           f,
		ReadHeaderTimeout: 5 * time.Second,
		IdleTimeout:       5 * time.Second,
	}
	go func() {
		if err := f.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = ln.Close()
		}
	}()
	return f, nil
}

// ServeHTTP records the request and refuses it.
func (f *fence) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	what := r.Method + " " + r.Host
	if r.Method != http.MethodConnect {
		what = r.Method + " " + r.URL.String()
	}
	f.mu.Lock()
	if len(f.seen) < maxFenceLog {
		f.seen = append(f.seen, what)
	}
	f.mu.Unlock()
	rw.Header().Set("Connection", "close")
	http.Error(rw, "weaver: the browser has no network of its own", http.StatusForbidden)
}

func (f *fence) addr() string { return f.ln.Addr().String() }

func (f *fence) escaped() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

func (f *fence) close() error { return f.srv.Close() }
