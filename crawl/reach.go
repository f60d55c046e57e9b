package crawl

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// metaReach holds the limits the hosts marked excluded_by_limit were left
// out by: "max_depth max_subdomains_per_root" of the last run that judged
// them (0: no limit).
const metaReach = "crawl.reach_limits"

// reachPass queues, at their depth, the hosts left out by an earlier
// run's max_depth or subdomain cap that this run's limits let in: a crawl
// resumed with a greater --max-depth (or a cap raised or lifted) reaches
// as far as a crawl begun with it, whenever the earlier run stopped. It
// runs when the limits are less strict than those recorded (or none are
// recorded), prepareBatch nodes to a transaction; the limits are recorded
// once it is through, so a pass a stop cut short runs again (the hosts it
// queued are no longer excluded_by_limit).
func (c *Crawler) reachPass() (queued int, err error) {
	limits := fmt.Sprintf("%d %d", c.cfg.MaxDepth, c.cfg.MaxSubdomainsPerRoot)
	var pass bool
	err = c.store.View(func(tx *kv.Tx) error {
		pass = looser(tx.MetaString(metaReach), c.cfg.MaxDepth, c.cfg.MaxSubdomainsPerRoot)
		return nil
	})
	if err != nil || !pass {
		return 0, err
	}
	queued, err = c.nodeBatches(0, func(tx *kv.Tx, nodes []graph.Node, next uint64) (n int, err error) {
		for i := range nodes {
			if nodes[i].Status != graph.StatusExcludedByLimit {
				continue
			}
			ok, err := c.reach(tx, &nodes[i])
			if err != nil {
				return 0, err
			}
			if ok {
				n++
			}
		}
		if next != 0 {
			return n, nil
		}
		return n, tx.SetMetaString(metaReach, limits)
	})
	if err == nil && queued > 0 {
		hosts := "hosts"
		if queued == 1 {
			hosts = "host"
		}
		c.logf("INFO", "Queued %d %s left out by an earlier run's max_depth or max_subdomains_per_root (now %d and %d)",
			queued, hosts, c.cfg.MaxDepth, c.cfg.MaxSubdomainsPerRoot)
	}
	return queued, err
}

// reach queues node, a host left out by a limit, when this run's limits
// let it in, and marks it discovered. The node is read again: the hosts
// admitted before it in this transaction may have changed it.
func (c *Crawler) reach(tx *kv.Tx, left *graph.Node) (bool, error) {
	node, ok, err := graph.Get(tx, left.ID)
	if err != nil || !ok {
		return false, err
	}
	if node.Status != graph.StatusExcludedByLimit || node.CrawlCount > 0 || !c.inScope(node.Host) || !c.owns(node.Host) ||
		c.exclude.excluded(node.Host) || (c.cfg.MaxDepth > 0 && node.Depth > c.cfg.MaxDepth) {
		return false, nil
	}
	admitted, err := c.admitSubdomain(tx, node.Host, node.Depth)
	if err != nil || !admitted {
		return false, err
	}
	ok, err = frontier.Push(tx, frontier.Entry{NodeID: node.ID, Host: node.Host, URL: homeOf(&node), Depth: node.Depth})
	if err != nil {
		return false, err
	}
	node.Status = graph.StatusDiscovered
	return ok, graph.Put(tx, &node)
}

// looser reports whether max_depth depth and the subdomain cap sub (0: no
// limit) let in more than the limits recorded ("" or damaged: unknown,
// so yes).
func looser(recorded string, depth, sub int) bool {
	d, s, ok := strings.Cut(recorded, " ")
	oldDepth, err1 := strconv.Atoi(d)
	oldSub, err2 := strconv.Atoi(s)
	if !ok || err1 != nil || err2 != nil {
		return true
	}
	wider := func(now, old int) bool { return old > 0 && (now == 0 || now > old) }
	return wider(depth, oldDepth) || wider(sub, oldSub)
}
