// Package kv is weaver's storage layer: ONE bbolt file holding every bucket
// of a crawl (nodes, edges, frontier, leases, robots cache, meta), values
// encoded with msgpack, keys laid out for ordered cursor scans.
//
// A Store is opened with Open. Reads run in View, single writes in Update,
// and the crawl's page results go through Commit, which coalesces the
// functions of concurrent workers into group transactions written by one
// goroutine, so that many pages share one fsync. Every function given to
// Commit runs inside a transaction with all the others or not at all: a
// crash at any instant leaves only whole pages in the file.
//
// A transaction may enlist a Resource, a file beside the store that its
// records refer to (a WARC file): what it staged there is written and
// fsynced before the store commits, and undone when it does not. A commit
// that fails closes and reopens the file before anything more is
// written; a group whose commit failed for want of room (IsFull) waits,
// whole, for the Waiter to say there is room again (SetWaiter), so that
// a crawl pauses on a full disk instead of losing or repeating work.
//
// kv knows nothing of URLs or graphs: packages graph and frontier give the
// buckets their meaning through functions that take a *Tx.
package kv
