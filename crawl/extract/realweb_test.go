package extract_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"html"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/crawl/extract"
	"github.com/weaver-crawler/weaver/internal/tooltest"
)

// realweb is the shared real pages (see /work/shared/data/realweb).
var realweb = filepath.Join("..", "..", "..", "shared", "data", "realweb")

// realPage is a row of realweb/pages.tsv.
type realPage struct{ name, url, file string }

func realPages(t testing.TB) []realPage {
	t.Helper()
	f, err := os.Open(filepath.Join(realweb, "pages.tsv"))
	if err != nil {
		tooltest.Missing(t, "the shared real pages: %v", err)
	}
	defer f.Close()
	var pages []realPage
	sc := bufio.NewScanner(f)
	var cols map[string]int
	for sc.Scan() {
		row := strings.Split(sc.Text(), "\t")
		if cols == nil {
			cols = map[string]int{}
			for i, c := range row {
				cols[c] = i
			}
			continue
		}
		u := row[cols["original_url"]]
		if u == "" {
			u = "http://" + row[cols["set"]] + "-" + row[cols["name"]] + ".realweb.test/"
		}
		pages = append(pages, realPage{name: row[cols["set"]] + "/" + row[cols["name"]], url: u, file: filepath.Join(realweb, row[cols["file"]])})
	}
	if len(pages) < 300 {
		t.Fatalf("%d real pages, want 300", len(pages))
	}
	return pages
}

// html5libLinks parses each file (gzip) with html5lib as a browser with
// scripting off does (its default), from the bytes, sniffing their
// encoding itself, and prints the first <base href> and every <a href> and
// <area href> of the HTML namespace, in tree order, outside <template>.
const html5libLinks = `
import sys, json, gzip, html5lib
out = []
for path in json.load(sys.stdin):
    doc = html5lib.parse(gzip.open(path).read(), treebuilder="etree", namespaceHTMLElements=True)
    H = "{http://www.w3.org/1999/xhtml}"
    base, hrefs = None, []
    def walk(el):
        global base
        for c in el:
            if not isinstance(c.tag, str):
                continue
            if c.tag == H + "template":
                continue
            if c.tag == H + "base" and base is None and c.get("href") is not None:
                base = c.get("href")
            if c.tag in (H + "a", H + "area") and c.get("href") is not None:
                hrefs.append(c.get("href"))
            if c.tag in (H + "iframe", H + "frame") and c.get("src") is not None:
                hrefs.append(c.get("src"))
            walk(c)
    walk(doc)
    out.append({"base": base, "hrefs": hrefs})
json.dump(out, sys.stdout)
`

// knownDifferences are the real pages whose links weaver reads otherwise
// than html5lib, with why; the test fails when one of them stops differing.
var knownDifferences = map[string]string{
	// <svg>…<title id=… /> in foreign content: the tree builder keeps the
	// tokenizer out of RCDATA there, x/net/html's tokenizer alone (and
	// the scanner, its equal) reads what follows as the title's text up to
	// a </title>, and two links are lost.
	"postlight/www.buzzfeed.com": "a self-closed SVG <title/> read as RCDATA",
}

// TestRealPages_LinksAsHTML5lib: on the 300 real pages, the links weaver
// reads (bytes decoded as it decodes them, <noscript> as markup) are the
// links of html5lib's document, one for one and in order: html5lib's hrefs
// are written into a page of their own (its <base href> first) for
// weaver's resolver, so this judges what a parser finds, and
// urltestdata judges how a URL resolves.
func TestRealPages_LinksAsHTML5lib(t *testing.T) {
	pages := realPages(t)
	py := tooltest.Python(t, "html5lib", "/usr/bin/python3", "python3")
	paths := make([]string, len(pages))
	for i, p := range pages {
		paths[i] = p.file
	}
	in, _ := json.Marshal(paths)
	cmd := exec.Command(py, "-c", html5libLinks)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("html5lib: %v\n%s", err, stderr.String())
	}
	var judged []struct {
		Base  *string  `json:"base"`
		Hrefs []string `json:"hrefs"`
	}
	if err := json.Unmarshal(out, &judged); err != nil || len(judged) != len(pages) {
		t.Fatalf("html5lib said %d pages (%v)", len(judged), err)
	}
	var ex extract.Extractor
	total, same, links := 0, 0, 0
	for i, p := range pages {
		raw := tooltest.Gunzip(t, p.file)
		u, err := url.Parse(p.url)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		doc, _ := ex.Decoded(raw, "text/html")
		got := pageLinks(t, &ex, doc, u)
		links += len(got)
		var b strings.Builder
		if judged[i].Base != nil {
			b.WriteString(`<base href="` + html.EscapeString(*judged[i].Base) + `">`)
		}
		for _, h := range judged[i].Hrefs {
			b.WriteString(`<a href="` + html.EscapeString(h) + `"></a>`)
		}
		want := pageLinks(t, &ex, []byte(b.String()), u) // html5lib's hrefs, as <a>s: no frames
		// An <a> left open is cloned by the tree builder into each block
		// after it (the adoption agency algorithm: the same href again,
		// right after itself); the page's author wrote one link there.
		got, want = slices.Compact(got), slices.Compact(want)
		total++
		if strings.Join(got, "\n") == strings.Join(want, "\n") {
			same++
			if why, ok := knownDifferences[p.name]; ok {
				t.Errorf("%s: now the same as html5lib (known difference: %s): take it off the list", p.name, why)
			}
			continue
		}
		if _, ok := knownDifferences[p.name]; ok {
			continue
		}
		for j := range max(len(got), len(want)) {
			var g, w string
			if j < len(got) {
				g = got[j]
			}
			if j < len(want) {
				w = want[j]
			}
			if g != w {
				t.Errorf("%s: link %d of %d: weaver %q, html5lib %q", p.name, j, len(want), g, w)
				if os.Getenv("REALWEB_DEBUG") != "" {
					gs, ws := slices.Clone(got), slices.Clone(want)
					slices.Sort(gs)
					slices.Sort(ws)
					t.Logf("same multiset: %v (%d vs %d)", slices.Equal(gs, ws), len(got), len(want))
				}
				break
			}
		}
	}
	t.Logf("%d of %d real pages: weaver's links are html5lib's (%d links, %d of them frames)", same, total, links, frames)
}

// frames counts the frames pageLinks read, for the log.
var frames int

func pageLinks(t *testing.T, ex *extract.Extractor, doc []byte, u *url.URL) []string {
	t.Helper()
	var links []string
	info, err := ex.PageBytes(doc, u, func(l *url.URL) bool { links = append(links, l.String()); return true })
	if err != nil {
		t.Fatal(err)
	}
	frames += info.Frames
	return links
}
