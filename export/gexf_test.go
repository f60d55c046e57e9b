package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
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

// gexfDoc is the part of GEXF 1.3 the structural check reads.
type gexfDoc struct {
	XMLName xml.Name `xml:"http://gexf.net/1.3 gexf"`
	Version string   `xml:"version,attr"`
	Meta    struct {
		Creator string `xml:"creator"`
	} `xml:"meta"`
	Graph struct {
		EdgeType   string `xml:"defaultedgetype,attr"`
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
			} `xml:"http://gexf.net/1.3/viz size"`
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
// GEXF XSD (not in the repository, no network): the root in the 1.3
// namespace, a directed graph, every attvalue declared in <attributes>
// with a GEXF type and a value of that type, node and edge ids unique,
// edge ends declared nodes, viz:size on every node with ranks and on none
// without.
func TestGEXF_Structure(t *testing.T) {
	s := smallStore(t)
	for _, noRanks := range []bool{false, true} {
		opt := fixedOptions()
		opt.NoRanks = noRanks
		out, st := exportGEXF(t, s, opt)
		var d gexfDoc
		if err := xml.Unmarshal(out, &d); err != nil {
			t.Fatalf("not GEXF 1.3: %v\n%s", err, out)
		}
		if d.Version != "1.3" || d.Graph.EdgeType != "directed" || d.Meta.Creator != "weaver 0.1.0-test" {
			t.Errorf("version %q, edge type %q, creator %q", d.Version, d.Graph.EdgeType, d.Meta.Creator)
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

// gexfNetworkx reads the file with networkx: version 1.3 where networkx
// knows it (3.x); networkx 2.8 knows only 1.1draft and 1.2draft, so the
// file is read there with its namespaces renamed to 1.2draft, which
// checks the structure (1.3 changed no element this export uses).
const gexfNetworkx = `
import json, sys, io
import networkx as nx
from networkx.readwrite.gexf import GEXF
path = sys.argv[1]
if "1.3" in GEXF.versions:
    G = nx.read_gexf(path, version="1.3")
    how = "1.3"
else:
    data = open(path, encoding="utf-8").read()
    data = data.replace("http://gexf.net/1.3/viz", "http://www.gexf.net/1.2draft/viz").replace("http://gexf.net/1.3", "http://www.gexf.net/1.2draft").replace('version="1.3"', 'version="1.2"')
    G = nx.read_gexf(io.BytesIO(data.encode("utf-8")), version="1.2draft")
    how = "1.2draft (renamed)"
json.dump({
    "how": how, "directed": G.is_directed(),
    "nodes": {n: {"label": d.get("label"), "title": d.get("title", ""), "description": d.get("description", ""),
                  "crawl_count": d.get("crawl_count"), "pagerank": d.get("pagerank"), "size": d.get("viz", {}).get("size")}
              for n, d in G.nodes(data=True)},
    "edges": sorted([[u, v, d["weight"], d.get("nofollow", 0)] for u, v, d in G.edges(data=True)]),
}, sys.stdout)
`

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
		var got struct {
			How      string
			Directed bool
			Nodes    map[string]struct {
				Label, Title, Description string
				CrawlCount                any      `json:"crawl_count"`
				PageRank                  *float64 `json:"pagerank"`
				Size                      *float64
			}
			Edges [][]any
		}
		out := runTool(t, nil, py, "-c", gexfNetworkx, path)
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		t.Logf("read as GEXF %s", got.How)
		if !got.Directed || len(got.Nodes) != len(hostile) || len(got.Edges) != len(hostile) {
			t.Fatalf("directed %v, %d nodes, %d edges", got.Directed, len(got.Nodes), len(got.Edges))
		}
		for id, n := range got.Nodes {
			i, _ := strconv.ParseUint(id, 10, 64)
			if want := xmlKept(hostileTitle(i)); n.Title != want {
				t.Errorf("node %s title %q, want %q", id, n.Title, want)
			}
			if want := xmlKept(hostileDesc(i)); n.Description != want {
				t.Errorf("node %s description %q, want %q", id, n.Description, want)
			}
			if n.CrawlCount != 1.0 || n.PageRank == nil || n.Size == nil || !strings.HasSuffix(n.Label, ".example") {
				t.Errorf("node %s: %+v", id, n)
			}
		}
		for _, e := range got.Edges {
			if w, ok := e[2].(float64); !ok || w < 1 {
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
	if !bytes.Contains(b, []byte(`<gexf xmlns="http://gexf.net/1.3"`)) {
		t.Errorf("%.200s", b)
	}
}
