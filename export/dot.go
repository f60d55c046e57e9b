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

// DOT writes s to w as a Graphviz digraph named weaver, laid out with
// sfdp (layout=sfdp: Graphviz's dot layout does not finish in minutes on a
// web graph of a thousand hosts; `dot -Glayout=dot` overrides it): nodes "n<id>"
// labelled with their host (their domain with Domains) and with their page
// title as tooltip, sized by their PageRank (the label's font size, see
// fontsize) and carrying their pagerank and harmonic as attributes
// (unless Options.NoRanks), edges labelled with their weight and drawn with a pen
// width that grows with its logarithm, carrying first_seen and last_seen
// (RFC 3339); an edge only ever linked with rel nofollow is dashed, and
// one its source's latest crawl no longer links (gone=true) dotted. With
// Options.At, nodes carry as_of (see AsOfAt). Every string is quoted and escaped
// (see appendDOTString) so that dot accepts any page title. It returns
// what was written, or the writer's, the store's or the context's error.
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
		b = append(b, `
// Laid out by sfdp, whatever the command: dot's ranked layout takes minutes
// on a thousand hosts. For a small graph, try: dot -Glayout=dot -Tsvg
digraph weaver {
	graph [layout=sfdp, outputorder=edgesfirst];
	node [shape=box, style=rounded, fontname="Helvetica", fontsize=10];
	edge [arrowsize=0.6, color="#00000080", fontname="Helvetica", fontsize=8];
`...)
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
			b = append(b, `" [label="`...)
			b = strconv.AppendUint(b, e.Weight, 10)
			b = append(b, `", penwidth=`...)
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
