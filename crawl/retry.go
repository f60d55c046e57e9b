package crawl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weaver-crawler/weaver/frontier"
	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// FailCause is what a failed host failed of, as --retry-failed names it.
type FailCause uint8

// The causes, from the node's status and its error's kind (the prefix of
// Node.Error, "connect: …").
const (
	CauseDNS     FailCause = 1 << iota // the name did not resolve (dns_error)
	CauseConnect                       // refused, reset, unreachable or timed out: the outage kind
	CauseTLS                           // the TLS handshake or certificate failed
	CauseHTTP                          // answered 4xx/5xx (http_error)
	CauseOther                         // a private address, endless redirects, anything else

	causeEnd
)

// AllCauses is every cause: --retry-failed without a value.
const AllCauses = causeEnd - 1

var causeNames = []string{"dns", "connect", "tls", "http", "other"}

// String names the causes in c, comma-separated, in a fixed order.
func (c FailCause) String() string {
	var names []string
	for i, n := range causeNames {
		if c&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, ",")
}

// ParseFailCauses reads --retry-failed's value: "" (or "all", "true")
// for every cause, "false" for none, else a comma-separated list of dns,
// connect, tls, http and other.
func ParseFailCauses(s string) (FailCause, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "all", "true":
		return AllCauses, nil
	case "false":
		return 0, nil
	}
	var out FailCause
	for _, part := range strings.Split(s, ",") {
		i := slices.Index(causeNames, strings.ToLower(strings.TrimSpace(part)))
		if i < 0 {
			return 0, fmt.Errorf("unknown cause %q: want all, or a comma-separated list of %s", part, strings.Join(causeNames, ", "))
		}
		out |= 1 << i
	}
	return out, nil
}

// causeOf returns the cause of a failed node's last failure, or false
// when the node did not fail. A fetch_error without a known kind (a store
// of an older weaver) is other.
func causeOf(n *graph.Node) (FailCause, bool) {
	if kind, _, _ := strings.Cut(n.Error, ": "); ErrorKind(kind).IsTLS() && n.Status != graph.StatusCrawled {
		// Every TLS cause (tls_unknown_ca, tls_expired, a handshake's
		// timeout, ...), whatever status it left.
		return CauseTLS, true
	}
	switch n.Status {
	case graph.StatusDNSError:
		return CauseDNS, true
	case graph.StatusTimeout:
		return CauseConnect, true
	case graph.StatusHTTPError:
		return CauseHTTP, true
	case graph.StatusRefused:
		return CauseOther, true
	case graph.StatusFetchError:
		kind, _, _ := strings.Cut(n.Error, ": ")
		switch ErrorKind(kind) {
		case KindConnect, KindReset, KindTimeout:
			return CauseConnect, true
		case KindTLS:
			return CauseTLS, true
		case KindDNS:
			return CauseDNS, true
		}
		return CauseOther, true
	}
	return 0, false
}

// Requeued counts the hosts --retry-failed put back, by cause.
type Requeued map[FailCause]int

// Total is the number of hosts requeued.
func (r Requeued) Total() int {
	n := 0
	for _, v := range r {
		n += v
	}
	return n
}

// String is "connect 7, dns 2", in the causes' order.
func (r Requeued) String() string {
	var parts []string
	for c := FailCause(1); c < causeEnd; c <<= 1 {
		if r[c] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c, r[c]))
		}
	}
	return strings.Join(parts, ", ")
}

// requeueFailed puts every node that failed of one of causes back in the
// frontier at its depth, in one transaction, its failure forgotten: fail
// count, error and status (discovered) reset, and for an HTTP failure the
// crawl its answer counted given back, so that it is fetched as a new
// host would be. A host this crawl would not fetch (excluded, out of
// scope, another shard's, deeper than max_depth, crawled
// max_crawls_per_node times) is left as it is. A seed's host is fetched
// at its seed URL, the others at their home page.
func (c *Crawler) requeueFailed(causes FailCause, rules seedRules, seeds Seeds) (Requeued, error) {
	seedURL, err := rules.urls(seeds)
	if err != nil {
		return Requeued{}, err
	}
	var out Requeued
	err = c.store.Update(func(tx *kv.Tx) error {
		out = Requeued{}
		type retry struct {
			n     graph.Node
			cause FailCause
		}
		var todo []retry // collected first: bbolt's buckets are not written while iterated
		err := graph.ForEachNode(tx, func(n *graph.Node) error {
			cause, failed := causeOf(n)
			if !failed || cause&causes == 0 {
				return nil
			}
			crawls := n.CrawlCount
			if cause == CauseHTTP {
				crawls = max(crawls-1, 0)
			}
			if c.capped(crawls) || (c.cfg.MaxDepth > 0 && n.Depth > c.cfg.MaxDepth) ||
				c.exclude.excluded(n.Host) || !c.inScope(n.Host) || !c.owns(n.Host) {
				return nil
			}
			m := *n
			m.CrawlCount, m.FailCount, m.Error, m.HTTPStatus = crawls, 0, "", 0
			m.Status = graph.StatusDiscovered
			todo = append(todo, retry{m, cause})
			return nil
		})
		if err != nil {
			return err
		}
		for i := range todo {
			m := &todo[i].n
			if err := graph.Put(tx, m); err != nil {
				return err
			}
			fetch := seedURL[m.Host]
			if fetch == "" {
				fetch = homeOf(m)
			}
			if _, err := frontier.Requeue(tx, frontier.Entry{NodeID: m.ID, Host: m.Host, URL: fetch, Depth: m.Depth}); err != nil {
				return err
			}
			out[todo[i].cause]++
		}
		return nil
	})
	return out, err
}

// failedHosts counts, by cause, the hosts whose last fetch failed and that
// --retry-failed would put back (not excluded, in scope, this shard's).
func (c *Crawler) failedHosts(tx *kv.Tx) (Requeued, error) {
	out := Requeued{}
	err := graph.ForEachNode(tx, func(n *graph.Node) error {
		if cause, failed := causeOf(n); failed && !c.exclude.excluded(n.Host) && c.inScope(n.Host) && c.owns(n.Host) {
			out[cause]++
		}
		return nil
	})
	return out, err
}

// causes is the causes r counts, as --retry-failed takes them ("dns,tls").
func (r Requeued) causes() FailCause {
	var c FailCause
	for k, n := range r {
		if n > 0 {
			c |= k
		}
	}
	return c
}
