package serve

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"mime"
	"net"
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

// Wrap returns h guarded by a. Without a token (cmd/weaver then binds
// to loopback only) it still refuses two things a web page in the
// operator's browser could do to a loopback API: reach it under another
// host name (DNS rebinding: the Host header must be an IP address or
// localhost), and change something from another origin (a request other
// than GET and HEAD whose Origin is not this server). Clients that send
// no Origin, curl and weaver itself, work as before.
func (a Auth) Wrap(h http.Handler) http.Handler {
	if a.Token == "" {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !plainHost(r.Host) {
				writeError(w, http.StatusForbidden, "Host %q refused: without a token this API answers only requests addressed to its IP address or localhost", r.Host)
				return
			}
			if !safeMethod(r) && !sameOriginOrNone(r) {
				writeError(w, http.StatusForbidden, "cross-origin %s refused (Origin %s)", r.Method, r.Header.Get("Origin"))
				return
			}
			h.ServeHTTP(w, withVia(r, ViaOpen))
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.MetricsPublic && r.URL.Path == "/metrics" {
			h.ServeHTTP(w, withVia(r, ViaPublic))
			return
		}
		if v := r.Header.Get("Authorization"); v != "" {
			scheme, tok, _ := strings.Cut(v, " ")
			if !strings.EqualFold(scheme, "Bearer") || !equal(strings.TrimSpace(tok), a.Token) {
				unauthorized(w, "wrong token in the Authorization header")
				return
			}
			h.ServeHTTP(w, withVia(r, ViaBearer))
			return
		}
		if q := r.URL.Query(); q.Has("token") {
			if !safeMethod(r) || !equal(q.Get("token"), a.Token) {
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
		if !safeMethod(r) {
			if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
				writeError(w, http.StatusForbidden, "a %s from a browser session must send Content-Type: application/json", r.Method)
				return
			}
			if !sameOriginOrNone(r) {
				writeError(w, http.StatusForbidden, "cross-origin %s refused (Origin %s)", r.Method, r.Header.Get("Origin"))
				return
			}
		}
		h.ServeHTTP(w, withVia(r, ViaSession))
	})
}

// How a request was let in, as Via reports it.
const (
	ViaOpen    = "open"    // no token is configured (loopback only)
	ViaBearer  = "bearer"  // the Authorization header
	ViaSession = "session" // the browser's session cookie
	ViaPublic  = "public"  // /metrics with MetricsPublic
)

type viaKey struct{}

func withVia(r *http.Request, via string) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), viaKey{}, via))
}

// Via says how Wrap let r in: ViaOpen, ViaBearer, ViaSession or
// ViaPublic; "" when r did not come through Wrap. A route needs it only
// to adapt what it shows (a page opened through a session, say): Wrap has
// already refused whatever it must, for every route, old and new.
func Via(r *http.Request) string {
	v, _ := r.Context().Value(viaKey{}).(string)
	return v
}

func safeMethod(r *http.Request) bool {
	return r.Method == http.MethodGet || r.Method == http.MethodHead
}

// sameOriginOrNone reports whether r has no Origin header or one naming
// the server it came to.
func sameOriginOrNone(r *http.Request) bool {
	o := r.Header.Get("Origin")
	return o == "" || sameOrigin(o, r)
}

// plainHost reports whether a Host header is an IP address or localhost,
// with or without a port: what a client that reaches a loopback API
// without a DNS name of its own sends.
func plainHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.EqualFold(host, "localhost") || net.ParseIP(host) != nil
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
