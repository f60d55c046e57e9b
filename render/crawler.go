package render

import (
	"context"
	"errors"
	"fmt"

	"github.com/weaver-crawler/weaver/crawl"
)

// ForCrawl is the Pool as the crawl's crawl.Renderer.
type ForCrawl struct{ *Pool }

// Shell is LooksLikeShell.
func (ForCrawl) Shell(html []byte) bool { return LooksLikeShell(html) }

// Render renders a page the crawl fetched (RenderPage); a lost browser is
// reported as crawl.ErrRenderLost, so the crawl renders the page again.
func (f ForCrawl) Render(ctx context.Context, pg crawl.RenderPage) (crawl.RenderResult, error) {
	res, err := f.RenderPage(ctx, Page{URL: pg.URL, Status: pg.Status, Header: pg.Header, Body: pg.Body})
	if err != nil {
		if errors.Is(err, ErrBrowserLost) || errors.Is(err, ErrStart) {
			return crawl.RenderResult{}, fmt.Errorf("%w: %w", crawl.ErrRenderLost, err)
		}
		return crawl.RenderResult{}, err
	}
	return crawl.RenderResult{HTML: res.HTML, FinalURL: res.FinalURL, Navigated: res.Navigated, Took: res.Took}, nil
}
