package fakeweb_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
)

// faultWeb returns a small web whose host "f.test" has fault f, served on a
// loopback port.
func faultWeb(t *testing.T, f fakeweb.Fault) (*fakeweb.Web, *http.Client) {
	t.Helper()
	w := fakeweb.New(fakeweb.Config{Hosts: 5, Seed: 1, Faults: map[string]fakeweb.Fault{"f.test": f}})
	return w, client(t, mustStart(t, w))
}

// rawClient does not decompress, so a test sees the bytes on the wire.
func rawClient(t *testing.T, c *http.Client) *http.Client {
	tr := c.Transport.(*http.Transport).Clone()
	tr.DisableCompression = true
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func TestFault_Names(t *testing.T) {
	all := fakeweb.AllFaults()
	if got, want := len(all), 20; got != want {
		t.Fatalf("AllFaults: got %d, want %d", got, want)
	}
	for _, f := range all {
		got, err := fakeweb.ParseFault(strings.ToLower(f.String()))
		if err != nil || got != f {
			t.Errorf("ParseFault(%q): got %v, %v", f.String(), got, err)
		}
	}
	f, err := fakeweb.ParseFault("SlowDrip|HugeRobots, TooMany429")
	if err != nil || f != fakeweb.SlowDrip|fakeweb.HugeRobots|fakeweb.TooMany429 {
		t.Errorf("ParseFault(list): got %v, %v", f, err)
	}
	if got, want := f.String(), "SlowDrip|TooMany429|HugeRobots"; got != want {
		t.Errorf("String: got %q, want %q", got, want)
	}
	if _, err := fakeweb.ParseFault("Sloth"); !errors.Is(err, fakeweb.ErrUnknownFault) {
		t.Errorf("ParseFault(unknown): got %v, want ErrUnknownFault", err)
	}
}

func TestFault_ExtraHostIsLinked(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 5, Seed: 1, Faults: map[string]fakeweb.Fault{
		"F.test": fakeweb.SlowDrip, "g.test": fakeweb.GzipBomb,
	}})
	hosts := w.Hosts()
	if got, want := hosts[5:], []string{"f.test", "g.test"}; !slices.Equal(got, want) {
		t.Fatalf("extra hosts: got %q, want %q", got, want)
	}
	edges := w.ExpectedEdges(10, fakeweb.DefaultExcluded)
	for _, h := range []string{"f.test", "g.test"} {
		linked := false
		for e := range edges {
			if e[1] == h {
				linked = true
			}
			if e[0] == h {
				t.Errorf("faulty host %s: has out-edge %v", h, e)
			}
		}
		if !linked {
			t.Errorf("extra host %s: no in-edge", h)
		}
	}
	if w.Fault("f.test") != fakeweb.SlowDrip || w.Links("f.test") != nil {
		t.Errorf("f.test: fault %v, links %q", w.Fault("f.test"), w.Links("f.test"))
	}
	// A fault on a generated host applies to it.
	w2 := fakeweb.New(fakeweb.Config{Hosts: 5, Seed: 1, Faults: map[string]fakeweb.Fault{hosts[2]: fakeweb.BinaryHTML}})
	if got := len(w2.Hosts()); got != 5 || w2.Fault(hosts[2]) != fakeweb.BinaryHTML {
		t.Errorf("fault on a generated host: %d hosts, fault %v", got, w2.Fault(hosts[2]))
	}
}

func TestFault_SlowDrip(t *testing.T) {
	_, c := faultWeb(t, fakeweb.SlowDrip)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://f.test/", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil {
		t.Errorf("body ended after %d bytes, want it to drip until the deadline", n)
	}
	if n >= 3 {
		t.Errorf("read %d bytes in 2s, want fewer than 3", n)
	}
}

func TestFault_EndlessBody(t *testing.T) {
	_, c := faultWeb(t, fakeweb.EndlessBody)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://f.test/", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	defer resp.Body.Close()
	if resp.ContentLength != -1 {
		t.Errorf("Content-Length: got %d, want none", resp.ContentLength)
	}
	const want = 20 << 20
	if n, err := io.CopyN(io.Discard, resp.Body, want); err != nil {
		t.Errorf("read %d of %d bytes: %v", n, want, err)
	}
}

func TestFault_Huge(t *testing.T) {
	_, c := faultWeb(t, fakeweb.Huge)
	resp, err := c.Get("http://f.test/")
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || n != 50<<20 || resp.ContentLength != 50<<20 {
		t.Errorf("body: %d bytes (Content-Length %d), %v; want 50 MiB", n, resp.ContentLength, err)
	}
}

func TestFault_GzipBomb(t *testing.T) {
	_, c := faultWeb(t, fakeweb.GzipBomb)
	status, h, wire := get(t, rawClient(t, c), "http://f.test/")
	if status != http.StatusOK || h.Get("Content-Encoding") != "gzip" {
		t.Fatalf("status %d, Content-Encoding %q", status, h.Get("Content-Encoding"))
	}
	if len(wire) >= 1_000_000 {
		t.Errorf("wire size %d bytes, want under 1 MB", len(wire))
	}
	zr, err := gzip.NewReader(bytes.NewReader(wire))
	if err != nil {
		t.Fatalf("gzip: %v", err)
	}
	head := make([]byte, 64)
	if _, err := io.ReadFull(zr, head); err != nil || !bytes.HasPrefix(head, []byte("<!DOCTYPE html>")) {
		t.Fatalf("inflated head %q, %v", head, err)
	}
	if n, err := io.CopyN(io.Discard, zr, 100<<20); err != nil {
		t.Fatalf("inflated %d of the first 100 MiB: %v", n, err)
	}
	if raceEnabled || testing.Short() {
		return
	}
	n, err := io.Copy(io.Discard, zr)
	if err != nil {
		t.Fatalf("inflate all: %v", err)
	}
	if total := n + 64 + 100<<20; total != 1_000_000_000 {
		t.Errorf("inflated %d bytes, want 1,000,000,000", total)
	}

	// A client that decompresses transparently sees the same stream.
	resp, err := c.Get("http://f.test/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if n, err := io.CopyN(io.Discard, resp.Body, 10<<20); err != nil || !resp.Uncompressed {
		t.Errorf("transparent: read %d, %v, uncompressed %v", n, err, resp.Uncompressed)
	}
}

func TestFault_RedirectLoop(t *testing.T) {
	_, c := faultWeb(t, fakeweb.RedirectLoop)
	resp, err := c.Get("http://f.test/")
	if err == nil {
		resp.Body.Close()
		t.Fatalf("GET: got status %d, want the client to give up", resp.StatusCode)
	}
	if !strings.Contains(err.Error(), "stopped after 10 redirects") {
		t.Errorf("GET: got %v, want stopped after 10 redirects", err)
	}
}

func TestFault_RedirectChain20(t *testing.T) {
	w, c := faultWeb(t, fakeweb.RedirectChain20)
	hops := 0
	patient := &http.Client{Transport: c.Transport, CheckRedirect: func(_ *http.Request, via []*http.Request) error {
		hops = len(via)
		if len(via) > 30 {
			return errors.New("too many")
		}
		return nil
	}}
	status, _, body := get(t, patient, "http://f.test/")
	if status != http.StatusOK || hops != 20 {
		t.Errorf("patient client: status %d after %d redirects, want 200 after 20", status, hops)
	}
	if p := parse(t, body); len(fakeweb.SelectHosts("f.test", "", escapeAll(p.hrefs), 0, nil)) != 0 {
		t.Errorf("final page links to other hosts: %q", p.hrefs)
	}
	if resp, err := c.Get("http://f.test/"); err == nil {
		resp.Body.Close()
		t.Errorf("default client: got status %d, want it to stop after 10 redirects", resp.StatusCode)
	}
	if got := w.RequestCount("f.test"); got != 21+10 {
		t.Errorf("RequestCount: got %d, want 31", got)
	}
}

func TestFault_TooMany429(t *testing.T) {
	_, c := faultWeb(t, fakeweb.TooMany429)
	if status, _, _ := get(t, c, "http://f.test/robots.txt"); status != http.StatusOK {
		t.Errorf("robots.txt: status %d, want 200 (not counted)", status)
	}
	for k := 0; k < 2; k++ {
		status, h, _ := get(t, c, "http://f.test/")
		if status != http.StatusTooManyRequests || h.Get("Retry-After") != "1" {
			t.Errorf("request %d: status %d, Retry-After %q; want 429, 1", k, status, h.Get("Retry-After"))
		}
	}
	if status, _, _ := get(t, c, "http://f.test/"); status != http.StatusOK {
		t.Errorf("request 3: status %d, want 200", status)
	}
}

func TestFault_SlowAnswer(t *testing.T) {
	_, c := faultWeb(t, fakeweb.SlowAnswer)
	for _, u := range []string{"http://f.test/robots.txt", "http://f.test/"} {
		start := time.Now()
		if status, _, _ := get(t, c, u); status != http.StatusOK {
			t.Errorf("%s: status %d, want 200", u, status)
		}
		if took := time.Since(start); took < fakeweb.SlowAnswerDelay {
			t.Errorf("%s answered in %v, want %v at least", u, took, fakeweb.SlowAnswerDelay)
		}
	}
}

func TestFault_Unavailable(t *testing.T) {
	_, c := faultWeb(t, fakeweb.Unavailable)
	if status, _, _ := get(t, c, "http://f.test/robots.txt"); status != http.StatusOK {
		t.Errorf("robots.txt: status %d, want 200 (not counted)", status)
	}
	for k := 0; k < 2; k++ {
		status, h, _ := get(t, c, "http://f.test/")
		if status != http.StatusServiceUnavailable || h.Get("Retry-After") != "1" {
			t.Errorf("request %d: status %d, Retry-After %q; want 503, 1", k, status, h.Get("Retry-After"))
		}
	}
	if status, _, _ := get(t, c, "http://f.test/"); status != http.StatusOK {
		t.Errorf("request 3: status %d, want 200", status)
	}
}

func TestFault_Burst5xx(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 5, FaultRepeat: 3, Faults: map[string]fakeweb.Fault{"f.test": fakeweb.Burst5xx}})
	c := client(t, mustStart(t, w))
	for k, want := range []int{500, 503, 500, 200, 200} {
		status, h, _ := get(t, c, "http://f.test/")
		if status != want {
			t.Errorf("request %d: status %d, want %d", k, status, want)
		}
		if status == 503 && h.Get("Retry-After") == "" {
			t.Errorf("request %d: 503 without Retry-After", k)
		}
	}
	var statuses []int
	for _, r := range w.Requests() {
		statuses = append(statuses, r.Status)
	}
	if want := []int{500, 503, 500, 200, 200}; !slices.Equal(statuses, want) {
		t.Errorf("recorded statuses: got %v, want %v", statuses, want)
	}
}

func TestFault_ResetMidBody(t *testing.T) {
	_, c := faultWeb(t, fakeweb.ResetMidBody)
	for k := 0; k < 5; k++ {
		resp, err := c.Get("http://f.test/")
		if err != nil {
			t.Logf("attempt %d: error before the body: %v", k, err)
			continue
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil {
			t.Fatalf("attempt %d: read %d bytes without error", k, n)
		}
		if n == 0 || n >= 30_000 {
			t.Errorf("attempt %d: read %d bytes before %v, want part of the body", k, n, err)
		}
	}
}

func TestFault_BinaryHTML(t *testing.T) {
	w, c := faultWeb(t, fakeweb.BinaryHTML)
	status, h, body := get(t, c, "http://f.test/")
	if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Errorf("status %d, Content-Type %q", status, h.Get("Content-Type"))
	}
	if utf8.Valid(body) || len(body) < 10_000 || bytes.Contains(body, []byte("href")) {
		t.Errorf("body: %d bytes, valid UTF-8 %v", len(body), utf8.Valid(body))
	}
	if w.Links("f.test") != nil {
		t.Errorf("Links: got %d, want none", len(w.Links("f.test")))
	}
}

func TestFault_InvalidUTF8(t *testing.T) {
	w, c := faultWeb(t, fakeweb.InvalidUTF8)
	status, _, body := get(t, c, "http://f.test/")
	if status != http.StatusOK || utf8.Valid(body) {
		t.Errorf("status %d, valid UTF-8 %v", status, utf8.Valid(body))
	}
	if n := bytes.Count(body, []byte("<div")); n != 10_000 {
		t.Errorf("page nests %d elements, want 10,000", n)
	}
	if _, err := html.Parse(bytes.NewReader(body)); err == nil {
		t.Errorf("html.Parse: no error, want the open-element limit")
	}
	var hrefs []string
	for z := html.NewTokenizer(bytes.NewReader(body)); z.Next() != html.ErrorToken; {
		if tok := z.Token(); tok.Type == html.StartTagToken && tok.Data == "a" {
			for _, a := range tok.Attr {
				if a.Key == "href" {
					hrefs = append(hrefs, a.Val)
				}
			}
		}
	}
	if want := w.Links("f.test"); !slices.Equal(hrefs, want) {
		t.Errorf("tokenized hrefs %q, Links %q", hrefs, want)
	}
	if got := fakeweb.SelectHosts("f.test", "", w.Links("f.test"), 0, nil); len(got) != 0 {
		t.Errorf("cross-host links: %q", got)
	}
}

func TestFault_InvalidBytes(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 20, Seed: 1})
	victim := w.Hosts()[0]
	w = fakeweb.New(fakeweb.Config{Hosts: 20, Seed: 1, Faults: map[string]fakeweb.Fault{victim: fakeweb.InvalidBytes}})
	body := serve(w, "http://"+victim+"/").Body.Bytes()
	if utf8.Valid(body) {
		t.Errorf("page is valid UTF-8")
	}
	p := parse(t, body)
	want := w.Links(victim)
	if len(want) < 10 || !slices.Equal(p.hrefs, decodeAll(want)) {
		t.Errorf("parsed %d hrefs, Links %d", len(p.hrefs), len(want))
	}
	if !maps.Equal(w.ExpectedEdges(10, fakeweb.DefaultExcluded), fakeweb.New(fakeweb.Config{Hosts: 20, Seed: 1}).ExpectedEdges(10, fakeweb.DefaultExcluded)) {
		t.Errorf("InvalidBytes changed the expected edges")
	}
}

func TestFault_ManyLinks(t *testing.T) {
	w, c := faultWeb(t, fakeweb.ManyLinks)
	links := w.Links("f.test")
	if len(links) != 100_000 || links[99_999] != "http://t99999.linkfarm.test/" {
		t.Fatalf("Links: %d, last %q", len(links), links[len(links)-1])
	}
	status, _, body := get(t, c, "http://f.test/")
	if status != http.StatusOK || bytes.Count(body, []byte("<a href=")) != 100_000 {
		t.Errorf("page: status %d, %d links", status, bytes.Count(body, []byte("<a href=")))
	}
	out := 0
	for e := range w.ExpectedEdges(10, fakeweb.DefaultExcluded) {
		if e[0] == "f.test" {
			out++
			if !strings.HasSuffix(e[1], ".linkfarm.test") {
				t.Errorf("edge %v", e)
			}
		}
	}
	if out != 10 {
		t.Errorf("f.test: %d out-edges, want 10", out)
	}
}

func TestFault_CalendarTrap(t *testing.T) {
	w, c := faultWeb(t, fakeweb.CalendarTrap)
	links := w.Links("f.test")
	cal, deep, sub := slices.Index(links, "/calendar?date=2024-01-01"), slices.Index(links, "/a/"), slices.Index(links, "http://d1.trap-f.test/")
	if cal < 0 || deep < cal || sub < deep {
		t.Fatalf("Links: got %q, want the calendar, /a/ and d1.trap-f.test in that order", links)
	}
	if got := fakeweb.SelectHosts("f.test", "", links, 10, fakeweb.DefaultExcluded); len(got) == 0 || got[0] != "d1.trap-f.test" {
		t.Errorf("first selected host: got %q, want d1.trap-f.test", got)
	}
	for _, tc := range []struct{ url, want string }{
		{"http://f.test/calendar?date=2024-01-01", `href="?date=2024-01-02"`},
		{"http://f.test/calendar?date=2024-02-28", `href="?date=2024-02-29"`},
		{"http://f.test/a/a/a/", `href="a/"`},
		{"http://d1.trap-f.test/", `href="http://d2.trap-f.test/"`},
		{"http://d41.trap-f.test/", `href="http://d42.trap-f.test/"`},
	} {
		status, _, body := get(t, c, tc.url)
		if status != http.StatusOK || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: status %d, want a page containing %s", tc.url, status, tc.want)
		}
	}
	if status, _, _ := get(t, c, "http://d1.trap-nowhere.test/"); status != http.StatusNotFound {
		t.Errorf("trap of a host without the fault: status %d, want 404", status)
	}
}

func TestFault_Robots(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 5, Faults: map[string]fakeweb.Fault{
		"huge.test": fakeweb.HugeRobots, "binary.test": fakeweb.BinaryRobots, "redirect.test": fakeweb.RobotsRedirect,
	}})
	c := client(t, mustStart(t, w))

	status, _, body := get(t, c, "http://huge.test/robots.txt")
	if status != http.StatusOK || len(body) != 10<<20 || !strings.HasPrefix(string(body), "User-agent: *\nAllow: /\n") {
		t.Errorf("HugeRobots: status %d, %d bytes", status, len(body))
	}
	status, _, body = get(t, c, "http://binary.test/robots.txt")
	if status != http.StatusOK || len(body) != 64<<10 || utf8.Valid(body) {
		t.Errorf("BinaryRobots: status %d, %d bytes", status, len(body))
	}
	hops := 0
	follow := &http.Client{Transport: c.Transport, CheckRedirect: func(_ *http.Request, via []*http.Request) error {
		hops = len(via)
		return nil
	}}
	status, _, body = get(t, follow, "http://redirect.test/robots.txt")
	if status != http.StatusOK || hops != 1 || string(body) != "User-agent: *\nDisallow: /\n" {
		t.Errorf("RobotsRedirect: status %d after %d redirects, body %q", status, hops, body)
	}

	edges := w.ExpectedEdges(10, fakeweb.DefaultExcluded)
	for e := range edges {
		if e[0] == "redirect.test" {
			t.Errorf("disallowed host crawled: %v", e)
		}
	}
	if len(w.Links("huge.test")) == 0 {
		t.Errorf("HugeRobots host: no links, want a normal page")
	}
}

func TestFault_LinksToPrivate(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 5, Seed: 2})
	victim := w.Hosts()[0]
	w = fakeweb.New(fakeweb.Config{Hosts: 5, Seed: 2, Faults: map[string]fakeweb.Fault{victim: fakeweb.LinksToPrivate}})
	edges := w.ExpectedEdges(10, fakeweb.DefaultExcluded)
	for _, h := range []string{"10.0.0.1", "127.0.0.1:1", "[::1]", "169.254.169.254", "192.168.1.1"} {
		if _, ok := edges[[2]string{victim, h}]; !ok {
			t.Errorf("no edge %s -> %s", victim, h)
		}
	}
}

func TestFault_HeadOnStreams(t *testing.T) {
	w := fakeweb.New(fakeweb.Config{Hosts: 1, Faults: map[string]fakeweb.Fault{
		"slow.test": fakeweb.SlowDrip, "endless.test": fakeweb.EndlessBody, "huge.test": fakeweb.Huge,
	}})
	c := client(t, mustStart(t, w))
	for _, h := range []string{"slow.test", "endless.test", "huge.test"} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodHead, "http://"+h+"/", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Errorf("HEAD %s: %v", h, err)
		} else {
			resp.Body.Close()
		}
		cancel()
	}
}

func decodeAll(raw []string) []string {
	out := make([]string, len(raw))
	for k, r := range raw {
		out[k] = htmlUnescape(r)
	}
	return out
}
