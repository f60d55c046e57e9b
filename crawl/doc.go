// Package crawl is weaver's crawler: it fetches the home page of each
// host the frontier hands out (and, with pages_per_host, more pages of
// the host), selects the page's links to other hosts, and records the
// page's whole result (its node, its edges, the hosts it queues, the
// release of its lease) in one transaction of the store, so that a crawl
// stopped at any moment resumes where it was.
//
// New checks a Config and makes a Crawler on a store; Prepare (or
// PrepareSeeds) puts back the leases of a stopped process and queues the
// seeds; Run crawls until the frontier is empty, max_pages is reached,
// its context is cancelled or a commit fails. A dispatcher claims hosts
// from the frontier for the workers (dispatch.go) and parks a host until
// its politeness delay has passed, never making a worker wait (gate.go);
// a worker reads robots.txt (package robots), fetches (fetch.go,
// transport.go; a JavaScript shell through a Renderer), extracts and
// selects links (packages extract and pick), and the page is committed
// (commit.go). A host's depth is its breadth-first distance from the
// nearest seed whatever the order its pages come in (depth.go); with a
// revisit policy hosts come back when due (revisit.go); with a Peer the
// crawl is one shard of a cluster (package cluster).
package crawl
