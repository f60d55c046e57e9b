package ui_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/ui"
)

// graphScript extracts the JSON of the page's #weaver-graph element.
var graphScript = regexp.MustCompile(`(?s)<script id="weaver-graph" type="application/json">(.*?)</script>`)

func TestWritePage(t *testing.T) {
	hostile := `</script><script>alert(1)</script><!-- "&`
	graph := func(w io.Writer) error {
		return json.NewEncoder(w).Encode(map[string]any{
			"nodes": []map[string]any{{"id": 1, "host": "a.example", "title": hostile}},
			"edges": []any{},
		})
	}
	var buf bytes.Buffer
	if err := ui.WritePage(&buf, `map of <b>"x"</b>`, ui.Config{}, graph); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if strings.Count(strings.ToLower(page), "</script>") != 3 {
		t.Errorf("the page has %d </script>, want 3 (config, graph, script): a title ended an element", strings.Count(page, "</script>"))
	}
	if !strings.Contains(page, "<title>map of &lt;b&gt;&#34;x&#34;&lt;/b&gt;</title>") {
		t.Error("the title is not escaped")
	}
	if !strings.Contains(page, ui.Script()) {
		t.Error("the script is not inline")
	}
	if !strings.Contains(page, `<script id="weaver-config" type="application/json">{"live":false}</script>`) {
		t.Error("the config is missing")
	}
	m := graphScript.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no graph in the page")
	}
	var g struct {
		Nodes []struct{ Title string } `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(m[1]), &g); err != nil || len(g.Nodes) != 1 || g.Nodes[0].Title != hostile {
		t.Errorf("the graph read back: %+v, %v; want the title %q", g, err, hostile)
	}
	for _, remote := range []string{`src="http`, `href="http`, `src="//`, "@import"} {
		if strings.Contains(page, remote) {
			t.Errorf("the page loads %s...: it must need no network", remote)
		}
	}
}

func TestWritePage_Live(t *testing.T) {
	var buf bytes.Buffer
	if err := ui.WritePage(&buf, "live", ui.Config{Live: true, Data: "map/data"}, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `{"live":true,"data":"map/data"}`) {
		t.Error("the config is missing")
	}
	if m := graphScript.FindStringSubmatch(buf.String()); m == nil || m[1] != "" {
		t.Errorf("a live page carries a graph: %q", m)
	}
}

func TestWritePage_Errors(t *testing.T) {
	boom := errors.New("boom")
	if err := ui.WritePage(io.Discard, "t", ui.Config{}, func(io.Writer) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("the graph's error: got %v", err)
	}
	if err := ui.WritePage(failWriter{}, "t", ui.Config{}, nil); err == nil {
		t.Error("a failing writer: no error")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestBundle_UpToDate: dist/ is what `make ui` builds from the sources in
// the tree: the bundle names the sources' hash, and the page is src's.
// A change to src/ without `make ui` fails here, without node.
func TestBundle_UpToDate(t *testing.T) {
	// Every file of src/ by name and content, in the order of their
	// names, then the lock file and the build script (as build.mjs).
	entries, err := os.ReadDir("src")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, "src/"+e.Name())
	}
	if !slices.Contains(files, "src/map.js") || !slices.Contains(files, "src/map.html") {
		t.Fatalf("src/ lacks map.js or map.html: %v", files)
	}
	h := sha256.New()
	for _, f := range append(files, "package-lock.json", "build.mjs") {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		h.Write([]byte(f + "\n"))
		h.Write(data)
	}
	if want := "Sources sha256 " + hex.EncodeToString(h.Sum(nil)); !strings.Contains(ui.Script()[:400], want) {
		t.Errorf("dist/map.js was not built from the sources in the tree (want %q in its banner): run make ui", want)
	}
	src, err := os.ReadFile("src/map.html")
	if err != nil {
		t.Fatal(err)
	}
	dist, err := os.ReadFile("dist/map.html")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(src, dist) {
		t.Error("dist/map.html differs from src/map.html: run make ui")
	}
	if regexp.MustCompile(`(?i)</script`).MatchString(ui.Script()) {
		t.Error("the bundle holds </script: it cannot be inlined")
	}
	if n := len(ui.Script()); n > 400<<10 {
		t.Errorf("the bundle is %d bytes: keep it small (minified)", n)
	}
}
