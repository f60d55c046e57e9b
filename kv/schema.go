package kv

// SchemaVersion is the layout version this weaver writes. A file with a
// greater version is refused rather than misread.
//
// Schema 2 (issue 43) keeps the crawl history in BucketHistory and
// BucketRecent (graph/history_codec.go) instead of a record per crawl in
// BucketCrawls. Its files may still hold schema 1's records, which graph
// reads as they are and rewrites when their host is next crawled: a
// schema 1 file is a valid schema 2 file, so a writable Open only adds the
// buckets and records the version (a weaver of schema 1 then refuses the
// file, whose newer history it would not see). A read-only Open leaves it
// as it is, and graph reads it all the same.
//
// Schema 3 (issue 43) writes the most numerous records in fewer bytes,
// each in a form schema 2 never wrote (so that no older record is
// misread): a node without its id (the key holds it), its status as a
// number, its registrable domain as an offset into its host and one time
// for first and last seen when they are equal (graph/codec.go); an edge
// seen in one commit as [weight, first seen] (graph/graph.go); a frontier
// entry's home-page URL as nil or 1 (frontier/frontier.go). A crawl of a
// web still being discovered writes 14 % fewer bytes per edge. A schema 2
// file is a valid schema 3 file, upgraded as schema 1 files are; a weaver
// of schema 2 refuses a schema 3 file rather than misread it.
//
// Schema 4 (issue 50) adds a node's redirect target ("rt", Node.RedirectTo)
// and a cluster link's first page (the outbox's upper-case scheme byte,
// cluster/outbox.go); the round's other issues add their fields under the
// same version. A schema 3 file is a valid schema 4 file, upgraded as
// older files are; a weaver of schema 3 refuses a schema 4 file, whose
// outbox it could not read and whose redirects it would drop.
//
// Schema 5 (issue 54) adds BucketRootLog: the subdomain limiter's latest
// admissions, appended there and put into roots in large sorted batches
// (graph/limiter.go). A schema 4 file is a valid schema 5 file (its log
// empty), upgraded as older files are; a weaver of schema 4 refuses a
// schema 5 file, whose limiter it would read without the log's hosts.
const SchemaVersion = 5

// The buckets of a store. kv creates them all when it creates a file; their
// keys and values are defined by the packages that own them.
var (
	BucketMeta     = []byte("meta")     // string key → raw value (schema, created_at, counters, the crawl's settings)
	BucketNodes    = []byte("nodes")    // node id (8 B big-endian) → graph.Node
	BucketHosts    = []byte("hosts")    // host → node id (8 B)
	BucketEdges    = []byte("edges")    // from id (8 B) | to id (8 B) → graph.Edge
	BucketRoots    = []byte("roots")    // registrable domain | 0x00 | host → empty: the subdomain limiter
	BucketFrontier = []byte("frontier") // depth (4 B) | arrival (8 B) → frontier.Entry
	BucketQueued   = []byte("queued")   // node id (8 B) → frontier key of its queued entry
	BucketVisited  = []byte("visited")  // node id (8 B) | depth (4 B) → empty: queued once at that depth, or forwarded (frontier/visited.go)
	BucketLeases   = []byte("leases")   // node id (8 B) → frontier.Lease: entries being fetched
	BucketRobots   = []byte("robots")   // host → cached robots.txt outcome
	BucketOutbox   = []byte("outbox")   // sequence (8 B) → a link for another shard, until published (cluster)
	BucketInbox    = []byte("inbox")    // message id → empty: messages from other shards already applied (cluster)
	BucketMirrors  = []byte("mirrors")  // the mirror index of home-page content hashes (graph/mirror.go)
	BucketCrawls   = []byte("crawls")   // schema 1's history: node id (8 B) | crawl time (8 B, Unix ns) → the crawl's out-links (graph/history_v1.go)
	BucketHistory  = []byte("history")  // sequence (8 B) → a sealed segment of a node's crawl records (graph/history_codec.go)
	BucketRecent   = []byte("recent")   // node id (8 B) → the node's open segment of crawl records (graph/history_codec.go)
	BucketDue      = []byte("due")      // due time (8 B, Unix ns) | node id (8 B) → URL: hosts waiting for a revisit
	BucketLayout   = []byte("layout")   // node id (8 B) → community (4 B) | x | y (float64 bits, 8 B each): `weaver layout` (layout/store.go)
	BucketRootLog  = []byte("rootlog")  // sequence (8 B) → a roots key: the subdomain limiter's admissions not yet in roots (graph/limiter.go)
	BucketAnchors  = []byte("anchors")  // from id (8 B) | to id (8 B) → example links of the edge (graph/anchor.go, --anchors)
)

var allBuckets = [][]byte{
	BucketMeta, BucketNodes, BucketHosts, BucketEdges, BucketRoots,
	BucketFrontier, BucketQueued, BucketVisited, BucketLeases, BucketRobots,
	BucketOutbox, BucketInbox, BucketMirrors, BucketCrawls, BucketDue, BucketAnchors, BucketLayout,
	BucketHistory, BucketRecent, BucketRootLog,
}

// laterBuckets were added after SchemaVersion 1 stores existed: a file
// without them is still valid, and a writable Open adds them.
var laterBuckets = [][]byte{BucketOutbox, BucketInbox, BucketMirrors, BucketCrawls, BucketDue, BucketAnchors, BucketLayout,
	BucketHistory, BucketRecent, BucketRootLog}

func isLater(name []byte) bool {
	for _, b := range laterBuckets {
		if string(b) == string(name) {
			return true
		}
	}
	return false
}

// fillPercent is how full bbolt packs the leaves it splits in the
// append-mostly buckets: their keys start with a node id or a time that
// mostly grows (ids are handed out in discovery order, a crawl takes hosts
// about in that order), so a leaf split is mostly at the end of the key
// space and a full left half is never written to again. bbolt's default,
// 0.5, leaves those buckets half empty on disk. A key inserted into a full
// leaf still splits it, as before. 0 means bbolt's default.
//
// The frontier (depth, then arrival) and its index by node (queued) are
// such buckets too: a crawl queues at the next depth, behind the rest, and
// mostly hosts it has just found, whose ids are the newest; it claims from
// the front. A crawl that stops with much still queued (--max-pages) kept
// them half empty: 57 of the 226 bytes per edge of a 10,000-page crawl of
// a 200,000-host web.
//
// history is appended to only (its keys are a sequence): its leaves are
// packed full. recent is not append-mostly: its values (a host's
// unchanged crawls since its last sealed segment) grow in place, from
// about 36 bytes with the key and bbolt's element header just after a
// seal to about twice that on average (graph's sealLimit keeps each host
// at its own stage, so that a leaf's values add up to about that mean all
// along). Packed to 40 % when written in the first place, a leaf holds
// them without splitting and ends up about 80 % full (docs/performance.md).
func fillPercent(name []byte) float64 {
	switch string(name) {
	case "edges", "nodes", "visited", "layout", "frontier", "queued":
		return 0.95
	case "history", "rootlog":
		return 1
	case "recent":
		return 0.4
	}
	return 0
}

// Meta keys kv itself maintains.
const (
	metaSchema  = "schema_version"
	metaCreated = "created_at"
	metaMagic   = "magic"
	magic       = "weaver store"
)
