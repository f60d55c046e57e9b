package e2e_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/storetest"
	"github.com/weaver-crawler/weaver/internal/tooltest"
)

// demoSettings reads from scripts/demo.sh the fake web make demo crawls
// (hosts, topics, seed) and the flags of the export its map.svg is drawn
// from, so that the test follows the demo.
func demoSettings(t *testing.T) (cfg fakeweb.Config, svgFlags []string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "scripts", "demo.sh"))
	if err != nil {
		t.Fatal(err)
	}
	script := string(raw)
	find := func(what, re string) string {
		m := regexp.MustCompile(re).FindStringSubmatch(script)
		if m == nil {
			t.Fatalf("scripts/demo.sh: no %s (%s)", what, re)
		}
		return m[1]
	}
	num := func(what, re string) int {
		n, err := strconv.Atoi(find(what, re))
		if err != nil {
			t.Fatalf("scripts/demo.sh: %s: %v", what, err)
		}
		return n
	}
	cfg.Hosts = num("hosts", `hosts=\$\{DEMO_HOSTS:-(\d+)\}`)
	cfg.Topics = num("topics", `topics=\$\{DEMO_TOPICS:-(\d+)\}`)
	cfg.Seed = int64(num("seed", `bin/fakeweb --listen \S+ --hosts "\$hosts" --topics "\$topics" --seed (\d+)`))
	svgFlags = strings.Fields(find("map.svg's export", `bin/weaver export --db "\$out/weaver.bolt" (.*?)--dot - \| dot -Tsvg`))
	return cfg, svgFlags
}

// TestDemo_TopicalWeb: the web make demo crawls has the structure of the
// real one (issue 40): crawled with weaver from its seed with the demo's
// settings, it gives the graph its ground truth says, whose communities,
// as networkx's Louvain finds them, have a modularity of at least 0.5;
// and the export map.svg is drawn from (its flags read from
// scripts/demo.sh) keeps the links: a minimum weight above 1 left none.
func TestDemo_TopicalWeb(t *testing.T) {
	t.Parallel()
	cfg, svgFlags := demoSettings(t)
	py := tooltest.Python(t, "networkx")
	w := fakeweb.New(cfg)
	srv := startWeb(t, w)
	dir := t.TempDir()
	db := filepath.Join(dir, "demo.bolt")
	if r := fixture(t, dir, crawlArgs(srv, db, "--max-depth", "0", w.Seed())...); r.code != 0 {
		t.Fatalf("crawl: exit %d\n%s", r.code, r.stderr)
	}
	got := edges(t, db)
	storetest.SameGraph(t, got, w.ExpectedEdges(10, excluded))

	hosts := slices.Sorted(func(yield func(string) bool) {
		for h := range nodes(t, db) {
			if !yield(h) {
				return
			}
		}
	})
	var nx bytes.Buffer
	fmt.Fprintf(&nx, "%d 3\n", len(hosts))
	for e, weight := range got {
		a, _ := slices.BinarySearch(hosts, e[0])
		b, _ := slices.BinarySearch(hosts, e[1])
		fmt.Fprintf(&nx, "%d %d %d\n", a, b, weight)
	}
	best := slices.Max(tooltest.LouvainModularity(t, py, nx.Bytes()))
	t.Logf("the demo's web (%d hosts, %d topics, seed %d): %d hosts and %d links crawled; networkx's Louvain: modularity %.4f",
		cfg.Hosts, cfg.Topics, cfg.Seed, len(hosts), len(got), best)
	if best < 0.5 {
		t.Errorf("modularity %.4f: want at least 0.5, a web of sites and topics", best)
	}

	r := weaver(t, dir, append(append([]string{"export", "--db", db}, svgFlags...), "--dot", "-")...)
	if r.code != 0 {
		t.Fatalf("export %v --dot -: exit %d\n%s", svgFlags, r.code, r.stderr)
	}
	links := strings.Count(r.stdout, " -> ")
	t.Logf("map.svg's export (%s): %d links", strings.Join(svgFlags, " "), links)
	if links < len(got)*9/10 {
		t.Errorf("map.svg's export %v draws %d links of the %d crawled: want nearly all", svgFlags, links, len(got))
	}
}
