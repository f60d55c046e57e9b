package e2e_test

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/tooltest"
)

// picture is a DOT export as Graphviz drew it: `dot -Tsvg` of the file,
// read back from the SVG (tooltest.Drawing), every text measured as
// Graphviz measured it.
type picture struct {
	*tooltest.Drawing
	took     time.Duration // dot -Tsvg's wall time
	overlaps [][2]int      // pairs of texts whose boxes overlap
	nodes    []dotNode     // the nodes of the DOT file, in its order
	edges    int           // the edges of the DOT file
}

// dotNode is a node line of the DOT file: its name ("n12"), its label
// (the host), its PageRank (0 without ranks), its community (-1 without)
// and colour.
type dotNode struct {
	name, host, color string
	pagerank          float64
	community         int
}

var (
	dotNodeLine  = regexp.MustCompile(`(?m)^\t"(n\d+)" \[label="([^"]*)"(.*)\];$`)
	dotPageRank  = regexp.MustCompile(`, pagerank="([^"]+)"`)
	dotCommunity = regexp.MustCompile(`, community=(\d+)`)
	dotColor     = regexp.MustCompile(`, color="(#[0-9a-f]{6})"`)
	dotEdgeLine  = regexp.MustCompile(`(?m)^\t"n\d+" -> "n\d+" \[`)
)

// draw runs `dot -Tsvg` (the dot at path dot) on the DOT file at path and
// reads what it drew.
func draw(tb testing.TB, dot, path string) picture {
	tb.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	cmd := exec.Command(dot, "-Tsvg", path)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	svg, err := cmd.Output()
	took := time.Since(start)
	if err != nil {
		tb.Fatalf("dot -Tsvg %s: %v\n%s", path, err, errb.String())
	}
	p := picture{Drawing: tooltest.ParseSVG(tb, svg), took: took}
	p.MeasureTexts(tb, dot)
	p.overlaps = tooltest.OverlappingTexts(p.Texts)
	for _, m := range dotNodeLine.FindAllSubmatch(src, -1) {
		n := dotNode{name: string(m[1]), host: string(m[2]), community: -1}
		if a := dotPageRank.FindSubmatch(m[3]); a != nil {
			n.pagerank, _ = strconv.ParseFloat(string(a[1]), 64)
		}
		if a := dotCommunity.FindSubmatch(m[3]); a != nil {
			n.community, _ = strconv.Atoi(string(a[1]))
		}
		if a := dotColor.FindSubmatch(m[3]); a != nil {
			n.color = string(a[1])
		}
		p.nodes = append(p.nodes, n)
	}
	p.edges = len(dotEdgeLine.FindAllIndex(src, -1))
	return p
}

// drawnEdges counts the edges drawn with a line.
func (p picture) drawnEdges() int {
	n := 0
	for _, e := range p.Edges {
		if e.Drawn {
			n++
		}
	}
	return n
}

// BenchmarkDOT_Readable times `dot -Tsvg` on the DOT export of two crawls,
// each laid out by `weaver layout` (and the export itself, once), and
// reports what the picture shows:
// the pairs of texts that overlap (boxes as Graphviz measured them), the
// hosts drawn with their name, and the edges drawn.
//
//   - uk1996: the UK-1996 replay (fakeweb.FromEdges of
//     uk1996-crawled-subgraph.tsv, every 11th host disallowing weaver in
//     its robots.txt, as in the cluster tests) crawled with the default
//     flags but --max-depth 0 --max-subdomains-per-root 0: 643 hosts,
//     1,570 links; and its --top 20.
//   - fakeweb5000: bin/fakeweb --hosts 5000 crawled with --max-depth 0:
//     5,000 hosts, 49,000 links.
//
// Both crawls run one worker, so that hosts get their ids, and so their
// layout, in one order: the figures are the same on every run. The same
// by hand:
//
//	bin/fakeweb --hosts 5000 --listen 127.0.0.1:8080 &
//	bin/weaver crawl --db 5k.bolt --connect-to ::127.0.0.1:8080 --delay 0 --max-depth 0 --workers 1 "$(bin/fakeweb --hosts 5000 --print-seed)"
//	bin/weaver layout --db 5k.bolt && bin/weaver export --db 5k.bolt --dot 5k.dot && time dot -Tsvg 5k.dot > 5k.svg
//
// Run with: go test ./e2e -run '^$' -bench DOT_Readable -benchtime 1x
func BenchmarkDOT_Readable(b *testing.B) {
	dot := tooltest.Tool(b, "dot")
	dir := b.TempDir()
	uk := ukWeb(b, fakeweb.Config{RobotsDisallowEvery: 11})
	fw := fakeweb.New(fakeweb.Config{Hosts: 5000})
	stores := map[string]string{
		"uk1996":      crawledStore(b, dir, "uk", uk, "--max-depth", "0", "--max-subdomains-per-root", "0", "--workers", "1"),
		"fakeweb5000": crawledStore(b, dir, "5k", fw, "--max-depth", "0", "--workers", "1"),
	}
	for _, c := range []struct {
		name, store string
		flags       []string
	}{
		{"uk1996", "uk1996", nil},
		{"uk1996-top20", "uk1996", []string{"--top", "20"}},
		{"fakeweb5000", "fakeweb5000", nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			path := filepath.Join(dir, c.name+".dot")
			args := append([]string{"export", "--db", stores[c.store], "--force", "--dot", path}, c.flags...)
			start := time.Now()
			if r := fixture(b, dir, args...); r.code != 0 {
				b.Fatalf("export: exit %d\n%s", r.code, r.stderr)
			}
			export := time.Since(start)
			var p picture
			var took time.Duration
			for b.Loop() {
				p = draw(b, dot, path)
				took += p.took
			}
			b.ReportMetric(took.Seconds()/float64(b.N), "s/dot-Tsvg")
			b.ReportMetric(export.Seconds(), "s/weaver-export")
			b.ReportMetric(float64(len(p.nodes)), "hosts")
			b.ReportMetric(float64(len(p.Labelled())), "labelled-hosts")
			b.ReportMetric(float64(len(p.overlaps)), "overlapping-label-pairs")
			b.ReportMetric(float64(p.drawnEdges()), "edges-drawn")
			b.ReportMetric(float64(p.edges), "edges")
		})
	}
}

// crawledStore crawls w into dir/name.bolt with the plain binary (crawl
// flags and extra) and stores its layout with `weaver layout`.
func crawledStore(tb testing.TB, dir, name string, w *fakeweb.Web, extra ...string) string {
	tb.Helper()
	srv := startWeb(tb, w)
	db := filepath.Join(dir, name+".bolt")
	if r := fixture(tb, dir, append(crawlArgs(srv, db, extra...), w.Seed())...); r.code != 0 {
		tb.Fatalf("crawl: exit %d\n%s", r.code, r.stderr)
	}
	if r := fixture(tb, dir, "layout", "--db", db); r.code != 0 {
		tb.Fatalf("layout: exit %d\n%s", r.code, r.stderr)
	}
	return db
}

// checkReadable checks a picture against issue 40: no two texts overlap;
// every host is drawn as a point of its community's colour; the top
// hosts by PageRank (20, or all of a smaller graph) are named, each name
// its host; a host with a higher PageRank is never named in a smaller
// font; a host drawn without its name has it as its tooltip; every edge
// is drawn; the legend names the largest community by its biggest host.
func checkReadable(t *testing.T, p picture) {
	t.Helper()
	for k, pair := range p.overlaps {
		if k == 10 {
			t.Errorf("... %d overlapping pairs in all", len(p.overlaps))
			break
		}
		a, b := p.Texts[pair[0]], p.Texts[pair[1]]
		t.Errorf("%q (%s) overlaps %q (%s): %+v, %+v", a.Text, a.Node, b.Text, b.Node, a.Box, b.Box)
	}
	if len(p.nodes) == 0 || len(p.Nodes) != len(p.nodes) {
		t.Fatalf("the SVG draws %d nodes, the DOT has %d", len(p.Nodes), len(p.nodes))
	}
	size := map[string]float64{} // a named node's font size
	for _, tx := range p.Texts {
		if tx.Node != "" {
			size[tx.Node] = tx.Size
		}
	}
	byRank := slices.Clone(p.nodes)
	id := func(n dotNode) int { i, _ := strconv.Atoi(strings.TrimPrefix(n.name, "n")); return i }
	slices.SortFunc(byRank, func(a, b dotNode) int { return cmp.Or(cmp.Compare(b.pagerank, a.pagerank), cmp.Compare(id(a), id(b))) })
	community := map[int][]dotNode{}
	for i, n := range byRank {
		m := p.Nodes[n.name]
		if m.Shape != "ellipse" || n.community < 0 || n.color != paletteHex(n.community) {
			t.Errorf("%s (%s) is drawn as %q in %s, want a point in its community's (%d) colour", n.name, n.host, m.Shape, n.color, n.community)
		}
		community[n.community] = append(community[n.community], n)
		if i < 20 && !m.Text {
			t.Errorf("%s, the %dth host by PageRank, is not named", n.host, i+1)
		}
		if !m.Text && !strings.HasPrefix(m.Tooltip, n.host) {
			t.Errorf("%s is drawn without its name, and its tooltip is %q", n.host, m.Tooltip)
		}
	}
	var last dotNode
	for _, tx := range p.Texts {
		if tx.Node == "" {
			continue
		}
		i := slices.IndexFunc(p.nodes, func(n dotNode) bool { return n.name == tx.Node })
		if i < 0 || tx.Text != p.nodes[i].host {
			t.Errorf("%s is named %q", tx.Node, tx.Text)
		}
	}
	for _, n := range byRank {
		if s, ok := size[n.name]; ok {
			if last.name != "" && s > size[last.name] {
				t.Errorf("%s (PageRank %g) is named in %g points, %s (PageRank %g) in %g", n.host, n.pagerank, s, last.host, last.pagerank, size[last.name])
			}
			last = n
		}
	}
	if got := p.drawnEdges(); len(p.Edges) != p.edges || got != p.edges {
		t.Errorf("%d edges drawn of %d in the SVG, %d in the DOT", got, len(p.Edges), p.edges)
	}
	// The legend: the largest community, named by its biggest host.
	largest := -1
	for c, ns := range community {
		if largest < 0 || len(ns) > len(community[largest]) || len(ns) == len(community[largest]) && c < largest {
			largest = c
		}
	}
	if len(community) > 1 {
		want := fmt.Sprintf("%s (%d hosts)", community[largest][0].host, len(community[largest]))
		if !slices.ContainsFunc(p.Texts, func(tx tooltest.Text) bool { return tx.Node == "" && tx.Text == want }) {
			t.Errorf("no legend row %q", want)
		}
	}
}

// paletteHex is the colour of community c as the DOT export writes it.
func paletteHex(c int) string {
	rgb := export.Palette[c%len(export.Palette)]
	return fmt.Sprintf("#%02x%02x%02x", rgb[0], rgb[1], rgb[2])
}
