package e2e_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/serve"
)

const testToken = "t0ken-for-the-tests"

// tokenFile writes the token, with a trailing newline as an editor leaves it.
func tokenFile(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "token")
	if err := os.WriteFile(p, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// request sends one request through client (nil: a new one that follows
// no redirect) and returns the status code, the body and the response.
func request(t *testing.T, client *http.Client, method, url string, hdr map[string]string, body string) (int, string, *http.Response) {
	t.Helper()
	if client == nil {
		client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), resp
}

// startTokenCrawl starts a crawl that stays busy (a 1 B/s host) with its
// API on loopback behind the test token, plus extra flags.
func startTokenCrawl(t *testing.T, extra ...string) (p *proc, db, base string) {
	t.Helper()
	w := fakeweb.New(fakeweb.Config{Hosts: 50, Seed: 5, RobotsDisallowEvery: -1,
		Faults: map[string]fakeweb.Fault{"slow-a.drip.test": fakeweb.SlowDrip}})
	srv := startWeb(t, w)
	dir := t.TempDir()
	db = filepath.Join(dir, "w.bolt")
	args := crawlArgs(srv, db, append([]string{"--listen", "127.0.0.1:0", "--token-file", tokenFile(t, dir),
		"--workers", "2", "--max-outbound-links", "1", "--max-crawls-per-node", "1", "--ignore-robots",
		"--timeout", "20s", "--retries", "0"}, extra...)...)
	p = start(t, dir, append(args, w.Seed())...)
	a := listenAPI(t, p, db)
	return p, db, a.base
}

// TestAuth_ListenToken: with --token-file every endpoint of a crawl's API
// demands the token; a browser gets a session cookie from ?token= and can
// then read, and change things only with JSON from the same origin.
func TestAuth_ListenToken(t *testing.T) {
	t.Parallel()
	p, db, base := startTokenCrawl(t)
	bearer := map[string]string{"Authorization": "Bearer " + testToken}

	for _, path := range []string{"/status", "/metrics", "/graph", "/snapshot"} {
		code, body, resp := request(t, nil, "GET", base+path, nil, "")
		if code != http.StatusUnauthorized || !strings.Contains(body, `"error"`) || resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("GET %s without a token: %d %q, want 401 with a JSON error and WWW-Authenticate", path, code, body)
		}
	}
	if code, _, _ := request(t, nil, "POST", base+"/stop", nil, ""); code != http.StatusUnauthorized {
		t.Errorf("POST /stop without a token: %d, want 401", code)
	}
	if code, _, _ := request(t, nil, "GET", base+"/status", map[string]string{"Authorization": "Bearer wrong"}, ""); code != http.StatusUnauthorized {
		t.Errorf("wrong token: %d, want 401", code)
	}
	if code, body, _ := request(t, nil, "GET", base+"/status", bearer, ""); code != http.StatusOK || !strings.Contains(body, `"crawl"`) {
		t.Errorf("GET /status with the token: %d %q", code, body)
	}

	// The browser's way in.
	code, _, resp := request(t, nil, "GET", base+"/graph?format=json&token="+testToken, nil, "")
	if code != http.StatusSeeOther || strings.Contains(resp.Header.Get("Location"), testToken) {
		t.Fatalf("?token=: %d to %q, want 303 to the URL without the token", code, resp.Header.Get("Location"))
	}
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == serve.CookieName {
			session = c
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || strings.Contains(session.Value, testToken) {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict, not the token itself", session)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	if code, body, _ := request(t, browser, "GET", base+"/graph?format=json&token="+testToken, nil, ""); code != http.StatusOK || !strings.Contains(body, `"nodes"`) {
		t.Errorf("browser after ?token=: %d %q", code, body)
	}
	if code, _, _ := request(t, browser, "GET", base+"/status", nil, ""); code != http.StatusOK {
		t.Errorf("browser GET /status with the cookie: %d", code)
	}
	seeds := `{"url": "http://www.example-not-there.test/"}`
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	if code, _, _ := request(t, browser, "POST", base+"/seeds", form, "url=x"); code != http.StatusForbidden {
		t.Errorf("browser form POST: %d, want 403", code)
	}
	if code, _, _ := request(t, browser, "POST", base+"/stop", map[string]string{"Content-Type": "text/plain"}, ""); code != http.StatusForbidden {
		t.Errorf("browser text/plain POST /stop: %d, want 403", code)
	}
	cross := map[string]string{"Content-Type": "application/json", "Origin": "http://evil.example"}
	if code, _, _ := request(t, browser, "POST", base+"/seeds", cross, seeds); code != http.StatusForbidden {
		t.Errorf("browser JSON POST from another origin: %d, want 403", code)
	}
	same := map[string]string{"Content-Type": "application/json", "Origin": base}
	if code, body, _ := request(t, browser, "POST", base+"/seeds", same, seeds); code != http.StatusOK {
		t.Errorf("browser JSON POST from the page's origin: %d %q, want 200", code, body)
	}

	// The CLI reaches the running crawl with the token from the environment.
	dir := filepath.Dir(db)
	r := weaverEnv(t, dir, []string{"WEAVER_TOKEN=" + testToken}, "status", "--db", db, "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"crawl"`) {
		t.Errorf("weaver status with WEAVER_TOKEN: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Without the token, or with another, the advice is this command's
	// (--token-file, WEAVER_TOKEN), not an HTTP client's header.
	r = weaver(t, dir, "status", "--db", db)
	if r.code == 0 || !strings.Contains(r.stderr, "401") || !strings.Contains(r.stderr, "--token-file FILE") ||
		!strings.Contains(r.stderr, "WEAVER_TOKEN") || strings.Contains(r.stderr, "Authorization") {
		t.Errorf("weaver status without the token: exit %d, want a failure naming 401 and --token-file:\n%s", r.code, r.stderr)
	}
	r = weaverEnv(t, dir, []string{"WEAVER_TOKEN=" + strings.Repeat("x", len(testToken))}, "status", "--db", db)
	if r.code == 0 || !strings.Contains(r.stderr, "refused the token given") {
		t.Errorf("weaver status with another token: exit %d, want a failure saying the token is refused:\n%s", r.code, r.stderr)
	}
	r = weaver(t, dir, "status", "--db", db, "--token-file", filepath.Join(dir, "token"))
	if r.code != 0 {
		t.Errorf("weaver status --token-file: exit %d\n%s", r.code, r.stderr)
	}
	r = weaverEnv(t, dir, []string{"WEAVER_TOKEN=" + testToken}, "snapshot", "--db", db, filepath.Join(dir, "copy.bolt"))
	if r.code != 0 {
		t.Errorf("weaver snapshot through the API with WEAVER_TOKEN: exit %d\n%s", r.code, r.stderr)
	}

	if code, _, _ := request(t, nil, "POST", base+"/stop", bearer, ""); code != http.StatusAccepted {
		t.Errorf("POST /stop with the token: %d, want 202", code)
	}
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d after POST /stop:\n%s", code, p.out.String())
	}
}

// TestAuth_MetricsPublic: --metrics-public opens /metrics, nothing else.
func TestAuth_MetricsPublic(t *testing.T) {
	t.Parallel()
	p, _, base := startTokenCrawl(t, "--metrics-public")
	if code, body, _ := request(t, nil, "GET", base+"/metrics", nil, ""); code != http.StatusOK || !strings.Contains(body, "weaver_") {
		t.Errorf("GET /metrics without a token, --metrics-public: %d", code)
	}
	if code, _, _ := request(t, nil, "GET", base+"/status", nil, ""); code != http.StatusUnauthorized {
		t.Errorf("GET /status without a token, --metrics-public: %d, want 401", code)
	}
	request(t, nil, "POST", base+"/stop", map[string]string{"Authorization": "Bearer " + testToken}, "")
	p.wait(t)
}

// TestAuth_ExposedWithoutToken: binding other than loopback without a
// token is refused before anything is written, with one line naming
// --token-file; a bad token file is refused too.
func TestAuth_ExposedWithoutToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "w.bolt")
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"crawl on 0.0.0.0", []string{"crawl", "--db", db, "--listen", "0.0.0.0:0", "http://a.test/"}, "--token-file"},
		{"crawl on [::]", []string{"crawl", "--db", db, "--listen", "[::]:0", "http://a.test/"}, "--token-file"},
		{"serve on 0.0.0.0", []string{"serve", "--dir", filepath.Join(dir, "jobs"), "--listen", "0.0.0.0:0"}, "--token-file"},
		{"empty token file", []string{"crawl", "--db", db, "--listen", "127.0.0.1:0", "--token-file", empty, "http://a.test/"}, "token-file"},
		{"missing token file", []string{"serve", "--dir", filepath.Join(dir, "jobs"), "--token-file", filepath.Join(dir, "nope")}, "token-file"},
	} {
		r := weaver(t, dir, c.args...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 2 || len(lines) != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line naming %s", c.name, r.code, r.stderr, c.want)
		}
	}
	// A token that guards nothing, or two that disagree.
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("abc123\n"), 0o600)
	for _, c := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"short token file", nil, []string{"serve", "--dir", filepath.Join(dir, "jobs"), "--token-file", short}, "at least 16"},
		{"short WEAVER_TOKEN", []string{"WEAVER_TOKEN=abc"}, []string{"crawl", "--db", db, "--listen", "127.0.0.1:0", "http://a.test/"}, "WEAVER_TOKEN"},
		{"token with a space", []string{"WEAVER_TOKEN=abcdefgh ijklmnopqrstu"}, []string{"serve", "--dir", filepath.Join(dir, "jobs")}, "letters, digits"},
		{"base64 token", []string{"WEAVER_TOKEN=abcdefgh+ijklmnopqrstu="}, []string{"serve", "--dir", filepath.Join(dir, "jobs")}, `not '+'`},
		{"WEAVER_TOKEN and --token-file differ", []string{"WEAVER_TOKEN=another-token-0123456789"},
			[]string{"crawl", "--db", db, "--listen", "127.0.0.1:0", "--token-file", tokenFile(t, dir), "http://a.test/"}, "different tokens"},
	} {
		r := weaverEnv(t, dir, c.env, c.args...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 2 || len(lines) != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line naming %q", c.name, r.code, r.stderr, c.want)
		}
	}
	for _, p := range []string{db, filepath.Join(dir, "jobs")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was created by a refused command", p)
		}
	}
}

// TestAuth_ServeJobAPI: weaver serve's job API is behind the token too.
func TestAuth_ServeJobAPI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := start(t, dir, "serve", "--dir", filepath.Join(dir, "jobs"), "--listen", "127.0.0.1:0", "--token-file", tokenFile(t, dir))
	base := jobAPI(t, p).base
	if code, _, _ := request(t, nil, "GET", base+"/crawl", nil, ""); code != http.StatusUnauthorized {
		t.Errorf("GET /crawl without a token: %d, want 401", code)
	}
	if code, _, _ := request(t, nil, "POST", base+"/crawl", map[string]string{"Content-Type": "application/json"}, `{"url": "http://a.test/"}`); code != http.StatusUnauthorized {
		t.Errorf("POST /crawl without a token: %d, want 401", code)
	}
	if code, body, _ := request(t, nil, "GET", base+"/crawl", map[string]string{"Authorization": "Bearer " + testToken}, ""); code != http.StatusOK {
		t.Errorf("GET /crawl with the token: %d %q", code, body)
	}
	p.cmd.Process.Signal(os.Interrupt)
	p.wait(t)
}

// TestAuth_LoopbackWithoutToken: without a token, loopback works as
// before for curl and weaver itself, while a web page in the operator's
// browser can neither change anything cross-origin nor reach the API
// under a rebound host name.
func TestAuth_LoopbackWithoutToken(t *testing.T) {
	t.Parallel()
	sc := startSlowCrawl(t)
	base := sc.api.base
	if code, body, _ := request(t, nil, "GET", base+"/status", nil, ""); code != http.StatusOK || !strings.Contains(body, `"crawl"`) {
		t.Errorf("GET /status without a token on loopback: %d %q", code, body)
	}
	if code, body, _ := request(t, nil, "GET", strings.Replace(base, "127.0.0.1", "localhost", 1)+"/status", nil, ""); code != http.StatusOK {
		t.Errorf("GET /status through localhost: %d %q", code, body)
	}
	if code, _, _ := request(t, nil, "GET", base+"/status", map[string]string{"Host": "rebound.evil.example"}, ""); code != http.StatusForbidden {
		t.Errorf("GET /status with a foreign Host: %d, want 403", code)
	}
	evil := map[string]string{"Origin": "http://evil.example", "Content-Type": "text/plain"}
	if code, _, _ := request(t, nil, "POST", base+"/stop", evil, ""); code != http.StatusForbidden {
		t.Errorf("cross-origin POST /stop: %d, want 403", code)
	}
	if code, body, _ := request(t, nil, "POST", base+"/seeds", map[string]string{"Content-Type": "application/json"}, `{"url": "http://`+sc.fresh+`/"}`); code != http.StatusOK {
		t.Errorf("POST /seeds without a token on loopback: %d %q", code, body)
	}
	sc.stop(t)
}
