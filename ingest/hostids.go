package ingest

import (
	"hash/maphash"
	"sync"

	"github.com/weaver-crawler/weaver/crawl/pick"
)

// hostTable gives the parsers one hostID per host name, so that the
// writer learns a link's node id from its link, without a map of its own:
// the writer's map from host to id (a hash of the name, a probe and a
// comparison of the names, each a miss of the cache on a map of 100,000
// hosts) was a third of its CPU on the discovering WAT of
// docs/performance.md, serial with everything else the store does. The
// parsers, on every core, now pay for the lookup.
//
// A parser interns a page's targets (intern); the writer alone reads and
// sets an entry's id, once it has the host's node, and sets it back to 0
// when the transaction that made the node is not committed (importer.
// assigned). A table past maxIDs hosts starts again, empty: an entry
// dropped from it keeps its id for the pages that hold it, and a new one
// for the same host is looked up again by the writer.
type hostTable struct {
	seed   maphash.Seed
	shards [16]hostShard
}

type hostShard struct {
	mu sync.Mutex
	m  map[string]*hostID
}

// hostID is one host of hostTable and, once the writer has it, its node's
// id (0: not yet).
type hostID struct {
	host string
	id   uint64
}

func newHostTable() *hostTable {
	t := &hostTable{seed: maphash.MakeSeed()}
	for i := range t.shards {
		t.shards[i].m = make(map[string]*hostID)
	}
	return t
}

// intern returns the entries of targets' hosts, in their order.
func (t *hostTable) intern(targets []pick.Target) []*hostID {
	out := make([]*hostID, len(targets))
	for i := range targets {
		host := targets[i].Host
		s := &t.shards[maphash.String(t.seed, host)%uint64(len(t.shards))]
		s.mu.Lock()
		e := s.m[host]
		if e == nil {
			if len(s.m) >= maxIDs/len(t.shards) {
				clear(s.m)
			}
			e = &hostID{host: host}
			s.m[host] = e
		}
		s.mu.Unlock()
		out[i] = e
	}
	return out
}
