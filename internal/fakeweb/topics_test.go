package fakeweb_test

import (
	"context"
	"maps"
	"slices"
	"testing"

	"golang.org/x/net/publicsuffix"

	"github.com/weaver-crawler/weaver/internal/fakeweb"
	"github.com/weaver-crawler/weaver/layout"
)

// topicGraph is the host graph a crawl of w records (max_outbound_links
// 10, the default exclusions), as a layout.Graph of w's hosts in order,
// with the hosts' topics and each host's in-degree.
func topicGraph(t *testing.T, w *fakeweb.Web) (g *layout.Graph, topics []uint32, edges map[[2]string]int, in map[string]int) {
	t.Helper()
	hosts := w.Hosts()
	index := map[string]uint64{}
	b := layout.NewBuilder(len(hosts), 0)
	for i, h := range hosts {
		index[h] = uint64(i + 1)
		if err := b.AddNode(uint64(i + 1)); err != nil {
			t.Fatal(err)
		}
		topics = append(topics, uint32(w.Topic(h)))
	}
	edges = w.ExpectedEdges(10, fakeweb.DefaultExcluded)
	in = map[string]int{}
	for e := range edges {
		if err := b.AddEdge(index[e[0]], index[e[1]], 1); err != nil {
			t.Fatal(err)
		}
		in[e[1]]++
	}
	g, err := b.Graph()
	if err != nil {
		t.Fatal(err)
	}
	return g, topics, edges, in
}

// TestNew_Topics: a topical web has the structure the map must show.
// Every host is reachable from the seed through the links a crawl keeps;
// sites are one to three hosts of one registrable domain, all in one
// topic; most links stay inside their topic, a few cross; each topic has
// a hub that many of its hosts link to; and the partition into topics
// has a modularity of at least 0.5 on the graph a crawl records, as has
// the partition Louvain finds there. Equal configs give equal webs.
func TestNew_Topics(t *testing.T) {
	for _, tc := range []struct {
		hosts, topics int
		seed          int64
	}{{300, 8, 1}, {1000, 12, 2}, {120, 3, 3}} {
		w := fakeweb.New(fakeweb.Config{Hosts: tc.hosts, Seed: tc.seed, Topics: tc.topics})
		hosts := w.Hosts()
		if len(hosts) != tc.hosts {
			t.Fatalf("%d hosts, want %d", len(hosts), tc.hosts)
		}
		again := fakeweb.New(fakeweb.Config{Hosts: tc.hosts, Seed: tc.seed, Topics: tc.topics})
		if !slices.Equal(again.Hosts(), hosts) || !maps.Equal(again.ExpectedEdges(10, fakeweb.DefaultExcluded), w.ExpectedEdges(10, fakeweb.DefaultExcluded)) {
			t.Errorf("%d topics of %d hosts from seed %d: two webs differ", tc.topics, tc.hosts, tc.seed)
		}

		// Sites: registrable domains of 1 to 3 hosts, in one topic.
		siteTopic := map[string]int{}
		siteHosts := map[string]int{}
		perTopic := make([]int, tc.topics)
		for _, h := range hosts {
			if !hostRE.MatchString(h) || fakeweb.DefaultExcluded(h) {
				t.Errorf("host %q: not a plain host name, or excluded", h)
			}
			reg, err := publicsuffix.EffectiveTLDPlusOne(h)
			if err != nil {
				t.Fatalf("EffectiveTLDPlusOne(%s): %v", h, err)
			}
			topic := w.Topic(h)
			if topic < 0 || topic >= tc.topics {
				t.Fatalf("host %s: topic %d of %d", h, topic, tc.topics)
			}
			perTopic[topic]++
			if was, ok := siteTopic[reg]; ok && was != topic {
				t.Errorf("site %s: hosts in topics %d and %d", reg, was, topic)
			}
			siteTopic[reg] = topic
			siteHosts[reg]++
		}
		multi := 0
		for reg, n := range siteHosts {
			if n > 3 {
				t.Errorf("site %s: %d hosts, want at most 3 (max_subdomains_per_root)", reg, n)
			}
			if n > 1 {
				multi++
			}
		}
		if multi < len(siteHosts)/4 {
			t.Errorf("%d of %d sites have more than one host: want a quarter at least", multi, len(siteHosts))
		}
		if slices.Min(perTopic) < tc.hosts/tc.topics/3 {
			t.Errorf("hosts per topic %v: want at least a third of the mean in each", perTopic)
		}
		if w.Topic("www.nowhere.test") != -1 || fakeweb.New(fakeweb.Config{Hosts: 10}).Topic(hosts[0]) != -1 {
			t.Errorf("Topic of a host not in a topical web: want -1")
		}

		g, topics, edges, in := topicGraph(t, w)
		reached := map[string]bool{hosts[0]: true}
		inside, sameSite := 0, 0
		for e := range edges {
			reached[e[1]] = true
			if w.Topic(e[0]) == w.Topic(e[1]) {
				inside++
			}
			r0, _ := publicsuffix.EffectiveTLDPlusOne(e[0])
			r1, _ := publicsuffix.EffectiveTLDPlusOne(e[1])
			if r0 == r1 {
				sameSite++
			}
		}
		for _, h := range hosts {
			if !reached[h] {
				t.Errorf("host %s: not reachable from the seed with max_outbound_links 10", h)
			}
		}
		share := float64(inside) / float64(len(edges))
		if share < 0.8 || share > 0.95 {
			t.Errorf("%.3f of %d links inside their topic: want mostly (0.8 to 0.95), and a few across", share, len(edges))
		}
		if sameSite == 0 {
			t.Errorf("no link between two hosts of a site")
		}
		// Hubs: each topic's most linked-to host has at least 4 times the
		// topic's median in-degree.
		for topic := range tc.topics {
			var degrees []int
			for _, h := range hosts {
				if w.Topic(h) == topic {
					degrees = append(degrees, in[h])
				}
			}
			slices.Sort(degrees)
			if top, median := degrees[len(degrees)-1], degrees[len(degrees)/2]; top < 4*max(1, median) {
				t.Errorf("topic %d: top in-degree %d, median %d: want a hub (4 x median)", topic, top, median)
			}
		}
		truth := layout.Modularity(g, topics)
		_, found, err := layout.Communities(context.Background(), g)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d topics of %d hosts, seed %d: %d links, %.3f inside topics; modularity of the topics %.3f, of Louvain's %.3f",
			tc.topics, tc.hosts, tc.seed, len(edges), share, truth, found)
		if truth < 0.5 || found < 0.5 {
			t.Errorf("modularity: of the topics %.3f, of Louvain's communities %.3f: want at least 0.5", truth, found)
		}
	}
}
