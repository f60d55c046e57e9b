package ingest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/weaver-crawler/weaver/graph"
	"github.com/weaver-crawler/weaver/kv"
)

// commit writes the batch's nodes and the file's state in one
// transaction, its links to memory, and the links in memory to a run
// when they fill Options.SortBytes.
func (im *importer) commit(key string, st *fileState) error {
	job, err := im.doneSpill(false) // recorded by this transaction
	if err != nil {
		return err
	}
	if off, ok := job.offset(key); ok {
		st.Edges = &off
	}
	state, err := json.Marshal(st)
	if err != nil {
		return err
	}
	var nodes int64
	var edges uint64 // in the store
	n0 := len(im.pends)
	err = update(im.store, func(tx *kv.Tx) error {
		before := graph.GetCounts(tx)
		for i := range im.relinks {
			if err := im.relink(tx, &im.relinks[i]); err != nil {
				return err
			}
		}
		for i := range im.batch {
			if err := im.apply(tx, &im.batch[i]); err != nil {
				return err
			}
		}
		after := graph.GetCounts(tx)
		nodes, edges = int64(after.Nodes-before.Nodes), after.Edges
		if job != nil {
			if err := im.recordSpill(tx, job, key); err != nil {
				return err
			}
		}
		return tx.SetMetaString(key, string(state))
	})
	if err != nil {
		im.pends = im.pends[:n0]
		clear(im.ids)
		return fmt.Errorf("ingest: commit: %w", err)
	}
	im.stats.NodesCreated += nodes
	im.commits++
	im.batch, im.relinks = im.batch[:0], im.relinks[:0]
	if job != nil {
		im.spilled(job)
	}
	if err := im.merger.failed(); err != nil {
		return err
	}
	if len(im.pends) >= im.pendLimit() || len(im.pends) >= max(minRun, int(edges)) {
		// Full, or as many links as the store has edges: a store that
		// is small yet takes them from the merger while the import
		// goes on, not all at its end, at a cost that stays a small
		// multiple of the links merged. One run is sorted and written
		// at a time, beside the writer.
		if err := im.flushSpill(); err != nil {
			return err
		}
		im.startSpill()
	}
	if time.Since(im.lastRelease) >= 2*time.Second {
		// Keeps RSS flat as the store grows: see kv.Tx.ReleasePages.
		im.lastRelease = time.Now()
		return im.store.View(func(tx *kv.Tx) error { tx.ReleasePages(); return nil })
	}
	return nil
}

// batchRecords is how many records the next commit holds: the first
// commits of an import hold fewer (firstBatch, doubling up to
// Options.BatchRecords), so that the writer, which waits for a batch's
// records to be parsed before it applies them, starts soon after the
// parsers do instead of one whole batch later (on the discovering WAT of
// docs/performance.md, 0.16 s of a 1.46 s import waited so).
func (im *importer) batchRecords() int {
	if im.commits >= 16 {
		return im.opts.BatchRecords
	}
	return min(im.opts.BatchRecords, firstBatch<<im.commits)
}

// firstBatch is how many records an import's first commit holds.
const firstBatch = 256

// apply records one page in tx, as a crawl's commit does, its links in
// memory.
func (im *importer) apply(tx *kv.Tx, p *page) error {
	switch {
	case p.ua != "":
		im.ua = p.ua // the agent of the requests that follow
		return nil
	case p.rules != nil:
		return im.robots(tx, p)
	}
	n, err := im.ensure(tx, p.host, p.scheme, p.date)
	if err != nil {
		return err
	}
	if p.date.After(n.LastSeen) {
		n.LastSeen = p.date
	}
	if p.crawled {
		if err := im.facts(tx, &n, p); err != nil {
			return err
		}
	}
	if err := graph.Put(tx, &n); err != nil {
		return err
	}
	at := graph.UnixNano(p.date)
	for _, t := range p.targets {
		to, err := im.target(tx, t.Host, t.Scheme, p.date)
		if err != nil {
			return err
		}
		im.link(n.ID, to, at)
	}
	return nil
}

// robots judges the home page of p's host by its robots.txt (p.rules) for
// the agent of the archive's requests (weaver's when none was read), as
// the crawl that archived it did: a host it disallows, and whose home
// page is not imported, is robots_disallowed.
func (im *importer) robots(tx *kv.Tx, p *page) error {
	ua := im.ua
	if ua == "" {
		ua = "weaver"
	}
	home := p.scheme + "://" + p.host + "/"
	if p.rules.Allowed(ua, home) {
		return nil
	}
	n, err := im.ensure(tx, p.host, p.scheme, p.date)
	if err != nil {
		return err
	}
	if n.CrawlCount > 0 || n.Status == graph.StatusRobotsDisallow {
		return nil // its page is in the archive after all, or it is said
	}
	n.Status, n.Error = graph.StatusRobotsDisallow, "robots.txt disallows "+home
	if p.date.After(n.LastSeen) {
		n.LastSeen = p.date
	}
	im.stats.RobotsDisallowed++
	return graph.Put(tx, &n)
}

// ensure is graph.EnsureAt at depth 0 for the host of a record, telling
// the import's host filter of a node it creates. Every node the import
// makes is made here or in target, which keeps hostFilter's promise.
func (im *importer) ensure(tx *kv.Tx, host, scheme string, date time.Time) (graph.Node, error) {
	n, created, err := graph.EnsureAt(tx, host, scheme, 0, date)
	if created {
		im.hosts.add(host)
	}
	return n, err
}

// target returns the id of a page's link's host, creating its node as a
// crawl does.
func (im *importer) target(tx *kv.Tx, host, scheme string, date time.Time) (uint64, error) {
	if im.scope == nil {
		if id, ok := im.ids[host]; ok {
			return id, nil
		}
		var id uint64
		var err error
		created := im.hosts.absent(host)
		if created {
			id, err = graph.CreateID(tx, host, scheme, 1, date)
		} else {
			id, created, err = graph.EnsureID(tx, host, scheme, 1, date)
		}
		if err != nil {
			return 0, err
		}
		if created {
			im.hosts.add(host)
		}
		if len(im.ids) >= maxIDs {
			clear(im.ids)
		}
		im.ids[host] = id
		return id, nil
	}
	dst, created, err := graph.EnsureHeadAt(tx, host, scheme, 1, date)
	if err != nil {
		return 0, err
	}
	if created {
		im.hosts.add(host)
	}
	if dst.Status == graph.StatusDiscovered && !im.scope.MatchString(host) {
		if d, ok, err := graph.Get(tx, dst.ID); err == nil && ok {
			d.Status = graph.StatusOutOfScope
			if err := graph.Put(tx, &d); err != nil {
				return 0, err
			}
		}
	}
	return dst.ID, nil
}

// pendLimit is how many links fill memory: half of Options.SortBytes, the
// other half being sorted and written to a run meanwhile.
func (im *importer) pendLimit() int { return max(int(im.opts.SortBytes/pendSize/2), 1) }

// minRun is the fewest links written to a run before memory is full.
const minRun = 1 << 16

// maxIDs bounds importer.ids: about 20 MB.
const maxIDs = 1 << 18

// relink adds the links of a page whose node an earlier import committed
// (see file): its host and its links' hosts have their nodes.
func (im *importer) relink(tx *kv.Tx, p *page) error {
	from, ok := graph.Lookup(tx, p.host)
	if !ok {
		return fmt.Errorf("ingest: %s: %w: its node is missing where the store says it was committed", p.host, graph.ErrInconsistent)
	}
	at := graph.UnixNano(p.date)
	for _, t := range p.targets {
		to, ok := graph.Lookup(tx, t.Host)
		if !ok {
			return fmt.Errorf("ingest: %s: %w: its node is missing where the store says it was committed", t.Host, graph.ErrInconsistent)
		}
		im.link(from, to, at)
	}
	return nil
}

// link puts a link in memory.
func (im *importer) link(from, to uint64, at int64) {
	if c := cap(im.pends); len(im.pends) == c {
		// Grown by doubling up to what Options.SortBytes holds, not
		// past it as append would, then (until the batch's commit
		// writes them to a run) an eighth of it at a time.
		limit := im.pendLimit()
		n := min(max(2*c, 1024), limit)
		if c >= limit {
			n = c + max(limit/8, 1024)
		}
		grown := make([]pend, len(im.pends), n)
		copy(grown, im.pends)
		im.pends = grown
	}
	im.pends = append(im.pends, pend{from: from, to: to, first: at, last: at, w: 1, seq: im.seq})
	im.seq++
	im.linksRead++
}

// facts records an HTML capture's facts in n. A host's facts (title,
// description, HTTP status, hash, ...) are those of its home page: its
// crawl_count counts the captures of its home page (path "/" or empty, no
// query), whose last one read gives the facts. A capture of another page
// adds its links only, but while the host has no capture of its home page
// the page with the shortest path (the first read of equal length) stands
// in for it, with a crawl_count of 1; a capture of the home page read
// later replaces it.
func (im *importer) facts(tx *kv.Tx, n *graph.Node, p *page) error {
	key := metaStandInPrefix + strconv.FormatUint(n.ID, 10)
	standIn := tx.MetaString(key)
	home := p.path == "/"
	switch {
	case home && standIn != "":
		n.CrawlCount = 1
		if err := tx.Delete(kv.BucketMeta, []byte(key)); err != nil {
			return err
		}
	case home:
		n.CrawlCount++
	case n.CrawlCount == 0, standIn != "" && len(p.path) < len(standIn):
		n.CrawlCount = 1
		if err := tx.SetMetaString(key, p.path); err != nil {
			return err
		}
	default:
		// Another page of a host whose facts come from a better page.
		if p.date.After(n.LastCrawl) {
			n.LastCrawl = p.date
		}
		return nil
	}
	if p.date.After(n.LastCrawl) || n.LastCrawl.IsZero() {
		n.LastCrawl = p.date
	}
	n.Status = graph.StatusCrawled
	n.HTTPStatus, n.ContentType, n.Server = p.status, p.ctype, p.server
	n.Bytes, n.ContentHash = p.bytes, p.hash
	n.Title, n.Description, n.Error = p.title, p.desc, ""
	n.Canonical, n.RobotsDirectives = p.canonical, p.directives
	_, err := graph.NoteContentHash(tx, n)
	return err
}
