package fakeweb

import (
	"slices"
	"strconv"
	"strings"
)

// A topical web (Config.Topics) has the structure of the real one, which
// a map should show: hosts make sites (one to three hosts under one
// registrable domain), sites make topics (groups whose pages link mostly
// to each other), each topic has hubs (its first hosts, which most of its
// pages link to), and a few links cross from one topic to another, half
// of them to the other topic's main hub. Its pages are the generated
// web's, with the same link spellings, noise and robots.txt files.

// theme is what a topic's hosts are named after and write about.
type theme struct {
	words []string // first labels of its registrable domains: <word>-<number>.<suffix>
	title string   // what its pages are about, in their titles
}

// themes name the topics, in turn; a web of more topics than themes
// names the later ones like the first.
var themes = []theme{
	{[]string{"alder", "birch", "cedar", "elm", "hazel", "juniper", "larch", "maple", "oak", "rowan", "spruce", "willow"}, "Trees & woodland"},
	{[]string{"heron", "finch", "wren", "kestrel", "plover", "lark", "swift", "robin", "osprey", "curlew"}, "Birds — waders & warblers"},
	{[]string{"thames", "severn", "tyne", "avon", "trent", "clyde", "tamar", "wye"}, "Rivers, canals & locks"},
	{[]string{"granite", "basalt", "quartz", "flint", "slate", "marble", "jasper", "onyx"}, "Stones, quarries & caves"},
	{[]string{"thistle", "bramble", "clover", "fern", "moss", "sorrel", "tansy", "yarrow"}, "Herbs & wild flowers"},
	{[]string{"copper", "cobalt", "iron", "zinc", "nickel", "pewter", "silver", "bronze"}, "Metals & the forge"},
	{[]string{"vega", "sirius", "altair", "rigel", "deneb", "orion", "lyra", "polaris"}, "Stars: the sky at night"},
	{[]string{"harbour", "fjord", "delta", "cove", "reef", "dune", "estuary", "shingle"}, "Coasts, harbours & tides"},
	{[]string{"frost", "gale", "mist", "thunder", "breeze", "drizzle", "sleet", "squall"}, "Weather & “climate”"},
	{[]string{"viola", "cello", "oboe", "harp", "lute", "fiddle", "bugle", "flute"}, "Music — strings & woodwind"},
}

const (
	// defaultTopicLinks is LinksPerPage's default in a topical web: a
	// crawl with the default max_outbound_links (10) keeps most of them.
	defaultTopicLinks = 8
	// crossShare is the share of a page's drawn links that go to another
	// topic.
	crossShare = 0.1
	// rootFan is how many topics' first hosts one topic's first host
	// links to, first on its page: the seed's topic links to the next
	// rootFan topics, topic 1 to the rootFan after those, and so on.
	rootFan = 6
)

// topical is what New keeps of a topical web's making.
type topical struct {
	topic   []int32   // host → its topic
	site    []int32   // host → its site (hosts of a site are consecutive)
	members [][]int32 // topic → its hosts, in host order; the first is its main hub
}

// genTopicNames returns n distinct host names in topics groups, topic by
// topic, each topic's sites named after its theme; host 0 is
// www.<word>-<number>.com, the first host of topic 0, alone in its site.
func genTopicNames(seed int64, n, topics int) ([]string, topical) {
	r := newRNG(seed, streamNames, 1)
	topics = max(1, min(topics, n))
	// Topics differ in size, as they do on the web: each gets a host,
	// then a share of the rest in proportion to a weight in [0.6, 1.6).
	weights := make([]float64, topics)
	total := 0.0
	for t := range weights {
		weights[t] = 0.6 + r.float()
		total += weights[t]
	}
	sizes := make([]int, topics)
	given := 0
	for t := range sizes {
		sizes[t] = 1 + int(float64(n-topics)*weights[t]/total)
		given += sizes[t]
	}
	for t := 0; given < n; t = (t + 1) % topics {
		sizes[t]++
		given++
	}
	sufTotal := 0
	for _, s := range suffixes {
		sufTotal += s.weight
	}
	numRange := max(999, 2*n)
	used := make(map[string]bool, n)
	names := make([]string, 0, n)
	tp := topical{topic: make([]int32, 0, n), site: make([]int32, 0, n), members: make([][]int32, topics)}
	sites := int32(0)
	for t, size := range sizes {
		th := themes[t%len(themes)]
		for len(tp.members[t]) < size {
			first := len(names) == 0
			suf := "com"
			if !first {
				v := r.intn(sufTotal)
				for _, s := range suffixes {
					if v < s.weight {
						suf = s.name
						break
					}
					v -= s.weight
				}
			}
			reg := pick(r, th.words) + "-" + strconv.Itoa(1+r.intn(numRange)) + "." + suf
			if used[reg] {
				continue
			}
			used[reg] = true
			count := 1
			switch v := r.intn(100); {
			case first:
			case v < 12:
				count = 3
			case v < 40:
				count = 2
			}
			count = min(count, size-len(tp.members[t]), maxPerDomain)
			labels := map[string]bool{}
			for len(labels) < count {
				l := pick(r, subLabels)
				if first {
					l = "www"
				}
				if labels[l] {
					continue
				}
				labels[l] = true
				if l != "" {
					l += "."
				}
				tp.members[t] = append(tp.members[t], int32(len(names)))
				tp.topic = append(tp.topic, int32(t))
				tp.site = append(tp.site, sites)
				names = append(names, l+reg)
			}
			sites++
		}
	}
	return names, tp
}

// genTopicGraph draws the links of a topical web.
//
// A spanning tree first, placed at the start of each page after the links
// to the other hosts of its site, so that every host is reachable from
// host 0 through the links a crawler keeps with max_outbound_links of 8
// or more: each topic's first host (whose robots.txt lets weaver in) is
// linked from the first host of an earlier topic (rootFan to a host, host
// 0 first), and every other host of a topic from an earlier host of its
// topic drawn by preferential attachment, among those with fewer than
// maxChildren tree children and whose robots.txt lets weaver in. Then
// each page draws its other links: crossShare of them to another topic
// (half to its first host, half as below), the rest within its own topic,
// from a Zipf law over the topic's hosts in order (host k of a topic has
// weight 1/(k+2)), so a topic's first hosts are its hubs.
func (w *Web) genTopicGraph(tp topical) {
	g := &topicGraph{w: w, tp: tp, r: newRNG(w.seed, streamGraph, 1)}
	g.chooseRoots()
	g.growTree()
	g.weighZipf()
	for i := range w.sites {
		g.drawLinks(i)
	}
}

// topicGraph is genTopicGraph at work.
type topicGraph struct {
	w        *Web
	tp       topical
	r        *rng
	roots    []int32     // topic → its first host that lets weaver in (else its first)
	children [][]int32   // host → its children in the spanning tree
	cum      [][]float64 // topic → the cumulative Zipf weights of its hosts
}

// allowed reports whether host j's robots.txt lets weaver in.
func (g *topicGraph) allowed(j int32) bool { return g.w.sites[j].robots != robotsDisallowed }

// chooseRoots chooses each topic's root, and links each from the first
// host of an earlier topic, rootFan to a host.
func (g *topicGraph) chooseRoots() {
	g.roots = make([]int32, len(g.tp.members))
	for t, m := range g.tp.members {
		g.roots[t] = m[0]
		if k := slices.IndexFunc(m, g.allowed); k >= 0 {
			g.roots[t] = m[k]
		}
	}
	g.children = make([][]int32, len(g.w.sites))
	for t := 1; t < len(g.roots); t++ {
		p := g.roots[(t-1)/rootFan]
		g.children[p] = append(g.children[p], g.roots[t])
	}
}

// growTree links every other host of a topic from an earlier host of
// its topic, drawn by preferential attachment (an urn of hosts, each in
// it once more for each child), among those with fewer than maxChildren
// children that let weaver in, else among those with fewer than
// maxChildren, else its topic's root.
func (g *topicGraph) growTree() {
	for t, m := range g.tp.members {
		urn := []int32{g.roots[t]}
		for k, i := range m {
			if i == g.roots[t] {
				continue
			}
			parent := g.treeParent(m, k, urn)
			if parent < 0 {
				parent = g.roots[t]
			}
			g.children[parent] = append(g.children[parent], i)
			urn = append(urn, i, parent)
		}
	}
}

// treeParent draws the parent of host m[k] from the urn, else looks
// through m[:k] from a point drawn at random; -1 when no host there can
// take another child.
func (g *topicGraph) treeParent(m []int32, k int, urn []int32) int32 {
	eligible := func(j int32, strict bool) bool {
		return len(g.children[j]) < maxChildren && (!strict || g.allowed(j))
	}
	parent := int32(-1)
	for _, strict := range []bool{true, false} {
		for try := 0; try < 32 && parent < 0; try++ {
			if j := urn[g.r.intn(len(urn))]; eligible(j, strict) {
				parent = j
			}
		}
		for c, start := 0, g.r.intn(max(k, 1)); c < k && parent < 0; c++ {
			if j := m[(start+c)%k]; eligible(j, strict) {
				parent = j
			}
		}
	}
	return parent
}

// weighZipf gives host k of each topic the weight 1/(k+2).
func (g *topicGraph) weighZipf() {
	g.cum = make([][]float64, len(g.tp.members))
	for t, m := range g.tp.members {
		g.cum[t] = make([]float64, len(m))
		total := 0.0
		for k := range m {
			total += 1 / float64(k+2)
			g.cum[t][k] = total
		}
	}
}

// zipf draws a host of topic t by its Zipf weight.
func (g *topicGraph) zipf(t int) int32 {
	c := g.cum[t]
	k, _ := slices.BinarySearch(c, g.r.float()*c[len(c)-1])
	return g.tp.members[t][min(k, len(c)-1)]
}

// drawLinks gives host i its links: the other hosts of its site, its
// tree children, then the links it draws; and, on some pages, a <base>.
func (g *topicGraph) drawLinks(i int) {
	w, tp, r := g.w, g.tp, g.r
	n, t, topics := len(w.sites), int(tp.topic[i]), len(tp.members)
	var out []int32
	for j := i - 1; j >= 0 && tp.site[j] == tp.site[i]; j-- {
		out = append(out, int32(j))
	}
	for j := i + 1; j < n && tp.site[j] == tp.site[i]; j++ {
		out = append(out, int32(j))
	}
	out = append(out, g.children[i]...)
	lpp := w.cfg.LinksPerPage
	want := lpp/2 + r.intn(lpp+1)
	for try := 0; len(out) < want && try < 4*want; try++ {
		var target int32
		if topics > 1 && r.chance(crossShare) {
			u := r.intn(topics - 1)
			if u >= t {
				u++
			}
			target = g.roots[u]
			if r.chance(0.5) {
				target = g.zipf(u)
			}
		} else {
			target = g.zipf(t)
		}
		if int(target) != i {
			out = append(out, target)
		}
	}
	w.sites[i].out = out
	w.drawBase(r, i)
}

// topicMeta gives the hosts of a topical web titles and descriptions on
// their topic's theme.
func (w *Web) topicMeta(tp topical) {
	for i := range w.sites {
		th := themes[int(tp.topic[i])%len(themes)]
		name := displayName(w.sites[i].name)
		w.sites[i].title = name + " · " + th.title
		w.sites[i].desc = name + " writes about " + strings.ToLower(th.title[:1]) + th.title[1:] + "."
	}
}

// Topic returns the topic of host in a web made with Config.Topics (0 to
// Topics-1), or -1 for a host not in such a web.
func (w *Web) Topic(host string) int {
	i := w.lookup(host)
	if i < 0 || i >= len(w.topic) {
		return -1
	}
	return int(w.topic[i])
}
