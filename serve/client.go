package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/archive"
	"github.com/weaver-crawler/weaver/export"
)

// Client asks the crawl that holds a store what weaver status, weaver
// show and weaver rank report of it, through the crawl's status API (see
// NewCrawlHandler) at the address the crawl left beside the store
// (archive.ListenPath). Every request first asks GET /status, which
// proves that the API at that address serves this store: a file left by
// a crawl that did not exit cleanly may name another crawl's API.
type Client struct {
	// Path is the store the crawl holds.
	Path string
	// Token is the API's bearer token, sent with every request; "": none.
	Token string
	// TokenHow says how the command is given a token ("give --token-file
	// FILE or set WEAVER_TOKEN"), for its advice when the API answers 401
	// to a request without one.
	TokenHow string
	// Timeout bounds the wait for GET /status.
	Timeout time.Duration
}

// directClient is Client's HTTP client: it reaches the address directly,
// never through a proxy (a crawl on this machine bound it).
var directClient = &http.Client{Transport: &http.Transport{Proxy: nil}}

// Status returns the status of the crawl holding c.Path. It returns an
// error wrapping ErrBadInput when the store is held by a process without
// a status API, and an error saying so when the API does not answer,
// wants a token, or serves another store.
func (c *Client) Status(ctx context.Context) (Status, error) {
	rep, _, err := c.status(ctx)
	return rep, err
}

// Host returns the report on host of the crawl holding c.Path (GET
// /host), waiting at most timeout for it. It returns Status's errors, and
// an error wrapping ErrBadInput for a host the store does not hold.
func (c *Client) Host(ctx context.Context, host string, opt export.HostOptions, timeout time.Duration) (export.HostReport, error) {
	_, base, err := c.status(ctx)
	if err != nil {
		return export.HostReport{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	q := url.Values{"h": {host}, "limit": {fmt.Sprint(opt.Limit)}, "ranks": {fmt.Sprint(!opt.NoRanks)}}
	u := base + "/host?" + q.Encode()
	resp, err := c.get(ctx, u)
	if err != nil {
		return export.HostReport{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return export.HostReport{}, fmt.Errorf("GET %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		var eb struct {
			Error string `json:"error"`
		}
		msg := strings.TrimSpace(string(body))
		if json.Unmarshal(body, &eb) == nil && eb.Error != "" {
			msg = eb.Error
		}
		if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusBadRequest {
			return export.HostReport{}, badInput{fmt.Errorf("%s in %s (asked the running crawl)", msg, c.Path)}
		}
		return export.HostReport{}, fmt.Errorf("GET %s: %s: %s", u, resp.Status, msg)
	}
	var rep export.HostReport
	if err := json.Unmarshal(body, &rep); err != nil {
		return export.HostReport{}, fmt.Errorf("GET %s: not a weaver host report: %w", u, err)
	}
	return rep, nil
}

// Ranks returns the top hosts (or registrable domains) of the graph of
// the crawl holding c.Path, read from GET /graph's JSON, whose nodes carry
// their ranks; it waits at most timeout for the graph. It returns Status's
// errors, and those of reading the graph.
func (c *Client) Ranks(ctx context.Context, top int, domains bool, timeout time.Duration) (export.RankList, error) {
	_, base, err := c.status(ctx)
	if err != nil {
		return export.RankList{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := fmt.Sprintf("%s/graph?format=json&domains=%t", base, domains)
	resp, err := c.get(ctx, u)
	if err != nil {
		return export.RankList{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return export.RankList{}, fmt.Errorf("GET %s: %s: %s", u, resp.Status, strings.TrimSpace(string(body)))
	}
	list, err := export.TopFromJSON(resp.Body, top)
	if err != nil {
		return export.RankList{}, fmt.Errorf("GET %s: %w", u, err)
	}
	return list, nil
}

// status asks GET /status and returns the crawl's status and the API's
// base URL, once the status shows that the API serves c.Path.
func (c *Client) status(ctx context.Context) (Status, string, error) {
	base, err := c.address()
	if err != nil {
		return Status{}, "", err
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	u := base + "/status"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Status{}, "", fmt.Errorf("%s: bad address %q in %s: %w", c.Path, base, archive.ListenPath(c.Path), err)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return Status{}, "", fmt.Errorf("%s is in use by another weaver process, and its status API %s (from %s) does not answer: %w", c.Path, u, archive.ListenPath(c.Path), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return Status{}, "", fmt.Errorf("GET %s: %w", u, err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized && c.token() == "":
		// The server's own advice (an Authorization header) is for HTTP
		// clients; the command sends the header itself, given the token.
		return Status{}, "", fmt.Errorf("the crawl holding %s wants its API token (%s answered 401): %s", c.Path, u, c.TokenHow)
	case resp.StatusCode == http.StatusUnauthorized:
		return Status{}, "", fmt.Errorf("the crawl holding %s refused the token given (%s answered 401): it is not the crawl's token", c.Path, u)
	case resp.StatusCode != http.StatusOK:
		return Status{}, "", fmt.Errorf("GET %s: %s: %s", u, resp.Status, strings.TrimSpace(string(body)))
	}
	var rep Status
	if err := json.Unmarshal(body, &rep); err != nil {
		return Status{}, "", fmt.Errorf("GET %s: not a weaver status: %w", u, err)
	}
	if !sameFile(rep.DBPath, c.Path) {
		return Status{}, "", fmt.Errorf("%s is in use by another weaver process, but the status API at %s (from %s) serves %s", c.Path, u, archive.ListenPath(c.Path), rep.DBPath)
	}
	return rep, base, nil
}

// address returns the base URL of the status API of the crawl holding
// c.Path, from the address the crawl left beside the store
// (archive.ListenAddr).
func (c *Client) address() (string, error) {
	base, err := archive.ListenAddr(c.Path)
	if err == nil {
		return base, nil
	}
	if _, serr := os.Stat(archive.ListenPath(c.Path)); errors.Is(serr, os.ErrNotExist) {
		return "", badInput{fmt.Errorf("%s is in use by another weaver process that serves no status API (an import, a layout, a merge, or a crawl of an older weaver): wait for it to end", c.Path)}
	}
	return "", fmt.Errorf("%s is in use by another weaver process; reading its address: %w", c.Path, err)
}

// get sends GET u, a URL of the API whose status was read, and returns
// the answer, or an error that says the request failed.
func (c *Client) get(ctx context.Context, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s is in use by a running crawl, and GET %s failed: %w", c.Path, u, err)
	}
	return resp, nil
}

// httpClient is the direct client sending the token with each request:
// c.Token, else the one the crawl left beside the store for this
// machine's readers (archive.ListenToken).
func (c *Client) httpClient() *http.Client { return WithToken(directClient, c.token()) }

// token is c.Token, else the crawl's own from beside the store.
func (c *Client) token() string {
	if c.Token != "" {
		return c.Token
	}
	return archive.ListenToken(c.Path)
}

// WithToken returns hc sending token (when not empty) as the bearer token
// of each request.
func WithToken(hc *http.Client, token string) *http.Client {
	if token == "" {
		return hc
	}
	cc := *hc
	base := cc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cc.Transport = tokenTransport{base: base, token: token}
	return &cc
}

// tokenTransport sends the API token with every request of a client.
type tokenTransport struct {
	base  http.RoundTripper
	token string
}

func (t tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.base.RoundTrip(r)
}

func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// badInput marks a Client error that is the caller's to fix (see
// ErrBadInput); its message is the error's own.
type badInput struct{ error }

func (e badInput) Unwrap() error        { return e.error }
func (e badInput) Is(target error) bool { return target == ErrBadInput }
