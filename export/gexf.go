package export

import (
	"bufio"
	"context"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// FormatGEXF is GEXF 1.2 (namespace 1.2draft), Gephi's format, which
// networkx reads too.
const FormatGEXF Format = "gexf"

// gexfSkipNode and gexfSkipEdge are the columns GEXF carries elsewhere
// than in attvalues: a node's id, an edge's ends and weight are XML
// attributes, and an edge's hosts are its ends' labels.
var (
	gexfSkipNode = []string{"id"}
	gexfSkipEdge = []string{"source", "target", "weight", "source_host", "target_host"}
)

// gexfColumns returns cols without the names in skip.
func gexfColumns[T any](cols []column[T], skip []string) []column[T] {
	return slices.DeleteFunc(slices.Clone(cols), func(c column[T]) bool { return slices.Contains(skip, c.name) })
}

// gexfAttributes appends the <attributes> declaration of cols for class.
func gexfAttributes[T any](b []byte, class string, cols []column[T]) []byte {
	b = append(b, `    <attributes class="`...)
	b = append(b, class...)
	b = append(b, "\" mode=\"static\">\n"...)
	for _, c := range cols {
		b = append(b, `      <attribute id="`...)
		b = append(b, c.name...)
		b = append(b, `" title="`...)
		b = append(b, c.name...)
		b = append(b, `" type="`...)
		b = append(b, c.kind.gexfType()...)
		b = append(b, "\"/>\n"...)
	}
	return append(b, "    </attributes>\n"...)
}

// gexfValues appends <attvalues> with the non-empty values of cols for x.
func gexfValues[T any](b []byte, v *view, cols []column[T], x *T) []byte {
	b = append(b, "<attvalues>"...)
	for _, c := range cols {
		val := c.cell(v, x)
		if val == "" {
			continue
		}
		b = append(b, `<attvalue for="`...)
		b = append(b, c.name...)
		b = append(b, `" value="`...)
		b = appendXMLAttr(b, val)
		b = append(b, `"/>`...)
	}
	return append(b, "</attvalues>"...)
}

// gexfViz appends the node's viz elements: its size by PageRank (4 to 40,
// by the square root of its share of the largest PageRank), none without
// ranks. viz:position and viz:color (by community) go here too.
func gexfViz(b []byte, v *view, n *graph.Node, maxPR float64) []byte {
	if c, x, y, ok := v.layoutOf(n.ID); ok {
		col := Palette[int(c)%len(Palette)]
		b = append(b, `<viz:color r="`...)
		b = strconv.AppendUint(b, uint64(col[0]), 10)
		b = append(b, `" g="`...)
		b = strconv.AppendUint(b, uint64(col[1]), 10)
		b = append(b, `" b="`...)
		b = strconv.AppendUint(b, uint64(col[2]), 10)
		b = append(b, `"/><viz:position x="`...)
		b = strconv.AppendFloat(b, x, 'f', 3, 64)
		b = append(b, `" y="`...)
		b = strconv.AppendFloat(b, y, 'f', 3, 64)
		b = append(b, `" z="0.0"/>`...)
	}
	pr, _, ok := v.rankOf(n.ID)
	if !ok || maxPR <= 0 {
		return b
	}
	b = append(b, `<viz:size value="`...)
	b = strconv.AppendFloat(b, 4+36*math.Sqrt(max(pr, 0)/maxPR), 'f', 2, 64)
	return append(b, `"/>`...)
}

// Palette is the colour of the first communities (community k, the k-th
// largest, takes Palette[k mod len]): the map page's PALETTE
// (ui/src/colours.js, whose test holds every two of them apart), so that a
// community has one colour in every picture, the DOT and GEXF exports and
// the map alike (export's TestPalette_SameAsTheMap checks it), in RGB.
var Palette = [][3]uint8{
	{0x4e, 0x79, 0xa7}, {0xf2, 0x8e, 0x2b}, {0xe1, 0x57, 0x59}, {0x76, 0xb7, 0xb2}, {0x59, 0xa1, 0x4f}, {0xed, 0xc9, 0x48},
	{0xb0, 0x7a, 0xa1}, {0xff, 0x9d, 0xa7}, {0x9c, 0x75, 0x5f}, {0x00, 0x00, 0x75}, {0x80, 0x00, 0x00}, {0x91, 0x1e, 0xb4},
}

// gexfSpan appends the start and end attributes of iv (end only when
// set), times in RFC 3339 with the crawls' nanoseconds, UTC.
func gexfSpan(b []byte, iv graph.Interval) []byte {
	b = append(b, ` start="`...)
	b = iv.Start.UTC().AppendFormat(b, time.RFC3339Nano)
	if !iv.End.IsZero() {
		b = append(b, `" end="`...)
		b = iv.End.UTC().AppendFormat(b, time.RFC3339Nano)
	}
	return append(b, '"')
}

// GEXF writes s to w as a directed GEXF 1.2 graph (namespace
// http://www.gexf.net/1.2draft, viz http://www.gexf.net/1.2draft/viz):
// the version every GEXF client reads, Gephi and networkx 2.8 and 3.x
// alike (networkx 2.8 knows no 1.3, issue 40). Node ids are the store
// ids, labels the hosts, every attribute of the JSON export declared in
// <attributes> with its type (string, integer, long, double, boolean;
// times as RFC 3339 strings) and given where it has a value, viz:color by
// community and viz:position from the layout (unless Options.NoLayout),
// viz:size by PageRank (unless Options.NoRanks); edges an id (0, 1, 2...
// in (source, target) order), their weight, and first_seen, last_seen,
// nofollow, redirect, gone and frame. The graph is static; with
// Options.GEXFTimeline and a crawl history it is dynamic
// (timeformat="dateTime"): nodes start when first seen and edges are
// present in the intervals their sources' crawls linked them, so that
// Gephi's timeline plays the graph (networkx's reader knows no dateTime
// and fails on it). The creator and the filters are in <meta>. Every
// string is escaped for XML, and characters XML 1.0 cannot hold are
// dropped. It returns what was written, or the writer's, the store's or
// the context's error.
func GEXF(ctx context.Context, w io.Writer, s *kv.Store, opt Options) (Stats, error) {
	opt = opt.withDefaults()
	bw := bufio.NewWriterSize(w, 64<<10)
	st, err := walk(ctx, s, opt, func(v *view) error {
		g := newGEXFGraph(v, opt)
		b := g.appendHead(make([]byte, 0, 8192), opt)
		if _, err := bw.Write(b); err != nil {
			return err
		}
		err := v.nodes(func(n *graph.Node) error {
			b = g.appendNode(b[:0], n)
			_, err := bw.Write(b)
			return err
		})
		if err != nil {
			return err
		}
		if _, err := bw.WriteString("    </nodes>\n    <edges>\n"); err != nil {
			return err
		}
		err = v.edges(func(e *graph.Edge) (err error) {
			if b, err = g.appendEdge(b[:0], e); err != nil {
				return err
			}
			_, err = bw.Write(b)
			return err
		})
		if err != nil {
			return err
		}
		if _, err := bw.WriteString("    </edges>\n  </graph>\n</gexf>\n"); err != nil {
			return err
		}
		return bw.Flush()
	})
	return st, wrap(FormatGEXF, "", err)
}

// gexfGraph is what the GEXF writer knows of the view it writes.
type gexfGraph struct {
	v        *view
	nodeCols []column[graph.Node] // the node attributes written as attvalues
	edgeCols []column[graph.Edge] // the edge attributes written as attvalues
	// dynamic is set with GEXFTimeline and a crawl history: nodes start
	// when first seen, edges are present in the intervals their sources'
	// crawls linked them, so that Gephi's timeline plays the graph.
	dynamic bool
	maxPR   float64 // the largest PageRank, for viz:size; 0 without ranks
	edgeID  uint64  // the next edge's id
}

func newGEXFGraph(v *view, opt Options) *gexfGraph {
	g := &gexfGraph{
		v:        v,
		nodeCols: gexfColumns(v.nodeColumns(), gexfSkipNode),
		dynamic:  opt.GEXFTimeline && v.domains == nil && graph.HasHistory(v.tx),
		edgeCols: gexfColumns(csvEdgeColumns(nil), gexfSkipEdge),
	}
	if v.ranks != nil {
		for _, pr := range v.ranks.r.PageRank {
			g.maxPR = max(g.maxPR, pr)
		}
	}
	return g
}

// appendHead appends everything before the first node: the XML
// declaration, <meta> (the creator, the filters), the graph's mode and
// the attribute declarations.
func (g *gexfGraph) appendHead(b []byte, opt Options) []byte {
	b = append(b, `<?xml version="1.0" encoding="UTF-8"?>
<gexf xmlns="http://www.gexf.net/1.2draft" xmlns:viz="http://www.gexf.net/1.2draft/viz" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.gexf.net/1.2draft http://www.gexf.net/1.2draft/gexf.xsd" version="1.2">
  <meta lastmodifieddate="`...)
	b = append(b, opt.Now().UTC().Format("2006-01-02")...)
	b = append(b, "\">\n    <creator>weaver "...)
	b = appendXMLText(b, opt.Version)
	b = append(b, "</creator>\n    <description>"...)
	desc := "host graph; " + opt.filters()
	if m := g.v.harmonicMethod(); m != "" {
		desc += "; harmonic " + m
	}
	if !opt.At.IsZero() {
		desc += "; " + atNote
	}
	b = appendXMLText(b, desc)
	b = append(b, "</description>\n  </meta>\n"...)
	if g.dynamic {
		b = append(b, "  <graph defaultedgetype=\"directed\" mode=\"dynamic\" timeformat=\"dateTime\">\n"...)
	} else {
		b = append(b, "  <graph defaultedgetype=\"directed\" mode=\"static\">\n"...)
	}
	b = gexfAttributes(b, "node", g.nodeCols)
	b = gexfAttributes(b, "edge", g.edgeCols)
	return append(b, "    <nodes>\n"...)
}

// appendNode appends the <node> of n.
func (g *gexfGraph) appendNode(b []byte, n *graph.Node) []byte {
	b = append(b, `      <node id="`...)
	b = strconv.AppendUint(b, n.ID, 10)
	b = append(b, `" label="`...)
	b = appendXMLAttr(b, n.Host)
	b = append(b, '"')
	if g.dynamic && !n.FirstSeen.IsZero() {
		b = gexfSpan(b, graph.Interval{Start: n.FirstSeen})
	}
	b = append(b, '>')
	b = gexfValues(b, g.v, g.nodeCols, n)
	b = gexfViz(b, g.v, n, g.maxPR)
	return append(b, "</node>\n"...)
}

// appendEdge appends the <edge> of e, the next edge id its id; in a
// dynamic graph, with its interval, or its spells when there are several.
func (g *gexfGraph) appendEdge(b []byte, e *graph.Edge) ([]byte, error) {
	b = append(b, `      <edge id="`...)
	b = strconv.AppendUint(b, g.edgeID, 10)
	g.edgeID++
	b = append(b, `" source="`...)
	b = strconv.AppendUint(b, e.From, 10)
	b = append(b, `" target="`...)
	b = strconv.AppendUint(b, e.To, 10)
	b = append(b, `" weight="`...)
	b = strconv.AppendUint(b, e.Weight, 10)
	b = append(b, '"')
	var spells []graph.Interval
	if g.dynamic {
		iv, err := g.v.intervals(e)
		if err != nil {
			return b, err
		}
		switch {
		case len(iv) == 1:
			b = gexfSpan(b, iv[0])
		case len(iv) > 1:
			spells = iv
		case !e.FirstSeen.IsZero():
			b = gexfSpan(b, graph.Interval{Start: e.FirstSeen})
		}
	}
	b = append(b, '>')
	b = gexfValues(b, g.v, g.edgeCols, e)
	if len(spells) > 0 {
		b = append(b, "<spells>"...)
		for _, iv := range spells {
			b = append(b, "<spell"...)
			b = gexfSpan(b, iv)
			b = append(b, "/>"...)
		}
		b = append(b, "</spells>"...)
	}
	return append(b, "</edge>\n"...), nil
}
