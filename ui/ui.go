package ui

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"strings"
)

// script is the page's bundled JavaScript (dist/map.js).
//
//go:embed dist/map.js
var script string

// page is the HTML around it (dist/map.html), with four markers in this
// order: the title, the config, the graph and the script.
//
//go:embed dist/map.html
var page string

// The markers dist/map.html holds, in order.
var markers = []string{"%%TITLE%%", "%%CONFIG%%", "%%GRAPH%%", "%%SCRIPT%%"}

// ErrTemplate says the embedded page lacks one of its markers: the
// committed dist/map.html is broken (rebuild it with make ui).
var ErrTemplate = errors.New("ui: dist/map.html lacks a marker")

// parts is page cut at its markers: len(markers)+1 pieces, or nil.
var parts = split(page)

func split(p string) []string {
	out := make([]string, 0, len(markers)+1)
	for _, m := range markers {
		before, after, ok := strings.Cut(p, m)
		if !ok {
			return nil
		}
		out = append(out, before)
		p = after
	}
	return append(out, p)
}

// Config is what a page is told about where its graph comes from.
type Config struct {
	// Live makes the page poll Data for changes while the crawl runs.
	Live bool `json:"live"`
	// Data is the URL, relative to the page, of the graph and its changes
	// (?since=CURSOR is added); used when Live.
	Data string `json:"data,omitempty"`
	// Graph is the URL, relative to the page, of the graph's export
	// (?format=graphml is added): offered for download when the browser
	// cannot draw the map (no WebGL).
	Graph string `json:"graph,omitempty"`
}

// Script returns the page's bundled JavaScript.
func Script() string { return script }

// WritePage writes the map page to w: title (plain text), cfg, and, when
// graph is not nil, the graph that graph writes (weaver's node-link JSON,
// see export.JSON) inline, so the page needs nothing else. It returns
// ErrTemplate when the embedded page is broken, else graph's or w's error.
func WritePage(w io.Writer, title string, cfg Config, graph func(io.Writer) error) error {
	if parts == nil {
		return ErrTemplate
	}
	c, err := json.Marshal(cfg) // escapes <, > and &: safe inside <script>
	if err != nil {
		return fmt.Errorf("ui: config: %w", err)
	}
	ew := &errWriter{w: w}
	io.WriteString(ew, parts[0])
	io.WriteString(ew, html.EscapeString(title))
	io.WriteString(ew, parts[1])
	ew.Write(c)
	io.WriteString(ew, parts[2])
	if graph != nil && ew.err == nil {
		if err := graph(scriptSafe{ew}); err != nil {
			return err
		}
	}
	io.WriteString(ew, parts[3])
	io.WriteString(ew, script)
	io.WriteString(ew, parts[4])
	return ew.err
}

// errWriter keeps the first error of w and writes nothing after it.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// scriptSafe writes JSON into a <script> element: every '<' becomes
// \u003c, so no "</script>" or "<!--" in a host's title can end the
// element. JSON has '<' only inside strings, where \u003c means the same.
type scriptSafe struct{ w io.Writer }

func (s scriptSafe) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		i := bytes.IndexByte(p, '<')
		if i < 0 {
			n, err := s.w.Write(p)
			return written + n, err
		}
		if i > 0 {
			n, err := s.w.Write(p[:i])
			written += n
			if err != nil {
				return written, err
			}
		}
		if _, err := io.WriteString(s.w, `\u003c`); err != nil {
			return written, err
		}
		written++
		p = p[i+1:]
	}
	return written, nil
}
