// Package serve is weaver's HTTP face: the status API of a running crawl
// and the job API of `weaver serve`.
//
// A crawl that runs for days must be watchable without stopping it, and
// bbolt locks the store against every other process, so the running crawl
// itself answers. NewCrawlHandler serves, for one crawler and its store:
//
//	GET  /status    the store summary (ReadSummary) and the live crawl.Status, as JSON
//	GET  /metrics   Prometheus text format, read from crawl.Status at scrape time
//	GET  /graph     ?format=json|graphml|dot: the graph so far, from one read transaction
//	GET  /host      ?h=HOST[&limit=N][&ranks=false]: weaver show's report on one host (export.Host)
//	GET  /snapshot  a consistent copy of the whole store file (application/octet-stream)
//	POST /seeds     {"urls": [...]} or {"url": "..."}: queue seeds in the running crawl;
//	                the answer says, per seed, whether it was queued and why not
//	POST /stop      a graceful stop, the same as SIGTERM (termination reason api_stop)
//	GET  /          the map page (package ui), which polls:
//	GET  /map/data  ?since=CURSOR: the graph, or what changed since an earlier answer (map.go)
//
// JobManager runs crawl jobs, each in its own store DIR/<id>.bolt whose
// meta bucket records the job (the client's request and the job's state),
// so a restarted `weaver serve` finds every job again and resumes the
// unfinished ones. A job's warc_dir is a directory inside DIR (relative;
// no "..", no symbolic link out), where it writes its WARC files named
// after the job; the keys a job cannot honour, or the operator decides,
// are refused with their reason (crawl.Setting.Refused). NewJobHandler serves
// seed 004's job API on it:
//
//	POST   /crawl       {"url": ..., "max_pages": ..., a crawl config key a job honours}: start a job
//	GET    /crawl       list the jobs
//	GET    /crawl/{id}  a job's status; once it ended, its nodes and edges too
//	DELETE /crawl/{id}  stop a job; 409 when it had already ended (nothing is deleted)
//	GET    /crawl/{id}/graph  ?format=json|graphml|dot: the job's graph
//	GET    /                  the jobs, each with a link to its map
//	GET    /crawl/{id}/map    the job's map page, polling /crawl/{id}/map/data
//
// Both handlers answer errors as {"error": "..."} with a status code that
// says whose fault it is: 400 for bad JSON or a bad value (naming it), 404
// for an unknown path or job id, 405 (with Allow) for a wrong method, 413 for
// a request body over MaxBodyBytes, 503 while shutting down; Auth adds 401
// (with WWW-Authenticate) and 403, spooling 507.
//
// Auth.Wrap guards a whole handler, so every route, present or added
// later, is behind it: with a token, `Authorization: Bearer TOKEN` or a
// browser session cookie obtained with ?token= (GET pages; a change
// through the cookie must be JSON from the same origin); without one
// (cmd/weaver then binds to loopback only, see ListenAddr and
// IsLoopback), requests addressed to an IP address or localhost, and no
// cross-origin changes. A route learns how its request got in from Via.
//
// /graph, /snapshot and a job's graph are spooled (spool.go): written to
// a temporary file beside the store under a short read transaction and
// sent from it, so a slow client never holds a transaction that a commit
// growing the store's file would wait for; a spool that would leave the
// store's disk too full for the crawl is refused with 507 (ErrNoSpace).
package serve
