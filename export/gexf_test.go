package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/internal/tooltest"
	"github.com/weaver-crawler/weaver/kv"
)

func exportGEXF(tb testing.TB, s *kv.Store, opt export.Options) ([]byte, export.Stats) {
	tb.Helper()
	var b bytes.Buffer
	st, err := export.GEXF(context.Background(), &b, s, opt)
	if err != nil {
		tb.Fatalf("export gexf: %v", err)
	}
	return b.Bytes(), st
}

// gexfDoc is the part of GEXF 1.2 the structural check reads.
type gexfDoc struct {
	XMLName xml.Name `xml:"http://www.gexf.net/1.2draft gexf"`
	Version string   `xml:"version,attr"`
	Meta    struct {
		Creator string `xml:"creator"`
	} `xml:"meta"`
	Graph struct {
		EdgeType   string `xml:"defaultedgetype,attr"`
		Mode       string `xml:"mode,attr"`
		TimeFormat string `xml:"timeformat,attr"`
		Attributes []struct {
			Class string `xml:"class,attr"`
			Attr  []struct {
				ID    string `xml:"id,attr"`
				Title string `xml:"title,attr"`
				Type  string `xml:"type,attr"`
			} `xml:"attribute"`
		} `xml:"attributes"`
		Nodes []struct {
			ID     string `xml:"id,attr"`
			Label  string `xml:"label,attr"`
			Values []struct {
				For   string `xml:"for,attr"`
				Value string `xml:"value,attr"`
			} `xml:"attvalues>attvalue"`
			Size *struct {
				Value float64 `xml:"value,attr"`
			} `xml:"http://www.gexf.net/1.2draft/viz size"`
			Position *struct {
				X string `xml:"x,attr"`
				Y string `xml:"y,attr"`
			} `xml:"http://www.gexf.net/1.2draft/viz position"`
			Color *struct {
				R string `xml:"r,attr"`
			} `xml:"http://www.gexf.net/1.2draft/viz color"`
		} `xml:"nodes>node"`
		Edges []struct {
			ID     string  `xml:"id,attr"`
			Source string  `xml:"source,attr"`
			Target string  `xml:"target,attr"`
			Weight float64 `xml:"weight,attr"`
			Values []struct {
				For   string `xml:"for,attr"`
				Value string `xml:"value,attr"`
			} `xml:"attvalues>attvalue"`
		} `xml:"edges>edge"`
	} `xml:"graph"`
}

// TestGEXF_Structure is the structural check that stands in for the
// GEXF XSD (not in the repository, no network): the root in the 1.2draft
// namespace, version 1.2, a static directed graph, every attvalue
// declared in <attributes> with a GEXF type and a value of that type,
// node and edge ids unique, edge ends declared nodes, viz:size on every
// node with ranks and on none without, viz:position and viz:color on
// every node.
func TestGEXF_Structure(t *testing.T) {
	s := smallStore(t)
	for _, noRanks := range []bool{false, true} {
		opt := fixedOptions()
		opt.NoRanks = noRanks
		out, st := exportGEXF(t, s, opt)
		var d gexfDoc
		if err := xml.Unmarshal(out, &d); err != nil {
			t.Fatalf("not GEXF 1.2: %v\n%s", err, out)
		}
		if d.Version != "1.2" || d.Graph.EdgeType != "directed" || d.Meta.Creator != "weaver 0.1.0-test" || d.Graph.Mode != "static" || d.Graph.TimeFormat != "" {
			t.Errorf("version %q, edge type %q, creator %q, mode %q, time format %q", d.Version, d.Graph.EdgeType, d.Meta.Creator, d.Graph.Mode, d.Graph.TimeFormat)
		}
		types := map[string]map[string]string{}
		for _, a := range d.Graph.Attributes {
			types[a.Class] = map[string]string{}
			for _, at := range a.Attr {
				if !slices.Contains([]string{"string", "integer", "long", "double", "boolean"}, at.Type) || at.ID != at.Title {
					t.Errorf("attribute %+v", at)
				}
				types[a.Class][at.ID] = at.Type
			}
		}
		if _, ok := types["node"]["pagerank"]; ok == noRanks {
			t.Errorf("no ranks %v: pagerank declared %v", noRanks, ok)
		}
		for _, want := range []string{"host", "title", "crawl_count", "mirror_of", "pages_fetched"} {
			if types["node"][want] == "" {
				t.Errorf("node attribute %s not declared: %v", want, types["node"])
			}
		}
		check := func(class, name, val string) {
			typ, ok := types[class][name]
			var err error
			switch typ {
			case "integer":
				_, err = strconv.ParseInt(val, 10, 32)
			case "long":
				_, err = strconv.ParseInt(val, 10, 64)
			case "double":
				_, err = strconv.ParseFloat(val, 64)
			case "boolean":
				if val != "true" && val != "false" {
					err = strconv.ErrSyntax
				}
			}
			if !ok || err != nil {
				t.Errorf("%s attvalue %s=%q: declared %v as %q, %v", class, name, val, ok, typ, err)
			}
		}
		ids := map[string]bool{}
		for _, n := range d.Graph.Nodes {
			if ids[n.ID] || n.Label == "" {
				t.Errorf("node %q %q: duplicate or unlabelled", n.ID, n.Label)
			}
			ids[n.ID] = true
			for _, v := range n.Values {
				check("node", v.For, v.Value)
			}
			if (n.Size == nil) != noRanks || n.Size != nil && (n.Size.Value < 4 || n.Size.Value > 40) {
				t.Errorf("node %s: viz:size %+v, no ranks %v", n.ID, n.Size, noRanks)
			}
			if n.Position == nil || n.Color == nil {
				t.Errorf("node %s: viz:position %+v, viz:color %+v", n.ID, n.Position, n.Color)
			}
		}
		edgeIDs := map[string]bool{}
		for _, e := range d.Graph.Edges {
			if edgeIDs[e.ID] || !ids[e.Source] || !ids[e.Target] || e.Weight < 1 {
				t.Errorf("edge %+v", e)
			}
			edgeIDs[e.ID] = true
			for _, v := range e.Values {
				check("edge", v.For, v.Value)
			}
		}
		if uint64(len(d.Graph.Nodes)) != st.Nodes || uint64(len(d.Graph.Edges)) != st.Edges || st.Nodes != uint64(len(smallNodes)) {
			t.Errorf("%d nodes, %d edges; stats %+v", len(d.Graph.Nodes), len(d.Graph.Edges), st)
		}
	}
}

// TestGEXF_Xmllint: the file is well-formed XML for libxml2, hostile
// titles included.
func TestGEXF_Xmllint(t *testing.T) {
	xmllint := tooltest.Tool(t, "xmllint")
	path := filepath.Join(t.TempDir(), "h.gexf")
	if _, err := export.WriteFile(context.Background(), hostileStore(t), path, export.FormatGEXF, fixedOptions()); err != nil {
		t.Fatal(err)
	}
	runTool(t, nil, xmllint, "--noout", "--nonet", path)
}

// gexfNetworkx reads the file with networkx's read_gexf as a user
// would, no argument but the path (1.2draft is its default in 2.8 and
// 3.x), and prints every node's and edge's attributes, viz included.
const gexfNetworkx = `
import json, sys
import networkx as nx
G = nx.read_gexf(sys.argv[1])
json.dump({
    "version": nx.__version__, "directed": G.is_directed(),
    "nodes": {n: d for n, d in G.nodes(data=True)},
    "edges": [[u, v, d] for u, v, d in G.edges(data=True)],
}, sys.stdout)
`

// gexfRead is what gexfNetworkx prints.
type gexfRead struct {
	Version  string
	Directed bool
	Nodes    map[string]map[string]any
	Edges    [][3]any
}

// readGEXF reads the GEXF file at path with networkx in the Python py.
func readGEXF(t *testing.T, py, path string) gexfRead {
	t.Helper()
	var got gexfRead
	out := runTool(t, nil, py, "-c", gexfNetworkx, path)
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return got
}

// TestGEXF_NetworkX: networkx reads the file back (see gexfNetworkx), with
// every hostile title and description as stored, the typed attributes as
// numbers and the edges with their weights.
func TestGEXF_NetworkX(t *testing.T) {
	s := hostileStore(t)
	path := filepath.Join(t.TempDir(), "h.gexf")
	if _, err := export.WriteFile(context.Background(), s, path, export.FormatGEXF, fixedOptions()); err != nil {
		t.Fatal(err)
	}
	withNetworkx(t, func(t *testing.T, py string) {
		got := readGEXF(t, py, path)
		if !got.Directed || len(got.Nodes) != len(hostile) || len(got.Edges) != len(hostile) {
			t.Fatalf("directed %v, %d nodes, %d edges", got.Directed, len(got.Nodes), len(got.Edges))
		}
		for id, n := range got.Nodes {
			i, _ := strconv.ParseUint(id, 10, 64)
			title, _ := n["title"].(string)
			if want := xmlKept(hostileTitle(i)); title != want {
				t.Errorf("node %s title %q, want %q", id, title, want)
			}
			desc, _ := n["description"].(string)
			if want := xmlKept(hostileDesc(i)); desc != want {
				t.Errorf("node %s description %q, want %q", id, desc, want)
			}
			label, _ := n["label"].(string)
			viz, _ := n["viz"].(map[string]any)
			if n["crawl_count"] != 1.0 || n["pagerank"] == nil || viz["size"] == nil || !strings.HasSuffix(label, ".example") {
				t.Errorf("node %s: %+v", id, n)
			}
		}
		for _, e := range got.Edges {
			if w, ok := e[2].(map[string]any)["weight"].(float64); !ok || w < 1 {
				t.Errorf("edge %v", e)
			}
		}
	})
}

// xmlKept is s as XML carries it: invalid UTF-8 as U+FFFD, the
// characters XML 1.0 forbids dropped.
func xmlKept(s string) string {
	var b strings.Builder
	for _, r := range s { // an invalid byte ranges as U+FFFD
		if r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestGEXF_File: WriteFile writes GEXF like the other text formats, and
// refuses an existing file without Force.
func TestGEXF_File(t *testing.T) {
	s := smallStore(t)
	path := filepath.Join(t.TempDir(), "m.gexf")
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := export.WriteFile(context.Background(), s, path, export.FormatGEXF, fixedOptions()); err == nil {
		t.Errorf("replaced an existing file without Force")
	}
	opt := fixedOptions()
	opt.Force = true
	if _, err := export.WriteFile(context.Background(), s, path, export.FormatGEXF, opt); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !bytes.Contains(b, []byte(`<gexf xmlns="http://www.gexf.net/1.2draft"`)) {
		t.Errorf("%.200s", b)
	}
}

// TestGEXF_NetworkXReadsEverything (issue 40): the GEXF export of a
// store with a crawl history (the case that was dynamic, with a time
// format networkx 3 cannot read) is read by both networkx (Debian's 2.8
// and the PATH's 3.x) with nx.read_gexf(path) alone: every node with
// every attribute of the JSON export and its value, its viz position at
// the layout's x and y and its viz colour its community's; every edge
// with its weight and attributes.
func TestGEXF_NetworkXReadsEverything(t *testing.T) {
	s, _ := historyStore(t)
	opt := fixedOptions()
	_, nodes, edges := exportJSONDoc(t, s, opt)
	path := filepath.Join(t.TempDir(), "h.gexf")
	if _, err := export.WriteFile(context.Background(), s, path, export.FormatGEXF, opt); err != nil {
		t.Fatal(err)
	}
	withNetworkx(t, func(t *testing.T, py string) {
		got := readGEXF(t, py, path)
		if !got.Directed || len(got.Nodes) != len(nodes) || len(got.Edges) != len(edges) {
			t.Fatalf("networkx %s: directed %v, %d nodes, %d edges; want %d, %d", got.Version, got.Directed, len(got.Nodes), len(got.Edges), len(nodes), len(edges))
		}
		hosts := map[string]string{}
		for host, want := range nodes {
			id := strconv.FormatFloat(want["id"].(float64), 'f', -1, 64)
			hosts[id] = host
			n := got.Nodes[id]
			if n == nil || n["label"] != host {
				t.Errorf("node %s (%s): %v", id, host, n)
				continue
			}
			for k, w := range want {
				if k == "id" || w == nil || w == "" {
					continue
				}
				if !sameValue(n[k], w) {
					t.Errorf("%s: %s is %#v, JSON %#v", host, k, n[k], w)
				}
			}
			viz, _ := n["viz"].(map[string]any)
			pos, _ := viz["position"].(map[string]any)
			col, _ := viz["color"].(map[string]any)
			x, _ := pos["x"].(float64)
			y, _ := pos["y"].(float64)
			if pos == nil || math.Abs(x-want["x"].(float64)) > 0.0005 || math.Abs(y-want["y"].(float64)) > 0.0005 {
				t.Errorf("%s: viz position %v, layout (%v, %v)", host, pos, want["x"], want["y"])
			}
			rgb := export.Palette[int(want["community"].(float64))%len(export.Palette)]
			if col == nil || col["r"] != float64(rgb[0]) || col["g"] != float64(rgb[1]) || col["b"] != float64(rgb[2]) {
				t.Errorf("%s: viz colour %v, community %v", host, col, want["community"])
			}
		}
		for _, e := range got.Edges {
			u, v, d := e[0].(string), e[1].(string), e[2].(map[string]any)
			want := edges[[2]string{hosts[u], hosts[v]}]
			if want == nil {
				t.Errorf("edge %s→%s not in the JSON export", hosts[u], hosts[v])
				continue
			}
			for _, k := range []string{"weight", "first_seen", "last_seen", "nofollow", "redirect", "gone", "frame"} {
				w := want[k]
				if k == "gone" && w == nil { // JSON leaves out gone=false
					w = false
				}
				if !sameValue(d[k], w) {
					t.Errorf("edge %s→%s: %s is %#v, JSON %#v", hosts[u], hosts[v], k, d[k], want[k])
				}
			}
		}
		t.Logf("networkx %s read %d nodes and %d edges, every attribute", got.Version, len(got.Nodes), len(got.Edges))
	})
}

// sameValue reports whether a value networkx read (JSON-decoded) is the
// JSON export's: numbers to the last bit a double carries, the rest
// exactly.
func sameValue(got, want any) bool {
	if g, ok := got.(float64); ok {
		w, ok := want.(float64)
		return ok && (g == w || math.Abs(g-w) <= 1e-12*math.Abs(w))
	}
	return got == want
}
