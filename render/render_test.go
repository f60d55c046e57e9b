package render_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/render"
)

// webOf returns a 20-host fake web whose hosts 3, 4, ... are the given
// shells, and their names.
func webOf(tb testing.TB, shells ...fakeweb.Shell) (*site, []string) {
	tb.Helper()
	names := fakeweb.New(fakeweb.Config{Hosts: 20, Seed: 7, RobotsDisallowEvery: -1}).Hosts()
	m := map[string]fakeweb.Shell{}
	var hosts []string
	for k, sh := range shells {
		m[names[3+k]] = sh
		hosts = append(hosts, names[3+k])
	}
	return newSite(tb, fakeweb.Config{Hosts: 20, Seed: 7, RobotsDisallowEvery: -1, Shells: m}), hosts
}

// want returns the hosts a crawl that sees host's links selects.
func want(s *site, host string) []string {
	return fakeweb.SelectHosts(host, baseOf(s, host), s.web.Links(host), 0, nil)
}

// baseOf is the <base href> of a shell's page ("" for none), read from the page.
func baseOf(s *site, host string) string {
	resp, err := s.srv.Client().Get("http://" + host + "/")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	buf := new(strings.Builder)
	_, _ = io.Copy(buf, resp.Body)
	_, rest, ok := strings.Cut(buf.String(), `<base href="`)
	if !ok {
		return ""
	}
	href, _, _ := strings.Cut(rest, `"`)
	return href
}

func TestPool_Shell_LinksAppear(t *testing.T) {
	s, hosts := webOf(t, fakeweb.ShellLinks)
	shell := hosts[0]
	p := newPool(t, s, nil)

	raw, err := s.srv.Client().Get("http://" + shell + "/")
	if err != nil {
		t.Fatal(err)
	}
	body := new(strings.Builder)
	_, _ = io.Copy(body, raw.Body)
	raw.Body.Close()
	if !render.LooksLikeShell([]byte(body.String())) {
		t.Fatalf("the shell's raw page does not look like a shell: %s", body)
	}

	res := mustRender(t, p, shell)
	got, wantHosts := hostsOf(t, res), want(s, shell)
	if len(wantHosts) == 0 {
		t.Fatal("the shell has no links to find")
	}
	if !slices.Equal(got, wantHosts) {
		t.Errorf("hosts of the rendered shell:\n got %v\nwant %v", got, wantHosts)
	}
	if res.Status != 200 || res.FinalURL != "http://"+shell+"/" || !res.Settled {
		t.Errorf("Result: status %d, FinalURL %q, settled %v; want 200, http://%s/, true", res.Status, res.FinalURL, res.Settled, shell)
	}
	if res.Took <= 200*time.Millisecond {
		t.Errorf("Took %v: the links come 200 ms after the script runs", res.Took)
	}
	t.Logf("rendered %s in %v: %d bytes, %d hosts, %d requests", shell, res.Took, len(res.HTML), len(got), len(res.Fetches))
}

func TestPool_OrdinaryPage_LoadsOnlyPageAndScripts(t *testing.T) {
	s, _ := webOf(t)
	host := s.web.Hosts()[0]
	p := newPool(t, s, nil)
	res := mustRender(t, p, host)
	if got, w := hostsOf(t, res), fakeweb.SelectHosts(host, baseOf(s, host), s.web.Links(host), 0, nil); !slices.Equal(got, w) {
		t.Errorf("hosts of a rendered ordinary page:\n got %v\nwant %v", got, w)
	}
	types := map[string]int{}
	for _, f := range res.Fetches {
		switch f.Type {
		case "Document", "Script", "XHR", "Fetch":
			if errors.Is(f.Err, render.ErrNotLoaded) && f.Type != "Script" {
				t.Errorf("%s %s: %v", f.Type, f.URL, f.Err)
			}
		default:
			if !errors.Is(f.Err, render.ErrNotLoaded) {
				t.Errorf("%s %s was loaded (status %d, err %v); want it refused", f.Type, f.URL, f.Status, f.Err)
			}
		}
		types[f.Type]++
	}
	if types["Stylesheet"] == 0 {
		t.Errorf("the page's style sheet was never asked for (requests %v): the test proves nothing", types)
	}
	for _, r := range s.web.Requests() {
		if strings.HasSuffix(r.Path, ".css") || strings.HasSuffix(r.Path, ".png") {
			t.Errorf("the web served %s%s", r.Host, r.Path)
		}
	}
	t.Logf("requests by type: %v", types)
}

func TestPool_PrivateAddressesRefused(t *testing.T) {
	s, hosts := webOf(t, fakeweb.ShellPrivate)
	shell := hosts[0]
	// No policy: what refuses is the crawl's transport itself.
	p := newPool(t, s, func(c *render.Config) { c.Policy = nil })
	res := mustRender(t, p, shell)
	refused := map[string]bool{}
	for _, f := range res.Fetches {
		switch f.URL {
		case "http://127.0.0.1:1/x.js", "http://localhost:1/x.js":
			if !errors.Is(f.Err, crawl.ErrRefusedAddress) {
				t.Errorf("%s: got %v, want crawl.ErrRefusedAddress from the transport", f.URL, f.Err)
			}
			refused[f.URL] = true
		case "http://127.0.0.1:1/api":
			if f.Err == nil {
				t.Errorf("%s was fetched", f.URL)
			}
			refused[f.URL] = true
		}
	}
	if len(refused) != 3 {
		t.Errorf("requests to private addresses seen: %v, want the two scripts and the fetch()", refused)
	}
	if got, w := hostsOf(t, res), want(s, shell); !slices.Equal(got, w) {
		t.Errorf("hosts:\n got %v\nwant %v", got, w)
	}

	// The page itself at a private address: refused, by the transport.
	_, err := p.Render(context.Background(), "http://"+s.srv.Addr()+"/")
	if !errors.Is(err, render.ErrFetch) || !errors.Is(err, crawl.ErrRefusedAddress) {
		t.Errorf("Render(%s): got %v, want ErrFetch and crawl.ErrRefusedAddress", s.srv.Addr(), err)
	}
}

func TestPool_RobotsDisallowScript(t *testing.T) {
	s, hosts := webOf(t, fakeweb.ShellScriptDisallowed)
	shell := hosts[0]
	p := newPool(t, s, nil)
	res := mustRender(t, p, shell)
	var saw bool
	for _, f := range res.Fetches {
		if strings.HasSuffix(f.URL, "/app.js") {
			saw = true
			if f.Err == nil || !strings.Contains(f.Err.Error(), "robots.txt") {
				t.Errorf("%s: got %v, want the policy's robots.txt refusal", f.URL, f.Err)
			}
		}
	}
	if !saw {
		t.Error("the browser never asked for app.js")
	}
	if got := hostsOf(t, res); len(got) != 0 {
		t.Errorf("hosts: got %v, want none (the script that adds them is disallowed)", got)
	}
	for _, r := range s.web.Requests() {
		if r.Path == "/app.js" {
			t.Errorf("the web served %s/app.js", r.Host)
		}
	}
}

func TestPool_HostilePages(t *testing.T) {
	s, hosts := webOf(t, fakeweb.ShellLinks, fakeweb.ShellLoop, fakeweb.ShellAlert, fakeweb.ShellNavigate, fakeweb.ShellHugeDOM, fakeweb.ShellPopup)
	good := hosts[0]
	const timeout = 5 * time.Second
	p := newPool(t, s, func(c *render.Config) {
		c.Timeout = timeout
		c.Settle = 2 * time.Second
		c.MaxBodyBytes = 256 << 10
	})
	seed := s.web.Hosts()[0]
	mustRender(t, p, good) // the browser's start is no page's cost
	for _, host := range hosts[1:] {
		sh := s.web.Shell(host)
		t.Run(sh.String(), func(t *testing.T) {
			start := time.Now()
			res, err := p.Render(context.Background(), "http://"+host+"/")
			took := time.Since(start)
			t.Logf("%v: took %v, %d bytes, settled %v, err %v, fetches %v", sh, took, len(res.HTML), res.Settled, err, res.Fetches)
			if took > timeout+3*time.Second {
				t.Errorf("took %v, want at most the timeout (%v) and a little", took, timeout)
			}
			switch sh {
			case fakeweb.ShellLoop:
				if !errors.Is(err, render.ErrTimeout) {
					t.Errorf("got %v, want ErrTimeout", err)
				}
			case fakeweb.ShellHugeDOM:
				if err != nil && !errors.Is(err, render.ErrTimeout) {
					t.Errorf("got %v, want a capped DOM or ErrTimeout", err)
				}
				if len(res.HTML) > 256<<10 {
					t.Errorf("HTML: %d bytes, want at most %d", len(res.HTML), 256<<10)
				}
			default:
				if err != nil {
					t.Fatalf("got %v", err)
				}
				if got, w := hostsOf(t, res), want(s, host); !slices.Equal(got, w) {
					t.Errorf("hosts:\n got %v\nwant %v", got, w)
				}
				if res.FinalURL != "http://"+host+"/" {
					t.Errorf("FinalURL %q: the page left", res.FinalURL)
				}
				wantNav := ""
				if sh == fakeweb.ShellNavigate {
					wantNav = "http://" + seed + "/" // refused, and said: the page's redirect
				}
				if res.Navigated != wantNav {
					t.Errorf("Navigated %q, want %q", res.Navigated, wantNav)
				}
			}
			if n := s.web.RequestCount(seed); n != 0 {
				t.Errorf("the seed host %s got %d requests: a navigation or a popup escaped", seed, n)
			}
			// The next page renders as well.
			next := mustRender(t, p, good)
			if got, w := hostsOf(t, next), want(s, good); !slices.Equal(got, w) {
				t.Errorf("the next page, after %v: hosts\n got %v\nwant %v", sh, got, w)
			}
		})
	}
	if n := p.Starts(); n != 1 {
		t.Errorf("browsers started: %d, want 1 (hostile pages cost a tab, not the browser)", n)
	}
}

func TestPool_BrowserKilled(t *testing.T) {
	s, hosts := webOf(t, fakeweb.ShellLinks, fakeweb.ShellLoop)
	good, loop := hosts[0], hosts[1]
	p := newPool(t, s, func(c *render.Config) { c.Tabs = 2 })
	mustRender(t, p, good)

	// Killed while a page renders: that render fails with ErrBrowserLost.
	pid := p.PID()
	errc := make(chan error, 1)
	go func() {
		_, err := p.Render(context.Background(), "http://"+loop+"/")
		errc <- err
	}()
	time.Sleep(1500 * time.Millisecond)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, render.ErrBrowserLost) {
			t.Errorf("the render in flight: got %v, want ErrBrowserLost", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the render in flight did not end")
	}
	res := mustRender(t, p, good)
	if got, w := hostsOf(t, res), want(s, good); !slices.Equal(got, w) {
		t.Errorf("after the kill: hosts\n got %v\nwant %v", got, w)
	}
	if p.PID() == pid || p.Starts() != 2 {
		t.Errorf("after the kill: pid %d (was %d), %d starts; want a new browser", p.PID(), pid, p.Starts())
	}

	// Killed between renders: the next render starts a new one.
	pid = p.PID()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	mustRender(t, p, good)
	if p.Starts() != 3 {
		t.Errorf("starts: got %d, want 3", p.Starts())
	}
}

func TestPool_ReplacedAfterMaxRenders(t *testing.T) {
	s, hosts := webOf(t, fakeweb.ShellLinks)
	p := newPool(t, s, func(c *render.Config) { c.MaxRenders = 2 })
	for range 5 {
		mustRender(t, p, hosts[0])
	}
	if got := p.Starts(); got != 3 {
		t.Errorf("starts after 5 renders, at most 2 per browser: got %d, want 3", got)
	}
}

// TestPool_NoNetworkOfItsOwn renders pages for a while and checks, every
// 100 ms, that no process of the browser holds a socket to anything but
// loopback; what chromium tried to reach on its own ends at the fence.
func TestPool_NoNetworkOfItsOwn(t *testing.T) {
	// The sampler sees a socket off loopback: a UDP socket connected to
	// TEST-NET-1 (connecting sends nothing).
	probe, err := net.Dial("udp", "192.0.2.1:9")
	if err != nil {
		t.Fatal(err)
	}
	if got := outsideSockets(os.Getpid()); len(got) == 0 {
		t.Fatal("outsideSockets does not see this process's socket to 192.0.2.1:9")
	}
	probe.Close()

	s, hosts := webOf(t, fakeweb.ShellLinks, fakeweb.ShellPopup)
	p := newPool(t, s, func(c *render.Config) { c.Tabs = 2 })
	mustRender(t, p, hosts[0])
	pid := p.PID()
	stop := make(chan struct{})
	found := make(chan []string, 1)
	go func() {
		var bad []string
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			for _, a := range outsideSockets(pid) {
				if !slices.Contains(bad, a) {
					bad = append(bad, a)
				}
			}
			select {
			case <-stop:
				found <- bad
				return
			case <-tick.C:
			}
		}
	}()
	deadline := time.Now().Add(8 * time.Second)
	for time.Now().Before(deadline) {
		mustRender(t, p, hosts[1])
		mustRender(t, p, hosts[0])
	}
	close(stop)
	if bad := <-found; len(bad) > 0 {
		t.Errorf("the browser's processes held sockets off loopback: %v", bad)
	}
	esc := p.Escaped()
	t.Logf("refused at the fence (%d): %v", len(esc), esc)
	for _, e := range esc {
		for _, h := range s.web.Hosts() {
			if strings.Contains(e, h) {
				t.Errorf("a request for the web escaped the interception: %s", e)
			}
		}
	}
}

func TestPool_Errors(t *testing.T) {
	if _, err := render.New(render.Config{Browser: "/usr/bin/chromium"}); !errors.Is(err, render.ErrConfig) {
		t.Errorf("New without a transport: got %v, want ErrConfig", err)
	}
	s, hosts := webOf(t, fakeweb.ShellLinks)
	p := newPool(t, s, nil)
	if _, err := p.Render(context.Background(), "ftp://"+hosts[0]+"/"); !errors.Is(err, render.ErrRefused) {
		t.Errorf("Render(ftp://): got %v, want ErrRefused", err)
	}
	if _, err := p.Render(context.Background(), "http://"+hosts[0]+"/app.js"); !errors.Is(err, render.ErrRefused) {
		t.Errorf("Render(a script): got %v, want ErrRefused (not HTML)", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Render(ctx, "http://"+hosts[0]+"/"); !errors.Is(err, context.Canceled) {
		t.Errorf("Render(canceled): got %v, want context.Canceled", err)
	}
	mustRender(t, p, hosts[0])
	pid := p.PID()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Render(context.Background(), "http://"+hosts[0]+"/"); !errors.Is(err, render.ErrClosed) {
		t.Errorf("Render after Close: got %v, want ErrClosed", err)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
		t.Errorf("the browser (pid %d) still runs after Close", pid)
	}
}

// handlerTransport answers every request with a handler, as a transport that
// did the TLS itself would: the browser never sees a certificate.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	return rec.Result(), nil
}

func TestPool_HTTPSAndUserAgent(t *testing.T) {
	const ua = "weaver-test/1.0 (+https://example.invalid/bot)"
	var mu sync.Mutex
	var agents []string
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		agents = append(agents, r.Header.Get("User-Agent"))
		mu.Unlock()
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, `<!DOCTYPE html><title>s</title><div id="root"></div><script src="/main.js"></script>`)
		case "/main.js":
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = io.WriteString(w, `fetch('/api/links').then(r => r.json()).then(hosts => {
				const root = document.getElementById('root');
				for (const h of hosts) { const a = document.createElement('a'); a.href = 'https://' + h + '/'; root.append(a); }
				root.dataset.ua = navigator.userAgent;
			});`)
		case "/api/links":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `["a.example.org", "b.example.net"]`)
		default:
			http.NotFound(w, r)
		}
	})
	p, err := render.New(render.Config{Browser: browserPath(t), Transport: handlerTransport{mux}, UserAgent: ua, Tabs: 1, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	res, err := p.Render(context.Background(), "https://app.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	if got, w := hostsOf(t, res), []string{"a.example.org", "b.example.net"}; !slices.Equal(got, w) {
		t.Errorf("hosts: got %v, want %v\n%s", got, w, res.HTML)
	}
	if !strings.Contains(string(res.HTML), `data-ua="`+ua+`"`) {
		t.Errorf("navigator.userAgent is not %q: %s", ua, res.HTML)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(agents) != 3 {
		t.Errorf("requests: got %d, want 3 (page, script, API)", len(agents))
	}
	for _, a := range agents {
		if a != ua {
			t.Errorf("a request's User-Agent: got %q, want %q", a, ua)
		}
	}
}

func TestPool_RenderPage_NoSecondRequest(t *testing.T) {
	s, hosts := webOf(t, fakeweb.ShellLinks)
	shell := hosts[0]
	resp, err := s.srv.Client().Get("http://" + shell + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	s.web.Reset()
	p := newPool(t, s, nil)
	res, err := p.RenderPage(context.Background(), render.Page{URL: "http://" + shell + "/", Status: resp.StatusCode, Header: resp.Header, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.web.Requests() {
		if r.Host == shell && r.Path == "/" {
			t.Errorf("the page was fetched again: %+v", r)
		}
	}
	if got, w := hostsOf(t, res), want(s, shell); !slices.Equal(got, w) {
		t.Errorf("hosts:\n got %v\nwant %v", got, w)
	}
}

func TestPool_ReplacedAfterTimeoutsInARow(t *testing.T) {
	s, hosts := webOf(t, fakeweb.ShellLinks, fakeweb.ShellLoop)
	// 5 s a render: the endless page times out whatever the bound, and the
	// first render of the replacing browser includes its start, which took
	// over 2 s on a loaded CI machine (one run in five).
	p := newPool(t, s, func(c *render.Config) { c.Timeout = 5 * time.Second; c.Settle = time.Second })
	for k := range 3 {
		if _, err := p.Render(context.Background(), "http://"+hosts[1]+"/"); !errors.Is(err, render.ErrTimeout) {
			t.Fatalf("render %d of the endless loop: got %v, want ErrTimeout", k+1, err)
		}
	}
	mustRender(t, p, hosts[0])
	if got := p.Starts(); got != 2 {
		t.Errorf("starts after 3 timeouts in a row: got %d, want 2", got)
	}
}

// TestPool_CrossOriginAPI: an app on www.example.com that asks
// api.example.com (its registrable domain) with a JSON request, which
// needs a CORS preflight, gets its answer.
func TestPool_CrossOriginAPI(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.Host+r.URL.Path)
		mu.Unlock()
		switch r.Host + r.URL.Path {
		case "www.example.com/":
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, `<div id="app"></div><script src="/app.js"></script>`)
		case "www.example.com/app.js":
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = io.WriteString(w, `fetch('https://api.example.com/links', {headers: {'Content-Type': 'application/json', 'X-App': '1'}})
				.then(r => r.json()).then(hosts => {
					for (const h of hosts) { const a = document.createElement('a'); a.href = 'https://' + h + '/'; document.getElementById('app').append(a); }
				});`)
		case "api.example.com/links":
			w.Header().Set("Access-Control-Allow-Origin", "https://www.example.com")
			w.Header().Set("Access-Control-Allow-Headers", "Content-Type, X-App")
			if r.Method == http.MethodOptions {
				w.WriteHeader(http.StatusNoContent)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `["c.example.org"]`)
		default:
			http.NotFound(w, r)
		}
	})
	p, err := render.New(render.Config{Browser: browserPath(t), Transport: handlerTransport{h}, Tabs: 1, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	res, err := p.Render(context.Background(), "https://www.example.com/")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got, w := hostsOf(t, res), []string{"c.example.org"}; !slices.Equal(got, w) {
		t.Errorf("hosts: got %v, want %v; requests %v, fetches %+v", got, w, seen, res.Fetches)
	}
}
