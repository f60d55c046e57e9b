package export

import (
	"bufio"
	"context"
	"io"
	"math"
	"strconv"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// DOT writes s to w as a Graphviz digraph named weaver. With a layout
// (unless Options.NoLayout) the file is a picture people can read as
// `dot -Tsvg` draws it (issue 40; see dotPlan): every node a point pinned
// at its ForceAtlas2 position (pos="x,y!", points; layout=nop, so that
// Graphviz computes nothing), of its community's colour and sized by
// PageRank, its host and page title as tooltip; the hosts with the
// highest PageRank named beside their point (xlabel at xlp), as many as
// fit with no two names overlapping; a legend of the largest communities
// as the graph's label when it fits. Without one it is laid out by sfdp
// (Graphviz's dot layout does not finish in minutes on a web graph of a
// thousand hosts; `dot -Glayout=dot` overrides it), every node a box
// labelled with its host, its title as tooltip, sized by PageRank (the
// label's font size, see fontsize). Nodes "n<id>" carry their host as
// label and their pagerank and harmonic as attributes (unless
// Options.NoRanks); edges carry their weight (as their label without a
// layout, as weight= with one: Graphviz would spend most of its time
// placing the labels), first_seen and last_seen (RFC 3339), and are drawn
// with a pen width that grows with its logarithm; an edge only ever
// linked with rel nofollow is dashed, and one its source's latest crawl
// no longer links (gone=true) dotted. With Options.At, nodes carry as_of
// (see AsOfAt). Every string is quoted and escaped (see appendDOTString)
// so that dot accepts any page title. It returns what was written, or
// the writer's, the store's or the context's error.
func DOT(ctx context.Context, w io.Writer, s *kv.Store, opt Options) (Stats, error) {
	opt = opt.withDefaults()
	bw := bufio.NewWriterSize(w, 64<<10)
	st, err := walk(ctx, s, opt, func(v *view) error {
		b := appendDOTComment(make([]byte, 0, 4096), v, opt)
		var plan *dotPlan
		if v.lay != nil && len(v.lay.X) > 0 {
			var err error
			if plan, err = collectPlan(v); err != nil {
				return err
			}
		}
		b = appendDOTHeader(b, plan)
		if _, err := bw.Write(b); err != nil {
			return err
		}
		if err := writeDOTNodes(bw, b, v, plan); err != nil {
			return err
		}
		err := v.edges(func(e *graph.Edge) error {
			b = appendDOTEdge(b[:0], v, plan, e)
			_, err := bw.Write(b)
			return err
		})
		if err != nil {
			return err
		}
		if _, err := bw.WriteString("}\n"); err != nil {
			return err
		}
		return bw.Flush()
	})
	return st, wrap(FormatDOT, "", err)
}

// appendDOTComment appends the comment that opens the file: weaver's
// version, the export time, the filters and how harmonic centrality was
// computed, and with At what the nodes' attributes are.
func appendDOTComment(b []byte, v *view, opt Options) []byte {
	b = append(b, "// weaver "...)
	b = appendDOTLine(b, opt.Version)
	b = append(b, " export, "...)
	b = append(b, isoTime(opt.Now())...)
	b = append(b, ", "...)
	b = append(b, opt.filters()...)
	if m := v.harmonicMethod(); m != "" {
		b = append(b, ", harmonic: "...)
		b = appendDOTLine(b, m)
	}
	if !opt.At.IsZero() {
		b = append(b, "\n// "...)
		b = append(b, atNote...)
	}
	return b
}

// appendDOTHeader appends the digraph's header: with a plan, what it
// names, the pinned layout, the legend and the defaults; without one,
// sfdp's.
func appendDOTHeader(b []byte, plan *dotPlan) []byte {
	if plan == nil {
		return append(b, dotSFDPHeader...)
	}
	b = appendPlanNote(b, plan)
	b = append(b, dotPinnedHeader...)
	if plan.unplaced > 0 {
		b = append(b, dotNeatoLayout...)
	}
	b = appendLegend(b, plan)
	return append(b, dotPinnedDefaults...)
}

// writeDOTNodes writes the line of every node, using b's space. Named
// hosts are written after the marks, so that Graphviz draws their names
// over the marks, never a mark over a name.
func writeDOTNodes(bw *bufio.Writer, b []byte, v *view, plan *dotPlan) error {
	var named []byte
	err := v.nodes(func(n *graph.Node) error {
		b = appendDOTNode(b[:0], v, plan, n)
		if pn, ok := plan.lookup(n.ID); ok && pn.named {
			named = append(named, b...)
			return nil
		}
		_, err := bw.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	_, err = bw.Write(named)
	return err
}

// appendDOTEdge appends the line of edge e: its weight (an attribute
// with a plan, a label without: see the comment inside), the pen width
// that shows it, its link facts, its times, and whether it is gone.
func appendDOTEdge(b []byte, v *view, plan *dotPlan, e *graph.Edge) []byte {
	b = append(b, "\t\"n"...)
	b = strconv.AppendUint(b, e.From, 10)
	b = append(b, `" -> "n`...)
	b = strconv.AppendUint(b, e.To, 10)
	if plan != nil {
		// Pinned: the weight as an attribute, not a label.
		// Placing 20,000 edge labels is 97 % of Graphviz's time
		// on a 2,000-host graph (40 s of 41); the pen width
		// still shows the weight.
		b = append(b, `" [weight=`...)
		b = strconv.AppendUint(b, e.Weight, 10)
		b = append(b, `, penwidth=`...)
		b = strconv.AppendFloat(b, thinPenwidth(e.Weight), 'f', 2, 64)
	} else {
		b = append(b, `" [label="`...)
		b = strconv.AppendUint(b, e.Weight, 10)
		b = append(b, `", penwidth=`...)
		b = strconv.AppendFloat(b, penwidth(e.Weight), 'f', 2, 64)
	}
	// Link facts, when any: a link only ever made with rel
	// nofollow, ugc or sponsored is drawn dashed.
	if e.Nofollow != 0 || e.Redirect != 0 || e.Frame != 0 {
		b = append(b, `, nofollow=`...)
		b = strconv.AppendUint(b, e.Nofollow, 10)
		b = append(b, `, redirect=`...)
		b = strconv.AppendUint(b, e.Redirect, 10)
		if e.Frame != 0 {
			b = append(b, `, frame=`...)
			b = strconv.AppendUint(b, e.Frame, 10)
		}
		if e.Nofollow == e.Weight && !v.gone(e) {
			b = append(b, `, style=dashed`...)
		}
	}
	if !e.FirstSeen.IsZero() {
		b = append(b, `, first_seen="`...)
		b = append(b, isoTime(e.FirstSeen)...)
		b = append(b, '"')
	}
	if !e.LastSeen.IsZero() {
		b = append(b, `, last_seen="`...)
		b = append(b, isoTime(e.LastSeen)...)
		b = append(b, '"')
	}
	// An edge its source's latest crawl no longer links is
	// drawn dotted.
	if v.gone(e) {
		b = append(b, `, gone=true, style=dotted`...)
	}
	return append(b, "];\n"...)
}

// The DOT headers. With a layout every node is pinned where it is
// (pos="x,y!", in points: inputscale=72) and neato, which leaves pinned
// nodes where they are, draws the edges as straight lines
// (splines=false) under the nodes, with no overlap removal
// (overlap=true): Graphviz has nothing left to compute. The legend, when
// there is one, is the graph's label, below the picture; then the
// defaults: a host is a point (a named one says otherwise), an edge a
// thin grey line. Without one (Options.NoLayout), sfdp lays the graph
// out.
const (
	dotPinnedHeader = `
// Laid out by weaver (weaver layout: ForceAtlas2, communities by colour):
// every node is pinned (layout=nop), dot -Tsvg draws it as is. The hosts
// with the highest PageRank are named, as many as fit without overlap;
// the others are points, their name in the tooltip.
digraph weaver {
	graph [layout=nop, inputscale=72, splines=false, outputorder=edgesfirst`
	// dotNeatoLayout overrides layout=nop when some nodes have no
	// position (dotPlan.unplaced).
	dotNeatoLayout    = `, layout=neato, overlap=true`
	dotPinnedDefaults = `];
	node [shape=point, width=0.056, fontname="Helvetica"];
	edge [arrowsize=0.3, color="#60606040", fontname="Helvetica", fontsize=8];
`
	dotSFDPHeader = `
// Laid out by sfdp, whatever the command: dot's ranked layout takes minutes
// on a thousand hosts. For a small graph, try: dot -Glayout=dot -Tsvg
digraph weaver {
	graph [layout=sfdp, outputorder=edgesfirst];
	node [shape=box, style=rounded, fontname="Helvetica", fontsize=10];
	edge [arrowsize=0.6, color="#00000080", fontname="Helvetica", fontsize=8];
`
)

// appendDOTNode appends the line of node n. With a plan (a laid-out
// view) the node is a point pinned at its position, of its community's
// colour, sized by PageRank (markWidth), whose tooltip is its host and
// its page title; a named host has its name beside it (xlabel at xlp, in
// a darker shade of the colour, sized by PageRank: labelFont). Without a
// plan every node is a box with its name (fontsize), its title as
// tooltip.
func appendDOTNode(b []byte, v *view, plan *dotPlan, n *graph.Node) []byte {
	b = append(b, "\t\"n"...)
	b = strconv.AppendUint(b, n.ID, 10)
	b = append(b, `" [label=`...)
	b = appendDOTString(b, n.Host)
	switch {
	case plan != nil:
		b = append(b, ", tooltip="...)
		b = appendDOTTooltip(b, n.Host, n.Title)
	case n.Title != "":
		b = append(b, ", tooltip="...)
		b = appendDOTString(b, n.Title)
	}
	if pn, ok := plan.lookup(n.ID); ok {
		b = append(b, `, pos="`...)
		b = appendPoint(b, pn.x*plan.scale, pn.y*plan.scale)
		b = append(b, `!", community=`...)
		b = strconv.AppendUint(b, uint64(pn.comm), 10)
		col := Palette[int(pn.comm)%len(Palette)]
		b = append(b, `, width=`...)
		b = strconv.AppendFloat(b, markWidth(pn.pagerank, plan.maxPR), 'f', 3, 64)
		b = append(b, `, color=`...)
		b = appendRGB(b, col)
		if pn.named {
			b = append(b, ", xlabel="...)
			b = appendDOTString(b, n.Host)
			b = append(b, `, xlp="`...)
			b = appendPoint(b, pn.lx, pn.ly)
			b = append(b, `", fontsize=`...)
			b = strconv.AppendFloat(b, pn.font, 'f', 1, 64)
			b = append(b, `, fontcolor=`...)
			b = appendRGB(b, shade(col))
		}
	}
	if pr, h, ok := v.rankOf(n.ID); ok {
		if plan == nil {
			b = append(b, ", fontsize="...)
			b = strconv.AppendFloat(b, fontsize(pr, v.nodeCount()), 'f', 1, 64)
		}
		// Quoted: DOT numerals have no exponent.
		b = append(b, `, pagerank="`...)
		b = strconv.AppendFloat(b, pr, 'g', -1, 64)
		b = append(b, `", harmonic="`...)
		b = strconv.AppendFloat(b, h, 'g', -1, 64)
		b = append(b, '"')
	}
	if v.asOf != "" {
		b = append(b, `, as_of="`...)
		b = append(b, v.asOf...)
		b = append(b, '"')
	}
	if n.TLSProblem != "" {
		b = append(b, `, tls_problem=`...)
		b = appendDOTString(b, n.TLSProblem)
	}
	return append(b, "];\n"...)
}

// appendDOTTooltip appends the tooltip of a host's point: its host, then
// its page title on a line of its own if the title has anything left to
// show once escaped.
func appendDOTTooltip(b []byte, host, title string) []byte {
	b = appendDOTString(b, host)
	t := appendDOTString(nil, title)
	if len(t) <= 2 { // ""
		return b
	}
	b = append(b[:len(b)-1], `\n`...) // the host's closing quote
	return append(b, t[1:]...)
}

// appendPlanNote appends a comment line saying what the picture names,
// its scale, and how many hosts far from the rest pullIn drew nearer.
func appendPlanNote(b []byte, p *dotPlan) []byte {
	b = append(b, "\n// "...)
	b = strconv.AppendInt(b, int64(p.named), 10)
	b = append(b, " of "...)
	b = strconv.AppendInt(b, int64(len(p.nodes)), 10)
	b = append(b, " hosts named, "...)
	b = strconv.AppendInt(b, int64(p.topNamed), 10)
	b = append(b, " of the "...)
	b = strconv.AppendInt(b, int64(min(dotTopLabels, len(p.nodes))), 10)
	if p.maxPR > 0 {
		b = append(b, " highest by PageRank"...)
	} else {
		b = append(b, " first found (no ranks)"...)
	}
	b = append(b, "; zoom "...)
	b = strconv.AppendFloat(b, p.zoom, 'f', -1, 64)
	b = append(b, " (1: 60 points a side per square root of a host)"...)
	if p.pulled > 0 {
		b = append(b, "; "...)
		b = strconv.AppendInt(b, int64(p.pulled), 10)
		b = append(b, " hosts far from the rest drawn nearer"...)
	}
	if p.unplaced > 0 {
		b = append(b, "\n// "...)
		b = strconv.AppendInt(b, int64(p.unplaced), 10)
		b = append(b, " hosts have no position in the layout: neato places them, and names hosts where it can"...)
	}
	return b
}

// appendPoint appends "x,y" to a tenth of a point.
func appendPoint(b []byte, x, y float64) []byte {
	b = strconv.AppendFloat(b, x, 'f', 1, 64)
	b = append(b, ',')
	return strconv.AppendFloat(b, y, 'f', 1, 64)
}

// appendLegend appends the graph attributes of the plan's legend, if it
// has one: an HTML-like label below the picture, a row per community
// (its colour, its biggest host, its number of hosts).
func appendLegend(b []byte, plan *dotPlan) []byte {
	if len(plan.legend) == 0 {
		return b
	}
	b = append(b, `, fontname="Helvetica", fontsize=`...)
	b = strconv.AppendFloat(b, dotLegendFont, 'f', -1, 64)
	b = append(b, `, labelloc=b, labeljust=l, label=<<TABLE BORDER="0" CELLSPACING="1" CELLPADDING="1">`...)
	b = append(b, `<TR><TD COLSPAN="2" ALIGN="LEFT">`...)
	b = append(b, legendTitle...)
	b = append(b, `</TD></TR>`...)
	for _, r := range plan.legend {
		col := Palette[int(r.comm)%len(Palette)]
		b = append(b, "\n\t\t"...)
		b = append(b, `<TR><TD BGCOLOR=`...)
		b = appendRGB(b, col)
		b = append(b, ` WIDTH="9" HEIGHT="9" FIXEDSIZE="TRUE"></TD><TD ALIGN="LEFT">`...)
		b = appendXMLText(b, legendText(r))
		b = append(b, `</TD></TR>`...)
	}
	return append(b, `</TABLE>>`...)
}

// legendTitle heads the legend.
const legendTitle = "Communities: their biggest host, their hosts"

// legendText is the text of a legend row.
func legendText(r legendRow) string {
	if r.hosts == 1 {
		return r.host + " (1 host)"
	}
	return r.host + " (" + strconv.Itoa(r.hosts) + " hosts)"
}

// appendRGB appends c as a quoted "#rrggbb".
func appendRGB(b []byte, c [3]uint8) []byte {
	b = append(b, `"#`...)
	b = appendHexByte(b, c[0])
	b = appendHexByte(b, c[1])
	b = appendHexByte(b, c[2])
	return append(b, '"')
}

// shade is c darkened until its luma (Rec. 601) is at most 0.3, and by
// 45 % at least: the colour of a named host's name, dark enough to read
// on white and over the edges in every colour of Palette (the yellow
// becomes a dark olive).
func shade(c [3]uint8) [3]uint8 {
	luma := (0.299*float64(c[0]) + 0.587*float64(c[1]) + 0.114*float64(c[2])) / 255
	f := 0.55
	if luma > 0 {
		f = min(f, 0.3/luma)
	}
	var t [3]uint8
	for i, v := range c {
		t[i] = uint8(float64(v)*f + 0.5)
	}
	return t
}

func appendHexByte(b []byte, c uint8) []byte {
	const hex = "0123456789abcdef"
	return append(b, hex[c>>4], hex[c&15])
}

// penwidth maps a weight to a line width: 1 for weight 1, one point more
// for each doubling, at most 8, so that heavy links stand out without
// hiding their neighbours.
func penwidth(w uint64) float64 {
	if w <= 1 {
		return 1
	}
	return min(1+math.Log2(float64(w)), 8)
}

// thinPenwidth is penwidth for a laid-out picture, where thousands of
// edges cross: 0.4 points for weight 1, 0.3 more for each doubling, at
// most 2.5.
func thinPenwidth(w uint64) float64 {
	if w <= 1 {
		return 0.4
	}
	return min(0.4+0.3*math.Log2(float64(w)), 2.5)
}

// fontsize maps a PageRank to the size of a node's label, and so of its
// box: 10 points for an average host (PageRank × nodes = 1), 4 more for
// each doubling, between 6 and 48, so that the hubs of a crawl stand out
// and the many hosts nobody links to stay small.
func fontsize(pagerank float64, nodes int) float64 {
	if nodes == 0 || pagerank <= 0 {
		return 10
	}
	return min(max(10+4*math.Log2(pagerank*float64(nodes)), 6), 48)
}

// appendDOTLine appends s for a // comment: printable ASCII only.
func appendDOTLine(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x20 && c < 0x7F {
			b = append(b, c)
		}
	}
	return b
}
