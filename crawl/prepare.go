package crawl

import (
	"cmp"
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
// crawl_count < max_crawls_per_node is re-queued at its depth (seed 000 §7
// said depth 0: see requeuePass). It reports how many leases were
// recovered and entries queued.
//
// Every seed is checked before anything is written, so a bad one changes
// nothing. Seeds are then queued prepareBatch to a transaction, in order:
// a process stopped part-way has queued a prefix of them, and running it
// again with the same seeds queues the rest.
func (c *Crawler) Prepare(seeds []string) (recovered, queued int, err error) {
	p, err := c.PrepareSeeds(SeedList(seeds))
	return p.Recovered, p.Queued + p.Requeued, err
}

// Prepared is what PrepareSeeds did.
type Prepared struct {
	Recovered int // leases of a stopped process put back in the frontier
	Queued    int // seeds queued at depth 0
	Requeued  int // known hosts re-queued at their depth for another round
}

// PrepareSeeds is Prepare for seeds read as a stream, three times at most:
// to check them all, to queue them, and, when every node is re-queued,
// to fetch a seed's own URL for its host.
func (c *Crawler) PrepareSeeds(seeds Seeds) (p Prepared, err error) {
	recovered, queued, requeued, err := c.prepare(seeds)
	return Prepared{recovered, queued, requeued}, err
}

func (c *Crawler) prepare(seeds Seeds) (recovered, queued, requeued int, err error) {
	rules := seedRules{c.exclude, c.scope, c.cfg.Scope}
	if _, err := rules.checkAll(seeds); err != nil {
		return 0, 0, 0, err
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
		// A crawl paused for its network (and stopped, or killed) resumes
		// paused: it probes hosts that answered before any fetch.
		targets, err := answeredURLs(tx)
		if err != nil {
			return err
		}
		c.net.known(targets)
		if v := tx.MetaString(metaPaused); v != "" {
			since, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				since = c.now() // damaged: the pause starts now, harmlessly
			}
			c.net.restore(since, nil)
			if !c.net.pausedSince().IsZero() {
				c.logf("WARN", "The last crawl on this store paused: network unreachable since %s; probing hosts that answered before, fetching nothing until one answers", since.UTC().Format(time.RFC3339))
			} else if err := tx.Delete(kv.BucketMeta, []byte(metaPaused)); err != nil {
				return err
			}
		}
		// Set before any request of this run goes out, cleared when Run
		// ends: found set, it tells of a crash.
		return tx.SetMetaString(metaRunning, c.now().UTC().Format(time.RFC3339))
	})
	if err != nil {
		return 0, 0, 0, err
	}
	queued, known, err := c.queueSeeds(rules, seeds)
	if err != nil {
		return recovered, queued, 0, err
	}
	if c.retryFailed != 0 {
		// Before the re-queue pass: the failed hosts queued, the frontier
		// is not empty and the pass (every node at depth 0) does not run.
		r, err := c.requeueFailed(c.retryFailed, rules, seeds)
		if err != nil {
			return recovered, queued, 0, err
		}
		switch n := r.Total(); n {
		case 0:
			c.logf("INFO", "Retry failed (%s): no failed host to requeue", c.retryFailed)
		case 1:
			c.logf("INFO", "Retry failed (%s): requeued 1 failed host at its depth (%s)", c.retryFailed, r)
		default:
			c.logf("INFO", "Retry failed (%s): requeued %d failed hosts at their depth (%s)", c.retryFailed, n, r)
		}
	}
	// Before the re-queue pass: hosts a looser limit now lets in are what
	// is left to crawl, not a new round.
	if _, err := c.reachPass(); err != nil {
		return recovered, queued, 0, err
	}
	requeued, err = c.requeuePass(rules, seeds, known)
	if err != nil {
		return recovered, queued, requeued, err
	}
	return recovered, queued, requeued, c.scheduleUnscheduled()
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
			if err := frontier.Schedule(tx, n.ID, n.NextDue, ""); err != nil {
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
func (c *Crawler) queueSeeds(rules seedRules, seeds Seeds) (queued int, known bool, err error) {
	now := c.now()
	batch := make([]seed, 0, prepareBatch)
	forwarded := false
	flush := func() error {
		n, k := 0, false
		err := c.store.Update(func(tx *kv.Tx) error {
			n, k = 0, false
			for _, s := range batch {
				if !c.owns(s.host) {
					continue // its owner queues it: every shard is given the same seeds
				}
				node, created, err := graph.Ensure(tx, s.host, s.scheme, now)
				if err != nil {
					return err
				}
				if _, err := c.admitAll(tx, s.host); err != nil {
					return err
				}
				if !created {
					k = true
					if node.Depth > 0 {
						// Found before at some distance from another seed: a
						// seed now, it is at depth 0, and so closer are the
						// hosts it linked to if it was crawled.
						h := node.Head()
						if _, fw, err := c.target(tx, s.host, s.fetch, &h, false, 0, now); err != nil {
							return err
						} else if fw {
							forwarded = true
						}
					}
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
			return err
		}
		queued, known = queued+n, known || k
		batch = batch[:0]
		if forwarded {
			c.peer.Forwarded()
		}
		return nil
	}
	var storeErr error // a failed transaction, not a seed's fault
	err = seeds(func(raw string) error {
		s, err := rules.check(raw)
		if err != nil {
			return err // the list changed since it was checked
		}
		if batch = append(batch, s); len(batch) == prepareBatch {
			if storeErr = flush(); storeErr != nil {
				return errStopSeeds
			}
		}
		return nil
	})
	switch {
	case storeErr != nil:
		return queued, known, storeErr
	case err != nil:
		return queued, known, err
	case len(batch) > 0:
		return queued, known, flush()
	}
	return queued, known, nil
}

// requeuePass re-queues every node crawled fewer than max_crawls_per_node
// times (seed 000 §7) and within max_depth, at its depth, prepareBatch
// nodes to a transaction, when a seed was known and the frontier is
// empty, or when metaRequeueNext says a pass was stopped part-way. A seed's own URL is
// fetched for its host, the home page for the others.
func (c *Crawler) requeuePass(rules seedRules, seeds Seeds, known bool) (queued int, err error) {
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
	seedURL, err := rules.urls(seeds)
	if err != nil {
		return 0, err
	}
	return c.nodeBatches(next, func(tx *kv.Tx, nodes []graph.Node, next uint64) (n int, err error) {
		for i := range nodes {
			node := &nodes[i]
			if c.capped(node.CrawlCount) || c.exclude.excluded(node.Host) || !c.owns(node.Host) {
				continue
			}
			// At its own depth, its distance from the seeds (seed 000
			// §7 said depth 0, which made each round max_depth deeper
			// than the last): a host left out by max_depth stays out.
			depth := node.Depth
			fetch := seedURL[node.Host]
			if fetch != "" {
				depth = 0
			} else {
				fetch = homeOf(node)
			}
			if c.cfg.MaxDepth > 0 && depth > c.cfg.MaxDepth {
				continue
			}
			if !asked(node.CrawlCount, node.Status) {
				// Never fetched: the subdomain cap decides, as it did.
				if ok, err := c.admitUpTo(tx, node.Host, c.cfg.MaxSubdomainsPerRoot); err != nil || !ok {
					if err != nil {
						return 0, err
					}
					continue
				}
			}
			ok, err := frontier.Requeue(tx, frontier.Entry{NodeID: node.ID, Host: node.Host, URL: fetch, Depth: depth})
			if err != nil {
				return 0, err
			}
			if ok {
				n++
			}
		}
		if next != 0 {
			return n, tx.SetMetaString(metaRequeueNext, strconv.FormatUint(next, 10))
		}
		return n, tx.Delete(kv.BucketMeta, []byte(metaRequeueNext))
	})
}

// nodeBatches runs fn over the store's nodes from id first on, prepareBatch
// of them to a transaction: fn gets them decoded before it writes (it may
// write any bucket, nodes included) and the id the next transaction starts
// at (0: these are the last). It returns the sum of what fn counted in the
// transactions that committed.
func (c *Crawler) nodeBatches(first uint64, fn func(tx *kv.Tx, nodes []graph.Node, next uint64) (int, error)) (total int, err error) {
	for next, more := first, true; more; {
		from, n := next, 0
		err = c.store.Update(func(tx *kv.Tx) error {
			nodes := make([]graph.Node, 0, prepareBatch)
			next, more = 0, false
			err := graph.ForEachNodeFrom(tx, from, func(node *graph.Node) error {
				if len(nodes) == prepareBatch {
					next, more = node.ID, true
					return graph.ErrStop
				}
				nodes = append(nodes, *node)
				return nil
			})
			if err != nil {
				return err
			}
			n, err = fn(tx, nodes, next)
			return err
		})
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// SeedResult is what AddSeeds did with one seed.
type SeedResult struct {
	URL    string `json:"url"`  // as given
	Host   string `json:"host"` // normalised
	Queued bool   `json:"queued"`
	// Reason says why a seed was not queued ("already queued at depth
	// 0", "crawled 3 times, max_crawls_per_node 3"), or that it went to
	// the shard that owns its host; "" otherwise.
	Reason string `json:"reason,omitempty"`
}

// AddSeeds queues seed URLs at depth 0 in a running or idle crawl (a host
// already queued at depth 0, or crawled max_crawls_per_node times, is not
// queued again) and returns what it did with each, in order. A seed that
// is not a URL weaver crawls, or whose host exclude_hosts or scope leave
// out, fails the whole call with an error wrapping ErrSeed, queueing
// nothing.
func (c *Crawler) AddSeeds(seeds []string) ([]SeedResult, error) {
	var res []SeedResult
	queued, forwarded := 0, false
	err := <-c.store.Commit(func(tx *kv.Tx) error {
		res, queued, forwarded = res[:0], 0, false
		for _, s := range seeds {
			host, scheme, fetch, err := seedEntry(s)
			if err != nil {
				return err
			}
			if c.exclude.excluded(host) {
				return fmt.Errorf("%w: seed %q: host %s is excluded by exclude_hosts", ErrSeed, s, host)
			}
			if !c.inScope(host) {
				return fmt.Errorf("%w: seed %q: host %s is outside scope (--scope %s)", ErrSeed, s, host, strings.Join(c.cfg.Scope, " --scope "))
			}
			r := SeedResult{URL: s, Host: host}
			n, _, err := graph.Ensure(tx, host, scheme, c.now())
			if err != nil {
				return err
			}
			switch {
			case !c.owns(host):
				if err := c.peer.Forward(tx, Link{Host: host, Scheme: scheme, First: firstPage(fetch, scheme, host)}); err != nil {
					return err
				}
				forwarded = true
				r.Queued, r.Reason = true, "forwarded to the shard that owns the host"
			case c.capped(n.CrawlCount):
				times := "times"
				if n.CrawlCount == 1 {
					times = "time"
				}
				r.Reason = fmt.Sprintf("crawled %d %s, max_crawls_per_node %d", n.CrawlCount, times, c.cfg.MaxCrawlsPerNode)
			default:
				if _, err := c.admitAll(tx, host); err != nil {
					return err
				}
				ok, err := frontier.Requeue(tx, frontier.Entry{NodeID: n.ID, Host: host, URL: fetch, Depth: 0})
				if err != nil {
					return err
				}
				r.Queued = ok
				if !ok {
					r.Reason = "already queued at depth 0"
				}
			}
			if r.Queued {
				queued++
			}
			res = append(res, r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if forwarded {
		c.peer.Forwarded()
	}
	if queued > 0 {
		c.Wake()
	}
	return res, nil
}

// answeredURLs returns the robots.txt URLs of up to goodRing hosts the
// store holds as crawled, the probe targets of a restored pause. It reads
// at most 100,000 nodes.
func answeredURLs(tx *kv.Tx) ([]string, error) {
	var out []string
	seen := 0
	err := graph.ForEachNode(tx, func(n *graph.Node) error {
		seen++
		if n.Status == graph.StatusCrawled {
			out = append(out, (&url.URL{Scheme: cmp.Or(n.Scheme, "http"), Host: n.Host, Path: "/robots.txt"}).String())
		}
		if len(out) == goodRing || seen == 100_000 {
			return graph.ErrStop
		}
		return nil
	})
	return out, err
}
