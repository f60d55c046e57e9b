package serve

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// Auth guards every endpoint of a handler with a bearer token. The zero
// value (no token) lets everyone through: cmd/weaver allows that only on
// loopback.
//
// A request is let in when it carries `Authorization: Bearer TOKEN`, or
// the session cookie a browser is given for opening any page once with
// `?token=TOKEN` (HttpOnly, SameSite=Strict; the answer redirects to the
// same URL without the token, so it does not stay in the address bar or
// the history). A request that changes something (any method but GET and
// HEAD) and relies on the cookie must also send a JSON body and no
// foreign Origin: a cross-site page can submit a form or a text/plain POST
// without a preflight, never application/json, so no other site can start
// or stop a crawl through a logged-in browser. /metrics is open to anyone
// when MetricsPublic is set, for a Prometheus without credentials.
type Auth struct {
	Token         string
	MetricsPublic bool
}

// CookieName is the session cookie's name.
const CookieName = "weaver_session"

// session is the cookie's value: derived from the token, so the token
// itself is never stored by the browser, and changing the token ends
// every session.
func (a Auth) session() string {
	m := hmac.New(sha256.New, []byte(a.Token))
	m.Write([]byte("weaver browser session"))
	return hex.EncodeToString(m.Sum(nil))
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// Wrap returns h guarded by a; h itself when a has no token.
func (a Auth) Wrap(h http.Handler) http.Handler {
	if a.Token == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.MetricsPublic && r.URL.Path == "/metrics" {
			h.ServeHTTP(w, r)
			return
		}
		if v := r.Header.Get("Authorization"); v != "" {
			scheme, tok, _ := strings.Cut(v, " ")
			if !strings.EqualFold(scheme, "Bearer") || !equal(strings.TrimSpace(tok), a.Token) {
				unauthorized(w, "wrong token in the Authorization header")
				return
			}
			h.ServeHTTP(w, r)
			return
		}
		safe := r.Method == http.MethodGet || r.Method == http.MethodHead
		if q := r.URL.Query(); q.Has("token") {
			if !safe || !equal(q.Get("token"), a.Token) {
				unauthorized(w, "wrong token")
				return
			}
			http.SetCookie(w, &http.Cookie{
				Name: CookieName, Value: a.session(), Path: "/",
				HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
			})
			q.Del("token")
			u := *r.URL
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		c, err := r.Cookie(CookieName)
		if err != nil || !equal(c.Value, a.session()) {
			unauthorized(w, "this API needs a token: send 'Authorization: Bearer TOKEN', or open the page once with ?token=TOKEN")
			return
		}
		if !safe {
			if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
				writeError(w, http.StatusForbidden, "a %s from a browser session must send Content-Type: application/json", r.Method)
				return
			}
			if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r) {
				writeError(w, http.StatusForbidden, "cross-origin %s refused (Origin %s)", r.Method, o)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether an Origin header names the server the
// request came to.
func sameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, r.Host)
}

func unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="weaver"`)
	writeError(w, http.StatusUnauthorized, "%s", msg)
}
