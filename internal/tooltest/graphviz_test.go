package tooltest_test

import (
	"bytes"
	"os/exec"
	"slices"
	"testing"

	"github.com/weaver-crawler/weaver/internal/tooltest"
)

// TestDrawing_Overlaps: the checker the DOT tests use, on a picture whose
// answer is known. Two labels pinned 10 points apart overlap, a third far
// away does not, a point drawn with a tooltip has no text, an edge
// between two nodes is drawn; a label that only touches another's box
// does not count.
func TestDrawing_Overlaps(t *testing.T) {
	dot := tooltest.Tool(t, "dot")
	const in = `digraph t {
	graph [layout=neato, inputscale=72, splines=false];
	node [shape=plaintext, fontname="Helvetica", fontsize=12, margin=0, width=0, height=0];
	a [label="www.example.com", pos="0,0!"];
	b [label="blog.example.com", pos="10,0!"];
	c [label="far.example.org", pos="600,0!"];
	d [shape=point, tooltip="hidden.example.net", pos="300,200!"];
	e [label="wide", fontsize=40, pos="300,-300!"];
	a -> c;
	c -> d;
}
`
	cmd := exec.Command(dot, "-Tsvg")
	cmd.Stdin = bytes.NewReader([]byte(in))
	svg, err := cmd.Output()
	if err != nil {
		t.Fatalf("dot -Tsvg: %v", err)
	}
	d := tooltest.ParseSVG(t, svg)
	d.MeasureTexts(t, dot)
	labelled := d.Labelled()
	slices.Sort(labelled)
	if want := []string{"a", "b", "c", "e"}; !slices.Equal(labelled, want) {
		t.Errorf("labelled nodes %v, want %v", labelled, want)
	}
	if m := d.Nodes["d"]; m.Shape != "ellipse" || m.Text || m.Tooltip != "hidden.example.net" {
		t.Errorf("the point: %+v, want an ellipse without text", m)
	}
	pairs := tooltest.OverlappingTexts(d.Texts)
	if len(pairs) != 1 {
		t.Fatalf("overlapping pairs %v, want one", pairs)
	}
	if a, b := d.Texts[pairs[0][0]], d.Texts[pairs[0][1]]; a.Node != "a" || b.Node != "b" {
		t.Errorf("overlap between %s and %s, want a and b", a.Node, b.Node)
	}
	// The measured width is Graphviz's: "www.example.com" at 12 points is
	// 15 characters of about half an em to two thirds of one.
	if w := d.Texts[0].Box.MaxX - d.Texts[0].Box.MinX; w < 15*12*0.45 || w > 15*12*0.7 {
		t.Errorf("www.example.com measured %g points wide", w)
	}
	if h := d.Texts[0].Box.MaxY - d.Texts[0].Box.MinY; h < 12 || h > 12*1.4 {
		t.Errorf("www.example.com measured %g points high", h)
	}
	drawn := 0
	for _, e := range d.Edges {
		if e.Drawn {
			drawn++
		}
	}
	if len(d.Edges) != 2 || drawn != 2 {
		t.Errorf("edges %+v, want 2 drawn", d.Edges)
	}
	// Touching is not overlapping; a box moved a hundredth inside is.
	x := d.Texts[2]
	y := x
	y.Box.MinX, y.Box.MaxX = x.Box.MaxX, 2*x.Box.MaxX-x.Box.MinX
	if n := len(tooltest.OverlappingTexts([]tooltest.Text{x, y})); n != 0 {
		t.Errorf("touching boxes: %d overlaps", n)
	}
	y.Box.MinX -= 0.01
	if n := len(tooltest.OverlappingTexts([]tooltest.Text{x, y})); n != 1 {
		t.Errorf("boxes sharing 0.01 point: %d overlaps", n)
	}
}
