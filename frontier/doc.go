// Package frontier is weaver's persistent breadth-first queue of hosts to
// fetch. It lives in the store's buckets, not in memory, so its size is
// bounded by disk and it survives any stop.
//
// Entries are keyed by depth then arrival, so a cursor scan is breadth-first
// order. Claim moves entries to leases in the same transaction; the page's
// commit releases the lease. Because a lease is written in a transaction
// and released in another, a process killed between the two leaves the lease
// in the file, and Recover puts it back in the queue at its old position:
// nothing is lost and nothing is doubled.
//
// Dedup follows seed 000: a host is queued at most once per depth, at most
// once at a time, and a host already queued deeper moves up to the smaller
// depth. Whether a host may still be crawled at all (its crawl count) is
// the caller's judgement, given to Claim as a function.
//
// The revisit schedule holds the hosts that wait for their next crawl, in
// the order they fall due (Schedule, TakeDue): a crawl with a revisit
// policy moves those that are due into the queue.
package frontier
