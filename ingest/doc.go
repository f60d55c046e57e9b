// Package ingest builds (or extends) a store's host graph from web
// archives: WARC files written by any crawler, and Common Crawl's WAT
// files, whose links are already extracted. It applies the crawl's host
// normalisation (graph), exclusions and link selection (crawl/pick) and
// link extraction (crawl/extract), so that importing the pages of a crawl
// gives the crawl's graph.
//
// What a record becomes:
//   - a response with an HTML answer (2xx, Content-Type HTML or none): an
//     edge of weight +1 from its host to each selected host, as one crawled
//     page adds; and when it is the host's home page (path "/"), the
//     host becomes a crawled node with the page's facts (title, description,
//     HTTP status, sha256 of the body as the crawl caps it, content type,
//     server), its crawl_count counting the home page's captures. A host
//     with no capture of its home page takes the facts of its page with the
//     shortest path (the first read among equals) and a crawl_count of 1,
//     until a capture of its home page comes;
//   - a 3xx response whose Location is on another (not excluded) host: an
//     edge to that host;
//   - a WAT metadata record of a response: the same, from its JSON;
//   - requests, robots.txt, non-HTML answers, revisits, warcinfo and the
//     rest are counted, not linked.
//
// Import streams: one record at a time, its node committed in batches of
// many records per transaction, its links sorted in memory and in run
// files and merged into the edges bucket in key order (edges.go), so
// memory does not grow with the input. Each batch also stores, in the
// store's meta bucket, the offset just past its last record in the file it
// came from and the offset up to which its records' links are durable, so
// a killed import continues where its last commit stopped and counts
// nothing twice; a file read to its end is marked done and skipped by
// later imports. A file is known by its name and a digest of its first 4
// KiB, not by its path.
package ingest
