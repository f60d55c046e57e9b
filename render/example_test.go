package render_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/crawl"
	"github.com/weaver-crawler/weaver/crawl/extract"
	"github.com/weaver-crawler/weaver/render"
)

// Example shows what a crawl with --render auto does with a page it has
// fetched: render it if it looks like a shell, with the crawl's own
// transport and policy, and retry once if the browser died.
func Example() {
	browser, err := render.FindBrowser("", os.Getenv) // cmd passes --browser
	if err != nil {
		fmt.Println(err) // exit 2: the message names --browser
		return
	}
	cfg := &crawl.Config{RequestTimeoutMS: 5000, ConcurrentWorkers: 3}
	transport, err := crawl.NewTransport(cfg, nil) // the crawl passes its proxy choice
	if err != nil {
		fmt.Println(err)
		return
	}
	pool, err := render.New(render.Config{
		Browser:   browser,
		Transport: transport,
		UserAgent: crawl.DefaultUserAgent,
		Tabs:      3, // at most --workers
		Policy: func(req *http.Request) error {
			info, _ := render.InfoOf(req)
			_ = info // robots.txt of req.URL.Host, the host's delay for info.Page's scripts, ...
			return nil
		},
		Timeout:      15 * time.Second,
		MaxBodyBytes: 1 << 20, // --max-body-bytes
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()

	// The page as the crawl fetched it.
	pageURL := "http://www.example.com/"
	resp, err := transport.RoundTrip(must(http.NewRequest(http.MethodGet, pageURL, nil)))
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if !render.LooksLikeShell(body) {
		return // extract links from body as always
	}
	page := render.Page{URL: pageURL, Status: resp.StatusCode, Header: resp.Header, Body: body}
	res, err := pool.RenderPage(context.Background(), page)
	if errors.Is(err, render.ErrBrowserLost) {
		res, err = pool.RenderPage(context.Background(), page) // nothing was lost: once more
	}
	if err != nil {
		fmt.Println(err) // the node's render failure; its raw links stand
		return
	}
	base, _ := url.Parse(res.FinalURL)
	_, _ = extract.Page(strings.NewReader(string(res.HTML)), base, func(link *url.URL) bool {
		fmt.Println(link) // the same selection as raw links
		return true
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
