package export_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/weaver-crawler/weaver/export"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/internal/tooltest"
	"github.com/weaver-crawler/weaver/kv"
)

// hostile are page titles and descriptions as the web serves them: every
// one must reach every client without breaking it.
var hostile = []string{
	`He said "hi" & <b>bye</b> 'quoted'`,
	"line one\nline two\r\nline three\rfour\ttab",
	"]]> <![CDATA[ inside ]]> end",
	"-- not a comment --> <!-- nor this",
	"nul\x00byte\x00",
	"invalid \xff\xfe utf-8 \xc3 and \xed\xa0\x80 surrogate",
	"controls \x01\x02\x07\x08\x0b\x0c\x1b[31m\x1f\x7f \u0085\u009f",
	"nonchars \uFFFE \uFFFF \uFFFD kept",
	`back\slash \N \G \L \E \" \\ end\`,
	"entities &#0; &#x1; &amp; &lt; &nbsp; &bogus",
	"unicode: é 中文 🕸️ \u2028 \u200b \U0010FFFD",
	`{"json": [1, 2], "x": null}`,
	"<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]>&e;",
	strings.Repeat("long ✓ title & \"quote\" ", 3072/24+1), // over 3 KB
	"",
	"\x00",
	`\`,
	"%s %d %n {{.}} ${x} $(id)",
}

// hostileStore holds one node per hostile string: string i is the title
// of node i and the description of node i+1, nodes linked in a ring.
func hostileStore(tb testing.TB) *kv.Store {
	s := newStore(tb)
	var nodes []fixtureNode
	var edges []fixtureEdge
	for i, h := range hostile {
		nodes = append(nodes, fixtureNode{
			host: "h" + strconv.Itoa(i) + ".example", status: graph.StatusCrawled, http: 200, crawls: 1,
			title: h, desc: hostile[(i+len(hostile)-1)%len(hostile)],
		})
		edges = append(edges, fixtureEdge{i, (i + 1) % len(hostile), uint64(i + 1)})
	}
	writeGraph(tb, s, nodes, edges)
	return s
}

// hostileTitle and hostileDesc are the strings stored on node id (ids
// start at 1).
func hostileTitle(id uint64) string { return hostile[id-1] }
func hostileDesc(id uint64) string  { return hostile[(int(id)-2+len(hostile))%len(hostile)] }

// The expected forms of a string after a trip through each format.

// wantText: SQLite and JSON keep everything but bytes that are not UTF-8,
// each of which becomes U+FFFD.
func wantText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r) // RuneError for a bad byte, n == 1
		i += n
	}
	return b.String()
}

// wantXML: XML also loses what XML 1.0 cannot hold.
func wantXML(s string) string {
	var b strings.Builder
	for _, r := range wantText(s) {
		if r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || r >= 0x10000 {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// wantDOT: Graphviz labels also lose carriage returns, DEL and C1
// controls, and tabs become spaces.
func wantDOT(s string) string {
	var b strings.Builder
	for _, r := range wantXML(s) {
		switch {
		case r == '\t':
			b.WriteByte(' ')
		case r == '\r', r == 0x7F, r >= 0x80 && r < 0xA0:
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestHostile_SQLite(t *testing.T) {
	s := hostileStore(t)
	path, _ := exportFile(t, s, export.FormatSQLite, fixedOptions())
	db := openSQLite(t, path)
	rows, err := db.Query("SELECT node_id, coalesce(title, ''), coalesce(description, '') FROM nodes ORDER BY node_id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id uint64
		var title, desc string
		if err := rows.Scan(&id, &title, &desc); err != nil {
			t.Fatal(err)
		}
		n++
		if want := wantText(hostileTitle(id)); title != want {
			t.Errorf("node %d title: got %q, want %q", id, title, want)
		}
		if want := wantText(hostileDesc(id)); desc != want {
			t.Errorf("node %d description: got %q, want %q", id, desc, want)
		}
	}
	if n != len(hostile) {
		t.Errorf("%d nodes read back, want %d", n, len(hostile))
	}
	// Real clients: the sqlite3 shell, and Python, which fails on any
	// value that is not UTF-8.
	if got := sqlite3(t, path, "PRAGMA integrity_check; SELECT count(*), sum(length(title)) > 3000 FROM nodes;"); got != "ok\n"+strconv.Itoa(len(hostile))+"|1\n" {
		t.Errorf("sqlite3: %q", got)
	}
	py := tooltest.Python(t, "networkx")
	out := runTool(t, nil, py, "-c", `
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT node_id, coalesce(title, ''), coalesce(description, '') FROM nodes").fetchall()
print(json.dumps({str(i): [t, d] for i, t, d in rows}))
`, path)
	var got map[string][2]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	for k, v := range got {
		id, _ := strconv.ParseUint(k, 10, 64)
		if v[0] != wantText(hostileTitle(id)) || v[1] != wantText(hostileDesc(id)) {
			t.Errorf("python sqlite3, node %d: got %q", id, v)
		}
	}
}

func TestHostile_GraphML(t *testing.T) {
	s := hostileStore(t)
	path, _ := exportFile(t, s, export.FormatGraphML, fixedOptions())
	xmllint := tooltest.Tool(t, "xmllint")
	runTool(t, nil, xmllint, "--nonet", "--noout", path)
	runTool(t, nil, xmllint, "--nonet", "--noout", "--schema", graphmlXSD(t), path)
	out := runTool(t, nil, tooltest.Python(t, "networkx"), "-c", `
import json, sys
import networkx as nx
g = nx.read_graphml(sys.argv[1])
print(json.dumps({n: [d.get("title", ""), d.get("description", "")] for n, d in g.nodes(data=True)}))
`, path)
	var got map[string][2]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(hostile) {
		t.Errorf("networkx read %d nodes, want %d", len(got), len(hostile))
	}
	for k, v := range got {
		id, _ := strconv.ParseUint(strings.TrimPrefix(k, "n"), 10, 64)
		if want := wantXML(hostileTitle(id)); v[0] != want {
			t.Errorf("node %s title: got %q, want %q", k, v[0], want)
		}
		if want := wantXML(hostileDesc(id)); v[1] != want {
			t.Errorf("node %s description: got %q, want %q", k, v[1], want)
		}
	}
}

func TestHostile_DOT(t *testing.T) {
	s := hostileStore(t)
	dot := tooltest.Tool(t, "dot")
	// Laid out, every host is a point whose tooltip is its host, then its
	// title if any is left once escaped; without a layout (sfdp), the
	// tooltip is the title.
	for _, noLayout := range []bool{false, true} {
		opt := fixedOptions()
		opt.NoLayout = noLayout
		path, _ := exportFile(t, s, export.FormatDOT, opt)
		svg := runTool(t, nil, dot, "-Tsvg", path)
		xmlWellFormed(t, svg)
		// -Tjson gives each attribute as dot read it, escString escapes and
		// entities still in: decode the ones weaver writes.
		var g struct {
			Objects []struct {
				Name    string `json:"name"`
				Tooltip string `json:"tooltip"`
			} `json:"objects"`
		}
		if err := json.Unmarshal(runTool(t, nil, dot, "-Tjson", path), &g); err != nil {
			t.Fatal(err)
		}
		if len(g.Objects) != len(hostile) {
			t.Errorf("no layout %v: dot read %d nodes, want %d", noLayout, len(g.Objects), len(hostile))
		}
		unescape := strings.NewReplacer(`\\`, `\`, `\n`, "\n", "&amp;", "&")
		for _, o := range g.Objects {
			id, _ := strconv.ParseUint(strings.TrimPrefix(o.Name, "n"), 10, 64)
			want := wantDOT(hostileTitle(id))
			if !noLayout {
				host := "h" + strconv.FormatUint(id-1, 10) + ".example"
				if want != "" {
					host += "\n"
				}
				want = host + want
			}
			if got := unescape.Replace(o.Tooltip); got != want {
				t.Errorf("no layout %v: node %s tooltip: got %q, want %q", noLayout, o.Name, got, want)
			}
		}
	}
}

func TestHostile_JSON(t *testing.T) {
	s := hostileStore(t)
	path, _ := exportFile(t, s, export.FormatJSON, fixedOptions())
	data := readFile(t, path)
	var doc struct {
		Nodes []struct {
			ID          uint64 `json:"id"`
			Title       string `json:"title"`
			Description string `json:"description"`
		} `json:"nodes"`
		Edges []struct {
			Source, Target, Weight uint64
		} `json:"edges"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Nodes) != len(hostile) || len(doc.Edges) != len(hostile) {
		t.Errorf("%d nodes, %d edges, want %d of each", len(doc.Nodes), len(doc.Edges), len(hostile))
	}
	for _, n := range doc.Nodes {
		if want := wantText(hostileTitle(n.ID)); n.Title != want {
			t.Errorf("node %d title: got %q, want %q", n.ID, n.Title, want)
		}
		if want := wantText(hostileDesc(n.ID)); n.Description != want {
			t.Errorf("node %d description: got %q, want %q", n.ID, n.Description, want)
		}
	}
	// One node per line: nothing in a string may break a line.
	if lines := bytes.Count(data, []byte("\n")); lines != 2*len(hostile)+5 {
		t.Errorf("%d lines, want %d", lines, 2*len(hostile)+5)
	}
	got := loadNetworkX(t, tooltest.Python(t, "networkx"), "json", path)
	if got.Nodes != uint64(len(hostile)) {
		t.Errorf("networkx: %+v", got)
	}
}
