package extract_test

import (
	"net/url"
	"regexp"
	"sync"
	"testing"

	"github.com/weaver-crawler/weaver/crawl/extract"
	"github.com/weaver-crawler/weaver/internal/tooltest"
)

// realHrefs returns the href attributes of the real pages, with the URL
// of the page each is on: a corpus of the hrefs the web writes.
func realHrefs(b *testing.B) ([]string, []*url.URL) {
	hrefsOnce.Do(func() { hrefsCorpus, basesCorpus = readHrefs(b) })
	if len(hrefsCorpus) == 0 {
		b.Fatal("no real hrefs")
	}
	return hrefsCorpus, basesCorpus
}

var (
	hrefsOnce   sync.Once
	hrefsCorpus []string
	basesCorpus []*url.URL
)

func readHrefs(b *testing.B) (hrefs []string, bases []*url.URL) {
	re := regexp.MustCompile(`(?i)href\s*=\s*"([^"]*)"`)
	var ex extract.Extractor
	for _, p := range realPages(b) {
		u, err := url.Parse(p.url)
		if err != nil {
			b.Fatal(err)
		}
		doc, _ := ex.Decoded(tooltest.Gunzip(b, p.file), "text/html")
		for _, m := range re.FindAllSubmatch(doc, -1) {
			hrefs = append(hrefs, string(m[1]))
			bases = append(bases, u)
		}
	}
	return hrefs, bases
}

// BenchmarkPage_RealHrefs: each real href as the only link of a page.
func BenchmarkPage_RealHrefs(b *testing.B) {
	hrefs, bases := realHrefs(b)
	docs := make([][]byte, len(hrefs))
	for i, h := range hrefs {
		docs[i] = []byte(`<a href="` + h + `">`)
	}
	var ex extract.Extractor
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i % len(docs)
		ex.PageBytes(docs[j], bases[j], func(*url.URL) bool { return true })
	}
}
