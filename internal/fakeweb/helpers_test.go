package fakeweb_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

// mustStart serves w on a loopback port until the test ends.
func mustStart(tb testing.TB, w *fakeweb.Web) *fakeweb.Server {
	tb.Helper()
	srv, err := w.Start("127.0.0.1:0")
	if err != nil {
		tb.Fatalf("Start: %v", err)
	}
	tb.Cleanup(func() {
		if err := srv.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return srv
}

// client returns a client that reaches every host through srv, as
// --connect-to does, closing its idle connections when the test ends.
func client(tb testing.TB, srv *fakeweb.Server) *http.Client {
	c := srv.Client()
	tb.Cleanup(c.CloseIdleConnections)
	return c
}

// get fetches url with a deadline and returns status, headers and body.
func get(tb testing.TB, c *http.Client, url string) (int, http.Header, []byte) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		tb.Fatalf("NewRequest %s: %v", url, err)
	}
	resp, err := c.Do(req)
	if err != nil {
		tb.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("GET %s: read: %v", url, err)
	}
	return resp.StatusCode, resp.Header, body
}

// serve answers one GET through the handler, without a network.
func serve(w http.Handler, url string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	w.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, url, nil))
	return rec
}

// parsed is what an HTML parser finds in a page.
type parsed struct {
	title string
	desc  string
	base  string   // first <base href>, decoded; "" if none
	hrefs []string // <a href> values, decoded, in document order
}

// parse reads a page with golang.org/x/net/html, as the crawler does.
func parse(tb testing.TB, body []byte) parsed {
	tb.Helper()
	doc, err := html.Parse(strings.NewReader(string(body)))
	if err != nil {
		tb.Fatalf("html.Parse: %v", err)
	}
	var p parsed
	baseSeen := false
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		attr := func(key string) (string, bool) {
			for _, a := range n.Attr {
				if a.Key == key {
					return a.Val, true
				}
			}
			return "", false
		}
		switch n.Data {
		case "title":
			if p.title == "" && n.FirstChild != nil {
				p.title = n.FirstChild.Data
			}
		case "meta":
			if name, _ := attr("name"); name == "description" {
				p.desc, _ = attr("content")
			}
		case "base":
			if v, ok := attr("href"); ok && !baseSeen {
				p.base, baseSeen = v, true
			}
		case "a":
			if v, ok := attr("href"); ok {
				p.hrefs = append(p.hrefs, v)
			}
		}
	}
	return p
}

// escapeAll re-escapes decoded hrefs into the raw form SelectHosts takes.
func escapeAll(hrefs []string) []string {
	out := make([]string, len(hrefs))
	for k, h := range hrefs {
		out[k] = html.EscapeString(h)
	}
	return out
}

func htmlUnescape(s string) string { return html.UnescapeString(s) }
