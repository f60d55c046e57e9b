package ingest_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/gzip"
	gowarc "github.com/nlnwa/gowarc/v3"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/ingest"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/kv"
)

// watJSON is a Common Crawl WAT record of an HTML response, trimmed to
// what matters, in the layout Common Crawl publishes.
const watJSON = `{"Container":{"Filename":"CC-MAIN-x.warc.gz","Offset":"1234"},
"Envelope":{"Format":"WARC","WARC-Header-Length":"500",
 "WARC-Header-Metadata":{"WARC-Type":"response","WARC-Target-URI":"https://www.a.test/news/","WARC-Date":"2024-02-20T10:00:00Z"},
 "Payload-Metadata":{"Actual-Content-Type":"application/http; msgtype=response",
  "HTTP-Response-Metadata":{"Response-Message":{"Version":"HTTP/1.1","Status":"200","Reason":"OK"},
   "Headers":{"Content-Type":"text/html; charset=UTF-8","Server":"nginx"},
   "HTML-Metadata":{"Head":{"Title":"  A & news\n page ","Metas":[{"name":"description","content":"All the news"}],"Link":[{"path":"LINK@/href","url":"https://cdn.test/style.css"}]},
    "Links":[{"path":"A@/href","url":"/local"},{"path":"IMG@/src","url":"https://img.test/x.png"},
     {"path":"A@/href","url":"https://b.test/"},{"path":"A@/href","url":"https://B.test:443/again"},
     {"path":"AREA@/href","url":"//c.test/map"},{"path":"A@/href","url":"https://www.facebook.com/a"},
     {"path":"A@/href","url":"mailto:x@a.test"},{"path":"A@/href","url":"https://d.test/"}]}}}}}`

const watRedirect = `{"Envelope":{"WARC-Header-Metadata":{"WARC-Type":"response","WARC-Target-URI":"http://old.test/"},
 "Payload-Metadata":{"HTTP-Response-Metadata":{"Response-Message":{"Status":"301"},"Headers":{"Location":"https://www.a.test/"}}}}}`

const watRequest = `{"Envelope":{"WARC-Header-Metadata":{"WARC-Type":"request","WARC-Target-URI":"https://www.a.test/news/"}}}`

// writeWAT writes a WAT file of metadata records holding docs.
func writeWAT(t *testing.T, path string, docs ...string) {
	t.Helper()
	if err := writeWATFile(path, docs...); err != nil {
		t.Fatal(err)
	}
}

func writeWATFile(path string, docs ...string) error {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for _, doc := range docs {
		b := gowarc.NewRecordBuilder(gowarc.Metadata, gowarc.WithAddMissingDigest(true))
		b.AddWarcHeader(gowarc.WarcDate, "2024-02-20T10:00:00Z")
		b.AddWarcHeader(gowarc.WarcTargetURI, "https://ignored.test/")
		b.AddWarcHeader(gowarc.ContentType, "application/json")
		b.WriteString(doc)
		rec, _, err := b.Build()
		if err != nil {
			return err
		}
		zw.Reset(&buf) // a gzip member a record
		if _, _, err := gowarc.NewMarshaler().Marshal(zw, rec, 0); err != nil {
			return err
		}
		zw.Close()
		rec.Close()
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func graphOf(t *testing.T, s *kv.Store) (map[[2]string]int, map[string]graph.Node) {
	t.Helper()
	es, ns := map[[2]string]int{}, map[string]graph.Node{}
	err := s.View(func(tx *kv.Tx) error {
		hosts := map[uint64]string{}
		if err := graph.ForEachNode(tx, func(n *graph.Node) error { hosts[n.ID] = n.Host; ns[n.Host] = *n; return nil }); err != nil {
			return err
		}
		return graph.ForEachEdge(tx, func(e *graph.Edge) error { es[[2]string{hosts[e.From], hosts[e.To]}] = int(e.Weight); return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	return es, ns
}

// TestRun_WAT: a WAT's response record becomes a crawled page whose
// <a>/<area> links are selected as a crawl selects (same host, other tags,
// other schemes, excluded and repeated hosts left out, the cap applied);
// a redirect to another host becomes an edge; requests are counted.
func TestRun_WAT(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "CC-MAIN-test.warc.wat.gz")
	writeWAT(t, path, watRequest, watJSON, watRedirect)
	s := storetest.MustOpen(t)
	opts := ingest.Defaults()
	opts.MaxOutboundLinks = 2
	st, err := ingest.Run(context.Background(), s, []string{path}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pages != 1 || st.Redirects != 1 || st.Metadata != 1 || st.Records != 3 {
		t.Errorf("stats %+v", st)
	}
	es, ns := graphOf(t, s)
	storetest.SameGraph(t, es, map[[2]string]int{{"www.a.test", "b.test"}: 1, {"www.a.test", "c.test"}: 1, {"old.test", "www.a.test"}: 1})
	n := ns["www.a.test"]
	if n.Status != graph.StatusCrawled || n.HTTPStatus != 200 || n.Title != "A & news page" || n.Description != "All the news" || n.Server != "nginx" || n.CrawlCount != 1 {
		t.Errorf("page node: %+v", n)
	}
	// Run again: the file is known, nothing is counted twice.
	st, err = ingest.Run(context.Background(), s, []string{path}, opts)
	if err != nil || st.FilesSkipped != 1 || st.Records != 0 {
		t.Errorf("second run: %+v, %v", st, err)
	}
	if es2, _ := graphOf(t, s); len(es2) != len(es) || es2[[2]string{"www.a.test", "b.test"}] != 1 {
		t.Errorf("second run changed the graph: %v", es2)
	}
}

// watPage is a WAT record of an HTML page at uri titled title.
func watPage(uri, title string) string {
	return `{"Envelope":{"WARC-Header-Metadata":{"WARC-Type":"response","WARC-Target-URI":"` + uri + `"},
 "Payload-Metadata":{"HTTP-Response-Metadata":{"Response-Message":{"Status":"200"},"Headers":{"Content-Type":"text/html"},
  "HTML-Metadata":{"Head":{"Title":"` + title + `"},"Links":[{"path":"A@/href","url":"https://out.test/"}]}}}}}`
}

// TestRun_HomePageFacts: a host's title and crawl_count come from the
// captures of its home page, whatever other pages come after them; a host
// none of whose home page was captured takes its shortest path's page, with
// a crawl_count of 1, until an import brings its home page. Every page's
// links count.
func TestRun_HomePageFacts(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "a.wat.gz")
	writeWAT(t, first,
		watPage("http://x.test/about", "about x"), watPage("http://x.test/a", "a of x"), watPage("http://x.test/", "home of x"),
		watPage("http://x.test/?page=2", "x 2"), watPage("http://x.test/contact", "contact x"), watPage("http://x.test", "home of x again"),
		watPage("http://x.test/post/1", "post x"),
		watPage("http://y.test/archive/2001/", "archive y"), watPage("http://y.test/b", "b of y"), watPage("http://y.test/bb", "bb of y"))
	s := storetest.MustOpen(t)
	if _, err := ingest.Run(context.Background(), s, []string{first}, ingest.Defaults()); err != nil {
		t.Fatal(err)
	}
	es, ns := graphOf(t, s)
	if es[[2]string{"x.test", "out.test"}] != 7 || es[[2]string{"y.test", "out.test"}] != 3 {
		t.Errorf("every page's links count: %v", es)
	}
	check := func(host, title string, crawls int) {
		t.Helper()
		if n := ns[host]; n.Title != title || n.CrawlCount != crawls || n.Status != graph.StatusCrawled || n.HTTPStatus != 200 {
			t.Errorf("%s: title %q, crawl_count %d, status %s; want %q, %d, crawled", host, n.Title, n.CrawlCount, n.Status, title, crawls)
		}
	}
	check("x.test", "home of x again", 2)
	check("y.test", "b of y", 1)

	second := filepath.Join(dir, "b.wat.gz")
	writeWAT(t, second, watPage("http://y.test/", "home of y"), watPage("http://y.test/c", "c of y"))
	if _, err := ingest.Run(context.Background(), s, []string{second}, ingest.Defaults()); err != nil {
		t.Fatal(err)
	}
	_, ns = graphOf(t, s)
	check("y.test", "home of y", 1)
	// The stand-in's mark is gone with it.
	if err := s.View(func(tx *kv.Tx) error {
		c := tx.Cursor(kv.BucketMeta)
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if bytes.HasPrefix(k, []byte("import.standin/")) {
				t.Errorf("meta %s is left", k)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
