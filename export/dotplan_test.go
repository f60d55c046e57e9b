package export

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weaver-crawler/weaver/internal/tooltest"
)

// crowd is n nodes in a few tight clusters and a thin halo, their
// PageRanks skewed (a few hubs), their names of 8 to 35 characters: a
// web graph's picture in miniature, from a fixed seed.
func crowd(n int, seed uint64) ([]planNode, []string) {
	rng := rand.New(rand.NewPCG(seed, 1))
	nodes := make([]planNode, n)
	hosts := make([]string, n)
	for i := range nodes {
		c := i % 7
		spread := 40.0
		if rng.IntN(10) == 0 {
			spread = 300 // the halo
		}
		nodes[i] = planNode{
			id:       uint64(i + 1),
			x:        float64(c%3)*120 + rng.NormFloat64()*spread,
			y:        float64(c/3)*120 + rng.NormFloat64()*spread,
			comm:     uint32(c),
			pagerank: math.Pow(rng.Float64(), 4) / float64(n),
		}
		name := fmt.Sprintf("h%d.", i)
		for len(name) < 8+rng.IntN(28) {
			name += string(rune('a' + rng.IntN(26)))
		}
		hosts[i] = "www." + name + ".example"
	}
	return nodes, hosts
}

// labelBoxOf is the box of a named node's name, with the gap.
func labelBoxOf(n *planNode) box {
	hw, hh := n.w/2+dotLabelGap/2, n.h/2+dotLabelGap/2
	return box{n.lx - hw, n.ly - hh, n.lx + hw, n.ly + hh}
}

// TestPlanDOT_NamesApart checks the names planDOT places against the
// rules, by brute force over every pair (no grid): no two names overlap;
// no name covers the point of a host ranked above its own, nor the point
// of one of the 20 highest, nor its own; each name sits beside its
// point; the 20 highest are named; and the placement is greedy to the
// end: every host left unnamed has no place its name could go.
func TestPlanDOT_NamesApart(t *testing.T) {
	for _, n := range []int{30, 400, 3000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			nodes, hosts := crowd(n, uint64(n))
			p := planDOT(nodes, hosts, n)
			order := make([]int, n)
			for i := range order {
				order[i] = i
			}
			slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(nodes[b].pagerank, nodes[a].pagerank) })
			top := min(dotTopLabels, n)
			if p.topNamed != top {
				t.Errorf("%d of the %d highest named", p.topNamed, top)
			}
			var named []int
			for k, i := range order {
				nd := &nodes[i]
				if !nd.named {
					continue
				}
				named = append(named, i)
				b := labelBoxOf(nd)
				for j, o := range order {
					if (j < k || j < top || o == i) && b.overlaps(markBox(&nodes[o], p.scale)) {
						t.Errorf("the name of %s covers the point of %s", hosts[i], hosts[o])
					}
				}
				// Beside its point: the box's nearest side or corner
				// within the point's radius and the gap, along x, y or
				// the diagonal.
				cx, cy := nd.x*p.scale, nd.y*p.scale
				dx := max(b.x0-cx, cx-b.x1, 0)
				dy := max(b.y0-cy, cy-b.y1, 0)
				if math.Hypot(dx, dy) > math.Sqrt2*(nd.r+dotLabelGap)+0.01 {
					t.Errorf("the name of %s is %g points from its point", hosts[i], math.Hypot(dx, dy))
				}
			}
			for a, i := range named {
				for _, j := range named[a+1:] {
					if labelBoxOf(&nodes[i]).overlaps(labelBoxOf(&nodes[j])) {
						t.Errorf("the names of %s and %s overlap", hosts[i], hosts[j])
					}
				}
			}
			if len(named) != p.named || p.named < top {
				t.Errorf("%d named, the plan says %d", len(named), p.named)
			}
			// Greedy to the end: an unnamed host's every place is taken.
			for k, i := range order {
				nd := &nodes[i]
				if nd.named {
					continue
				}
				covered := slices.ContainsFunc(named, func(j int) bool { return labelBoxOf(&nodes[j]).overlaps(markBox(nd, p.scale)) })
				for _, b := range candidates(nd, p.scale) {
					free := !covered
					for j, o := range order {
						if o != i && (j < k || j < top) && b.overlaps(markBox(&nodes[o], p.scale)) ||
							nodes[o].named && labelBoxOf(&nodes[o]).overlaps(b) {
							free = false
							break
						}
					}
					if free {
						t.Errorf("%s is not named, and its name fits at %+v", hosts[i], b)
						break
					}
				}
			}
			t.Logf("%d hosts: %d named at zoom %g", n, p.named, p.zoom)
		})
	}
}

// TestPullIn: a host far from the others is drawn nearer, in its
// direction, and two outliers keep their order of distance; the others
// do not move.
func TestPullIn(t *testing.T) {
	nodes, hosts := crowd(200, 7)
	for i := range nodes { // a disc of radius 100 around (0, 0)
		a, r := float64(i)*2.4, 100*math.Sqrt(float64(i)/200)
		nodes[i].x, nodes[i].y = r*math.Cos(a), r*math.Sin(a)
	}
	nodes = append(nodes, planNode{id: 201, x: 5000, y: 0}, planNode{id: 202, x: 0, y: -2000})
	hosts = append(hosts, "far.example", "farish.example")
	before := slices.Clone(nodes)
	if got := pullIn(nodes); got != 2 {
		t.Errorf("pullIn moved %d hosts, want 2", got)
	}
	for i := range 200 {
		if nodes[i] != before[i] {
			t.Fatalf("%s moved from %v to %v", hosts[i], before[i], nodes[i])
		}
	}
	far, farish := nodes[200], nodes[201]
	if math.Abs(far.y) > 1 || far.x < 100 || math.Abs(farish.x) > 1 || farish.y > -100 {
		t.Errorf("directions lost: %v, %v", far, farish)
	}
	if df, dg := math.Hypot(far.x, far.y), math.Hypot(farish.x, farish.y); df <= dg || df > 1.25*1.5*100 {
		t.Errorf("distances %g and %g: want the first further, and both within 1.25 × 1.5 × the disc", df, dg)
	}
}

// TestLabelWidth_Graphviz: the width weaver gives a name is at least the
// width Graphviz measures for it (dot -Tjson, in the font it finds for
// Helvetica), and at most a quarter more for plain host names; the
// height likewise. Hosts are ASCII (IDNs in punycode); an accented
// letter is measured too.
func TestLabelWidth_Graphviz(t *testing.T) {
	dot := tooltest.Tool(t, "dot")
	names := []string{
		"www.yahoo.com", "ourworld.compuserve.com", "www.northumbria-tourist-board.org.uk", "iiiiiii.il",
		"mmmmmmmm.wwwwww.mw", "a_b-c.0123456789.uk", "localhost:8080", "WWW.UPPER.CASE", "xn--bcher-kva.de",
		"bücher.de", "1.2.3.4",
	}
	d := &tooltest.Drawing{}
	for _, size := range []float64{8, 13.7, 22} {
		for _, s := range names {
			d.Texts = append(d.Texts, tooltest.Text{Text: s, Family: "Helvetica", Size: size, Anchor: "middle"})
		}
	}
	d.MeasureTexts(t, dot)
	for _, tx := range d.Texts {
		w, h := tx.Box.MaxX-tx.Box.MinX, tx.Box.MaxY-tx.Box.MinY
		est := nameWidth(tx.Text, tx.Size)
		ascii := !slices.ContainsFunc([]rune(tx.Text), func(r rune) bool { return r > 0x7F })
		if w > est || ascii && est > 1.25*w {
			t.Errorf("%q at %g points: Graphviz %g points wide, weaver %g", tx.Text, tx.Size, w, est)
		}
		if h > 1.2*tx.Size {
			t.Errorf("%q at %g points: Graphviz %g points high, weaver %g", tx.Text, tx.Size, h, 1.2*tx.Size)
		}
	}
}
