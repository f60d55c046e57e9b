package export

import (
	"context"
	"io"
	"path/filepath"

	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/ui"
)

// FormatHTML is the map page: an HTML file that draws the graph in a
// browser (see package ui).
const FormatHTML Format = "html"

// HTML writes s to w as weaver's map page: ONE HTML file that holds the
// page's script and s's graph in JSON's node-link form (with opt's
// filters), so that a browser opens it from disk with no server and no
// network. The graph is streamed into the page as JSON writes it. It
// returns what was written, or the writer's, the store's or the context's
// error.
func HTML(ctx context.Context, w io.Writer, s *kv.Store, opt Options) (Stats, error) {
	var st Stats
	var jsonErr error
	title := "weaver map: " + filepath.Base(s.Path())
	err := ui.WritePage(w, title, ui.Config{}, func(gw io.Writer) error {
		st, jsonErr = JSON(ctx, gw, s, opt)
		return jsonErr
	})
	if jsonErr != nil {
		return st, jsonErr // already says export: json
	}
	return st, wrap(FormatHTML, "", err)
}
