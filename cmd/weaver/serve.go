package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"golang.org/x/net/http/httpproxy"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/serve"
)

func init() {
	register(&command{Name: "serve", Summary: "run crawl jobs through an HTTP API (POST /crawl)", Run: runServe})
}

// metaListenAddr is the store meta key where a crawl with --listen records
// its status API's address while it runs.
const metaListenAddr = "listen_addr"

// The address is also written to a sidecar file beside the store
// (archive.ListenPath): bbolt locks the store itself against every other
// process, so `weaver status` and `weaver snapshot` read it there.

// Timeouts of weaver's HTTP servers. There is no write timeout: streamed
// answers push their own deadline forward as they go.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = time.Minute
	idleTimeout       = 2 * time.Minute
	shutdownTimeout   = 10 * time.Second
)

func newServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout, IdleTimeout: idleTimeout}
}

// listen binds a --listen value (see serve.ListenAddr). A bad value is a
// usage error.
func listen(value string) (net.Listener, error) {
	addr, err := serve.ListenAddr(value)
	if err != nil {
		return nil, usageError{err: err}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	return ln, nil
}

// listenIfSet binds a crawl's --listen value, or returns nil when it is
// empty.
func listenIfSet(value string) (net.Listener, error) {
	if value == "" {
		return nil, nil
	}
	return listen(value)
}

// startStatusServer serves crawler c's status API on ln, records the
// address in the store's meta and in the sidecar file, and returns the
// function that undoes all three. stop is POST /stop's graceful stop.
func startStatusServer(ln net.Listener, c *crawl.Crawler, store *kv.Store, stop func(), auth serve.Auth, private bool, logf func(level, msg string)) (shutdown func()) {
	addr := ln.Addr().String()
	srv := newServer(auth.Wrap(serve.NewCrawlHandler(c, store, stop, Version)))
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logf("ERROR", fmt.Sprintf("status API: %v", err))
		}
	}()
	if err := store.Update(func(tx *kv.Tx) error { return tx.SetMetaString(metaListenAddr, addr) }); err != nil {
		logf("WARN", fmt.Sprintf("recording the status API's address in the store: %v", err))
	}
	// The loopback API's fresh token goes beside the store, for this
	// machine's readers; a --token-file's stays the user's to give.
	token := ""
	if private {
		token = auth.Token
	}
	if err := archive.WriteListen(store.Path(), addr, token); err != nil {
		logf("WARN", fmt.Sprintf("writing %s: %v (weaver status will not find this crawl)", archive.ListenPath(store.Path()), err))
	}
	if private {
		logf("INFO", fmt.Sprintf("Serving this machine's weaver status, export and snapshot on http://%s (its token in %s; --listen ADDR serves the map and the API to others)", addr, archive.ListenPath(store.Path())))
	} else {
		logf("INFO", fmt.Sprintf("Serving the status API on http://%s (GET / the map, /status /metrics /graph /snapshot, POST /seeds /stop)%s", addr, authNote(auth)))
	}
	return func() {
		os.Remove(archive.ListenPath(store.Path()))
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			srv.Close()
		}
		<-served
		if err := store.Update(func(tx *kv.Tx) error { return tx.SetMetaString(metaListenAddr, "") }); err != nil {
			logf("WARN", fmt.Sprintf("clearing the status API's address in the store: %v", err))
		}
	}
}

// apiAuth is the authentication of a --listen API: the one line of
// tokenFile (config token_file, flag --token-file) or the token in
// WEAVER_TOKEN; none when neither is set. Both set to different tokens is
// a usage error rather than one silently winning.
func apiAuth(e *env, tokenFile string, metricsPublic bool) (serve.Auth, error) {
	a := serve.Auth{MetricsPublic: metricsPublic}
	env := strings.TrimSpace(e.Getenv("WEAVER_TOKEN"))
	if env != "" {
		if err := checkToken(env); err != nil {
			return a, usagef("WEAVER_TOKEN: %v", err)
		}
	}
	if tokenFile == "" {
		a.Token = env
		return a, nil
	}
	data, err := os.ReadFile(tokenFile)
	if err != nil {
		return a, usagef("--token-file: %v", err)
	}
	t := strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
	if strings.TrimSpace(t) == "" || strings.ContainsAny(t, "\r\n") || t != strings.TrimSpace(t) {
		return a, usagef("--token-file %s: want one line holding the token (no spaces around it)", tokenFile)
	}
	if err := checkToken(t); err != nil {
		return a, usagef("--token-file %s: %v", tokenFile, err)
	}
	if env != "" && env != t {
		return a, usagef("--token-file %s and WEAVER_TOKEN hold different tokens: give one of them", tokenFile)
	}
	a.Token = t
	return a, nil
}

// minTokenLen is the shortest token accepted: one that can be guessed
// guards nothing, and the API may face a network for weeks.
const minTokenLen = 16

// checkToken refuses a token too short to guard anything, or one that
// cannot travel as it is in a header and in a URL's ?token= (base64's +
// would arrive as a space).
func checkToken(t string) error {
	for _, c := range t {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.ContainsRune("-._~", c)) {
			return fmt.Errorf("the token may hold only letters, digits and - . _ ~ (e.g. from 'openssl rand -hex 32'), not %q", c)
		}
	}
	if len(t) < minTokenLen {
		return fmt.Errorf("the token is %d characters long, want at least %d (e.g. from 'openssl rand -hex 32')", len(t), minTokenLen)
	}
	return nil
}

// checkExposure refuses a --listen address that other machines can reach
// when no token guards it: anyone there could stop the crawl or read it.
func checkExposure(listenValue string, a serve.Auth) error {
	if listenValue == "" || a.Token != "" {
		return nil
	}
	addr, err := serve.ListenAddr(listenValue)
	if err != nil {
		return usageError{err: err}
	}
	if !serve.IsLoopback(addr) {
		return usagef("refusing to serve on %s without a token: give --token-file FILE (or set WEAVER_TOKEN), or listen on 127.0.0.1", addr)
	}
	return nil
}

func authNote(a serve.Auth) string {
	switch {
	case a.Token == "":
		return ", no token: loopback only"
	case a.MetricsPublic:
		return ", token required except on /metrics"
	}
	return ", token required"
}

// proxyFunc is the standard HTTP_PROXY/HTTPS_PROXY/NO_PROXY rule from e,
// or nil when no proxy is set. A proxy URL that does not parse, or of a
// scheme weaver cannot speak to, is a usage error naming its variable:
// every request would fail on it.
func proxyFunc(e *env) (func(*url.URL) (*url.URL, error), error) {
	pc := &httpproxy.Config{
		HTTPProxy:  firstNonEmpty(e.Getenv("HTTP_PROXY"), e.Getenv("http_proxy")),
		HTTPSProxy: firstNonEmpty(e.Getenv("HTTPS_PROXY"), e.Getenv("https_proxy")),
		NoProxy:    firstNonEmpty(e.Getenv("NO_PROXY"), e.Getenv("no_proxy")),
	}
	if pc.HTTPProxy == "" && pc.HTTPSProxy == "" {
		return nil, nil
	}
	f := pc.ProxyFunc()
	for _, v := range []struct{ name, scheme, value string }{{"HTTP_PROXY", "http", pc.HTTPProxy}, {"HTTPS_PROXY", "https", pc.HTTPSProxy}} {
		if v.value == "" {
			continue
		}
		p, err := f(&url.URL{Scheme: v.scheme, Host: "weaver.invalid"})
		if err == nil && p != nil && p.Scheme != "http" && p.Scheme != "https" && p.Scheme != "socks5" && p.Scheme != "socks5h" {
			err = fmt.Errorf("scheme %q: want http, https or socks5", p.Scheme)
		}
		if err == nil && p != nil && p.Hostname() == "" {
			err = errors.New("no host")
		}
		if err != nil {
			return nil, usagef("%s=%q is not a proxy URL weaver can use: %v", v.name, v.value, err)
		}
	}
	return f, nil
}

func runServe(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "serve", "weaver serve [--listen ADDR] [--dir DIR] [flags]", `  weaver serve                                   # http://127.0.0.1:8088, jobs in ./weaver-jobs
  weaver serve --listen 127.0.0.1:9000 --dir /var/lib/weaver
  curl -d '{"url": "https://example.com/", "max_pages": 100}' http://127.0.0.1:8088/crawl
  curl http://127.0.0.1:8088/crawl/crawl_4f1c2a9b0d3e
  curl -X DELETE http://127.0.0.1:8088/crawl/crawl_4f1c2a9b0d3e`)
	listenAddr := fs.String("listen", "127.0.0.1:8088", "serve the job API on `ADDR`; a bare port binds to loopback, other interfaces must be named")
	tokenFile := fs.String("token-file", "", "demand the bearer token in `FILE` on every endpoint (or set WEAVER_TOKEN); needed off loopback")
	metricsPublic := fs.Bool("metrics-public", false, "let /metrics answer without the token")
	dir := fs.String("dir", "weaver-jobs", "keep each job in `DIR`/<job_id>.bolt (created if missing)")
	maxJobs := fs.Int("max-jobs", 4, "jobs crawling at once `N`; the others wait, queued")
	allowPrivate := fs.Bool("allow-private-networks", false, "let jobs connect to loopback and private addresses")
	jsonLogs := fs.Bool("json-logs", false, "log lines as JSON objects")
	minFree := crawl.Defaults().MinFreeSpace
	fs.Func("min-free-space", "pause the running jobs while a file system they write to has fewer than `BYTES` free (e.g. 2GB; default 512MB; 0 = off: only a write that fails for want of room pauses them)", func(v string) error {
		n, err := crawl.ParseBytes(v)
		minFree = n
		return err
	})
	var connectTo []string
	fs.Func("connect-to", "`HOST1:PORT1:HOST2:PORT2` as curl's --connect-to, for every job; repeatable", func(v string) error {
		connectTo = append(connectTo, v)
		return nil
	})
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("serve takes no arguments (got %q): jobs come through POST /crawl", fs.Args())
	}
	if *maxJobs < 1 {
		return usagef("--max-jobs must be at least 1, got %d", *maxJobs)
	}
	base := crawl.Defaults()
	base.ConnectTo = connectTo
	base.AllowPrivateNetworks = *allowPrivate
	base.MinFreeSpace = minFree
	base.Quiet = true // per-page lines of many jobs would drown the log; a job may ask for them
	if err := base.Validate(); err != nil {
		return usageError{err: err}
	}
	auth, err := apiAuth(e, *tokenFile, *metricsPublic)
	if err != nil {
		return err
	}
	if err := checkExposure(*listenAddr, auth); err != nil {
		return err
	}
	ln, err := listen(*listenAddr)
	if err != nil {
		return err
	}
	defer ln.Close()

	logger := newLogger(e.Stdout, *jsonLogs)
	proxy, err := proxyFunc(e)
	if err != nil {
		return err
	}
	m, err := serve.NewJobManager(serve.JobOptions{
		Dir: *dir, Base: base, MaxRunning: *maxJobs, Proxy: proxy, Log: logger.log,
		Software: "weaver/" + Version,
	})
	if err != nil {
		return err
	}
	srv := newServer(auth.Wrap(serve.NewJobHandler(m, Version)))
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	addr := ln.Addr().String()
	logger.log("INFO", fmt.Sprintf("Serving the job API on http://%s (GET / the jobs and their maps; jobs in %s%s)", addr, *dir, authNote(auth)))

	var runErr error
	select {
	case <-ctx.Done():
	case <-e.Signals:
		go func() {
			if _, ok := <-e.Signals; ok {
				logger.log("WARN", "Second signal: exiting now (unfinished jobs resume on restart)")
				os.Exit(130)
			}
		}()
	case err := <-serveErr:
		runErr = fmt.Errorf("serving: %w", err)
	}
	logger.log("INFO", "Shutting down: stopping the jobs (unfinished ones resume on restart)")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	jctx, jcancel := context.WithTimeout(context.Background(), time.Minute)
	defer jcancel()
	if err := m.Close(jctx); err != nil && runErr == nil {
		runErr = err
	}
	logger.log("INFO", "Stopped")
	return runErr
}
