// Merge's nodes: joined by host, renumbered in order of first appearance,
// their counts summed and times widened, their fetch fields from the
// freshest record, a cluster shard's stubs giving way to the owner's.

package archive

import (
	"fmt"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
	"github.com/weaver-crawler/weaver/shard"
)

// shardOf returns the shard spec a cluster shard's store records, if any.
func shardOf(src *kv.Store) (shard.Spec, bool, error) {
	var v string
	if err := src.View(func(tx *kv.Tx) error { v = tx.MetaString(shard.MetaSpec); return nil }); err != nil {
		return shard.Spec{}, false, fmt.Errorf("%s: %w", src.Path(), err)
	}
	if v == "" {
		return shard.Spec{}, false, nil
	}
	spec, err := shard.Parse(v)
	return spec, err == nil, nil
}

// joinNode merges n, a later input's record of cur's host, into cur.
// curStub and stub say whether cur and n come from cluster shards that
// do not own the host (shard stubs): such a record (a link's target,
// never fetched there) gives way to the owner's, whatever their times
// say; it only widens the times and depth. It returns whether cur is
// still a stub.
func joinNode(cur *graph.Node, curStub bool, n *graph.Node, stub bool) bool {
	switch {
	case stub == curStub:
		mergeNode(cur, n)
		return curStub
	case stub:
		// The owner's record is in: the stub only widens it.
		cur.Depth, cur.SeedRedirects = closer(cur, n)
		cur.FirstSeen = earliest(cur.FirstSeen, n.FirstSeen)
		cur.LastSeen = latest(cur.LastSeen, n.LastSeen)
		return false
	}
	// The owner's record replaces the stubs'.
	acc := *n
	acc.ID = cur.ID
	acc.Depth, acc.SeedRedirects = closer(cur, n)
	acc.FirstSeen = earliest(cur.FirstSeen, n.FirstSeen)
	acc.LastSeen = latest(cur.LastSeen, n.LastSeen)
	acc.CrawlCount += cur.CrawlCount
	acc.FailCount += cur.FailCount
	*cur = acc
	return false
}

// fetchRank orders what records know of a host: an HTTP answer (3), a
// failed fetch attempt (2), a queued discovery (1), a discovery the
// limits kept out of the queue (0).
func fetchRank(n *graph.Node) int {
	switch {
	case n.CrawlCount > 0 || !n.LastCrawl.IsZero():
		return 3
	case n.Status == graph.StatusDiscovered:
		return 1
	case n.Status == graph.StatusExcludedByLimit || n.Status == graph.StatusOutOfScope || n.Status == "":
		return 0
	}
	return 2
}

// fresher reports whether n's fetch fields should replace acc's: it is of
// a higher rank, or of the same rank and more recent. Ties keep acc, the
// earlier input's.
func fresher(n, acc *graph.Node) bool {
	rn, ra := fetchRank(n), fetchRank(acc)
	switch {
	case rn != ra:
		return rn > ra
	case rn == 3:
		return n.LastCrawl.After(acc.LastCrawl)
	case rn == 2:
		return n.LastSeen.After(acc.LastSeen)
	}
	return false
}

// mergeNode merges n, a later input's record of acc's host, into acc.
func mergeNode(acc, n *graph.Node) {
	if fresher(n, acc) {
		if n.Scheme != "" {
			acc.Scheme = n.Scheme
		}
		acc.Status, acc.Title, acc.Description = n.Status, n.Title, n.Description
		acc.HTTPStatus, acc.ContentType, acc.Server = n.HTTPStatus, n.ContentType, n.Server
		acc.Bytes, acc.FetchMS, acc.ContentHash, acc.Error = n.Bytes, n.FetchMS, n.ContentHash, n.Error
		acc.Canonical, acc.RobotsDirectives, acc.PagesFetched = n.Canonical, n.RobotsDirectives, n.PagesFetched
		acc.ETag, acc.LastModified, acc.RedirectTo, acc.Home = n.ETag, n.LastModified, n.RedirectTo, n.Home
		if !n.NextDue.IsZero() {
			acc.NextDue, acc.IntervalMS = n.NextDue, n.IntervalMS
		}
	}
	acc.Changes += n.Changes
	acc.NotModified += n.NotModified
	acc.LastChange = latest(acc.LastChange, n.LastChange)
	if acc.Domain == "" {
		acc.Domain = n.Domain
	}
	acc.CrawlCount += n.CrawlCount
	acc.FailCount += n.FailCount
	acc.Depth, acc.SeedRedirects = closer(acc, n)
	acc.FirstSeen = earliest(acc.FirstSeen, n.FirstSeen)
	acc.LastSeen = latest(acc.LastSeen, n.LastSeen)
	acc.LastCrawl = latest(acc.LastCrawl, n.LastCrawl)
}

// closer returns the depth of whichever of a and b is nearer a seed, with
// its place in a seed's chain of redirects (graph.Node.SeedRedirects): a
// seed itself before a seed's redirect.
func closer(a, b *graph.Node) (depth, seedRedirects int) {
	if b.Depth < a.Depth || (b.Depth == a.Depth && b.SeedRedirects < a.SeedRedirects) {
		return b.Depth, b.SeedRedirects
	}
	return a.Depth, a.SeedRedirects
}

// earliest returns the earlier of two times, ignoring zero ones.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
