package crawl

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// seedEntry normalises a seed URL into its node's host and the URL to fetch.
func seedEntry(raw string) (host, scheme, fetch string, err error) {
	if err := CheckSeed(raw); err != nil {
		return "", "", "", fmt.Errorf("%w: %w", ErrSeed, err)
	}
	u, _ := url.Parse(strings.TrimSpace(raw))
	host, err = graph.HostOf(u)
	if err != nil {
		return "", "", "", fmt.Errorf("%w: seed %q: %w", ErrSeed, raw, err)
	}
	u.Fragment, u.RawFragment = "", ""
	if u.Path == "" {
		u.Path = "/"
	}
	return host, u.Scheme, u.String(), nil
}

// prepareBatch bounds what one Prepare transaction writes (seeds queued,
// or nodes re-queued): bbolt keeps a transaction's dirty pages in memory
// until it commits, about 3 KB a seed, so 100,000 seeds in one transaction
// peaked near 300 MiB.
const prepareBatch = 5000

// metaRequeueNext, while Prepare's re-queue pass is under way, holds the
// next node id it will consider, so a pass stopped between transactions
// is finished by the next Prepare whatever the frontier holds by then.
const metaRequeueNext = "prepare.requeue_next"

// metaRunning is set while a crawl runs on the store (Prepare to the end
// of Run): found set by Prepare, the last crawl did not end cleanly.
const metaRunning = "crawl.running"

// Prepare readies the store for Run: leases left by a stopped process go
// back to the frontier; new seeds are queued at depth 0; and when the
// frontier is empty and a seed is already known, every node with
// crawl_count < max_crawls_per_node is re-queued at depth 0 (seed 000 §7).
// It reports how many leases were recovered and entries queued.
//
// Every seed is checked before anything is written, so a bad one changes
// nothing. Seeds are then queued prepareBatch to a transaction, in order:
// a process stopped part-way has queued a prefix of them, and running it
// again with the same seeds queues the rest.
func (c *Crawler) Prepare(seeds []string) (recovered, queued int, err error) {
	checked := make([]seed, 0, len(seeds))
	for _, s := range seeds {
		host, scheme, fetch, err := seedEntry(s)
		if err != nil {
			return 0, 0, err
		}
		if c.exclude.excluded(host) {
			return 0, 0, fmt.Errorf("%w: seed %q: host %s is excluded by exclude_hosts", ErrSeed, s, host)
		}
		if !c.inScope(host) {
			return 0, 0, fmt.Errorf("%w: seed %q: host %s is outside scope (--scope %s)", ErrSeed, s, host, strings.Join(c.cfg.Scope, " --scope "))
		}
		checked = append(checked, seed{host, scheme, fetch})
	}
	err = c.store.Update(func(tx *kv.Tx) error {
		var err error
		recovered, err = frontier.Recover(tx)
		if err != nil {
			return err
		}
		// A store of an older weaver gets its mirror groups once; from
		// now on every page's commit notes its node.
		if _, err := graph.EnsureMirrorIndex(tx); err != nil {
			return err
		}
		// A crawl that did not end cleanly may have asked any host a
		// moment ago (even one whose lease was never durable): this one
		// asks no host before a delay has passed.
		if tx.MetaString(metaRunning) != "" && c.cfg.delay() > 0 {
			c.gate.hold(c.now().Add(c.cfg.delay()))
			c.logf("INFO", "The last crawl on this store did not end cleanly: no host is asked again for %v", c.cfg.delay())
		}
		// Set before any request of this run goes out, cleared when Run
		// ends: found set, it tells of a crash.
		return tx.SetMetaString(metaRunning, c.now().UTC().Format(time.RFC3339))
	})
	if err != nil {
		return 0, 0, err
	}
	queued, known, err := c.queueSeeds(checked)
	if err != nil {
		return recovered, queued, err
	}
	requeued, err := c.requeuePass(checked, known)
	if err != nil {
		return recovered, queued + requeued, err
	}
	return recovered, queued + requeued, c.scheduleUnscheduled()
}

// scheduleUnscheduled gives, with a revisit policy, a due time to every
// host asked for without one (crawled before the policy was set): its
// last crawl plus the first interval.
func (c *Crawler) scheduleUnscheduled() error {
	if c.cfg.revisit() <= 0 {
		return nil
	}
	return c.store.Update(func(tx *kv.Tx) error {
		var todo []graph.Node
		err := graph.ForEachNode(tx, func(n *graph.Node) error {
			if n.NextDue.IsZero() && asked(n.CrawlCount, n.Status) && c.owns(n.Host) && !c.capped(n.CrawlCount) {
				todo = append(todo, *n)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for i := range todo {
			n := &todo[i]
			last := n.LastCrawl
			if last.IsZero() {
				last = n.LastSeen
			}
			n.IntervalMS = c.cfg.revisit().Milliseconds()
			n.NextDue = last.Add(c.cfg.revisit())
			if err := tx.PutRaw(kv.BucketDue, dueKey(n.NextDue, n.ID), []byte{}); err != nil {
				return err
			}
			if err := graph.Put(tx, n); err != nil {
				return err
			}
		}
		return nil
	})
}

// seed is a checked seed URL: its node's host and the URL to fetch.
type seed struct{ host, scheme, fetch string }

// queueSeeds queues the seeds not yet in the store at depth 0, in order,
// prepareBatch to a transaction. known reports whether any was in the
// store already.
func (c *Crawler) queueSeeds(seeds []seed) (queued int, known bool, err error) {
	now := c.now()
	for len(seeds) > 0 {
		batch := seeds[:min(prepareBatch, len(seeds))]
		seeds = seeds[len(batch):]
		n, k := 0, false
		err = c.store.Update(func(tx *kv.Tx) error {
			n, k = 0, false
			for _, s := range batch {
				if !c.owns(s.host) {
					continue // its owner queues it: every shard is given the same seeds
				}
				node, created, err := graph.Ensure(tx, s.host, s.scheme, now)
				if err != nil {
					return err
				}
				if _, err := graph.AdmitSubdomain(tx, s.host, 0); err != nil {
					return err
				}
				if !created {
					k = true
					continue
				}
				ok, err := frontier.Push(tx, frontier.Entry{NodeID: node.ID, Host: s.host, URL: s.fetch, Depth: 0})
				if err != nil {
					return err
				}
				if ok {
					n++
				}
			}
			return nil
		})
		if err != nil {
			return queued, known, err
		}
		queued, known = queued+n, known || k
	}
	return queued, known, nil
}

// requeuePass re-queues at depth 0 every node crawled fewer than
// max_crawls_per_node times (seed 000 §7), prepareBatch nodes to a
// transaction, when a seed was known and the frontier is empty, or when
// metaRequeueNext says a pass was stopped part-way. A seed's own URL is
// fetched for its host, the home page for the others.
func (c *Crawler) requeuePass(seeds []seed, known bool) (queued int, err error) {
	next, pass := uint64(0), false
	err = c.store.View(func(tx *kv.Tx) error {
		if v := tx.MetaString(metaRequeueNext); v != "" {
			next, _ = strconv.ParseUint(v, 10, 64) // damaged: the pass starts again, harmlessly
			pass = true
		} else {
			// With a revisit policy the schedule says when a host is
			// crawled again, not a known seed.
			pass = known && c.cfg.revisit() <= 0 && frontier.Len(tx) == 0 && (c.peer == nil || c.peer.RoundOver(tx))
		}
		return nil
	})
	if err != nil || !pass {
		return 0, err
	}
	seedURL := make(map[string]string, len(seeds))
	for _, s := range seeds {
		seedURL[s.host] = s.fetch
	}
	for pass {
		n := 0
		err = c.store.Update(func(tx *kv.Tx) error {
			n, pass = 0, false
			seen := 0
			err := graph.ForEachNodeFrom(tx, next, func(node *graph.Node) error {
				if seen == prepareBatch {
					next, pass = node.ID, true
					return graph.ErrStop
				}
				seen++
				if c.capped(node.CrawlCount) || c.exclude.excluded(node.Host) || !c.owns(node.Host) {
					return nil
				}
				fetch := seedURL[node.Host]
				if fetch == "" {
					fetch = homeURL(node.Scheme, node.Host)
				}
				ok, err := frontier.Requeue(tx, frontier.Entry{NodeID: node.ID, Host: node.Host, URL: fetch, Depth: 0})
				if ok {
					n++
				}
				return err
			})
			switch {
			case err != nil:
				return err
			case pass:
				return tx.SetMetaString(metaRequeueNext, strconv.FormatUint(next, 10))
			default:
				return tx.Delete(kv.BucketMeta, []byte(metaRequeueNext))
			}
		})
		if err != nil {
			return queued, err
		}
		queued += n
	}
	return queued, nil
}

// AddSeeds queues seed URLs at depth 0 in a running or idle crawl (a host
// already queued at depth 0, or crawled max_crawls_per_node times, is not
// queued again). It reports how many were queued.
func (c *Crawler) AddSeeds(seeds []string) (int, error) {
	queued, forwarded := 0, false
	err := <-c.store.Commit(func(tx *kv.Tx) error {
		queued, forwarded = 0, false
		for _, s := range seeds {
			host, scheme, fetch, err := seedEntry(s)
			if err != nil {
				return err
			}
			if c.exclude.excluded(host) {
				return fmt.Errorf("%w: seed %q: host %s is excluded by exclude_hosts", ErrSeed, s, host)
			}
			n, _, err := graph.Ensure(tx, host, scheme, c.now())
			if err != nil {
				return err
			}
			if !c.owns(host) {
				if err := c.peer.Forward(tx, host, scheme, 0); err != nil {
					return err
				}
				forwarded = true
				queued++
				continue
			}
			if c.capped(n.CrawlCount) {
				continue
			}
			if _, err := graph.AdmitSubdomain(tx, host, 0); err != nil {
				return err
			}
			ok, err := frontier.Requeue(tx, frontier.Entry{NodeID: n.ID, Host: host, URL: fetch, Depth: 0})
			if err != nil {
				return err
			}
			if ok {
				queued++
			}
		}
		return nil
	})
	if err == nil && forwarded {
		c.peer.Forwarded()
	}
	if err == nil && queued > 0 {
		c.Wake()
	}
	return queued, err
}

func homeURL(scheme, host string) string {
	if scheme == "" {
		scheme = "http"
	}
	return scheme + "://" + host + "/"
}
