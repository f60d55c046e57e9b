package e2e_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/tooltest"
	"github.com/weaver-crawler/weaver/kv"
)

// framedEdges reads a store's edges as host pairs → the edge, with every
// fact (weight, nofollow, redirect, frame), and checks the store's
// invariants.
func framedEdges(t *testing.T, db string) map[[2]string]graph.Edge {
	t.Helper()
	edges(t, db) // the store's invariants
	s, err := kv.Open(db, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := map[[2]string]graph.Edge{}
	err = s.View(func(tx *kv.Tx) error {
		hosts := map[uint64]string{}
		graph.ForEachNode(tx, func(n *graph.Node) error { hosts[n.ID] = n.Host; return nil })
		return graph.ForEachEdge(tx, func(e *graph.Edge) error {
			out[[2]string{hosts[e.From], hosts[e.To]}] = *e
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// framesWeb is a web of framesets and iframes: framed.test's home page is
// a frameset whose frames of its own host hold its links, one of them
// disallowed by its robots.txt, one the page itself; iframe.test embeds
// another host; many.test is a frameset of 1,000 frames; self.test frames
// only itself.
func framesWeb() *fakeweb.Web {
	var many strings.Builder
	many.WriteString(`<title>Many</title><frameset rows="*">`)
	for i := range 1000 {
		fmt.Fprintf(&many, `<frame src="/f%d.html">`, i)
	}
	many.WriteString(`</frameset>`)
	manyPages := map[string]fakeweb.Answer{"/": {Body: many.String()}}
	for i := range 1000 {
		manyPages[fmt.Sprintf("/f%d.html", i)] = fakeweb.Answer{Body: fmt.Sprintf(`<a href="http://m%d.test/">m</a>`, i)}
	}
	return fakeweb.New(fakeweb.Config{Hosts: 1, Scripts: map[string]fakeweb.Script{
		"framed.test": {
			Robots: &fakeweb.Answer{Type: "text/plain", Body: "User-agent: *\nDisallow: /private/\n"},
			Pages: map[string]fakeweb.Answer{
				"/": {Body: `<html><head><title>Framed</title></head><frameset cols="20%,*">
					<frame src="/menu.html"><frame src="main.html"><frame src="/private/p.html">
					<frame src="http://other.test/embed"><frame src="/"><frame src="/menu.html#top">
					<noframes><a href="http://noframes.test/">no frames</a></noframes></frameset></html>`},
				"/menu.html":      {Body: `<title>Menu</title><a href="http://menu-link.test/">menu</a> <a href="http://other.test/">other</a>`},
				"/main.html":      {Body: `<a href="http://main-link.test/">main</a> <iframe src="http://video.test/v"></iframe>`},
				"/private/p.html": {Body: `<a href="http://private-link.test/">private</a>`},
			},
		},
		"iframe.test": {Pages: map[string]fakeweb.Answer{
			"/": {Body: `<a href="http://a1.test/">a</a> <iframe src="http://a2.test/embed"></iframe> <iframe src="/own"></iframe>`},
		}},
		"many.test": {Pages: manyPages},
		"self.test": {Pages: map[string]fakeweb.Answer{
			"/": {Body: `<frameset><frame src="/"><frame src="http://self.test/"><frame src="http://SELF.test:80/#x"></frameset>`},
		}},
	}})
}

// TestReading_Frames: an <iframe src> and a frameset's <frame src> to
// another host are edges, typed frame in the store and the exports; a
// frameset home page's frames of its own host are fetched as part of it
// (through robots.txt and the host's delay, at most five, whatever
// --pages-per-host says) and their links are the page's; the noframes
// text is no link; a frame that frames itself is not fetched again.
func TestReading_Frames(t *testing.T) {
	t.Parallel()
	w := framesWeb()
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "f.bolt")
	args := append(crawlArgs(srv, db, "--max-depth", "0", "--delay", "150ms"),
		"http://framed.test/", "http://iframe.test/", "http://many.test/", "http://self.test/")
	if r := weaver(t, dir, args...); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	asked := map[string][]fakeweb.Request{}
	for _, q := range w.Requests() {
		if q.Path != "/robots.txt" {
			asked[q.Host] = append(asked[q.Host], q)
		}
	}
	var framedPaths []string
	for i, q := range asked["framed.test"] {
		framedPaths = append(framedPaths, q.Path)
		if i > 0 {
			if gap := q.At.Sub(asked["framed.test"][i-1].At); gap < 140*time.Millisecond {
				t.Errorf("framed.test: %s asked %v after the page before: the host's delay is 150ms", q.Path, gap)
			}
		}
	}
	if got := strings.Join(framedPaths, " "); got != "/ /menu.html /main.html" {
		t.Errorf("framed.test: asked %q, want the page and its two allowed frames of the host, once each", got)
	}
	if n := len(asked["many.test"]); n != 1+5 {
		t.Errorf("many.test: %d requests for a frameset of 1,000 frames, want the page and 5 frames", n)
	}
	if n := len(asked["self.test"]); n != 1 {
		t.Errorf("self.test: %d requests for a page that frames itself, want 1", n)
	}
	if n := len(asked["iframe.test"]); n != 1 {
		t.Errorf("iframe.test: %d requests: an iframe of a page that is no frameset is not fetched as part of it", n)
	}
	type want struct{ weight, frame uint64 }
	wants := map[[2]string]want{
		{"framed.test", "other.test"}:     {1, 1}, // framed, and linked by a frame: one page
		{"framed.test", "menu-link.test"}: {1, 0},
		{"framed.test", "main-link.test"}: {1, 0},
		{"framed.test", "video.test"}:     {1, 1}, // an iframe in a frame
		{"iframe.test", "a1.test"}:        {1, 0},
		{"iframe.test", "a2.test"}:        {1, 1},
	}
	for i := range 5 {
		wants[[2]string{"many.test", fmt.Sprintf("m%d.test", i)}] = want{1, 0}
	}
	got := framedEdges(t, db)
	for k, w := range wants {
		e, ok := got[k]
		if !ok || e.Weight != w.weight || e.Frame != w.frame {
			t.Errorf("edge %s → %s: weight %d frame %d (present %v), want weight %d frame %d", k[0], k[1], e.Weight, e.Frame, ok, w.weight, w.frame)
		}
	}
	for k := range got {
		if _, ok := wants[k]; !ok {
			t.Errorf("edge %s → %s: not a link of the pages", k[0], k[1])
		}
	}
	if n := nodes(t, db)["framed.test"]; n.Title != "Framed" || n.PagesFetched != 3 {
		t.Errorf("framed.test: title %q, %d pages fetched; want the frameset's title and 3 documents", n.Title, n.PagesFetched)
	}

	// The exports type the edges, as their readers see them.
	sq := filepath.Join(dir, "f.db")
	if r := weaver(t, dir, "export", "--db", db, "--no-ranks", "--sqlite", sq); r.code != 0 {
		t.Fatalf("export --sqlite: exit %d\n%s", r.code, r.stderr)
	}
	out, err := exec.Command(tooltest.Tool(t, "sqlite3"), sq, `SELECT s.domain_name, d.domain_name, f.frame FROM edges e
		JOIN edge_facts f USING (edge_id) JOIN nodes s ON s.node_id = e.from_node_id JOIN nodes d ON d.node_id = e.to_node_id
		WHERE f.frame > 0 ORDER BY 1, 2`).CombinedOutput()
	if want := "framed.test|other.test|1\nframed.test|video.test|1\niframe.test|a2.test|1\n"; err != nil || string(out) != want {
		t.Errorf("sqlite3 on the export's framed edges: %v\n%s\nwant\n%s", err, out, want)
	}
	gml := filepath.Join(dir, "f.graphml")
	if r := weaver(t, dir, "export", "--db", db, "--no-ranks", "--graphml", gml); r.code != 0 {
		t.Fatalf("export --graphml: exit %d\n%s", r.code, r.stderr)
	}
	py := tooltest.Python(t, "networkx", "python3")
	out, err = exec.Command(py, "-c", `import networkx as nx, sys
g = nx.read_graphml(sys.argv[1])
hosts = {n: d["host"] for n, d in g.nodes(data=True)}
print(sorted((hosts[u], hosts[v]) for u, v, d in g.edges(data=True) if d["frame"] > 0))`, gml).CombinedOutput()
	if want := "[('framed.test', 'other.test'), ('framed.test', 'video.test'), ('iframe.test', 'a2.test')]\n"; err != nil || string(out) != want {
		t.Errorf("networkx on the GraphML's framed edges: %v\n%s\nwant %s", err, out, want)
	}
}

// TestReading_FramesMaxPages: a frame is a fetch of --max-pages.
func TestReading_FramesMaxPages(t *testing.T) {
	t.Parallel()
	w := framesWeb()
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "m.bolt")
	if r := weaver(t, dir, append(crawlArgs(srv, db, "--max-depth", "0", "--max-pages", "3"), "http://many.test/")...); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := w.RequestCount("many.test") - 1; n != 3 { // robots.txt, the page and two frames
		t.Errorf("many.test: %d documents with --max-pages 3, want 3", n)
	}
}
