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
// (unless Options.NoLayout) every node is pinned at its ForceAtlas2
// position (pos="x,y!", points) and coloured by community, and the graph
// asks for neato, which keeps pinned nodes where they are and draws
// straight edges: `dot -Tsvg` renders the stored picture in seconds.
// Without one it is laid out by sfdp (Graphviz's dot layout does not
// finish in minutes on a web graph of a thousand hosts; `dot
// -Glayout=dot` overrides it). Nodes "n<id>" are labelled with their
// host (their domain with Domains) and with their page title as tooltip,
// sized by their PageRank (the label's font size, see fontsize) and carry
// their pagerank and harmonic as attributes (unless Options.NoRanks);
// edges carry their weight (as their label without a layout, as weight=
// with one: Graphviz would spend most of its time placing the labels),
// first_seen and last_seen (RFC 3339), and are drawn with a pen width
// that grows with its logarithm; an edge only ever linked with rel
// nofollow is dashed, and one its source's latest crawl no longer links
// (gone=true) dotted. With Options.At, nodes carry as_of (see AsOfAt).
// Every string is quoted and escaped (see appendDOTString) so that dot
// accepts any page title. It returns what was written, or the writer's,
// the store's or the context's error.
func DOT(ctx context.Context, w io.Writer, s *kv.Store, opt Options) (Stats, error) {
	opt = opt.withDefaults()
	bw := bufio.NewWriterSize(w, 64<<10)
	st, err := walk(ctx, s, opt, func(v *view) error {
		b := make([]byte, 0, 4096)
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
		scale := dotScale(v)
		if scale > 0 {
			b = append(b, dotPinnedHeader...)
		} else {
			b = append(b, dotSFDPHeader...)
		}
		if _, err := bw.Write(b); err != nil {
			return err
		}
		err := v.nodes(func(n *graph.Node) error {
			b = append(b[:0], "\t\"n"...)
			b = strconv.AppendUint(b, n.ID, 10)
			b = append(b, `" [label=`...)
			b = appendDOTString(b, n.Host)
			if n.Title != "" {
				b = append(b, ", tooltip="...)
				b = appendDOTString(b, n.Title)
			}
			if c, x, y, ok := v.layoutOf(n.ID); ok && scale > 0 {
				b = append(b, `, pos="`...)
				b = strconv.AppendFloat(b, x*scale, 'f', 1, 64)
				b = append(b, ',')
				b = strconv.AppendFloat(b, y*scale, 'f', 1, 64)
				b = append(b, `!", community=`...)
				b = strconv.AppendUint(b, uint64(c), 10)
				col := Palette[int(c)%len(Palette)]
				b = append(b, `, color="#`...)
				b = appendHexByte(b, col[0])
				b = appendHexByte(b, col[1])
				b = appendHexByte(b, col[2])
				b = append(b, '"')
			}
			if pr, h, ok := v.rankOf(n.ID); ok {
				b = append(b, ", fontsize="...)
				b = strconv.AppendFloat(b, fontsize(pr, v.nodeCount()), 'f', 1, 64)
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
			b = append(b, "];\n"...)
			_, err := bw.Write(b)
			return err
		})
		if err != nil {
			return err
		}
		err = v.edges(func(e *graph.Edge) error {
			b = append(b[:0], "\t\"n"...)
			b = strconv.AppendUint(b, e.From, 10)
			b = append(b, `" -> "n`...)
			b = strconv.AppendUint(b, e.To, 10)
			if scale > 0 {
				// Pinned: the weight as an attribute, not a label.
				// Placing 20,000 edge labels is 97 % of Graphviz's time
				// on a 2,000-host graph (40 s of 41); the pen width
				// still shows the weight.
				b = append(b, `" [weight=`...)
				b = strconv.AppendUint(b, e.Weight, 10)
				b = append(b, `, penwidth=`...)
			} else {
				b = append(b, `" [label="`...)
				b = strconv.AppendUint(b, e.Weight, 10)
				b = append(b, `", penwidth=`...)
			}
			b = strconv.AppendFloat(b, penwidth(e.Weight), 'f', 2, 64)
			// Link facts, when any: a link only ever made with rel
			// nofollow, ugc or sponsored is drawn dashed.
			if e.Nofollow != 0 || e.Redirect != 0 {
				b = append(b, `, nofollow=`...)
				b = strconv.AppendUint(b, e.Nofollow, 10)
				b = append(b, `, redirect=`...)
				b = strconv.AppendUint(b, e.Redirect, 10)
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
			b = append(b, "];\n"...)
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

// The DOT headers. With a layout every node is pinned where it is
// (pos="x,y!", in points: inputscale=72) and neato, which leaves pinned
// nodes where they are, draws the edges as straight lines
// (splines=false) under the nodes, with no overlap removal
// (overlap=true): Graphviz has nothing left to compute. Without one
// (Options.NoLayout), sfdp lays the graph out.
const (
	dotPinnedHeader = `
// Laid out by weaver (weaver layout: ForceAtlas2, communities by colour):
// neato keeps every pinned node where it is. dot -Tsvg draws it as is.
digraph weaver {
	graph [layout=neato, inputscale=72, overlap=true, splines=false, outputorder=edgesfirst];
	node [shape=box, style=rounded, fontname="Helvetica", fontsize=10];
	edge [arrowsize=0.6, color="#00000080", fontname="Helvetica", fontsize=8];
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

// dotScale returns the factor from layout units to points: the
// picture's side is 60 points per square root of a node, so that a node
// has about 60×60 points to itself. 0 without a layout.
func dotScale(v *view) float64 {
	l := v.lay
	if l == nil || len(l.X) == 0 {
		return 0
	}
	minX, maxX, minY, maxY := l.X[0], l.X[0], l.Y[0], l.Y[0]
	for i := range l.X {
		minX, maxX = min(minX, l.X[i]), max(maxX, l.X[i])
		minY, maxY = min(minY, l.Y[i]), max(maxY, l.Y[i])
	}
	side := max(maxX-minX, maxY-minY)
	if side <= 0 {
		return 1
	}
	return 60 * math.Sqrt(float64(len(l.X))) / side
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
