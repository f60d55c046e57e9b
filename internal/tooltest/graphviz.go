package tooltest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Drawing is what Graphviz drew in an SVG file (dot -Tsvg): every text
// element, the mark of every node and every edge, read from the SVG
// itself, so that a test judges the picture a reader sees rather than
// the DOT file that asked for it.
type Drawing struct {
	Texts []Text          // every <text>, in the file's order
	Nodes map[string]Mark // by node name (the <title> of its group)
	Edges []Edge          // every edge group, in the file's order
}

// Text is one <text> element of the drawing.
type Text struct {
	Node   string  // the name of the node whose group holds it; "" for the graph's own label
	Text   string  // the characters drawn
	X, Y   float64 // the anchor: x as Anchor says, y the baseline (SVG: y grows downwards)
	Anchor string  // text-anchor: start, middle or end
	Family string  // the first family of font-family, the font Graphviz was asked for
	Size   float64 // font-size, in points
	Box    Rect    // the box the text takes, set by MeasureTexts
}

// Rect is an axis-aligned box in the drawing's coordinates.
type Rect struct{ MinX, MinY, MaxX, MaxY float64 }

// Overlaps reports whether a and b share more than their edges.
func (a Rect) Overlaps(b Rect) bool {
	return a.MinX < b.MaxX && b.MinX < a.MaxX && a.MinY < b.MaxY && b.MinY < a.MaxY
}

// Mark is the shape drawn for a node: its kind (the SVG element:
// ellipse, polygon or path) and its centre (an ellipse's, or the middle
// of a polygon's or path's points).
type Mark struct {
	Shape   string
	X, Y    float64
	Text    bool   // the node's group holds a <text>: the node is labelled
	Tooltip string // the xlink:title of the node's link, "" without one
}

// Edge is one edge group: its <title> ("n1->n2") and whether a line was
// drawn for it (a <path> whose points are not all one point).
type Edge struct {
	Name  string
	Drawn bool
}

// ParseSVG reads the SVG Graphviz wrote. A file that is not XML fails the
// test.
func ParseSVG(tb testing.TB, svg []byte) *Drawing {
	tb.Helper()
	r := &svgReader{tb: tb, d: &Drawing{Nodes: map[string]Mark{}}, dec: xml.NewDecoder(bytes.NewReader(svg))}
	r.dec.Strict = false // Graphviz's SVG names a DTD the decoder does not read
	for {
		tok, err := r.dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatalf("SVG: %v", err)
		}
		g := r.group()
		switch t := tok.(type) {
		case xml.StartElement:
			r.start(t, g)
		case xml.CharData:
			if r.text != nil {
				r.text.Text += string(t)
			}
		case xml.EndElement:
			r.end(t, g)
		}
	}
	return r.d
}

// svgReader is ParseSVG at work.
type svgReader struct {
	tb  testing.TB
	d   *Drawing
	dec *xml.Decoder
	// groups are the classed groups (graph, node, edge, cluster) the
	// reader is in, innermost last, each with its <title>; the unclassed
	// groups inside them (the <a> of a tooltip) belong to them.
	groups []svgGroup
	depth  int   // of the element the reader is in
	text   *Text // the <text> being read, nil outside one
}

// svgGroup is a classed group of the SVG.
type svgGroup struct {
	class, name string
	depth       int
	marked      bool // a node's first shape was read: its mark
}

// group is the innermost classed group, nil outside any.
func (r *svgReader) group() *svgGroup {
	if len(r.groups) == 0 {
		return nil
	}
	return &r.groups[len(r.groups)-1]
}

// start reads the start of an element inside g.
func (r *svgReader) start(t xml.StartElement, g *svgGroup) {
	r.depth++
	attr := func(n string) string {
		for _, a := range t.Attr {
			if a.Name.Local == n {
				return a.Value
			}
		}
		return ""
	}
	switch t.Name.Local {
	case "g":
		if c := attr("class"); c != "" {
			r.groups = append(r.groups, svgGroup{class: c, depth: r.depth})
		}
	case "title":
		r.title(t, g)
	case "a":
		if g != nil && g.class == "node" {
			m := r.d.Nodes[g.name]
			m.Tooltip = attr("title")
			r.d.Nodes[g.name] = m
		}
	case "text":
		size, _ := strconv.ParseFloat(attr("font-size"), 64)
		if size == 0 {
			size = 14 // Graphviz's default; it writes font-size for any other
		}
		family, _, _ := strings.Cut(attr("font-family"), ",")
		r.text = &Text{Anchor: attr("text-anchor"), Family: family, Size: size}
		r.text.X, _ = strconv.ParseFloat(attr("x"), 64)
		r.text.Y, _ = strconv.ParseFloat(attr("y"), 64)
		if g != nil && g.class == "node" {
			r.text.Node = g.name
		}
	case "ellipse", "polygon", "path":
		if g != nil {
			r.shape(t.Name.Local, svgPoints(t.Name.Local, attr), g)
		}
	}
}

// title reads a <title>, whole: the name of g when it is g's own, and so
// a new edge or node.
func (r *svgReader) title(t xml.StartElement, g *svgGroup) {
	var s string
	if err := r.dec.DecodeElement(&s, &t); err != nil {
		r.tb.Fatalf("SVG title: %v", err)
	}
	r.depth--
	if g == nil || r.depth != g.depth {
		return
	}
	g.name = s
	switch g.class {
	case "edge":
		r.d.Edges = append(r.d.Edges, Edge{Name: s})
	case "node":
		r.d.Nodes[s] = Mark{}
	}
}

// shape reads a shape of elem with pts inside g: an edge's line, or a
// node's first shape, its mark.
func (r *svgReader) shape(elem string, pts [][2]float64, g *svgGroup) {
	d := r.d
	switch {
	case g.class == "edge" && elem == "path" && len(d.Edges) > 0 && distinct(pts):
		d.Edges[len(d.Edges)-1].Drawn = true
	case g.class == "node" && !g.marked && len(pts) > 0:
		var x, y float64
		for _, p := range pts {
			x, y = x+p[0], y+p[1]
		}
		m := d.Nodes[g.name]
		m.Shape, m.X, m.Y = elem, x/float64(len(pts)), y/float64(len(pts))
		d.Nodes[g.name] = m
		g.marked = true
	}
}

// end reads the end of an element inside g: a <text>'s, or g's own.
func (r *svgReader) end(t xml.EndElement, g *svgGroup) {
	if t.Name.Local == "text" && r.text != nil {
		r.d.Texts = append(r.d.Texts, *r.text)
		if r.text.Node != "" {
			m := r.d.Nodes[r.text.Node]
			m.Text = true
			r.d.Nodes[r.text.Node] = m
		}
		r.text = nil
	}
	if g != nil && r.depth == g.depth {
		r.groups = r.groups[:len(r.groups)-1]
	}
	r.depth--
}

// svgPoints returns the points of a shape element: an ellipse's centre,
// a polygon's points, a path's coordinates (Graphviz writes absolute M
// and C commands).
func svgPoints(elem string, attr func(string) string) [][2]float64 {
	num := func(s string) float64 { f, _ := strconv.ParseFloat(s, 64); return f }
	if elem == "ellipse" {
		return [][2]float64{{num(attr("cx")), num(attr("cy"))}}
	}
	s := attr("points")
	if elem == "path" {
		s = strings.NewReplacer("M", " ", "C", " ", "L", " ", "Z", " ", "z", " ").Replace(attr("d"))
	}
	var pts [][2]float64
	for _, f := range strings.Fields(s) {
		x, y, ok := strings.Cut(f, ",")
		if ok {
			pts = append(pts, [2]float64{num(x), num(y)})
		}
	}
	return pts
}

// distinct reports whether pts hold two points a hundredth of a point
// apart or more: a line that shows.
func distinct(pts [][2]float64) bool {
	for _, p := range pts[min(1, len(pts)):] {
		if dx, dy := p[0]-pts[0][0], p[1]-pts[0][1]; dx*dx+dy*dy >= 1e-4 {
			return true
		}
	}
	return false
}

// Labelled returns the names of the nodes drawn with a text.
func (d *Drawing) Labelled() []string {
	var names []string
	for n, m := range d.Nodes {
		if m.Text {
			names = append(names, n)
		}
	}
	return names
}

// MeasureTexts sets the Box of every text of d, as Graphviz measured the
// same text in the same font and size when it laid the picture out: one
// run of dot (its path) on a graph of plaintext nodes, one per distinct
// text, whose JSON output gives each text's width (the T operation of
// _ldraw_) and its node's height and baseline. With the textlayout plugin
// (pango) that is the font fontconfig gives for the family: on Debian,
// Graphviz's pango asks for "Helvetica" and gets DejaVu Sans, some 10 %
// wider than the Liberation Sans a browser shows for Helvetica (Arial's
// metrics), so the boxes are if anything larger than what a browser
// draws. The box is Graphviz's own line box: the width it measured, from
// the top of its node (the font's ascent) to its bottom (the descent), a
// little taller than the ink.
func (d *Drawing) MeasureTexts(tb testing.TB, dot string) {
	tb.Helper()
	type key struct {
		text, family string
		size         float64
	}
	type metrics struct{ width, ascent, descent float64 }
	index := map[key]int{}
	var keys []key
	for _, t := range d.Texts {
		k := key{t.Text, t.Family, t.Size}
		if _, ok := index[k]; !ok {
			index[k] = len(keys)
			keys = append(keys, k)
		}
	}
	var g bytes.Buffer
	g.WriteString("digraph measure {\n\tgraph [layout=neato];\n\tnode [shape=plain, pos=\"0,0!\"];\n")
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	for i, k := range keys {
		fmt.Fprintf(&g, "\tm%d [label=\"%s\", fontname=\"%s\", fontsize=%g];\n", i, esc.Replace(k.text), esc.Replace(k.family), k.size)
	}
	g.WriteString("}\n")
	cmd := exec.Command(dot, "-Tjson")
	cmd.Stdin = &g
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("dot -Tjson (measuring %d texts): %v\n%s", len(keys), err, errb.String())
	}
	var doc struct {
		Objects []struct {
			Name   string `json:"name"`
			Pos    string `json:"pos"`
			Height string `json:"height"`
			Draw   []struct {
				Op    string     `json:"op"`
				Pt    [2]float64 `json:"pt"`
				Width float64    `json:"width"`
			} `json:"_ldraw_"`
		} `json:"objects"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		tb.Fatalf("dot -Tjson: %v", err)
	}
	m := make([]metrics, len(keys))
	found := 0
	for _, o := range doc.Objects {
		i, err := strconv.Atoi(strings.TrimPrefix(o.Name, "m"))
		if err != nil || i < 0 || i >= len(keys) {
			continue
		}
		_, ys, _ := strings.Cut(o.Pos, ",")
		cy, _ := strconv.ParseFloat(ys, 64)
		h, _ := strconv.ParseFloat(o.Height, 64)
		h *= 72 // inches
		for _, op := range o.Draw {
			if op.Op == "T" {
				// Graphviz's y grows upwards: the node's top is above the
				// baseline by the ascent.
				m[i] = metrics{width: op.Width, ascent: cy + h/2 - op.Pt[1], descent: op.Pt[1] - (cy - h/2)}
				found++
				break
			}
		}
	}
	if found != len(keys) {
		tb.Fatalf("dot -Tjson measured %d texts of %d", found, len(keys))
	}
	for i := range d.Texts {
		t := &d.Texts[i]
		mt := m[index[key{t.Text, t.Family, t.Size}]]
		x := t.X - mt.width/2
		switch t.Anchor {
		case "start":
			x = t.X
		case "end":
			x = t.X - mt.width
		}
		t.Box = Rect{MinX: x, MinY: t.Y - mt.ascent, MaxX: x + mt.width, MaxY: t.Y + mt.descent}
	}
}

// OverlappingTexts returns the pairs of texts (indexes into texts) whose
// boxes overlap: a sweep along x, so that thousands of texts cost little.
func OverlappingTexts(texts []Text) [][2]int {
	order := make([]int, len(texts))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int { return cmp.Compare(texts[i].Box.MinX, texts[j].Box.MinX) })
	var pairs [][2]int
	for a, i := range order {
		for _, j := range order[a+1:] {
			if texts[j].Box.MinX >= texts[i].Box.MaxX {
				break
			}
			if texts[i].Box.Overlaps(texts[j].Box) {
				pairs = append(pairs, [2]int{min(i, j), max(i, j)})
			}
		}
	}
	return pairs
}
