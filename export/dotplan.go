package export

import (
	"cmp"
	"math"
	"slices"

	"github.com/weaver-crawler/weaver/graph"
)

// dotPlan is how the DOT export draws a laid-out view so that people can
// read it (issue 40). Every host is a point of its community's colour,
// sized by PageRank, where the layout puts it. Hosts are then taken by
// PageRank, highest first, and each is named if its name fits beside its
// point (right, left, above, below, or at a corner) without touching a
// name placed before or the point of a host that matters more
// (placeLabels): the picture shows as many names as fit, none over
// another, and the hosts that matter most first. The others keep their
// name in their tooltip. The scale is the picture's base (60 points per
// square root of a host), or the first of dotZooms times it at which the
// dotTopLabels highest hosts are all named (placeTop). The few hosts far
// from all the others are drawn nearer first (pullIn).
type dotPlan struct {
	scale float64
	nodes []planNode // the view's laid-out nodes, by id
	// maxPR is the largest PageRank of the view's nodes, for the points'
	// sizes; 0 without ranks.
	maxPR  float64
	zoom   float64 // the scale in times the base
	named  int     // how many hosts are named
	pulled int     // how many hosts pullIn drew nearer
	// unplaced counts the view's nodes the layout has no position for
	// (none, when the layout is of the view's graph): Graphviz's nop
	// layout refuses them, so the file then asks for neato, which
	// places them and keeps the others pinned.
	unplaced int
	topNamed int         // how many of the dotTopLabels highest hosts are named
	legend   []legendRow // the communities the legend names, largest first; nil without one
}

// planNode is one laid-out node of the view.
type planNode struct {
	id       uint64
	x, y     float64 // layout units
	comm     uint32
	pagerank float64 // 0 without ranks
	font     float64 // the name's font size, points
	w, h     float64 // the name's box, points
	r        float64 // the point's radius, points
	named    bool
	lx, ly   float64 // with named, the centre of the name's box, points
}

// legendRow is one community of the legend: its colour, its biggest host
// (by PageRank) and how many of the view's hosts it holds.
type legendRow struct {
	comm  uint32
	host  string
	hosts int
}

const (
	// dotTopLabels is how many of the highest hosts are always named,
	// if a zoom of dotZooms lets them.
	dotTopLabels = 20
	// dotLabelGap is the room kept between a name's box and anything
	// else, points.
	dotLabelGap = 2.0
	// dotLegendRows bounds the legend: one row per colour of Palette.
	dotLegendRows = 12
	dotLegendFont = 10.0
)

// dotZooms are the scales tried, in times the base, smallest first.
var dotZooms = []float64{1, 1.25, 1.5, 2, 2.5, 3, 4}

// planDOT plans the drawing of nodes, the laid-out nodes of a view (by
// id, ascending, with their position and PageRank), hosts[i] the name of
// nodes[i]; ranked is the number of nodes of the graph the PageRanks are
// of (0 without ranks). It sets the scale, the names and the legend.
func planDOT(nodes []planNode, hosts []string, ranked int) *dotPlan {
	p := &dotPlan{nodes: nodes}
	if len(nodes) == 0 {
		return p
	}
	for i := range nodes {
		nd := &nodes[i]
		p.maxPR = max(p.maxPR, nd.pagerank)
		nd.font = labelFont(nd.pagerank, ranked)
		nd.w, nd.h = nameWidth(hosts[i], nd.font), 1.2*nd.font
	}
	for i := range nodes {
		nodes[i].r = markWidth(nodes[i].pagerank, p.maxPR) * 72 / 2
	}
	// By PageRank, highest first; ties (and a view without ranks) in id
	// order, the order hosts were found.
	order := make([]int, len(nodes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(nodes[b].pagerank, nodes[a].pagerank) })
	p.pulled = pullIn(nodes)
	width, side := extent(nodes)
	base := 1.0
	if side > 0 {
		base = 60 * math.Sqrt(float64(len(nodes))) / side
	}
	top := min(dotTopLabels, len(nodes))
	for _, z := range dotZooms {
		p.zoom, p.scale = z, base*z
		if placeLabels(nodes, order, p.scale) {
			break
		}
	}
	for k, i := range order {
		if nodes[i].named {
			p.named++
			if k < top {
				p.topNamed++
			}
		}
	}
	// The legend only if it is no wider than the picture.
	if rows := legend(nodes, hosts, order); legendWidth(rows) <= width*p.scale {
		p.legend = rows
	}
	return p
}

// pullIn draws the nodes far from all the others nearer, so that a few
// outliers do not make the picture a small crowd in a large empty page
// (ForceAtlas2 leaves some: on the UK-1996 replay, two hosts of one
// link each sit ten times further from the centre than 99 % of the
// others). A node further than R from the median point, R one and a half
// times the distance within which 95 % of the nodes lie, keeps its
// direction and is drawn at R + M(1 − e^(−(d−R)/M)), M = R/4: the
// further out, the more it is pulled in, never beyond R + M, and the
// outliers keep their order of distance. Nodes within R keep their
// place. It returns how many it moved.
func pullIn(nodes []planNode) int {
	if len(nodes) < 20 {
		return 0
	}
	xs, ys := make([]float64, len(nodes)), make([]float64, len(nodes))
	for i, n := range nodes {
		xs[i], ys[i] = n.x, n.y
	}
	slices.Sort(xs)
	slices.Sort(ys)
	cx, cy := xs[len(xs)/2], ys[len(ys)/2]
	ds := make([]float64, len(nodes))
	for i, n := range nodes {
		ds[i] = math.Hypot(n.x-cx, n.y-cy)
	}
	slices.Sort(ds)
	r := 1.5 * ds[len(ds)*95/100]
	if r <= 0 {
		return 0
	}
	m := r / 4
	moved := 0
	for i := range nodes {
		n := &nodes[i]
		d := math.Hypot(n.x-cx, n.y-cy)
		if d <= r {
			continue
		}
		f := (r + m*(1-math.Exp(-(d-r)/m))) / d
		n.x, n.y = cx+(n.x-cx)*f, cy+(n.y-cy)*f
		moved++
	}
	return moved
}

// extent returns the width of the nodes' positions, and the larger of
// their width and height, in layout units.
func extent(nodes []planNode) (width, side float64) {
	minX, maxX, minY, maxY := nodes[0].x, nodes[0].x, nodes[0].y, nodes[0].y
	for _, n := range nodes {
		minX, maxX = min(minX, n.x), max(maxX, n.x)
		minY, maxY = min(minY, n.y), max(maxY, n.y)
	}
	return maxX - minX, max(maxX-minX, maxY-minY)
}

// box is an axis-aligned rectangle, points.
type box struct{ x0, y0, x1, y1 float64 }

func (a box) overlaps(b box) bool { return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1 }

// boxGrid holds boxes in square cells, each box in every cell it
// touches: a box is tested against the few boxes of its cells.
type boxGrid struct {
	cell  float64
	cells map[[2]int64][]box
}

func (g *boxGrid) span(b box) (x0, y0, x1, y1 int64) {
	f := func(v float64) int64 { return int64(math.Floor(v / g.cell)) }
	return f(b.x0), f(b.y0), f(b.x1), f(b.y1)
}

func (g *boxGrid) free(b box) bool {
	x0, y0, x1, y1 := g.span(b)
	for x := x0; x <= x1; x++ {
		for y := y0; y <= y1; y++ {
			for _, o := range g.cells[[2]int64{x, y}] {
				if o.overlaps(b) {
					return false
				}
			}
		}
	}
	return true
}

func (g *boxGrid) add(b box) {
	x0, y0, x1, y1 := g.span(b)
	for x := x0; x <= x1; x++ {
		for y := y0; y <= y1; y++ {
			g.cells[[2]int64{x, y}] = append(g.cells[[2]int64{x, y}], b)
		}
	}
}

// candidates returns the boxes, with the gap, of the places of n's name
// around its point at scale, in the order they are tried: right, left,
// above, below, then the corners.
func candidates(n *planNode, scale float64) [8]box {
	cx, cy := n.x*scale, n.y*scale
	d := n.r + dotLabelGap
	hw, hh := n.w/2+dotLabelGap/2, n.h/2+dotLabelGap/2
	diag := n.r*0.7 + dotLabelGap
	var bs [8]box
	for k, c := range [8][2]float64{
		{d + hw, 0}, {-d - hw, 0}, {0, d + hh}, {0, -d - hh},
		{diag + hw, diag + hh}, {-diag - hw, diag + hh}, {diag + hw, -diag - hh}, {-diag - hw, -diag - hh},
	} {
		lx, ly := cx+c[0], cy+c[1]
		bs[k] = box{lx - hw, ly - hh, lx + hw, ly + hh}
	}
	return bs
}

// markBox is the box of n's point at scale.
func markBox(n *planNode, scale float64) box {
	cx, cy := n.x*scale, n.y*scale
	return box{cx - n.r, cy - n.r, cx + n.r, cy + n.r}
}

// dotTopSearch bounds the search for places of the top names: the
// places tried, in all.
const dotTopSearch = 20_000

// placeTop names all of the nodes top (indexes into nodes, the highest
// first) if it can: each name at one of its places, over none of the
// others' points nor names, and no name over a point, found by a search
// that goes back on an earlier choice when a later node has no place
// left (at most dotTopSearch places tried). It reports whether it named
// them all; if not, it names none.
func placeTop(nodes []planNode, top []int, scale float64) bool {
	marks := make([]box, len(top))
	cands := make([][8]box, len(top))
	for k, i := range top {
		marks[k] = markBox(&nodes[i], scale)
		cands[k] = candidates(&nodes[i], scale)
	}
	chosen := make([]int, len(top))
	budget := dotTopSearch
	var place func(k int) bool
	place = func(k int) bool {
		if k == len(top) {
			return true
		}
	next:
		for c, b := range cands[k] {
			if budget--; budget < 0 {
				return false
			}
			for j, m := range marks {
				if j != k && b.overlaps(m) || j < k && cands[j][chosen[j]].overlaps(b) {
					continue next
				}
			}
			// The names placed before must leave this point bare too.
			for j := range k {
				if cands[j][chosen[j]].overlaps(marks[k]) {
					return false
				}
			}
			chosen[k] = c
			if place(k + 1) {
				return true
			}
		}
		return false
	}
	if !place(0) {
		return false
	}
	for k, i := range top {
		b := cands[k][chosen[k]]
		n := &nodes[i]
		n.named, n.lx, n.ly = true, (b.x0+b.x1)/2, (b.y0+b.y1)/2
	}
	return true
}

// placeLabels names the nodes of order (all of them, highest first) at
// scale. The dotTopLabels first are named together by placeTop when it
// can; then each node not named yet, in order, gets the first of its
// places whose box, with the gap, overlaps no name placed before, the
// point of no node before it in order (named or not: a name never hides
// a host that matters more) and the point of none of the top nodes, if
// no name covers its own point. It reports whether the top nodes are
// all named.
func placeLabels(nodes []planNode, order []int, scale float64) bool {
	for _, i := range order {
		nodes[i].named = false
	}
	top := order[:min(dotTopLabels, len(order))]
	topNamed := placeTop(nodes, top, scale)
	cell := 16.0
	for _, n := range nodes {
		cell = max(cell, n.h+dotLabelGap)
	}
	grid := func() *boxGrid { return &boxGrid{cell: cell, cells: map[[2]int64][]box{}} }
	names, points, kept := grid(), grid(), grid()
	for _, i := range top {
		n := &nodes[i]
		kept.add(markBox(n, scale))
		if n.named {
			hw, hh := n.w/2+dotLabelGap/2, n.h/2+dotLabelGap/2
			names.add(box{n.lx - hw, n.ly - hh, n.lx + hw, n.ly + hh})
		}
	}
	for _, i := range order {
		n := &nodes[i]
		m := markBox(n, scale)
		if !n.named && names.free(m) {
			for _, b := range candidates(n, scale) {
				if names.free(b) && points.free(b) && kept.free(b) {
					n.named, n.lx, n.ly = true, (b.x0+b.x1)/2, (b.y0+b.y1)/2
					names.add(b)
					break
				}
			}
		}
		points.add(m)
	}
	if !topNamed {
		topNamed = true
		for _, i := range top {
			topNamed = topNamed && nodes[i].named
		}
	}
	return topNamed
}

// legend returns the rows of the legend: the view's communities, largest
// first (ties: the smaller number), at most dotLegendRows, each with its
// biggest host; nil when the view has one community.
func legend(nodes []planNode, hosts []string, order []int) []legendRow {
	rows := map[uint32]*legendRow{}
	for _, i := range order { // the first host met is the biggest
		r, ok := rows[nodes[i].comm]
		if !ok {
			r = &legendRow{comm: nodes[i].comm, host: hosts[i]}
			rows[nodes[i].comm] = r
		}
		r.hosts++
	}
	if len(rows) < 2 {
		return nil
	}
	var out []legendRow
	for _, r := range rows {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b legendRow) int { return cmp.Or(cmp.Compare(b.hosts, a.hosts), cmp.Compare(a.comm, b.comm)) })
	return out[:min(len(out), dotLegendRows)]
}

// legendWidth estimates the width of the legend of rows in points: the
// widest text and the colour's cell, with the table's spacing.
func legendWidth(rows []legendRow) float64 {
	w := labelWidth(legendTitle)
	for _, r := range rows {
		w = max(w, labelWidth(legendText(r))+1.5) // the cell and its spacing, in ems
	}
	return w*dotLegendFont + 8
}

// labelFont maps a PageRank to the font size of a host's name: 9 points
// for an average host (PageRank × nodes = 1), 3 more for each doubling,
// between 8 and 22, so that the hubs stand out without one name taking
// the room of ten. Without ranks, 10.
func labelFont(pagerank float64, nodes int) float64 {
	if nodes == 0 || pagerank <= 0 {
		return 10
	}
	f := min(max(9+3*math.Log2(pagerank*float64(nodes)), 8), 22)
	return math.Round(f*10) / 10
}

// nameWidth estimates the width in points of host in the font size font,
// as Graphviz measures it for "Helvetica" (labelWidth), plus the point
// and a half pango's rounding to whole points may add.
func nameWidth(host string, font float64) float64 { return labelWidth(host)*font + 1.5 }

// labelWidth estimates the width of s in ems, as Graphviz measures it for
// "Helvetica". Graphviz measures text with pango, through fontconfig, and
// on Debian gets DejaVu Sans for Helvetica; its advances (below, measured
// with dot -Tjson at 100 points) are the widest of the usual sans fonts
// (a browser shows Helvetica in Liberation Sans or Arial, some 10 %
// narrower), so a box sized by them holds the text in any of them. Hosts
// are ASCII (graph.NormalizeHost writes IDNs in punycode); any other
// character counts a full em, enough for accented Latin letters, not
// for a glyph the font lacks. 3 % more covers kerning and hinting.
func labelWidth(s string) float64 {
	w := 0.0
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
			w += dejaVuLower[r-'a']
		case r >= 'A' && r <= 'Z':
			w += dejaVuUpper[r-'A']
		case r >= '0' && r <= '9':
			w += 0.638
		case r == '.':
			w += 0.316
		case r == '-':
			w += 0.361
		case r == '_':
			w += 0.503
		case r == ':':
			w += 0.338
		default:
			w += 1
		}
	}
	return w * 1.03
}

// dejaVuLower and dejaVuUpper are DejaVu Sans's advances of a–z and A–Z,
// in ems.
var (
	dejaVuLower = [26]float64{0.616, 0.638, 0.548, 0.638, 0.616, 0.346, 0.638, 0.638, 0.278, 0.278, 0.578, 0.278, 0.976,
		0.638, 0.616, 0.638, 0.638, 0.393, 0.518, 0.391, 0.638, 0.593, 0.818, 0.593, 0.593, 0.526}
	dejaVuUpper = [26]float64{0.710, 0.683, 0.698, 0.773, 0.631, 0.578, 0.773, 0.751, 0.293, 0.293, 0.653, 0.556, 0.863,
		0.751, 0.788, 0.601, 0.788, 0.698, 0.638, 0.595, 0.736, 0.683, 0.991, 0.683, 0.608, 0.683}
)

// markWidth is the width of a host's point in inches: 3 points, up to 12
// for the highest PageRank (by the square root of its share of it); 4
// without ranks.
func markWidth(pagerank, maxPR float64) float64 {
	if maxPR <= 0 {
		return 4.0 / 72
	}
	return (3 + 9*math.Sqrt(max(pagerank, 0)/maxPR)) / 72
}

// lookup returns the planned node of id.
func (p *dotPlan) lookup(id uint64) (*planNode, bool) {
	if p == nil {
		return nil, false
	}
	i, ok := slices.BinarySearchFunc(p.nodes, id, func(n planNode, id uint64) int { return cmp.Compare(n.id, id) })
	if !ok {
		return nil, false
	}
	return &p.nodes[i], true
}

// collectPlan walks the view's nodes once and plans their drawing; the
// view starts again for the writer.
func collectPlan(v *view) (*dotPlan, error) {
	var nodes []planNode
	var hosts []string
	unplaced := 0
	err := v.nodes(func(n *graph.Node) error {
		c, x, y, ok := v.layoutOf(n.ID)
		if !ok {
			unplaced++
			return nil
		}
		pr, _, _ := v.rankOf(n.ID)
		nodes = append(nodes, planNode{id: n.ID, x: x, y: y, comm: c, pagerank: pr})
		hosts = append(hosts, n.Host)
		return nil
	})
	if err != nil {
		return nil, err
	}
	v.stats, v.walked, v.kept = Stats{}, false, nil
	p := planDOT(nodes, hosts, v.nodeCount())
	p.unplaced = unplaced
	return p, nil
}
