package serve_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/serve"
)

// Every way in and every way refused, on a handler that records what
// reached it.
func TestAuth_Wrap(t *testing.T) {
	const token = "s3cret-token"
	reached := 0
	h := serve.Auth{Token: token}.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached++
		w.WriteHeader(http.StatusOK)
	}))
	do := func(method, target string, hdr map[string]string, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, "http://127.0.0.1:8088"+target, strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	// The cookie a browser gets for ?token=.
	rec := do("GET", "/status?token="+token+"&x=1", nil, "")
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/status?x=1" {
		t.Fatalf("?token=: got %d, Location %q; want 303 to /status?x=1", rec.Code, rec.Header().Get("Location"))
	}
	cookies := rec.Result().Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || strings.Contains(cookies[0].Value, token) {
		t.Fatalf("cookie: %+v; want one HttpOnly SameSite=Strict cookie that does not hold the token", cookies)
	}
	cookie := cookies[0].Name + "=" + cookies[0].Value
	for _, c := range []struct {
		name, method, target string
		hdr                  map[string]string
		want                 int
	}{
		{"no credentials", "GET", "/status", nil, 401},
		{"bearer", "GET", "/status", map[string]string{"Authorization": "Bearer " + token}, 200},
		{"bearer, lower-case scheme", "POST", "/stop", map[string]string{"Authorization": "bearer " + token}, 200},
		{"wrong bearer", "GET", "/status", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"basic", "GET", "/status", map[string]string{"Authorization": "Basic " + token}, 401},
		{"wrong ?token", "GET", "/status?token=nope", nil, 401},
		{"?token on a POST", "POST", "/stop?token=" + token, nil, 401},
		{"metrics needs the token", "GET", "/metrics", nil, 401},
		{"cookie GET", "GET", "/graph", map[string]string{"Cookie": cookie}, 200},
		{"wrong cookie", "GET", "/graph", map[string]string{"Cookie": serve.CookieName + "=00"}, 401},
		{"cookie form POST", "POST", "/stop", map[string]string{"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"}, 403},
		{"cookie text POST", "POST", "/stop", map[string]string{"Cookie": cookie, "Content-Type": "text/plain"}, 403},
		{"cookie JSON POST", "POST", "/seeds", map[string]string{"Cookie": cookie, "Content-Type": "application/json"}, 200},
		{"cookie JSON POST, same origin", "POST", "/seeds", map[string]string{"Cookie": cookie, "Content-Type": "application/json", "Origin": "http://127.0.0.1:8088"}, 200},
		{"cookie JSON POST, other origin", "POST", "/seeds", map[string]string{"Cookie": cookie, "Content-Type": "application/json", "Origin": "http://evil.example"}, 403},
		{"cookie DELETE without JSON", "DELETE", "/crawl/x", map[string]string{"Cookie": cookie}, 403},
	} {
		before := reached
		rec := do(c.method, c.target, c.hdr, "{}")
		if rec.Code != c.want {
			t.Errorf("%s: got %d, want %d (%s)", c.name, rec.Code, c.want, rec.Body)
		}
		if got := reached > before; got != (c.want == 200) {
			t.Errorf("%s: reached the handler %v, want %v", c.name, got, c.want == 200)
		}
		if c.want == 401 && (rec.Header().Get("WWW-Authenticate") == "" || !strings.Contains(rec.Body.String(), `"error"`)) {
			t.Errorf("%s: 401 without WWW-Authenticate or a JSON error: %v %s", c.name, rec.Header(), rec.Body)
		}
	}
	// --metrics-public opens /metrics and nothing else.
	open := serve.Auth{Token: token, MetricsPublic: true}.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for target, want := range map[string]int{"/metrics": 200, "/status": 401} {
		rec := httptest.NewRecorder()
		open.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
		if rec.Code != want {
			t.Errorf("metrics public, %s: got %d, want %d", target, rec.Code, want)
		}
	}
	// No token (loopback only): open to clients addressing it by IP or
	// localhost, closed to DNS rebinding and to cross-origin changes.
	var via string
	none := serve.Auth{}.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { via = serve.Via(r) }))
	for _, c := range []struct {
		name, method, target string
		hdr                  map[string]string
		want                 int
	}{
		{"curl POST", "POST", "http://127.0.0.1:8088/stop", nil, 200},
		{"localhost", "GET", "http://localhost:8088/status", nil, 200},
		{"IPv6 loopback", "GET", "http://[::1]:8088/status", nil, 200},
		{"same-origin POST", "POST", "http://127.0.0.1:8088/seeds", map[string]string{"Origin": "http://127.0.0.1:8088"}, 200},
		{"cross-origin POST", "POST", "http://127.0.0.1:8088/stop", map[string]string{"Origin": "http://evil.example"}, 403},
		{"cross-origin DELETE", "DELETE", "http://127.0.0.1:8088/crawl/x", map[string]string{"Origin": "null"}, 403},
		{"rebound host name", "GET", "http://evil.example:8088/graph", nil, 403},
	} {
		via = ""
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(c.method, c.target, nil)
		for k, v := range c.hdr {
			req.Header.Set(k, v)
		}
		none.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("no token, %s: got %d, want %d (%s)", c.name, rec.Code, c.want, rec.Body)
		}
		if wantVia := map[bool]string{true: serve.ViaOpen}[c.want == 200]; via != wantVia {
			t.Errorf("no token, %s: Via %q, want %q", c.name, via, wantVia)
		}
	}
}

// TestAuth_Via: a route learns how its request was let in.
func TestAuth_Via(t *testing.T) {
	const token = "s3cret-token-0123456789"
	var via string
	h := serve.Auth{Token: token, MetricsPublic: true}.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { via = serve.Via(r) }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/?token="+token, nil))
	cookie := rec.Result().Cookies()[0]
	for _, c := range []struct {
		name, target string
		hdr          map[string]string
		want         string
	}{
		{"bearer", "/status", map[string]string{"Authorization": "Bearer " + token}, serve.ViaBearer},
		{"session", "/", map[string]string{"Cookie": cookie.Name + "=" + cookie.Value}, serve.ViaSession},
		{"public metrics", "/metrics", nil, serve.ViaPublic},
	} {
		via = ""
		req := httptest.NewRequest("GET", c.target, nil)
		for k, v := range c.hdr {
			req.Header.Set(k, v)
		}
		h.ServeHTTP(httptest.NewRecorder(), req)
		if via != c.want {
			t.Errorf("%s: Via %q, want %q", c.name, via, c.want)
		}
	}
	if got := serve.Via(httptest.NewRequest("GET", "/", nil)); got != "" {
		t.Errorf("Via of a request that did not come through Wrap: %q, want empty", got)
	}
}
