package export

import (
	"bufio"
	"context"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// graphmlKeys are the attribute declarations of a GraphML export. Gephi
// takes a node's label from the "label" key.
const graphmlKeys = `  <key id="weaver_version" for="graph" attr.name="weaver_version" attr.type="string"/>
  <key id="exported_at" for="graph" attr.name="exported_at" attr.type="string"/>
  <key id="filters" for="graph" attr.name="filters" attr.type="string"/>
  <key id="harmonic_method" for="graph" attr.name="harmonic_method" attr.type="string"/>
  <key id="label" for="node" attr.name="label" attr.type="string"/>
  <key id="host" for="node" attr.name="host" attr.type="string"/>
  <key id="domain" for="node" attr.name="domain" attr.type="string"/>
  <key id="title" for="node" attr.name="title" attr.type="string"/>
  <key id="description" for="node" attr.name="description" attr.type="string"/>
  <key id="status" for="node" attr.name="status" attr.type="string"/>
  <key id="crawl_count" for="node" attr.name="crawl_count" attr.type="int"/>
  <key id="http_status" for="node" attr.name="http_status" attr.type="int"/>
  <key id="pagerank" for="node" attr.name="pagerank" attr.type="double"/>
  <key id="harmonic" for="node" attr.name="harmonic" attr.type="double"/>
  <key id="canonical" for="node" attr.name="canonical" attr.type="string"/>
  <key id="robots" for="node" attr.name="robots" attr.type="string"/>
  <key id="mirror_of" for="node" attr.name="mirror_of" attr.type="string"/>
  <key id="pages_fetched" for="node" attr.name="pages_fetched" attr.type="int"><default>0</default></key>
  <key id="redirect_to" for="node" attr.name="redirect_to" attr.type="string"/>
  <key id="tls_problem" for="node" attr.name="tls_problem" attr.type="string"/>
  <key id="home" for="node" attr.name="home" attr.type="string"/>
  <key id="weight" for="edge" attr.name="weight" attr.type="int"/>
  <key id="nofollow" for="edge" attr.name="nofollow" attr.type="int"><default>0</default></key>
  <key id="redirect" for="edge" attr.name="redirect" attr.type="int"><default>0</default></key>
  <key id="frame" for="edge" attr.name="frame" attr.type="int"><default>0</default></key>
  <key id="first_seen" for="edge" attr.name="first_seen" attr.type="string"/>
  <key id="last_seen" for="edge" attr.name="last_seen" attr.type="string"/>
  <key id="gone" for="edge" attr.name="gone" attr.type="boolean"><default>false</default></key>
`

// graphmlAtKeys are declared with Options.At: the graph's note on node
// attributes and each node's as_of (see AsOfAt).
const graphmlAtKeys = `  <key id="node_attributes" for="graph" attr.name="node_attributes" attr.type="string"/>
  <key id="as_of" for="node" attr.name="as_of" attr.type="string"/>
`

// graphmlLayoutKeys declare the node's community and position, unless
// Options.NoLayout.
const graphmlLayoutKeys = `  <key id="community" for="node" attr.name="community" attr.type="int"/>
  <key id="x" for="node" attr.name="x" attr.type="double"/>
  <key id="y" for="node" attr.name="y" attr.type="double"/>
`

// graphmlRankKeys are the ids of graphmlKeys that only an export with
// ranks declares.
var graphmlRankKeys = []string{`id="harmonic_method"`, `id="pagerank"`, `id="harmonic"`}

// graphmlKeysNoRanks is graphmlKeys without graphmlRankKeys, for
// Options.NoRanks.
var graphmlKeysNoRanks = func() string {
	var b strings.Builder
	for line := range strings.Lines(graphmlKeys) {
		if !slices.ContainsFunc(graphmlRankKeys, func(id string) bool { return strings.Contains(line, id) }) {
			b.WriteString(line)
		}
	}
	return b.String()
}()

// GraphML writes s to w as a directed GraphML 1.0 graph, valid against the
// GraphML schema: node ids are "n" and the store id, nodes carry host,
// domain, title, description, status, crawl_count and http_status (empty
// strings and a zero HTTP status are left out), canonical, robots,
// mirror_of (the host of the mirror group's first host, for a copy),
// pages_fetched (default 0), redirect_to (where the home page sent the
// crawl to another host) and home (where the redirects within the host
// led), pagerank and harmonic
// (doubles; the graph's harmonic_method says whether harmonic is exact;
// Options.NoRanks leaves out all three and their keys), edges their
// weight, nofollow, redirect and frame, first_seen and last_seen (RFC 3339) and
// gone (true for an edge its source's latest crawl no longer links), the
// facts on every edge though their keys declare defaults, for readers
// that do not apply them (networkx 2.8). With Options.At, nodes carry
// as_of and the graph node_attributes (see AsOfAt). Every
// string is escaped for XML, and characters XML 1.0 cannot hold are
// dropped, so any page title gives a well-formed file. It returns what was
// written, or the writer's, the store's or the context's error.
func GraphML(ctx context.Context, w io.Writer, s *kv.Store, opt Options) (Stats, error) {
	opt = opt.withDefaults()
	bw := bufio.NewWriterSize(w, 64<<10)
	st, err := walk(ctx, s, opt, func(v *view) error {
		b := appendGraphMLHead(make([]byte, 0, 4096), v, opt)
		if _, err := bw.Write(b); err != nil {
			return err
		}
		err := v.nodes(func(n *graph.Node) error {
			b = appendGraphMLNode(b[:0], v, n)
			_, err := bw.Write(b)
			return err
		})
		if err != nil {
			return err
		}
		err = v.edges(func(e *graph.Edge) error {
			b = appendGraphMLEdge(b[:0], v, e)
			_, err := bw.Write(b)
			return err
		})
		if err != nil {
			return err
		}
		if _, err := bw.WriteString("  </graph>\n</graphml>\n"); err != nil {
			return err
		}
		return bw.Flush()
	})
	return st, wrap(FormatGraphML, "", err)
}

// appendGraphMLHead appends everything before the first node: the XML
// declaration, the keys the view's attributes need, and the graph's own
// data.
func appendGraphMLHead(b []byte, v *view, opt Options) []byte {
	b = append(b, `<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">
`...)
	if v.ranks != nil {
		b = append(b, graphmlKeys...)
	} else {
		b = append(b, graphmlKeysNoRanks...)
	}
	if v.lay != nil {
		b = append(b, graphmlLayoutKeys...)
	}
	if !opt.At.IsZero() {
		b = append(b, graphmlAtKeys...)
	}
	b = append(b, "  <graph id=\"weaver\" edgedefault=\"directed\">\n"...)
	b = graphmlData(b, "    ", "weaver_version", opt.Version)
	b = graphmlData(b, "    ", "exported_at", isoTime(opt.Now()))
	b = graphmlData(b, "    ", "filters", opt.filters())
	b = graphmlData(b, "    ", "harmonic_method", v.harmonicMethod())
	if !opt.At.IsZero() {
		b = graphmlData(b, "    ", "node_attributes", atNote)
	}
	return b
}

// appendGraphMLNode appends the <node> of n.
func appendGraphMLNode(b []byte, v *view, n *graph.Node) []byte {
	b = append(b, `    <node id="n`...)
	b = strconv.AppendUint(b, n.ID, 10)
	b = append(b, `">`...)
	b = graphmlData(b, "", "label", n.Host)
	b = graphmlData(b, "", "host", n.Host)
	b = graphmlData(b, "", "domain", n.Domain)
	b = graphmlData(b, "", "title", n.Title)
	b = graphmlData(b, "", "description", n.Description)
	b = graphmlData(b, "", "status", string(n.Status))
	b = append(b, `<data key="crawl_count">`...)
	b = strconv.AppendInt(b, int64(n.CrawlCount), 10)
	b = append(b, `</data>`...)
	if n.HTTPStatus != 0 {
		b = append(b, `<data key="http_status">`...)
		b = strconv.AppendInt(b, int64(n.HTTPStatus), 10)
		b = append(b, `</data>`...)
	}
	b = graphmlData(b, "", "canonical", n.Canonical)
	b = graphmlData(b, "", "robots", n.RobotsDirectives)
	b = graphmlData(b, "", "mirror_of", v.mirrorHost(n.MirrorOf))
	b = graphmlInt(b, "pages_fetched", uint64(max(n.PagesFetched, 0)))
	b = graphmlData(b, "", "redirect_to", n.RedirectTo)
	b = graphmlData(b, "", "home", n.Home)
	b = graphmlData(b, "", "tls_problem", n.TLSProblem)
	b = graphmlData(b, "", "as_of", v.asOf)
	if pr, h, ok := v.rankOf(n.ID); ok {
		b = append(b, `<data key="pagerank">`...)
		b = strconv.AppendFloat(b, pr, 'g', -1, 64)
		b = append(b, `</data><data key="harmonic">`...)
		b = strconv.AppendFloat(b, h, 'g', -1, 64)
		b = append(b, `</data>`...)
	}
	if c, x, y, ok := v.layoutOf(n.ID); ok {
		b = append(b, `<data key="community">`...)
		b = strconv.AppendUint(b, uint64(c), 10)
		b = append(b, `</data><data key="x">`...)
		b = strconv.AppendFloat(b, x, 'f', 3, 64)
		b = append(b, `</data><data key="y">`...)
		b = strconv.AppendFloat(b, y, 'f', 3, 64)
		b = append(b, `</data>`...)
	}
	return append(b, "</node>\n"...)
}

// appendGraphMLEdge appends the <edge> of e.
func appendGraphMLEdge(b []byte, v *view, e *graph.Edge) []byte {
	b = append(b, `    <edge source="n`...)
	b = strconv.AppendUint(b, e.From, 10)
	b = append(b, `" target="n`...)
	b = strconv.AppendUint(b, e.To, 10)
	b = append(b, `"><data key="weight">`...)
	b = strconv.AppendUint(b, e.Weight, 10)
	b = append(b, "</data>"...)
	// Every edge carries its facts, the defaults too: a reader that does
	// not apply GraphML's <default> (networkx 2.8) sees them all.
	b = append(b, `<data key="nofollow">`...)
	b = strconv.AppendUint(b, e.Nofollow, 10)
	b = append(b, `</data><data key="redirect">`...)
	b = strconv.AppendUint(b, e.Redirect, 10)
	b = append(b, `</data><data key="frame">`...)
	b = strconv.AppendUint(b, e.Frame, 10)
	b = append(b, "</data>"...)
	b = graphmlData(b, "", "first_seen", isoTime(e.FirstSeen))
	b = graphmlData(b, "", "last_seen", isoTime(e.LastSeen))
	b = append(b, `<data key="gone">`...)
	b = strconv.AppendBool(b, v.gone(e))
	b = append(b, "</data>"...)
	return append(b, "</edge>\n"...)
}

// graphmlInt appends <data key="key">n</data>, or nothing when n is 0,
// the key's default.
func graphmlInt(b []byte, key string, n uint64) []byte {
	if n == 0 {
		return b
	}
	b = append(b, `<data key="`...)
	b = append(b, key...)
	b = append(b, `">`...)
	b = strconv.AppendUint(b, n, 10)
	return append(b, "</data>"...)
}

// graphmlData appends <data key="key">val</data>, or nothing when val is
// empty; a line of its own when indent is set.
func graphmlData(b []byte, indent, key, val string) []byte {
	if val == "" {
		return b
	}
	b = append(b, indent...)
	b = append(b, `<data key="`...)
	b = append(b, key...)
	b = append(b, `">`...)
	b = appendXMLText(b, val)
	b = append(b, "</data>"...)
	if indent != "" {
		b = append(b, '\n')
	}
	return b
}
