// Package warc writes and reads WARC files (ISO 28500, WARC/1.1 and 1.0):
// the request, response and revisit records of a crawl, and the records of
// other tools' archives for weaver import.
//
// # Writing
//
// A Writer (Open) appends each HTTP exchange as a request and a response
// record, or a request and a revisit record when the caller knows the
// payload is unchanged (identical-payload-digest profile), to
// <prefix>-<YYYYMMDDhhmmss>-<serial>.warc.gz in a directory. Every record is
// its own gzip member, so any record can be read from its offset alone and
// a torn write damages one record only. A file is written as NAME.open and
// renamed when it is closed (at MaxSize, default 1 GB, or by Close); it
// opens with a warcinfo record naming the software, the crawl's settings
// and its robots policy. Records carry WARC-Record-ID, WARC-Date,
// WARC-Target-URI, WARC-IP-Address, WARC-Concurrent-To, Content-Length,
// WARC-Block-Digest and WARC-Payload-Digest (sha1, base32), and
// WARC-Truncated: length for a body cut at the crawl's cap.
//
// WriteExchange returns only once the records are on disk (fsync).
// Concurrent callers share fsyncs, as the store's group commit does.
//
// A crawl writes the other way, in transactions: a page's exchanges are
// built when they happen (Build) and staged with the page's commit
// (Stage); Prepare writes and fsyncs them before the store commits, Abort
// cuts them when it does not, Committed makes them the file's. A file
// then holds the records of committed pages only, in the order of the
// commits, and the store records with each commit the position just past
// its records (Position).
//
// Open finishes what a killed writer left: each .open file is read
// record by record, cut after its last complete record, and renamed;
// given the store's last position (Options.Committed), it cuts at that
// position instead, and removes a file started after it, so that no
// record of a page whose commit did not happen remains. What was cut is
// returned for the caller to log.
//
// # Reading
//
// Reader reads .warc and .warc.gz files record by record, tolerating the
// usual quirks of other tools (wget's <angle-bracketed> WARC-Target-URI,
// WARC/1.0, missing or wrong digests, sloppy end-of-record markers), and
// reports damage (a truncated record, a bad gzip member, a header that
// does not parse, bytes that are no record) as a *DamageError naming the
// file and the offset where the damage starts, after every complete
// record before it. Records are not looked for past damage: what follows
// a bad gzip member cannot be trusted to start where a scan finds one.
//
// # Why nlnwa/gowarc
//
// Records are built, digested, marshalled and parsed by
// github.com/nlnwa/gowarc/v3 (National Library of Norway, used by its
// Veidemann crawler), chosen over github.com/internetarchive/gowarc (Zeno's)
// and github.com/CorentinB/warc (its older fork):
//
//   - record-level control: a record builder that takes any header and a
//     raw block, computes Content-Length and both digests (any algorithm;
//     sha1 in base32 as wget, Heritrix and Common Crawl write), and a
//     marshaller that writes one record to any io.Writer. weaver keeps the
//     file itself (gzip member per record, offsets, group fsync, cutting a
//     torn tail), which the nothing-lost rule needs and which the other
//     two libraries hide inside writers that own their files, their
//     HTTP client (Zeno's) and their own fsync policy;
//   - a reader that returns each record with its offset and size in the
//     file (what a resumable import stores), validates digests and
//     Content-Length, and has per-category error policies (syntax, spec,
//     block) so that other tools' quirks are findings, not failures;
//   - revisit records (identical-payload-digest profile) are first-class;
//   - few dependencies (uuid, a URL parser, klauspost/compress, which
//     weaver already has).
package warc
