package storetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// Shape is how BuildBig draws a host's links.
type Shape int

const (
	// Random draws every link from one skewed distribution over all
	// hosts (a few hosts get most links): no community structure, no
	// locality. The store of the million-host commit benchmarks.
	Random Shape = iota
	// Web puts hosts in sites of 20 to 5,000 consecutive hosts (sizes
	// from a power law); 8 of a host's 10 links go inside its site, most
	// of them to the site's first hosts (its hubs), and 2 anywhere, drawn
	// as Random draws them. Ids follow the sites, as a crawl meeting a
	// site's hosts together hands them out.
	Web
)

func (s Shape) String() string {
	if s == Web {
		return "web"
	}
	return "random"
}

// BigLinks is the out-links of every host of a BuildBig store.
const BigLinks = 10

// BuildBig writes a store of hosts crawled hosts (status, HTTP status,
// title), each with BigLinks links to distinct other hosts, through
// package graph's own functions, with fsync off and in chunks so that no
// transaction holds the whole graph; the same store for the same
// arguments. A benchmark's fixture: a million hosts take about a minute.
func BuildBig(path string, shape Shape, hosts int) error {
	s, err := kv.Open(path, kv.Options{NoSync: true})
	if err != nil {
		return err
	}
	defer s.Close()
	now := time.Now()
	ids := make([]uint64, hosts)
	for lo := 0; lo < hosts; lo += 50_000 {
		err := s.Update(func(tx *kv.Tx) error {
			for i := lo; i < min(lo+50_000, hosts); i++ {
				n, _, err := graph.Ensure(tx, fmt.Sprintf("big%07d.test", i), "http", now)
				if err != nil {
					return err
				}
				n.Status, n.HTTPStatus, n.CrawlCount, n.LastCrawl = graph.StatusCrawled, 200, 1, now
				n.Title = fmt.Sprintf("Host %d – a page title", i)
				if err := graph.Put(tx, &n); err != nil {
					return err
				}
				ids[i] = n.ID
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	r := rand.New(rand.NewPCG(7, 7))
	var siteStart []int // sites are runs of consecutive hosts
	if shape == Web {
		for i := 0; i < hosts; {
			siteStart = append(siteStart, i)
			i += int(20 / math.Pow(1-r.Float64()*(1-math.Pow(20.0/5000, 1.2)), 1/1.2))
		}
		siteStart = append(siteStart, hosts)
	}
	targets := make([]int, 0, BigLinks)
	adds := make([]graph.EdgeAdd, 0, BigLinks)
	for lo := 0; lo < hosts; lo += 5_000 {
		err := s.Update(func(tx *kv.Tx) error {
			for i := lo; i < min(lo+5_000, hosts); i++ {
				targets = targets[:0]
				site, siteEnd := 0, 0
				if shape == Web {
					k, _ := slices.BinarySearch(siteStart, i+1)
					site, siteEnd = siteStart[k-1], siteStart[k]
				}
				for len(targets) < BigLinks {
					var t int
					if shape == Web && len(targets) < 8 && siteEnd-site > 8 {
						t = site + int(float64(siteEnd-site)*math.Pow(r.Float64(), 2))
					} else {
						t = int(float64(hosts) * math.Pow(r.Float64(), 3))
					}
					if t != i && !slices.Contains(targets, t) {
						targets = append(targets, t)
					}
				}
				adds = adds[:0]
				for _, t := range targets {
					adds = append(adds, graph.EdgeAdd{To: ids[t], Weight: 1})
				}
				if err := graph.AddEdges(tx, ids[i], adds, now); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
