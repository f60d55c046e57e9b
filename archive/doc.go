// Package archive moves weaver stores between machines, compares and
// repairs them: hot snapshots of a store (from the file, or streamed by the
// process that holds it), merges of several stores into one, diffs of two,
// and a repaired copy of a damaged one.
//
// A store file carries nothing bound to the machine that wrote it: no
// absolute paths, process ids or host names, only relative facts (hosts
// of the crawled web, times, counters). Any weaver opens it, whatever the
// page size it was created with, and reclaims the leases a process on
// another machine left in it (frontier.Recover, run by every crawl).
//
// Every file archive writes is built beside its target under a temporary
// name, checked, synced and renamed into place, so a reader never sees a
// half-written store and a failure leaves any previous file untouched. A
// target that is one of the inputs is always refused.
//
// Snapshot copies a store with bbolt's Tx.WriteTo inside one read
// transaction: the copy is the store as of that transaction, whatever the
// writers do meanwhile. When the store is locked by a running crawl, its
// status API streams the same copy (GET /snapshot) and Download fetches it;
// ListenAddr finds the API's address in the sidecar file the crawl writes
// next to the store.
//
// Merge joins stores by host: node ids are renumbered in order of first
// appearance (the first input's nodes keep their ids), counts are summed,
// times widened, edge weights summed, frontiers joined without duplicates
// and robots.txt caches kept by freshness. The same inputs in the same
// order always give the same records under the same ids, hence
// byte-identical exports. (Not a byte-identical .bolt file: bbolt writes
// the buckets a transaction touched in map order, so page numbers vary.)
//
// Diff compares two stores by host (or registrable domain): hosts and
// edges that appeared or vanished, edges whose weight changed, and nodes
// whose title or status changed.
//
// Repair copies every readable record of a damaged store into a new one.
// bbolt trusts its pages (a flipped byte in a leaf's header sends a cursor
// off the page; a truncated file faults on access), so Repair reads the
// file itself, page by page (pages.go): each page checked to lie in the
// file, name itself and hold its elements; a page that fails is reported
// with the keys its parent gives it, and its leaves, still in the file,
// are found among the pages no branch points at and bbolt's list of free
// pages does not name. Records are then kept when they decode and agree
// with each other, and the indexes (hosts, queued) and counters are
// rebuilt from them. A copy that fails its check is still renamed into
// place (it holds what could be read) and the error says so. CheckPages
// is the same read without the copy: weaver check runs it before it lets
// bbolt read a file.
package archive
