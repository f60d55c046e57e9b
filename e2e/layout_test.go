package e2e_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/internal/tooltest"
)

// plantedWeb is a web of groups of hosts, every host of a group linking
// to every other (weight 1 to 3), and one link from each group to the
// next: communities everyone agrees on. It returns the web and the group
// of each host.
func plantedWeb(t *testing.T, groups, size int) (*fakeweb.Web, map[string]int) {
	t.Helper()
	var b strings.Builder
	group := map[string]int{}
	host := func(g, i int) string { return fmt.Sprintf("g%d-h%d.test", g, i) }
	for g := range groups {
		for i := range size {
			group[host(g, i)] = g
			for j := range size {
				if i != j {
					fmt.Fprintf(&b, "%s\t%s\t%d\n", host(g, i), host(g, j), 1+(i+j)%3)
				}
			}
		}
		fmt.Fprintf(&b, "%s\t%s\t1\n", host(g, 0), host((g+1)%groups, 1))
	}
	w, err := fakeweb.FromEdges(strings.NewReader(b.String()), fakeweb.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return w, group
}

// TestLayout_PlantedCommunities crawls a web of four planted groups, runs
// weaver layout, and exports GraphML, JSON and CSV: every node carries
// community, x and y, the same in the three files, and the communities
// are the groups. Then the DOT export through Graphviz: the SVG draws
// every node where the stored layout puts it.
func TestLayout_PlantedCommunities(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, group := plantedWeb(t, 4, 10)
	srv := startWeb(t, w)
	db := filepath.Join(dir, "planted.bolt")
	weaverOK(t, dir, append(crawlArgs(srv, db, "--max-depth", "0", "--max-crawls-per-node", "1", "--max-outbound-links", "0"), w.Seed())...)
	r := weaverOK(t, dir, "layout", "--db", db)
	if !strings.Contains(r.stdout, "laid out 40 hosts") || !strings.Contains(r.stdout, "4 communities") {
		t.Errorf("weaver layout: %q, want 40 hosts in 4 communities", r.stdout)
	}
	gml := filepath.Join(dir, "g.graphml")
	prefix := filepath.Join(dir, "g")
	r = weaverOK(t, dir, "export", "--db", db, "--graphml", gml, "--csv", prefix, "--json")

	type pos struct {
		comm int
		x, y float64
	}
	// JSON.
	var g struct {
		Nodes []struct {
			ID        uint64
			Host      string
			Community *int
			X, Y      *float64
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &g); err != nil {
		t.Fatalf("JSON: %v", err)
	}
	fromJSON := map[string]pos{}
	ids := map[uint64]string{}
	for _, n := range g.Nodes {
		if n.Community == nil || n.X == nil || n.Y == nil {
			t.Fatalf("JSON node %s lacks community, x or y", n.Host)
		}
		fromJSON[n.Host] = pos{*n.Community, *n.X, *n.Y}
		ids[n.ID] = n.Host
	}
	if len(fromJSON) != 40 {
		t.Fatalf("JSON has %d nodes, want 40", len(fromJSON))
	}
	// The communities are the groups: one community per group, a
	// different one for each.
	commOf := map[int]int{} // group → community
	seen := map[int]int{}   // community → group
	for h, p := range fromJSON {
		gr := group[h]
		if c, ok := commOf[gr]; ok && c != p.comm {
			t.Errorf("group %d is split: %s in community %d, another host in %d", gr, h, p.comm, c)
		}
		commOf[gr] = p.comm
		if other, ok := seen[p.comm]; ok && other != gr {
			t.Errorf("community %d joins groups %d and %d", p.comm, other, gr)
		}
		seen[p.comm] = gr
	}
	// CSV: the same figures.
	f, err := os.Open(prefix + "-nodes.csv")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	for _, name := range []string{"host", "community", "x", "y"} {
		if _, ok := col[name]; !ok {
			t.Fatalf("nodes.csv has no %s column: %v", name, rows[0])
		}
	}
	for _, row := range rows[1:] {
		want := fromJSON[row[col["host"]]]
		c, _ := strconv.Atoi(row[col["community"]])
		x, _ := strconv.ParseFloat(row[col["x"]], 64)
		y, _ := strconv.ParseFloat(row[col["y"]], 64)
		if c != want.comm || math.Abs(x-want.x) > 0.002 || math.Abs(y-want.y) > 0.002 {
			t.Errorf("CSV %s: community %d at (%g, %g); JSON %d at (%g, %g)", row[col["host"]], c, x, y, want.comm, want.x, want.y)
		}
	}
	// GraphML: declared and given.
	data, err := os.ReadFile(gml)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`<key id="community" for="node" attr.name="community" attr.type="int"/>`, `attr.name="x" attr.type="double"`, `attr.name="y" attr.type="double"`} {
		if !strings.Contains(string(data), key) {
			t.Errorf("GraphML lacks %s", key)
		}
	}
	if n := strings.Count(string(data), `<data key="community">`); n != 40 {
		t.Errorf("GraphML: %d nodes with a community, want 40", n)
	}

	t.Run("dot -Tsvg draws the stored layout", func(t *testing.T) {
		dot, err := exec.LookPath("dot")
		if err != nil {
			tooltest.Missing(t, "no Graphviz dot (apt-get install graphviz)")
		}
		r := weaverOK(t, dir, "export", "--db", db, "--dot", "-")
		// pos="x,y!" in points: the layout's position times one scale.
		pinned := regexp.MustCompile(`"n(\d+)" \[.*pos="([-0-9.]+),([-0-9.]+)!"`)
		at := map[string][2]float64{}
		for _, m := range pinned.FindAllStringSubmatch(r.stdout, -1) {
			id, _ := strconv.ParseUint(m[1], 10, 64)
			x, _ := strconv.ParseFloat(m[2], 64)
			y, _ := strconv.ParseFloat(m[3], 64)
			at["n"+m[1]] = [2]float64{x, y}
			if p, ok := fromJSON[ids[id]]; ok && math.Abs(p.x) > 1 {
				// The same scale for every node.
				at["scale"] = [2]float64{x / p.x, 0}
			}
		}
		if len(at) != 41 {
			t.Fatalf("DOT pins %d nodes, want 40:\n%.600s", len(at)-1, r.stdout)
		}
		scale := at["scale"][0]
		for id, host := range ids {
			p, q := fromJSON[host], at["n"+strconv.FormatUint(id, 10)]
			if math.Abs(q[0]-p.x*scale) > 0.1+0.01*math.Abs(q[0]) || math.Abs(q[1]-p.y*scale) > 0.1+0.01*math.Abs(q[1]) {
				t.Errorf("DOT puts %s at (%g, %g), the layout at (%g, %g) × %g", host, q[0], q[1], p.x, p.y, scale)
			}
		}
		cmd := exec.Command(dot, "-Tsvg")
		cmd.Stdin = strings.NewReader(r.stdout)
		svg, err := cmd.Output()
		if err != nil {
			t.Fatalf("dot -Tsvg: %v", err)
		}
		// Each node is a point centred where it is pinned, to a tenth of
		// a point (Graphviz's precision): the ellipse of its group.
		// Graphviz translates the picture and flips y: svg = (x + tx, −y + ty).
		var tx, ty float64
		found := 0
		for name, m := range tooltest.ParseSVG(t, svg).Nodes {
			q, ok := at[name]
			if !ok || m.Shape != "ellipse" {
				t.Errorf("SVG draws %s as %q (want a point, an ellipse)", name, m.Shape)
				continue
			}
			if found == 0 {
				tx, ty = m.X-q[0], m.Y+q[1]
			}
			found++
			if math.Abs(m.X-q[0]-tx) > 0.11 || math.Abs(m.Y+q[1]-ty) > 0.11 {
				t.Errorf("SVG draws %s at (%g, %g), the layout pins it at (%g, %g) (offset %g, %g)", name, m.X, m.Y, q[0], q[1], tx, ty)
			}
		}
		if found != 40 {
			t.Errorf("found %d nodes in the SVG, want 40", found)
		}
	})
}
